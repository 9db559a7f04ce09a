"""Wave operations: what every target's lowering of them shares (docs/language.md "Wave
operations", docs/design.md §3 "Wave operations").

The prelude's wave functions are calls by name (`ast.Call.func`); `lower_wave_call` lowers
the arguments left to right and hands the call to the target (`TargetHooks.wave_op`), which
knows its wave size and how lanes talk. What is shared here:

* the names, split by kind (`MOVES` keep bits of any scalar, `REDUCTIONS` fold integers,
  `VOTES` fold booleans, `SCAN` is the inclusive prefix sum);
* `WaveOps`, the lowering strategy of a reduction or scan that a pipeline option chooses
  (`waveops=intrinsic|ladder`): LLVM's own intrinsic where there is one, or an explicit
  ladder of lane moves, so a campaign drives both of LLVM's paths;
* `words`/`unwords`: a scalar as the 32-bit words a lane-move instruction carries
  (`ds_bpermute_b32`, `shfl.sync.b32` move 32 bits), and back, bits kept;
* `binop`/`identity`: a reduction's operator and its identity on the (widened) type.

`convergent`: every amdgcn/nvvm intrinsic used here is declared `convergent` by LLVM itself
(`IntrinsicsAMDGPU.td`, `IntrinsicsNVVM.td`), so each call is. A function calling one needs
the attribute too when it is itself called (LangRef "convergent": otherwise a call to it may
be made control-dependent on more values); the checker lets collective wave calls stand only
in kernels, which nothing calls, so no function of ours needs it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I32, I64, int_const, value_type
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.exprs import ExprLowerer

MOVES = frozenset({"read_first_lane", "read_lane", "shuffle", "shuffle_xor", "shuffle_down"})
REDUCTIONS = frozenset({"wave_sum", "wave_min", "wave_max", "wave_and", "wave_or", "wave_xor"})
VOTES = frozenset({"ballot", "wave_all", "wave_any"})
SCAN = "wave_prefix_sum"
QUERIES = frozenset({"wave_size", "lane_id"})
WAVE_OPS = MOVES | REDUCTIONS | VOTES | QUERIES | {SCAN}
"""Every wave function of the prelude."""
CROSS_LANE = WAVE_OPS - QUERIES
"""The ones whose value depends on other lanes (the host splits regions at them)."""


class WaveOps(StrEnum):
    """How a reduction or scan is lowered (pipeline option `waveops=`).

    * `intrinsic`: amdgcn `llvm.amdgcn.wave.reduce.*` for reductions and a `ds.bpermute`
      Hillis–Steele ladder for the scan; nvptx `redux.sync` where the SM has it;
    * `ladder`: amdgcn a DPP ladder (`update.dpp` row_shr 1/2/4/8, then row_bcast15/31 on
      GFX9 or `permlanex16` + `readlane 31` on GFX10+) in whole-wave mode
      (`set.inactive` + `strict.wwm`), the shape of LLVM's AMDGPUAtomicOptimizer scan;
      nvptx a `shfl.sync.up` ladder.
    """

    INTRINSIC = "intrinsic"
    LADDER = "ladder"


def is_wave_call(node: object, names: frozenset[str] = CROSS_LANE) -> bool:
    return isinstance(node, ast.Call) and node.func in names


def has_wave_op(node: object) -> bool:
    """Whether `node` contains a cross-lane wave operation."""
    return any(is_wave_call(n) for n in walk(node))


def lower_wave_call(lw: ExprLowerer, e: ast.Call) -> ir.Value:
    """The value of a wave call: arguments left to right, then the target's lowering."""
    from rgpu_fuzz.lower.exprs import scalar_of

    args = [lw.expr(a) for a in e.args]
    types = [scalar_of(a.ty) for a in e.args]
    return lw.st.ms.target.wave_op(lw.st, e.func, args, types)


# ---------------------------------------------------------------- bits in 32-bit words

