"""The definedness of an ALU instruction's sources as one getter: the AND of the sources'
definedness getters (lane vectors for VGPRs, a Python bool for a scalar), leaving out constants,
which are always defined, and per 32-bit half for the 64-bit operations that track halves. The
vector ALU binders (`bound.alu`) call the getter once per step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import (
    DTYPES,
    Env,
    low_half_defined,
    vcol,
)
from rgpu_fuzz.sim.isa.inst import OpKind, Opnd
from rgpu_fuzz.sim.state.wave import Wave


def _all(defs: list[Any]) -> Any:
    d = defs[0]
    for x in defs[1:]:
        d = d & x
    return d


CONSTS = (OpKind.INT, OpKind.FLOAT, OpKind.BITS)


def _vec(x: Any, lanes: int) -> Any:
    """`x` over the lanes: itself when it is already a lane vector (`np.broadcast_to` costs
    2-3 us a call, as much as the operation it shapes)."""
    if type(x) is np.ndarray and x.shape == (lanes,):
        return x
    return np.broadcast_to(x, (lanes,))


def _and_defined(ops: Sequence[Opnd], defs: Sequence[Any]) -> Any:
    """One getter for the AND of the sources' definedness getters `defs` (of operands
    `ops`), leaving out constants, which are always defined (`array & True` costs a
    conversion of the Python bool each step). The values are those of the full AND."""
    keep = [(d, o.kind is OpKind.SGPR) for o, d in zip(ops, defs, strict=True)
            if o.kind not in CONSTS]
    return _and_of([d for d, _ in keep], [s for _, s in keep])


def _and_of(keep: list[Any], scalar: Sequence[bool] = ()) -> Any:
    """The AND of the getters `keep`; those flagged in `scalar` give a Python bool (a
    scalar source's definedness): where there are lane vectors too, a defined scalar
    leaves their AND as it is (`vector & True` has the same values, and costs a
    conversion of the bool), an undefined one makes it all False."""
    flags = list(scalar) or [False] * len(keep)
    vectors = [k for k, f in zip(keep, flags, strict=True) if not f]
    bools = [k for k, f in zip(keep, flags, strict=True) if f]
    if not vectors or not bools:
        return _and_plain(keep)
    vec = _and_plain(vectors)
    if len(bools) == 1:
        b0 = bools[0]

        def and1(w: Wave) -> Any:
            v = vec(w)
            return v if b0(w) else v & False
        return and1

    def and_n(w: Wave) -> Any:
        v = vec(w)
        return v if all(b(w) for b in bools) else v & False
    return and_n


def _and_plain(keep: list[Any]) -> Any:
    if not keep:
        return lambda w: True
    if len(keep) == 1:
        return keep[0]
    if len(keep) == 2:
        k0, k1 = keep
        return lambda w: k0(w) & k1(w)
    if len(keep) == 3:
        k0, k1, k2 = keep
        return lambda w: k0(w) & k1(w) & k2(w)
    return lambda w: _all([k(w) for k in keep])


def _halves_defined(ops: Sequence[Opnd], tys: Sequence[str], env: Env) -> Any:
    """One getter of (low halves defined, all defined) over the sources of a 64-bit
    operation with per-half definedness (`LOW_HALF_OPS`, `_mad64`): `low_half_defined` of
    each source ANDed, then the high halves ANDed in, so a 64-bit VGPR source costs two
    column reads and no pair AND of its own. Constants are left out (always defined). The
    second is a new array, or the first itself where no source has a high half."""
    lows, scalar, highs = [], [], []
    for o, t in zip(ops, tys, strict=True):
        if o.kind in CONSTS:
            continue
        lows.append(low_half_defined(o, t, env))
        scalar.append(o.kind is OpKind.SGPR)
        if DTYPES[t][0] != 64:
            continue
        if o.kind in (OpKind.VGPR, OpKind.AGPR):
            c1 = vcol(o) + 1
            highs.append((lambda w, c1=c1: w.vdef[:, c1], False))
        elif o.kind is OpKind.SGPR and o.index < 250 and o.index not in dict(env.constants):
            j = o.index + 1
            highs.append((lambda w, j=j: w.sdef[j] == 0xFFFF_FFFF, True))
    if not lows:
        return lambda w: (True, True)
    low = _and_of(lows, scalar)

    def both(w: Wave) -> tuple[Any, Any]:
        lo = low(w)
        full = lo
        for h, one in highs:
            if not one:
                full = full & h(w)
            elif not h(w):  # a scalar's high half: as `_and_of`
                full = full & False
        return lo, full
    return both
