"""Per-bit definedness through the 32-bit VALU operations LLVM applies to registers whose
halves are defined separately (GFX11 true16 code, D16 loads): an add, subtract or low
multiply defines the result's bits below the lowest undefined source bit (carries only move
up — memcheck's rule for additions); AND/OR define a bit where a defined 0 (AND) or 1 (OR)
decides it, also where the other source's lane is wholly undefined; XOR where both sources are
defined; shifts by a defined amount move the defined
bits and define the bits shifted in; V_CNDMASK_B32 takes the defined bits of the source it
selects (`cndmask_step`).

The result goes to `halves.write_bits`, so `v_sub_nc_u32 v2, v11, v2` with only v11's low
byte defined leaves v2's low byte defined and a later `v_and_b16 v2.l, 0xff, v2.l` defined,
as on hardware no undefined bit can reach it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.halves import FULL, all_set, defined_bits, lanes_defined, write_bits
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

DECIDING = frozenset({"V_AND_B32", "V_OR_B32"})
"""Rules under which a defined bit of one source defines the result bit whatever the other
holds: an undefined lane of one source still gets the bits the other decides (`x & 0` is
0). LLVM zero-extends a value whose high half true16 code left undefined to 64 bits and
masks the pair: `v_and_b32 v7, v7, s4` with s4 = 0, the high dword of `& 0xff`."""


def _bits_of(op: Opnd, defined: Callable[[Wave], Any], lanes: int) -> Bits:
    if op.kind in (OpKind.VGPR, OpKind.AGPR) and op.count == 1:
        col = op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0)
        return lambda w: defined_bits(w, col)
    if op.kind is OpKind.SGPR and op.index < 128 and op.count == 1:
        i = op.index
        return lambda w: np.full(lanes, w.sdef[i], U32)
    return lambda w: np.where(np.broadcast_to(defined(w), (lanes,)), U32(FULL), U32(0))


def _in_exec(w: Wave, d: Any) -> bool:
    """Whether the defined lanes `d` (a bool, or a bool per lane) cover EXEC
    (`halves.lanes_defined`)."""
    if type(d) is not np.ndarray or d.ndim == 0:
        return bool(d)
    return lanes_defined(d if d.dtype == np.bool_ else d.astype(bool),
                         None if w.exec_full else w.exec)


def _all_bits_defined(ops: Sequence[Opnd], srcs: list[tuple[Any, Any]]) -> Callable[[Wave], bool]:
    """Whether every bit `_bits_of` gives the sources `ops` is defined in every lane of EXEC
    (read from `Wave.vdef` and `Wave.sdef` as `_bits_of` reads them, not from a narrowed
    read's definedness). Then each rule defines all 32 result bits of those lanes (carry
    rule: no undefined bit; AND/OR/XOR: both bits defined; shifts: `(FULL << s) | (1 << s)
    - 1`), which is the whole-register rule writing defined lanes: no per-bit work."""
    cols: list[int] = []
    sregs: list[int] = []
    others: list[Callable[[Wave], Any]] = []
    for op, (_, defined) in zip(ops, srcs, strict=True):
        if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
            continue  # `_bits_of`: all 32 bits, always
        if op.kind in (OpKind.VGPR, OpKind.AGPR) and op.count == 1:
            cols.append(op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0))
        elif op.kind is OpKind.SGPR and op.index < 128 and op.count == 1:
            sregs.append(op.index)
        else:
            others.append(defined)

    def test(w: Wave) -> bool:
        sdef = w.sdef
        if any(sdef[i] & FULL != FULL for i in sregs):
            return False
        vdef = w.vdef
        if any(not _in_exec(w, vdef[:, c]) for c in cols):
            return False
        return all(_in_exec(w, f(w)) for f in others)
    return test


def _all_true(d: Any) -> bool:
    """`np.all(d)` of a bool or a bool per lane (`halves.all_set` for the latter)."""
    if type(d) is np.ndarray and d.dtype == np.bool_:
        return all_set(d)
    return bool(np.all(d))


def _drop_empty(w: Wave, col: int) -> None:
    """After a whole-register write: `write_bits` drops an empty `vpart` entry of the
    column it writes, which `operands._forget` keeps; the fast paths drop it too."""
    vp = w.vpart
    if vp and col in vp and not vp[col]:
        del vp[col]


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

    decides = inst.opcode in DECIDING and not all(consts)
    defined_in_exec = _all_bits_defined(inst.operands[1:3], srcs)

    def step(w: Wave) -> None:
        a, b = ga(w), gb(w)
        r = fn(a, b)
        vp = w.vpart
        if not vp or (c0 not in vp and c1 not in vp):
            d = whole(w)
            if not decides:
                put(w, r, d)  # whole registers: the plain rule, no per-bit work
                return
            # AND/OR: the sources are wholly defined or not, lane by lane, so `d` is
            # `defined_in_exec` lane by lane
            if _in_exec(w, d):
                put(w, r, d)
                if not _all_true(d):
                    _drop_empty(w, col)  # as the per-bit rule's write would
                return
        elif defined_in_exec(w):
            # every source bit of the lanes in EXEC defined (nearly always at O0: its
            # undefined and partly defined lanes are outside EXEC): every rule defines all 32
            put(w, r, True)
            _drop_empty(w, col)
            return
        if w.pend_v and col in w.pend_v:
            put(w, r, True)  # raises the hazard as any write would
        r = np.broadcast_to(np.asarray(r).view(U32), (lanes,))
        bits = rule(np.asarray(a).view(U32), bits_a(w), np.asarray(b).view(U32), bits_b(w))
        write_bits(w, col, r, np.asarray(bits, U32), FULL, None if w.exec_full else w.exec)
    return step


def cndmask_step(inst: Inst, ops: list[Opnd], srcs: list[tuple[Any, Any]],
                 mask: Callable[[Wave], np.ndarray], mask_defined: Callable[[Wave], np.ndarray],
                 lanes: int, put: Callable[[Wave, Any, Any], None]) -> Callable[[Wave], None]:
    """The bound step of V_CNDMASK_B32 (`ops`: destination, src0, src1, lane mask): where a
    source VGPR has partly defined lanes, a lane's result has the defined bits of the source
    it selects (none where its lane-mask bit is undefined), else the whole-register rule.

    RDNA3/CDNA3 ISA pseudocode: `D.u32 = VCC[laneId] ? S1.u32 : S0.u32`, a copy of one
    source's bits. GlobalISel at gfx1100 selects a 16-bit value with it after true16 code
    left the high halves undefined (`v_ashrrev_i16 v1.l, 2, v12.l` then `v_cndmask_b32 v4,
    v12, v1, vcc_lo`); a later `v_xor_b16 v1.l, v2.l, v1.l` reads only defined bits."""
    dst = ops[0]
    col = dst.index + (AGPR_BASE if dst.kind is OpKind.AGPR else 0)
    (g0, d0), (g1, d1) = srcs
    bits0, bits1 = _bits_of(ops[1], d0, lanes), _bits_of(ops[2], d1, lanes)
    cols = [o.index + (AGPR_BASE if o.kind is OpKind.AGPR else 0)
            for o in ops[1:3] if o.kind in (OpKind.VGPR, OpKind.AGPR) and o.count == 1]
    c0, c1 = (cols + cols)[:2] if cols else (-1, -1)
    defined_in_exec = _all_bits_defined(ops[1:3], srcs)

    def step(w: Wave) -> None:
        m = mask(w)
        value = np.where(m, g1(w), g0(w))
        vp = w.vpart
        if not vp or (c0 not in vp and c1 not in vp):
            put(w, value, np.where(m, d1(w), d0(w)) & mask_defined(w))
            return
        if defined_in_exec(w):
            # both sources wholly defined in EXEC: a lane's bits are all or none by its
            # mask bit's definedness, the whole-register rule
            put(w, value, np.where(m, d1(w), d0(w)) & mask_defined(w))
            _drop_empty(w, col)
            return
        if w.pend_v and col in w.pend_v:
            put(w, value, True)  # raises the hazard as any write would
        bits = np.where(m, bits1(w), bits0(w)) & np.where(mask_defined(w), U32(FULL), U32(0))
        write_bits(w, col, np.broadcast_to(np.asarray(value).view(U32), (lanes,)),
                   np.asarray(bits, U32), FULL, None if w.exec_full else w.exec)
    return step
