"""Instructions that move a VGPR's value between lanes by a lane map of their own:
`v_permlane16_b32`, `v_permlanex16_b32`, `v_permlane64_b32` (RDNA3),
`v_permlane16_swap_b32`, `v_permlane32_swap_b32` (CDNA4), `ds_bpermute_b32`,
`ds_permute_b32` and `ds_swizzle_b32` (DS, through the LDS crossbar without touching LDS
memory).

Semantics from AMD's ISA pseudocode (the ISA XML's, CDNA3, CDNA4 and RDNA3; lane maps in
`semantics.dpp`):
- V_PERMLANE64_B32 (wave64 only; a no-op in wave32): lane l of EXEC gets S0 of lane l ^ 32,
  enabled or not.
- V_PERMLANE16/X16_B32: D = S0 of the lane the map picks, for the lanes of EXEC. OP_SEL[0]
  is FI and OP_SEL[1] BOUND_CTRL (LLVM AMDGPUModifierSyntax "dpp_op_sel"), with DPP16's
  meaning: with FI = 0 a disabled source lane is invalid; an invalid lane reads 0 when
  BOUND_CTRL = 1 and is not written otherwise (it keeps `old`, the tied destination).
- V_PERMLANE16_SWAP_B32 / V_PERMLANE32_SWAP_B32 (gfx950, wave64): lanes l and l ^ 16
  (l ^ 32) trade, SRC0's lane in an even row (lower half) with VDST's in an odd row (upper
  half); both registers are written, the other lane of each register keeps its value. The
  pseudocode names no EXEC; the `_e64` form's modifiers are LLVM's DPP16 FI and BOUND_CTRL
  operands (VOP1Instructions.td `VOP_PERMLANE_SWAP`: `Dpp16FI`, `DppBoundCtrl`; the
  `_e32` form has both 0), so a lane is read and written by the V_PERMLANE16_B32 rules
  above: a lane outside EXEC is not written; with FI = 0 a partner outside EXEC is invalid;
  an invalid lane reads 0 when BOUND_CTRL = 1 and is not written otherwise.
- DS_BPERMUTE_B32: lane i reads DATA0 of lane ((ADDR_i + OFFSET) / 4) mod 64 (RDNA3: mod
  32), or 0 where that lane is disabled ("EXEC is applied to the source VGPR reads");
  written to the lanes of EXEC.
- DS_PERMUTE_B32: each enabled lane i sends DATA0 to lane ((ADDR_i + OFFSET) / 4) mod 64
  (RDNA3: mod 32), the highest-numbered sender winning; lanes no one sent to get 0; written
  to the lanes of EXEC.
- RDNA (GFX10/GFX11) in wave64: the RDNA3 pseudocode's lane index is "MOD 32 regardless of
  wave size", and the permute runs once per 32-lane half (docs/simulator.md "RDNA wave64"):
  a lane of half h (lanes 32h..32h+31) reads, or sends to, lane 32h + index mod 32, with the
  EXEC bit of that lane. The other half is out of reach. That per-half reading is the one
  LLVM's own code generation relies on (`GCNSubtarget::supportsWaveWideBPermute` is false
  for GFX10/GFX11 wave64, and `llvm.amdgcn.wave.shuffle` is lowered there to a
  `ds_bpermute_b32` of the value, one of its `v_permlane64_b32` swap and a select on bit 5 of
  `lane ^ index`), as are Mesa's ACO and LLPC.
- DS_SWIZZLE_B32: lane i reads DATA0 of the lane the offset's map picks, 0 where it is
  disabled ("thread_valid[j] ? thread_in[j] : 0").

The DS forms are LDS-queue instructions: their result is parked like a DS load
(`inflight.issue_vector_load`, lgkmcnt) and written at its `s_waitcnt`; reading it earlier is
`sim-waitcnt-hazard`. An ADDR lane of EXEC or a lane select (S1, S2 of permlane) that is
undefined is `sim-uninit-read` (an observation point, as an address is); data moves with the
definedness of its source lane, bit by bit (`halves.defined_bits`: a lane a D16 load or a
GFX10+ 16-bit result filled in part arrives with the same bits defined), a zero supplied for
a disabled lane defined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.dpp import gfx9
from rgpu_fuzz.sim.bound.inflight import issue_vector_load
from rgpu_fuzz.sim.bound.operands import Env, hazard, scalar_source, uninit, vcol
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.semantics.dpp import (
    permlane16_sources,
    permlane_swap_sources,
    swizzle_sources,
)
from rgpu_fuzz.sim.state.halves import FULL, defined_bits, write_bits
from rgpu_fuzz.sim.state.wave import Wave

Step = Callable[[Wave], Any]
_FULL = np.uint32(FULL)

LANE_XFER = frozenset({"V_PERMLANE16_B32", "V_PERMLANEX16_B32", "V_PERMLANE64_B32",
                       "V_PERMLANE16_SWAP_B32", "V_PERMLANE32_SWAP_B32",
                       "DS_BPERMUTE_B32", "DS_PERMUTE_B32", "DS_SWIZZLE_B32"})
_SWAP_DISTANCE = {"V_PERMLANE16_SWAP_B32": 16, "V_PERMLANE32_SWAP_B32": 32}


def bind_lane_xfer(inst: Inst, env: Env) -> Step:
    if inst.opcode == "V_PERMLANE64_B32":
        return _permlane64(inst, env)
    if inst.opcode in _SWAP_DISTANCE:
        return _permlane_swap(inst, env, _SWAP_DISTANCE[inst.opcode])
    if inst.opcode.startswith("V_PERMLANE"):
        return _permlane(inst, env)
    if inst.opcode == "DS_SWIZZLE_B32":
        return _swizzle(inst, env)
    return _permute(inst, env, backward=inst.opcode == "DS_BPERMUTE_B32")


def _vector(op: Any, what: str) -> int:
    if op.kind not in (OpKind.VGPR, OpKind.AGPR) or op.count != 1:
        raise ValueError(f"{what} must be one VGPR")
    return vcol(op)


def _read(w: Wave, col: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """A VGPR's value and defined bits per lane (uint32: a lane a D16 load or a 16-bit
    result filled in part moves with the bits it has)."""
    if w.pend_v and col in w.pend_v:
        raise hazard(w, f"v{col} {what} before the s_waitcnt covering its load")
    return w.V[:, col], defined_bits(w, col)


def _put(w: Wave, col: int, value: np.ndarray, defined: np.ndarray,
         lanes: np.ndarray | None) -> None:
    """Write `value` with `defined` bits into `lanes` of VGPR `col` (None: every lane)."""
    if w.pend_v and col in w.pend_v:
        raise hazard(w, f"v{col} written before its load completed")
    write_bits(w, col, value, defined, FULL, lanes)


def _permlane(inst: Inst, env: Env) -> Step:
    ops = inst.operands
    if len(ops) != 4 or inst.mods.get("clamp") or ops[1].neg or ops[1].abs:
        raise ValueError("unexpected operands")
    dst, src = ops[0], _vector(ops[1], "SRC0")
    fetch_inactive, zero_invalid = bool(getattr(ops[1], "hi", False)), \
        bool(getattr(ops[2], "hi", False))
    sel1, sel1_def = scalar_source(ops[2], 32, env)
    sel2, sel2_def = scalar_source(ops[3], 32, env)
    col = _vector(dst, "VDST")
    cross = inst.opcode == "V_PERMLANEX16_B32"
    lanes = env.lanes
    mnemonic = inst.mnemonic
    maps: dict[tuple[int, int], np.ndarray] = {}

    def step(w: Wave) -> None:
        if not (sel1_def(w) and sel2_def(w)):
            raise uninit(w, f"{mnemonic}: lane select from an undefined register")
        key = (sel1(w), sel2(w))
        at = maps.get(key)
        if at is None:
            at = maps[key] = permlane16_sources(*key, lanes, cross)
        v, d = _read(w, src, "read")
        e = w.exec
        valid = np.ones(lanes, bool) if fetch_inactive else e[at]
        value = np.where(valid, v[at], np.uint32(0))
        defined = np.where(valid, d[at], _FULL)
        written = e if zero_invalid else e & valid
        _put(w, col, value, defined, None if w.exec_full and written.all() else written)
    return step


def _permlane64(inst: Inst, env: Env) -> Step:
    """V_PERMLANE64_B32 (RDNA3 pseudocode): in wave64 lane l of EXEC gets S0 of lane l ^ 32,
    read whether that lane is enabled or not; in wave32 a no-op."""
    ops = inst.operands
    if len(ops) != 2 or ops[1].neg or ops[1].abs or inst.mods.get("clamp"):
        raise ValueError("unexpected operands")
    if env.lanes == 32:
        return lambda w: None
    src, col = _vector(ops[1], "SRC0"), _vector(ops[0], "VDST")
    at = np.arange(env.lanes) ^ 32

    def step(w: Wave) -> None:
        v, d = _read(w, src, "read")
        _put(w, col, v[at], d[at], None if w.exec_full else w.exec)
    return step


def _permlane_swap(inst: Inst, env: Env, distance: int) -> Step:
    """V_PERMLANE16/32_SWAP_B32 (module docstring): both registers are read before either
    is written, so VDST = SRC0 swaps the lanes of one register, as the pseudocode's `tmp`.
    Definedness moves bit by bit (`_read`)."""
    ops, m = inst.operands, inst.mods
    if len(ops) != 2 or m.get("clamp") or m.get("omod") or ops[1].neg or ops[1].abs:
        raise ValueError("unexpected operands")
    if env.lanes != 64:
        raise ValueError("a permlane swap in wave32")
    vd, s0 = _vector(ops[0], "VDST"), _vector(ops[1], "SRC0")
    fetch_inactive, zero_invalid = bool(m.get("fi")), bool(m.get("bound_ctrl"))
    partner, s0_side = permlane_swap_sources(distance, env.lanes)
    vd_side = ~s0_side

    def step(w: Wave) -> None:
        a, ad = _read(w, s0, "read")
        b, bd = _read(w, vd, "read")
        e = w.exec
        valid = np.ones(64, bool) if fetch_inactive else e[partner]
        # SRC0's lanes take VDST of their partner, VDST's lanes SRC0 of theirs
        value = np.where(valid, np.where(s0_side, b[partner], a[partner]), np.uint32(0))
        defined = np.where(valid, np.where(s0_side, bd[partner], ad[partner]), _FULL)
        written = e if zero_invalid else e & valid
        _put(w, s0, value, defined, written & s0_side)
        _put(w, vd, value, defined, written & vd_side)
    return step


def _offset(inst: Inst) -> int:
    m = inst.mods
    return int(m["offset"]) if "offset" in m else \
        (int(m.get("offset1", 0)) << 8 | int(m.get("offset0", 0)))


def _park(w: Wave, col: int, value: np.ndarray, defined: np.ndarray) -> None:
    issue_vector_load(w, col, value.reshape(-1, 1).astype(np.uint32),
                      defined.reshape(-1, 1), vm=False, lgkm=True)


def _permute(inst: Inst, env: Env, backward: bool) -> Step:
    ops = inst.operands
    if len(ops) != 3:
        raise ValueError("unexpected operands")
    dst, addr, data = _vector(ops[0], "VDST"), _vector(ops[1], "ADDR"), \
        _vector(ops[2], "DATA0")
    offset = _offset(inst)
    lanes = env.lanes
    lane_ids = np.arange(lanes)
    # the lanes one permute reaches: the whole wave on GFX9, a 32-lane half on RDNA
    reach = lanes if gfx9(inst) else 32
    base = lane_ids & ~(reach - 1)
    mnemonic = inst.mnemonic

    def step(w: Wave) -> None:
        e = w.exec
        a, ad = _read(w, addr, "used as an address")
        if not bool(np.all(ad[e])):
            raise uninit(w, f"{mnemonic}: address from an undefined register")
        v, d = _read(w, data, "read")
        other = base + ((a.astype(np.int64) + offset) >> 2) % reach
        if backward:
            valid = e[other]
            value = np.where(valid, v[other], np.uint32(0))
            defined = np.where(valid, d[other], _FULL)
        else:
            value = np.zeros(lanes, np.uint32)
            defined = np.full(lanes, _FULL)
            senders = lane_ids[e]          # ascending: the highest sender is written last
            value[other[senders]] = v[senders]
            defined[other[senders]] = d[senders]
        _park(w, dst, value, defined)
    return step


def _swizzle(inst: Inst, env: Env) -> Step:
    ops = inst.operands
    if len(ops) != 2:
        raise ValueError("unexpected operands")
    dst, data = _vector(ops[0], "VDST"), _vector(ops[1], "DATA0")
    at = swizzle_sources(_offset(inst), env.lanes)

    def step(w: Wave) -> None:
        v, d = _read(w, data, "read")
        valid = w.exec[at]
        _park(w, dst, np.where(valid, v[at], np.uint32(0)), np.where(valid, d[at], _FULL))
    return step


__all__ = ["LANE_XFER", "bind_lane_xfer"]
