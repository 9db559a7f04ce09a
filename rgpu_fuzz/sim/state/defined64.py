"""Definedness of the two halves of a 64-bit VALU shift (V_LSHLREV_B64, V_LSHRREV_B64,
V_ASHRREV_I64), lane by lane, from the shift amount: which source half each result half
is made of.

Why: LLVM's O0 code builds 64-bit values as `{lo, IMPLICIT_DEF}` register pairs and shifts
the undefined half out (`v_lshlrev_b64 v[4:5], 32, v[4:5]` with v5 never written, from
`zext(mul_hi) << 32`); hardware cannot see the undefined half in the result, so neither may
the definedness model. Definedness is per 32-bit register and lane (as for every VGPR), so
a half is defined when every source half that contributes bits to it is, and when the
amount's lane is. CDNA3 ISA "V_LSHLREV_B64": D = S1 << S0[5:0].

A source register with partly defined lanes (`Wave.vpart`: a 64-bit scratch load of a
5-byte array, whose last three bytes nothing wrote) is shifted bit by bit instead: the
defined-bit masks of both halves move as the value does (vacated bits are zeros, defined;
an arithmetic shift copies the sign bit's state), and a result half that is partly defined
is recorded as such. campaign bucket a8b8660435: `v_lshrrev_b64 v[4:5], 8,
v[4:5]` then a byte compare of v4, whose four bytes were all defined, reported
`sim-uninit-read`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import AGPR_BASE, Wave

SHIFT64_OPS = frozenset({"V_LSHLREV_B64", "V_LSHRREV_B64", "V_ASHRREV_I64"})
_ALL, _M32 = np.uint64((1 << 64) - 1), np.uint32(0xFFFF_FFFF)

Getter = Callable[[Wave], Any]


def _halves(op: Opnd, full: Getter) -> tuple[Getter, Getter]:
    """(low half, high half) defined lanes of a 64-bit source; a constant or anything the
    model does not split is defined or not as a whole (`full`)."""
    if op.kind in (OpKind.VGPR, OpKind.AGPR):
        col = op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0)
        return (lambda w: w.vdef[:, col]), (lambda w: w.vdef[:, col + 1])
    if op.kind is OpKind.SGPR and op.index < 104 and op.index % 2 == 0:
        i = op.index
        return (lambda w: w.sdef[i] == 0xFFFF_FFFF), (lambda w: w.sdef[i + 1] == 0xFFFF_FFFF)
    return full, full


def shift64_step(inst: Inst, amount: tuple[Getter, Getter], source: tuple[Getter, Getter],
                 fn: Callable[[Any, Any], Any], dt: Any,
                 put: Callable[[Wave, Any, Any], None]) -> Callable[[Wave], None]:
    """The bound step of one 64-bit shift: value as `fn(amount, source)`, definedness per
    result half (`put` takes a (low, high) pair of defined-lane arrays)."""
    (ga, da), (gs, ds) = amount, source
    lo_of, hi_of = _halves(inst.operands[2], ds)
    kind = inst.opcode
    src = inst.operands[2]
    col = src.index + (AGPR_BASE if src.kind is OpKind.AGPR else 0) \
        if src.kind in (OpKind.VGPR, OpKind.AGPR) else -1

    def by_bits(w: Wave, a: Any) -> None:
        """`step` for a source with partly defined lanes: the mask shifted as the value."""
        m = defined_bits(w, col).astype(np.uint64) | \
            (defined_bits(w, col + 1).astype(np.uint64) << np.uint64(32))
        n = (np.asarray(a).astype(np.uint64) & np.uint64(63))
        if kind == "V_LSHLREV_B64":
            dm = (m << n) | ((np.uint64(1) << n) - np.uint64(1))
        elif kind == "V_LSHRREV_B64":
            dm = (m >> n) | ~(_ALL >> n)
        else:
            dm = (m.view(np.int64) >> n.astype(np.int64)).view(np.uint64)
        ok = np.broadcast_to(np.asarray(da(w), bool), dm.shape)
        dm = np.where(ok, dm, np.uint64(0))
        lo, hi = (dm & _M32).astype(np.uint32), (dm >> np.uint64(32)).astype(np.uint32)
        put(w, np.asarray(fn(a, gs(w)), dt), (lo == _M32, hi == _M32))
        active = w.exec
        dst = inst.operands[0]
        dcol = dst.index + (AGPR_BASE if dst.kind is OpKind.AGPR else 0)
        for c, bits in ((dcol, lo), (dcol + 1, hi)):
            part = active & (bits != 0) & (bits != _M32)
            for lane in np.flatnonzero(part).tolist():
                w.vpart.setdefault(c, {})[lane] = int(bits[lane])

    def _uniform(n: int, lo: Any, hi: Any, ok: Any) -> tuple[Any, Any]:
        """`step`'s (low, high) defined lanes for an amount `n` the same in every lane."""
        if kind == "V_LSHLREV_B64":
            dlo, dhi = (True, lo) if n >= 32 else (lo, lo & hi) if n else (lo, hi)
        elif kind == "V_LSHRREV_B64":
            dlo, dhi = (hi, True) if n >= 32 else (lo & hi, hi) if n else (lo, hi)
        else:
            dlo, dhi = (hi if n >= 32 else lo & hi if n else lo), hi
        return dlo & ok, dhi & ok

    def step(w: Wave) -> None:
        a, s = ga(w), gs(w)
        if w.vpart and col >= 0 and (col in w.vpart or col + 1 in w.vpart):
            by_bits(w, a)
            return
        if type(a) is not np.ndarray:  # a uniform amount: which halves, decided once
            put(w, np.asarray(fn(a, s), dt), _uniform(int(a) & 63, lo_of(w), hi_of(w), da(w)))
            return
        sh = np.asarray(a).astype(np.int64) & 63
        lo, hi, ok = lo_of(w), hi_of(w), da(w)
        zero, low, high = sh == 0, (sh > 0) & (sh < 32), sh >= 32
        both = lo & hi
        if kind == "V_LSHLREV_B64":
            dlo = np.where(high, True, lo)
            dhi = np.where(zero, hi, np.where(low, both, lo))
        elif kind == "V_LSHRREV_B64":
            dlo = np.where(zero, lo, np.where(low, both, hi))
            dhi = np.where(high, True, hi)
        else:  # V_ASHRREV_I64: the high half fills with copies of its own sign bit
            dlo = np.where(zero, lo, np.where(low, both, hi))
            dhi = hi
        put(w, np.asarray(fn(a, s), dt), (dlo & ok, dhi & ok))
    return step
