"""Per-bit definedness of V_BFI_B32 and of the bit scans V_FFBL_B32/V_FFBH_U32.

LLVM 22 lowers binary16 `copysign` (and the `round` expansion's) on gfx1100 to
`v_bfi_b32 vD, 0x7fff, vA, vB` on registers that D16 loads or true16 writes filled only in
their low half, then stores D's low half (`global_store_b16`): the result's high half comes
from vB's undefined half, its low half is defined. The whole-lane rule (a lane is defined
when every source is) reported that store as `sim-uninit-read`; memcheck's rule is per bit.

D = (S0 & S1) | (~S0 & S2) (CDNA3/RDNA3 pseudocode `D0.u32 = ((S0.u32 & S1.u32) |
(~S0.u32 & S2.u32))`): a result bit is defined where S0's bit is, and the source it selects
has that bit defined, or where S1's and S2's bits are both defined and equal (the selector
does not matter).

V_FFBL_B32 (RDNA3 V_CTZ_I32_B32: the lowest set bit's index) and V_FFBH_U32 (V_CLZ_I32_U32:
the count of zeros above the highest set bit) read bits up to the first set bit only: the
result is defined where every bit from the scanned end up to a defined set bit is defined.
LLVM 22 computes `u16::trailing_ones` on gfx1100 as `v_xor_b16 v15.l, v1.l, -1`,
`v_or_b32 v4, 0x10000, v15`, `v_ctz_i32_b32 v17, v4`: bits 31:17 of v4 come from the
undefined v15.h, but bit 16 is a defined 1, so the count is defined."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env, hazard, vcol, vector_source
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.state.bitdef32 import _bits_of
from rgpu_fuzz.sim.state.halves import FULL, defined_bits, write_bits
from rgpu_fuzz.sim.state.wave import Wave

U32 = np.uint32


def bfi_bits(s0: Any, d0: Any, s1: Any, d1: Any, s2: Any, d2: Any) -> np.ndarray:
    """The defined bits of V_BFI_B32's result from each source's value and defined bits."""
    s0, s1, s2 = (np.asarray(x, U32) for x in (s0, s1, s2))
    chosen = d0 & ((s0 & d1) | (~s0 & d2))
    agree = d1 & d2 & ~(s1 ^ s2)
    return np.asarray(chosen | agree, U32)


def bind_bfi(inst: Inst, env: Env, whole: Callable[[Wave], None]) -> Callable[[Wave], None]:
    """`whole` (the row's plain bound step) where no source VGPR has partly defined lanes,
    else the per-bit rule. Only for the plain form (a VGPR destination, no modifiers)."""
    ops = inst.operands
    if len(ops) != 4 or ops[0].kind is not OpKind.VGPR or inst.mods.get("clamp") or \
            any(o.neg or o.abs or getattr(o, "hi", False) or getattr(o, "sel", "")
                for o in ops):
        return whole
    srcs = [vector_source(o, "b32", env) for o in ops[1:]]
    bits = [_bits_of(o, d, env.lanes) for o, (_, d) in zip(ops[1:], srcs, strict=True)]
    cols = [vcol(o) for o in ops[1:] if o.kind in (OpKind.VGPR, OpKind.AGPR)]
    dst = vcol(ops[0])

    def step(w: Wave) -> None:
        vp = w.vpart
        if not vp or not any(c in vp for c in cols):
            whole(w)
            return
        (g0, _), (g1, _), (g2, _) = srcs
        s0, s1, s2 = (np.broadcast_to(np.asarray(g(w), U32), (w.lanes,)) for g in (g0, g1, g2))
        value = (s0 & s1) | (~s0 & s2)
        defined = bfi_bits(s0, bits[0](w), s1, bits[1](w), s2, bits[2](w))
        if w.pend_v and dst in w.pend_v:
            raise hazard(w, f"v{dst} written before its load completed")
        write_bits(w, dst, value, defined, FULL, None if w.exec_full else w.exec)
    return step


def _smear_down(x: np.ndarray) -> np.ndarray:
    """Each lane's bits at and below its highest set bit."""
    for k in (1, 2, 4, 8, 16):
        x = x | (x >> U32(k))
    return x


def scan_defined(value: Any, defined: Any, from_low: bool) -> np.ndarray:
    """Lanes whose bit scan from the low (`from_low`) or high end is decided by defined
    bits: all bits defined, or a defined 1 reached before the first undefined bit."""
    value, defined = np.asarray(value, U32), np.asarray(defined, U32)
    undef = ~defined
    if from_low:
        run = (undef & (~undef + U32(1))) - U32(1)  # the defined bits below the lowest undefined
    else:
        run = ~_smear_down(undef)  # the defined bits above the highest undefined
    return np.asarray((undef == 0) | ((value & run) != 0))


SCANS = {"V_FFBL_B32": True, "V_FFBH_U32": False}
"""Bit scans with the per-bit rule → scans from the low end."""


def bind_scan(inst: Inst, env: Env, whole: Callable[[Wave], None]) -> Callable[[Wave], None]:
    """`whole` (the row's bound step), with the lanes whose scan `scan_defined` decides
    marked defined where the source VGPR has partly defined lanes."""
    ops = inst.operands
    if len(ops) != 2 or ops[1].kind not in (OpKind.VGPR, OpKind.AGPR) or \
            ops[0].kind is not OpKind.VGPR or inst.mods.get("clamp") or \
            getattr(ops[1], "sel", "") or inst.mods.get("dst_sel") or ops[1].neg or ops[1].abs:
        return whole
    src, dst = vcol(ops[1]), vcol(ops[0])
    from_low = SCANS[inst.opcode]

    def step(w: Wave) -> None:
        vp = w.vpart
        if not vp or src not in vp:
            whole(w)
            return
        decided = scan_defined(w.V[:, src], defined_bits(w, src), from_low)
        whole(w)
        lanes = decided if w.exec_full else decided & w.exec
        w.vdef[lanes, dst] = True
    return step


PER_BIT = frozenset({"V_BFI_B32", *SCANS, "V_CTZ_I32_B32", "V_CLZ_I32_U32"})
"""The rows this module binds (and their RDNA3 names): the fused tier hands sources with
partly defined lanes to their bound steps (`fused.valu`)."""


__all__ = ["PER_BIT", "SCANS", "bfi_bits", "bind_bfi", "bind_scan", "scan_defined"]
