"""Bound steps of the lane moves SGPR spills are made of: `v_writelane_b32 vN, sM, lane` and
`v_readlane_b32 sM, vN, lane` with a constant lane, and `v_readfirstlane_b32` of a plain
VGPR (`bound.alu._writelane`/`_readlane` take every other shape).

Why: they are a quarter of the wave-instructions cold O0 code runs on the bound tier
; each moves one 32-bit value between `Wave.S` and one element of `Wave.V`, which
`Wave.Vflat`/`Wave.dflat` reach at an offset fixed at bind time, where numpy indexing of the
2-D arrays costs more than the rest of the step.

Each step computes what the general step computes, with its faults in the same order (the
vector register's hazard, then the scalar register's); definedness moves as there: a lane
written from a partly defined SGPR is held in `Wave.vpart`, and read back from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env, hazard
from rgpu_fuzz.sim.bound.scalar_steps import M32, _const, _dest, _hazards, _source
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.regfile import N_VECTOR
from rgpu_fuzz.sim.state.wave import AGPR_BASE, Wave

Step = Callable[[Wave], Any]


def _vcol(op: Any) -> int:
    """The VGPR/AGPR column of a plain (whole-register) operand, or -1."""
    if type(op) is not Opnd or op.kind not in (OpKind.VGPR, OpKind.AGPR) or op.abs or op.neg:
        return -1
    return op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0)


def writelane(inst: Inst, env: Env) -> Step | None:
    """V_WRITELANE_B32 vN, sM (or a constant), lane (a constant): `bound.alu._writelane`
    with the lane known at bind time."""
    ops = inst.operands
    if len(ops) != 3 or type(ops[0]) is not Opnd:
        return None
    col = ops[0].index + (256 if ops[0].kind is OpKind.AGPR else 0)
    sel = _const(ops[2], 32, env)
    src = _source(ops[1], 32, env)
    if sel is None or src is None:
        return None
    lane = sel % env.lanes
    at = lane * N_VECTOR + col
    i = src.reg
    if i < 0:
        k = src.value

        def writelane_k(w: Wave) -> None:
            if w.pend_v and col in w.pend_v:
                raise hazard(w, f"v{col} written before its load completed")
            w.Vflat[at] = k
            w.dflat[at] = True
            vp = w.vpart
            if vp and col in vp:
                vp[col].pop(lane, None)
        return writelane_k

    def writelane_s(w: Wave) -> None:
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} written before its load completed")
        if w.pend_s and i in w.pend_s:
            raise hazard(w, f"s{i} read before the s_waitcnt covering its load")
        w.Vflat[at] = w.S[i]
        bits = w.sdef[i]
        vp = w.vpart
        if bits == M32:
            w.dflat[at] = True
            if vp and col in vp:
                vp[col].pop(lane, None)
            return
        w.dflat[at] = False
        if bits:
            vp.setdefault(col, {})[lane] = bits
        elif col in vp:
            vp[col].pop(lane, None)
    return writelane_s


def readlane(inst: Inst, env: Env) -> Step | None:
    """V_READLANE_B32 sN, vM, lane (a constant) into a plain SGPR: `bound.alu._readlane`'s
    one-lane step with the lane known at bind time (a lane held partly defined in
    `Wave.vpart` gives its defined bits)."""
    ops = inst.operands
    if len(ops) != 3:
        return None
    dst = _dest(ops[0], False)
    col = _vcol(ops[1])
    sel = _const(ops[2], 32, env)
    if dst is None or dst[1] or col < 0 or sel is None:
        return None
    o = dst[0]
    write = (o, False)
    lane = sel % env.lanes
    at = lane * N_VECTOR + col

    def readlane_k(w: Wave) -> None:
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} read before the s_waitcnt covering its load")
        if w.dflat[at]:
            d = M32
        else:
            vp = w.vpart
            d = int(vp[col].get(lane, 0)) & M32 if col in vp else 0
        if w.pend_s:
            _hazards(w, (), write)
        w.S[o] = w.Vflat[at]
        w.sdef[o] = d
    return readlane_k


def readfirstlane(inst: Inst, env: Env) -> Step | None:
    """V_READFIRSTLANE_B32 sN, vM: the lowest active lane (lane 0 when none is); a lane held
    partly defined in `Wave.vpart` gives its defined bits, as `readlane` does (the lane read
    is the same kind of read; CDNA3 ISA: readfirstlane copies one lane's value to an SGPR)."""
    ops = inst.operands
    if len(ops) != 2:
        return None
    dst = _dest(ops[0], False)
    col = _vcol(ops[1])
    if dst is None or dst[1] or col < 0:
        return None
    o = dst[0]
    write = (o, False)

    def first(w: Wave) -> None:
        e = w.exec_bits
        lane = (e & -e).bit_length() - 1 if e else 0
        at = lane * N_VECTOR + col
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} read before the s_waitcnt covering its load")
        if w.dflat[at]:
            d = M32
        else:
            vp = w.vpart
            d = int(vp[col].get(lane, 0)) & M32 if col in vp else 0
        if w.pend_s:
            _hazards(w, (), write)
        w.S[o] = w.Vflat[at]
        w.sdef[o] = d
    return first


def swap(inst: Inst, spec: Any, env: Env) -> Step:
    """V_SWAP_B32 (CDNA3 ISA, VOP1; gfx90a, gfx942): `tmp = D.b32; D.b32 = S0.b32;
    S0.b32 = tmp` in the lanes of EXEC: each register takes the other's value and
    definedness there (partly defined lanes, `Wave.vpart`, included); inactive lanes keep
    theirs. LLVM emits it to exchange two VGPRs (a gfx90a O3 campaign kernel)."""
    ops = inst.operands
    d, s = (_vcol(o) for o in ops[:2]) if len(ops) == 2 else (-1, -1)
    if d < 0 or s < 0:
        raise ValueError("v_swap_b32 of anything but two VGPRs")  # binding: unsupported

    def step(w: Wave) -> None:
        pv = w.pend_v
        for c in (s, d):
            if pv and c in pv:
                raise hazard(w, f"v{c} read before the s_waitcnt covering its load")
        if d == s:
            return
        e = w.exec
        for arr in (w.V, w.vdef):
            a, b = arr[:, d].copy(), arr[:, s].copy()
            np.copyto(arr[:, d], b, where=e)
            np.copyto(arr[:, s], a, where=e)
        vp = w.vpart
        if vp and (d in vp or s in vp):
            pd, ps = vp.pop(d, {}), vp.pop(s, {})
            for col, mine, other in ((d, pd, ps), (s, ps, pd)):
                got = {ln: m for ln, m in mine.items() if not e[ln]}
                got.update({ln: m for ln, m in other.items() if e[ln]})
                if got:
                    vp[col] = got
    return step


__all__ = ["readfirstlane", "readlane", "swap", "writelane"]
