"""Per-bit definedness through the 32-bit VALU operations LLVM applies to registers whose
halves are defined separately (GFX11 true16 code, D16 loads): an add, subtract or low
multiply defines the result's bits below the lowest undefined source bit (carries only move
up — memcheck's rule for additions); AND/OR define a bit where a defined 0 (AND) or 1 (OR)
decides it; XOR where both sources are defined; shifts by a defined amount move the defined
bits and define the bits shifted in.

The result goes to `halves.write_bits`, so `v_sub_nc_u32 v2, v11, v2` with only v11's low
byte defined leaves v2's low byte defined and a later `v_and_b16 v2.l, 0xff, v2.l` defined,
as on hardware no undefined bit can reach it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.halves import FULL, defined_bits, write_bits
from rgpu_fuzz.sim.state.wave import AGPR_BASE, Wave

U32 = np.uint32
Bits = Callable[[Wave], np.ndarray]


def _carry_rule(a: Any, da: np.ndarray, b: Any, db: np.ndarray) -> np.ndarray:
    undef = ~(da & db) & U32(FULL)
    lowest = undef & (~undef + U32(1))
    return np.where(undef == 0, U32(FULL), lowest - U32(1))


def _and(a: Any, da: np.ndarray, b: Any, db: np.ndarray) -> np.ndarray:
    return (da & db) | (da & ~a) | (db & ~b)


def _or(a: Any, da: np.ndarray, b: Any, db: np.ndarray) -> np.ndarray:
    return (da & db) | (da & a) | (db & b)


def _xor(a: Any, da: np.ndarray, b: Any, db: np.ndarray) -> np.ndarray:
    return da & db


def _shl(s: Any, ds: np.ndarray, b: Any, db: np.ndarray) -> np.ndarray:
    sh = np.asarray(s, U32) & U32(31)
    ok = (ds & U32(31)) == U32(31)
    return np.where(ok, (db << sh) | ((U32(1) << sh) - U32(1)), U32(0))


def _shr(s: Any, ds: np.ndarray, b: Any, db: np.ndarray) -> np.ndarray:
    sh = np.asarray(s, U32) & U32(31)
    ok = (ds & U32(31)) == U32(31)
    return np.where(ok, (db >> sh) | ~(U32(FULL) >> sh), U32(0))


RULES: dict[str, Callable[..., np.ndarray]] = {
    "V_ADD_U32": _carry_rule, "V_SUB_U32": _carry_rule, "V_SUBREV_U32": _carry_rule,
    "V_MUL_LO_U32": _carry_rule,
    "V_AND_B32": _and, "V_OR_B32": _or, "V_XOR_B32": _xor,
    "V_LSHLREV_B32": _shl, "V_LSHRREV_B32": _shr,
}
"""Opcode → defined result bits from (value, defined bits) of both sources (uint32 lanes)."""


def _bits_of(op: Opnd, defined: Callable[[Wave], Any], lanes: int) -> Bits:
    if op.kind in (OpKind.VGPR, OpKind.AGPR) and op.count == 1:
        col = op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0)
        return lambda w: defined_bits(w, col)
    if op.kind is OpKind.SGPR and op.index < 128 and op.count == 1:
        i = op.index
        return lambda w: np.full(lanes, w.sdef[i], U32)
    return lambda w: np.where(np.broadcast_to(defined(w), (lanes,)), U32(FULL), U32(0))


def bitdef_step(inst: Inst, srcs: list[tuple[Any, Any]], fn: Callable[..., Any],
                lanes: int, put: Callable[[Wave, Any, Any], None]) -> Callable[[Wave], None]:
    """The bound step of a 32-bit op in `RULES` (plain VGPR destination, no modifiers):
    value by `fn`; per-bit definedness by the rule where a source VGPR has partly defined
    lanes (`Wave.vpart`), else the whole-register rule every VALU op uses."""
    rule = RULES[inst.opcode]
    dst = inst.operands[0]
    col = dst.index + (AGPR_BASE if dst.kind is OpKind.AGPR else 0)
    (ga, da), (gb, db) = srcs
    bits_a = _bits_of(inst.operands[1], da, lanes)
    bits_b = _bits_of(inst.operands[2], db, lanes)

    cols = [o.index + (AGPR_BASE if o.kind is OpKind.AGPR else 0)
            for o in inst.operands[1:3] if o.kind in (OpKind.VGPR, OpKind.AGPR)]

    # the plain rule's definedness, constants left out (always defined: `array & True`
    # only costs a conversion)
    consts = [o.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS) for o in inst.operands[1:3]]
    whole: Callable[[Wave], Any] = (
        (lambda w: True) if all(consts) else db if consts[0] else da if consts[1]
        else (lambda w: da(w) & db(w)))
    c0, c1 = (cols + cols)[:2] if cols else (-1, -1)

    def step(w: Wave) -> None:
        a, b = ga(w), gb(w)
        r = fn(a, b)
        vp = w.vpart
        if not vp or (c0 not in vp and c1 not in vp):
            put(w, r, whole(w))  # whole registers: the plain rule, no per-bit work
            return
        if w.pend_v and col in w.pend_v:
            put(w, r, True)  # raises the hazard as any write would
        r = np.broadcast_to(np.asarray(r).view(U32), (lanes,))
        bits = rule(np.asarray(a).view(U32), bits_a(w), np.asarray(b).view(U32), bits_b(w))
        write_bits(w, col, r, np.asarray(bits, U32), FULL, None if w.exec_full else w.exec)
    return step
