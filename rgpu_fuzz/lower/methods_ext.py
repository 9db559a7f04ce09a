"""The integer and float methods that GPUs have instructions for (docs/language.md "Method
table", the rows after `to_bits`) → LLVM IR.

Each is the intrinsic whose LangRef semantics are Rust's, or, where LLVM has none, the body
core 1.95 gives the method (`core::num`, `core::f32`), so LLVM meets the same patterns it
meets in rustc's code: `saturating_mul` is `checked_mul` (`llvm.[su]mul.with.overflow`) and
a select of MIN/MAX; `abs_diff` a compare and two subtractions; `div_euclid`/`rem_euclid`
`/` and `%` (with their traps) and a correction; `pow` the square-and-multiply loop, unrolled
here because the exponent is a literal; `signum` `1.0.copysign(x)` unless NaN; `clamp` its
`assert!(min <= max)` and two compare-selects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp
from rgpu_fuzz.lower.context import LowerError
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I1, float_const, int_const, type_suffix, value_type
from rgpu_fuzz.model.outcome import TrapKind
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.exprs import ExprLowerer


def intrinsic(lw: ExprLowerer, base: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
    """A call of the intrinsic `base` overloaded on its first argument's type."""
    name = f"{base}.{type_suffix(args[0].type)}"
    fn = lw.st.ms.intrinsics.get(name, ret, [a.type for a in args])
    return lw.b.call(fn, args)


def _u32(lw: ExprLowerer, v: ir.Value, s: Scalar) -> ir.Value:
    return lw.convert(v, s, Scalar.U32) if s is not Scalar.U32 else v


def _not(lw: ExprLowerer, v: ir.Value, s: Scalar) -> ir.Value:
    return lw.b.xor(v, int_const(s, -1))


def lower_int_method(lw: ExprLowerer, e: ast.MethodCall, s: Scalar, recv: ir.Value,
                     args: list[ir.Value]) -> ir.Value:
    """`recv.method(args)` for the integer methods `lower.methods` leaves to this module."""
    b, t, m = lw.b, value_type(s), e.method
    zero_ok = ir.Constant(I1, 0)
    match m:
        case "count_zeros":
            return _u32(lw, intrinsic(lw, "llvm.ctpop", t, [_not(lw, recv, s)]), s)
        case "leading_ones":
            return _u32(lw, intrinsic(lw, "llvm.ctlz", t, [_not(lw, recv, s), zero_ok]), s)
        case "trailing_ones":
            return _u32(lw, intrinsic(lw, "llvm.cttz", t, [_not(lw, recv, s), zero_ok]), s)
        case "swap_bytes":  # LangRef: llvm.bswap takes whole even numbers of bytes
            return recv if s.bits == 8 else intrinsic(lw, "llvm.bswap", t, [recv])
        case "reverse_bits":
            return intrinsic(lw, "llvm.bitreverse", t, [recv])
        case "saturating_add" | "saturating_sub":
            kind = ("s" if s.is_signed else "u") + m.removeprefix("saturating_")
            return intrinsic(lw, f"llvm.{kind}.sat", t, [recv, args[0]])
        case "saturating_mul":
            return _saturating_mul(lw, s, recv, args[0])
        case "abs_diff":
            cmp = b.icmp_signed if s.is_signed else b.icmp_unsigned
            less = cmp("<", recv, args[0])
            return b.select(less, b.sub(args[0], recv), b.sub(recv, args[0]))
        case "unsigned_abs":
            return intrinsic(lw, "llvm.abs", t, [recv, zero_ok])
        case "div_euclid" | "rem_euclid":
            return _euclid(lw, e, s, recv, args[0])
        case "pow" | "wrapping_pow":
            exponent = e.args[0]
            assert isinstance(exponent, ast.IntLit), "the checker requires a literal"
            return _pow(lw, s, recv, exponent.value)
    raise LowerError(f"integer method {m}")