def words(b: ir.IRBuilder, v: ir.Value, s: Scalar) -> list[ir.Value]:
    """`v` as i32 words, low word first: one for scalars of up to 32 bits (zero-extended,
    floats bitcast), two for 64-bit ones."""
    if s.is_float:
        v = b.bitcast(v, ir.IntType(s.bits))
    if s is Scalar.BOOL or s.bits < 32:
        return [b.zext(v, I32)]
    if s.bits == 32:
        return [v]
    return [b.trunc(v, I32), b.trunc(b.lshr(v, ir.Constant(I64, 32)), I32)]


def unwords(b: ir.IRBuilder, ws: list[ir.Value], s: Scalar) -> ir.Value:
    """The inverse of `words`."""
    if len(ws) == 2:
        v = b.or_(b.zext(ws[0], I64), b.shl(b.zext(ws[1], I64), ir.Constant(I64, 32)))
    elif s is Scalar.BOOL or s.bits < 32:
        v = b.trunc(ws[0], ir.IntType(1 if s is Scalar.BOOL else s.bits))
    else:
        v = ws[0]
    return b.bitcast(v, value_type(s)) if s.is_float else v


# ---------------------------------------------------------------- reductions

REDUCE_KIND = {"wave_sum": "add", "wave_and": "and", "wave_or": "or", "wave_xor": "xor",
               "wave_min": "min", "wave_max": "max", SCAN: "add"}


def reduce_op(op: str, s: Scalar) -> str:
    """The LLVM name of a reduction on `s`: `add`/`and`/`or`/`xor`, and `smin`/`umin`/
    `smax`/`umax` by signedness (as `llvm.smin` and `llvm.amdgcn.wave.reduce.min` spell
    them, the signed ones without the `s` there)."""
    kind = REDUCE_KIND[op]
    if kind in ("min", "max"):
        return ("s" if s.is_signed else "u") + kind
    return kind


def widened(s: Scalar) -> Scalar:
    """The type a reduction computes in: integers below 32 bits widen to 32 (sign-extended
    when signed, so min/max order is kept), 64-bit ones stay."""
    if s.bits == 64:
        return s
    return Scalar.I32 if s.is_signed else Scalar.U32


def widen(b: ir.IRBuilder, v: ir.Value, s: Scalar) -> ir.Value:
    w = widened(s)
    if w.bits == s.bits:
        return v
    return b.sext(v, value_type(w)) if s.is_signed else b.zext(v, value_type(w))


def narrow(b: ir.IRBuilder, v: ir.Value, s: Scalar) -> ir.Value:
    return v if widened(s).bits == s.bits else b.trunc(v, value_type(s))


def identity(kind: str, s: Scalar) -> ir.Constant:
    """The identity of reduction `kind` (`reduce_op`) on integer type `s`."""
    bits = s.bits
    value = {"add": 0, "or": 0, "xor": 0, "umax": 0, "and": -1, "umin": -1,
             "smin": (1 << (bits - 1)) - 1, "smax": -(1 << (bits - 1))}[kind]
    return int_const(s, value)


def binop(b: ir.IRBuilder, intrinsics: object, kind: str, a: ir.Value, c: ir.Value) -> ir.Value:
    """`a kind c` (`reduce_op` names); min/max as `llvm.{s,u}{min,max}` (LangRef), which
    LLVM's DPP combine and instruction selection know."""
    match kind:
        case "add":
            return b.add(a, c)
        case "and":
            return b.and_(a, c)
        case "or":
            return b.or_(a, c)
        case "xor":
            return b.xor(a, c)
    from rgpu_fuzz.lower.values import Intrinsics, type_suffix

    assert isinstance(intrinsics, Intrinsics)
    fn = intrinsics.get(f"llvm.{kind}.{type_suffix(a.type)}", a.type, [a.type, a.type])
    return b.call(fn, [a, c])


__all__ = ["CROSS_LANE", "MOVES", "QUERIES", "REDUCTIONS", "SCAN", "VOTES", "WAVE_OPS",
           "WaveOps", "binop", "has_wave_op", "identity", "is_wave_call", "lower_wave_call",
           "narrow", "reduce_op", "unwords", "widen", "widened", "words"]
