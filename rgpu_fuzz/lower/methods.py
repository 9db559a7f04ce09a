"""Scalar methods → LLVM IR (the table of `rgpu_fuzz.lang.methods`).

Each method maps to the instruction or intrinsic whose LangRef semantics equal Rust's:
`llvm.fma` (one rounding), `llvm.minnum`/`llvm.maxnum` (a NaN operand is ignored),
`llvm.ctlz`/`llvm.cttz` with `is_zero_poison = false` (so `0.leading_zeros()` is the width),
`llvm.fshl`/`llvm.fshr` for rotates, `llvm.abs` with `is_int_min_poison = false` (wraps),
`llvm.bswap`/`llvm.bitreverse`, `llvm.[su]add.sat`/`llvm.[su]sub.sat` (LangRef "Saturation
Arithmetic Intrinsics"), `llvm.copysign`, `llvm.floor`/`ceil`/`round`/`trunc` (`llvm.round`
rounds half away from zero, as Rust's `round`). What LLVM has no intrinsic for is written
as core 1.95 writes it: `saturating_mul` through `llvm.[su]mul.with.overflow`, `abs_diff`,
`div_euclid`/`rem_euclid`, `pow` by square and multiply, `signum` and `clamp` (with its
`assert!`, `lower/methods_ext.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.methods_ext import intrinsic as _intrinsic
from rgpu_fuzz.lower.methods_ext import lower_float_method, lower_int_method
from rgpu_fuzz.lower.values import I1, int_const, value_type
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.exprs import ExprLowerer


def _to_u32(lw: ExprLowerer, v: ir.Value, s: Scalar) -> ir.Value:
    return lw.convert(v, s, Scalar.U32) if s is not Scalar.U32 else v


def lower_method(lw: ExprLowerer, e: ast.MethodCall) -> ir.Value:
    """The value of `e.receiver.method(args)`; receiver and arguments left to right."""
    recv_ty = e.receiver.ty
    assert isinstance(recv_ty, Scalar), e
    s = recv_ty
    recv = lw.expr(e.receiver)
    args = [lw.expr(a) for a in e.args]
    b = lw.b
    t = value_type(s)
    m = e.method
    if s.is_float:
        match m:
            case "abs":
                return _intrinsic(lw, "llvm.fabs", t, [recv])
            case "sqrt":
                return _intrinsic(lw, "llvm.sqrt", t, [recv])
            case "mul_add":
                return _intrinsic(lw, "llvm.fma", t, [recv, *args])
            case "min":
                return _intrinsic(lw, "llvm.minnum", t, [recv, args[0]])
            case "max":
                return _intrinsic(lw, "llvm.maxnum", t, [recv, args[0]])
            case "to_bits":
                return b.bitcast(recv, ir.IntType(s.bits))
        return lower_float_method(lw, e, s, recv, args)
    simple = {"wrapping_add": b.add, "wrapping_sub": b.sub, "wrapping_mul": b.mul}
    if m in simple:
        return simple[m](recv, args[0])
    match m:
        case "wrapping_div" | "wrapping_rem":
            op = BinOp.DIV if m == "wrapping_div" else BinOp.REM
            return lw.divide(op, s, recv, args[0], e.span, wrapping=True)
        case "wrapping_neg":
            return b.sub(int_const(s, 0), recv)
        case "wrapping_shl":
            return b.shl(recv, lw.shift_amount(s, args[0], Scalar.U32))
        case "wrapping_shr":
            amount = lw.shift_amount(s, args[0], Scalar.U32)
            return b.ashr(recv, amount) if s.is_signed else b.lshr(recv, amount)
        case "rotate_left" | "rotate_right":
            amount = lw.shift_amount(s, args[0], Scalar.U32)
            base = "llvm.fshl" if m == "rotate_left" else "llvm.fshr"
            return _intrinsic(lw, base, t, [recv, recv, amount])
        case "count_ones":
            return _to_u32(lw, _intrinsic(lw, "llvm.ctpop", t, [recv]), s)
        case "leading_zeros":
            return _to_u32(lw, _intrinsic(lw, "llvm.ctlz", t, [recv, ir.Constant(I1, 0)]), s)
        case "trailing_zeros":
            return _to_u32(lw, _intrinsic(lw, "llvm.cttz", t, [recv, ir.Constant(I1, 0)]), s)
        case "min" | "max":
            cmp = b.icmp_signed if s.is_signed else b.icmp_unsigned
            less = cmp("<" if m == "min" else ">", args[0], recv)
            return b.select(less, args[0], recv)
        case "abs" | "wrapping_abs":
            return _intrinsic(lw, "llvm.abs", t, [recv, ir.Constant(I1, 0)])
    return lower_int_method(lw, e, s, recv, args)
