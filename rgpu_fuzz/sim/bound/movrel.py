"""RDNA3 relative VGPR moves: `v_movrels_b32`, `v_movreld_b32`, `v_movrelsd_b32`,
`v_movrelsd_2_b32` (VOP1 and VOP3 encodings; GFX9 targets have no such instructions and
index through `s_set_gpr_idx_on` instead, `rgpu_fuzz.sim.bound.gpr_idx`).

LLVM keeps a small array indexed by a uniform run-time value in consecutive VGPRs and reads
or writes one element with these (SITargetLowering's SI_INDIRECT_SRC/DST expansion when the
subtarget `hasMovrel` and the vector is too large to expand into compares and selects):
`s_mov_b32 m0, sN` then `v_movrels_b32_e32 v2, v9` (v2 = v[9 + m0]) or
`v_movreld_b32_e32 v9, 7` (v[9 + m0] = 7).

Semantics (RDNA3 ISA "VOP1 Instructions"; the pseudocode of AMD's ISA XML):
- V_MOVRELD_B32:  addr = DST + M0.u32[31:0];  VGPR[lane][addr] = S0.b32
- V_MOVRELS_B32:  addr = SRC0 + M0.u32[31:0]; D0.b32 = VGPR[lane][addr]
- V_MOVRELSD_B32: addrs = SRC0 + M0.u32[31:0]; addrd = DST + M0.u32[31:0];
  VGPR[lane][addrd] = VGPR[lane][addrs]
- V_MOVRELSD_2_B32: addrs = SRC0 + M0.u32[9:0]; addrd = DST + M0.u32[25:16]; as above.
DST and SRC0 are the raw VGPR numbers of the instruction; SRC0 of the S forms must be a
VGPR (LLVM's VOP_I32_VI32 profile), S0 of V_MOVRELD is any 32-bit source. Lanes outside
EXEC are not written (a VALU write).

How it is simulated: the instruction's words mean the same wherever they appear (M0 is read
when it runs), so its step is shared like any other; it reads M0 at each execution and runs
the plain `V_MOV_B32` with the indexed operands moved, bound once per offset pair and kept by
the step. The move carries definedness as every copy does (`bound.alu.COPIES`: undefined
lanes and partly defined `vpart` lanes move with the value). It is not part of fused runs
(`fused.emit._opaque` takes only table rows), since a fused run names its registers when it
is compiled.

Checks, in order: M0 pending → `sim-waitcnt-hazard`; an M0 bit the index uses undefined →
`sim-uninit-read` (the index decides which register is read or written, like an address);
an index past v255, the architectural file → `sim-oob-access` (as for GFX9 indexing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rgpu_fuzz.sim.bound.alu import Step
from rgpu_fuzz.sim.bound.operands import hazard, uninit
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.state.wave import M0, Wave

N_VGPR = 256
FULL = 0xFFFF_FFFF

MOVREL: dict[str, tuple[bool, bool, bool]] = {
    # name: (destination indexed, source indexed, M0 split as SD_2: src [9:0], dst [25:16])
    "V_MOVRELD_B32": (True, False, False),
    "V_MOVRELS_B32": (False, True, False),
    "V_MOVRELSD_B32": (True, True, False),
    "V_MOVRELSD_2_B32": (True, True, True),
}

_SRC_BITS, _DST_BITS = 0x0000_03FF, 0x03FF_0000


def _offsets(m0: int, split: bool) -> tuple[int, int]:
    """(destination offset, source offset) from M0's value: the order of the operands."""
    if split:
        return (m0 & _DST_BITS) >> 16, m0 & _SRC_BITS
    return m0, m0


def _bind_moved(inst: Inst, moves: tuple[bool, bool], offsets: tuple[int, int],
                bind: Callable[[Inst], Step], unsupported: Callable[[Inst, str], Step]) -> Step:
    """The plain move `inst` stands for with its indexed operands moved by `offsets`."""
    ops = list(inst.operands)
    for k, (indexed, by) in enumerate(zip(moves, offsets, strict=True)):
        if not indexed:
            continue
        op = ops[k]
        if op.kind is not OpKind.VGPR:
            return unsupported(inst, f"operand {k} is not a VGPR")
        if op.index + by >= N_VGPR:
            return _oob(Fault(FaultKind.OOB_ACCESS,
                              f"{inst.mnemonic}: m0 = {by} moves operand {k} from v{op.index} "
                              f"past v{N_VGPR - 1}", inst.address))
        ops[k] = replace(op, index=op.index + by)
    return bind(replace(inst, opcode="V_MOV_B32", operands=tuple(ops)))


def _oob(fault: Fault) -> Step:
    def oob(w: Wave) -> None:
        raise SimStop(fault)
    return oob


def bind_movrel(inst: Inst, bind: Callable[[Inst], Step],
                unsupported: Callable[[Inst, str], Step]) -> Step | None:
    """The step of a V_MOVREL* instruction (None for any other); `bind` binds the plain
    V_MOV_B32 it becomes at one index, `unsupported` a form it cannot run."""
    spec = MOVREL.get(inst.opcode)
    if spec is None:
        return None
    dst_indexed, src_indexed, split = spec
    used = (_SRC_BITS | _DST_BITS) if split else FULL
    moves = (dst_indexed, src_indexed)
    bound: dict[int, Step] = {}

    def step(w: Wave) -> Any:
        if w.pend_s and M0 in w.pend_s:
            raise hazard(w, f"m0 read (VGPR index) by {inst.mnemonic} before the s_waitcnt "
                            "covering its load")
        if w.sdef[M0] & used != used:
            raise uninit(w, f"m0 (VGPR index) read by {inst.mnemonic} with undefined bits "
                            f"{used & ~w.sdef[M0] & FULL:#010x}")
        key = w.S[M0] & used
        got = bound.get(key)
        if got is None:
            if len(bound) > 1024:
                bound.clear()
            got = bound[key] = _bind_moved(inst, moves, _offsets(key, split), bind,
                                         unsupported)
        return got(w)
    return step


__all__ = ["MOVREL", "bind_movrel"]