def _saturating_mul(lw: ExprLowerer, s: Scalar, a: ir.Value, c: ir.Value) -> ir.Value:
    """core: `checked_mul`, else MAX (unsigned, or signed operands of one sign) or MIN."""
    b, t = lw.b, value_type(s)
    kind = "smul" if s.is_signed else "umul"
    name = f"llvm.{kind}.with.overflow.{type_suffix(t)}"
    fn = lw.st.ms.intrinsics.get(name, ir.LiteralStructType([t, I1]), [t, t])
    pair = b.call(fn, [a, c])
    product, overflow = b.extract_value(pair, 0), b.extract_value(pair, 1)
    if not s.is_signed:
        return b.select(overflow, int_const(s, s.max_value), product)
    zero = int_const(s, 0)
    same_sign = b.icmp_unsigned("==", b.icmp_signed("<", a, zero), b.icmp_signed("<", c, zero))
    bound = b.select(same_sign, int_const(s, s.max_value), int_const(s, s.min_value))
    return b.select(overflow, bound, product)


def _euclid(lw: ExprLowerer, e: ast.MethodCall, s: Scalar, a: ir.Value,
            c: ir.Value) -> ir.Value:
    """core: `let q = self / rhs` (or `let r = self % rhs`) with `/`'s and `%`'s panics,
    then, where the remainder is negative, `q ∓ 1` by the divisor's sign or `r + |rhs|`."""
    b = lw.b
    div = e.method == "div_euclid"
    first = lw.divide(BinOp.DIV if div else BinOp.REM, s, a, c, e.span, wrapping=False)
    if not s.is_signed:
        return first
    zero = int_const(s, 0)
    r = first if not div else b.srem(a, c)  # the checks above passed: srem is defined
    negative = b.icmp_signed("<", r, zero)
    if div:
        step = b.select(b.icmp_signed(">", c, zero), int_const(s, -1), int_const(s, 1))
        return b.select(negative, b.add(first, step), first)
    magnitude = intrinsic(lw, "llvm.abs", value_type(s), [c, ir.Constant(I1, 0)])
    return b.select(negative, b.add(r, magnitude), r)


def _pow(lw: ExprLowerer, s: Scalar, x: ir.Value, exponent: int) -> ir.Value:
    """`x.pow(exponent)` (wrapping in release builds): square and multiply, as core's loop
    does, on the exponent's bits from the lowest."""
    b = lw.b
    result: ir.Value | None = None
    base = x
    e = exponent
    while e:
        if e & 1:
            result = base if result is None else b.mul(result, base)
        e >>= 1
        if e:
            base = b.mul(base, base)
    return int_const(s, 1) if result is None else result


def lower_float_method(lw: ExprLowerer, e: ast.MethodCall, s: Scalar, recv: ir.Value,
                       args: list[ir.Value]) -> ir.Value:
    """`recv.method(args)` for the float methods `lower.methods` leaves to this module."""
    b, t, m = lw.b, value_type(s), e.method
    match m:
        case "copysign":
            return intrinsic(lw, "llvm.copysign", t, [recv, args[0]])
        case "floor" | "ceil" | "round" | "trunc":
            return intrinsic(lw, f"llvm.{m}", t, [recv])
        case "signum":
            one = float_const(s, _one_bits(s))
            signed_one = intrinsic(lw, "llvm.copysign", t, [one, recv])
            nan = b.fcmp_unordered("!=", recv, recv)
            return b.select(nan, float_const(s, _quiet_nan_bits(s)), signed_one)
        case "is_nan":
            return b.fcmp_unordered("!=", recv, recv)
        case "is_sign_negative":
            bits = b.bitcast(recv, ir.IntType(s.bits))
            return b.icmp_signed("<", bits, ir.Constant(ir.IntType(s.bits), 0))
        case "clamp":
            lo, hi = args
            lw.st.trap_if(b.fcmp_unordered(">", lo, hi), TrapKind.ASSERT, e.span)
            below = b.select(b.fcmp_ordered("<", recv, lo), lo, recv)
            return b.select(b.fcmp_ordered(">", below, hi), hi, below)
    raise LowerError(f"float method {m}")


def _one_bits(s: Scalar) -> int:
    """IEEE bits of 1.0: a biased exponent of all ones but the top bit, a zero fraction."""
    return {Scalar.F16: 0x3C00, Scalar.F32: 0x3F80_0000, Scalar.F64: 0x3FF0_0000_0000_0000}[s]


def _quiet_nan_bits(s: Scalar) -> int:
    """core's `NAN` (`0.0 / 0.0` in const evaluation): positive, quiet, payload zero."""
    return {Scalar.F16: 0x7E00, Scalar.F32: 0x7FC0_0000, Scalar.F64: 0x7FF8_0000_0000_0000}[s]
