"""GFX9 VGPR indexing mode: `s_set_gpr_idx_on` … `s_set_gpr_idx_off` (GFX8/GFX9, gfx90a and
gfx942; not RDNA). LLVM lowers `insertelement`/`extractelement` at an index it cannot fold
into this: `s_set_gpr_idx_on s5, gpr_idx(DST)`, one or more VALU instructions whose VGPR
operands are relative to M0, then `s_set_gpr_idx_off`
(`SIInstrInfo`'s SI_INDIRECT_SRC/DST expansion, a bundle without branches).

Semantics (Vega/CDNA ISA, SOPC `S_SET_GPR_IDX_ON`, SOP1 `S_SET_GPR_IDX_IDX`, SOPP
`S_SET_GPR_IDX_MODE`/`_OFF`; tinygrad's CDNA pseudocode for IDX and MODE):
- ON: MODE.gpr_idx_en = 1; M0[7:0] = S0[7:0]; M0[15:12] = the 4-bit immediate (the
  SSRC1 field); the other bits of M0 unchanged.
- IDX: M0[7:0] = S0[7:0]. MODE: M0[15:12] = SIMM16[3:0]. OFF: MODE.gpr_idx_en = 0.
- While enabled, a VALU instruction adds M0[7:0] to the register number of its VGPR
  operands that M0[15:12] selects: bit 0 src0, bit 1 src1, bit 2 src2, bit 3 the
  destination (LLVM AMDGPU operand syntax, `imask`/`gpr_idx(...)`). SGPRs and constants
  are not indexed. SALU and other instructions are not affected.

How it is simulated. Everything else the simulator binds is keyed by instruction words
and shared across code objects (`Inst.share_key`), and runs of instructions are fused
into compiled code; an instruction between ON and OFF means something else than the same
words elsewhere. So the scan marks each region (`mark_regions`): ON and the instructions
up to OFF become address-bound (no share key: never shared, never fused), carrying how
many of their operands are definitions. Their steps read M0 when they run and bind the
instruction with its indexed operands moved (one binding per index, kept by the step).
A region must be straight-line code up to its OFF (what LLVM emits); anything else — a
branch, a call or another ON or MODE before the OFF, no OFF at all — leaves ON
unsupported (`unsupported-instruction:s_set_gpr_idx_on`), rather than guessing where the
mode ends.

Checks: M0's index and mode bits must be defined (`sim-uninit-read`); an indexed VGPR
past v255, the architectural file, is `sim-oob-access` (hardware is reported to read v0
instead, which nothing well-defined relies on)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rgpu_fuzz.sim.bound.alu import Step
from rgpu_fuzz.sim.bound.operands import Env, hazard, scalar_bits_source, uninit
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OperandX, OpKind, Opnd
from rgpu_fuzz.sim.isa.regions import IDX, MODE, OFF, ON, REGION
from rgpu_fuzz.sim.state.wave import M0, Wave

INDEX_BITS, MODE_BITS = 0x0000_00FF, 0x0000_F000
N_VGPR = 256


def _moved(op: Any, by: int) -> Any:
    if isinstance(op, OperandX):
        return replace(op, base=replace(op.base, index=op.base.index + by))
    return replace(op, index=op.index + by)


def _indexed_slots(inst: Inst, ndefs: int, mode: int) -> list[int]:
    """The operands of `inst` that mode bits `mode` (M0[15:12] >> 12) index."""
    out = []
    for k, op in enumerate(inst.operands):
        if op.kind is not OpKind.VGPR:
            continue
        if (k < ndefs and mode & 8) or (ndefs <= k < ndefs + 3 and mode >> (k - ndefs) & 1):
            out.append(k)
    return out


def bind_region(inst: Inst, bind: Callable[[Inst], Step]) -> Step:
    """The step of an instruction inside a region: M0's index and mode read when it runs,
    the instruction bound with its indexed operands moved (`bind`: the plain binder)."""
    ndefs = inst.mods[REGION]
    plain = replace(inst, mods={k: v for k, v in inst.mods.items() if k != REGION})
    if not plain.opcode.startswith("V_"):
        return bind(plain)
    bound: dict[int, Step] = {}

    def step(w: Wave) -> Any:
        if w.pend_s and M0 in w.pend_s:
            raise hazard(w, "m0 read (VGPR index) before the s_waitcnt covering its load")
        if w.sdef[M0] & (INDEX_BITS | MODE_BITS) != INDEX_BITS | MODE_BITS:
            raise uninit(w, f"m0 (VGPR index and mode) read by {inst.mnemonic} in VGPR "
                            "indexing mode before it was written")
        key = w.S[M0] & (INDEX_BITS | MODE_BITS)
        got = bound.get(key)
        if got is None:
            got = bound[key] = _bind_at(plain, ndefs, key & INDEX_BITS, key >> 12, bind)
        return got(w)
    return step


def _bind_at(inst: Inst, ndefs: int, index: int, mode: int,
             bind: Callable[[Inst], Step]) -> Step:
    ops = list(inst.operands)
    for k in _indexed_slots(inst, ndefs, mode):
        ops[k] = _moved(ops[k], index)
        if ops[k].index + ops[k].count > N_VGPR:
            return _oob(Fault(FaultKind.OOB_ACCESS,
                              f"{inst.mnemonic}: VGPR index m0[7:0] = {index} moves operand "
                              f"{k} to v{ops[k].index}, past v{N_VGPR - 1}", inst.address))
    return bind(replace(inst, operands=tuple(ops)))


def _oob(fault: Fault) -> Step:
    def oob(w: Wave) -> None:
        raise SimStop(fault)
    return oob


def _m0_writer(src: Opnd | None, env: Env, imm_bits: int, mask: int) -> Step:
    """A step that writes the bits `mask` of M0: from S0[7:0] (`src`) or `imm_bits`."""
    if src is None:
        def set_mode(w: Wave) -> None:
            w.S[M0] = (w.S[M0] & ~mask) | imm_bits
            w.sdef[M0] |= mask
        return set_mode
    get, dbits = scalar_bits_source(src, 32, env)

    def set_index(w: Wave) -> None:
        v, d = get(w), dbits(w)
        w.S[M0] = (w.S[M0] & ~mask) | (v & INDEX_BITS) | imm_bits
        w.sdef[M0] = (w.sdef[M0] & ~mask) | (d & INDEX_BITS) | (mask & MODE_BITS)
    return set_index


def bind_gpr_idx(inst: Inst, env: Env, bind: Callable[[Inst], Step],
                 unsupported: Callable[[Inst, str], Step]) -> Step | None:
    """The step of ON, OFF, IDX, MODE or of an instruction in a region; None for any other
    instruction."""
    name = inst.opcode
    if REGION in inst.mods and name != ON:
        return bind_region(inst, bind)
    if name == ON:
        if REGION not in inst.mods:
            return unsupported(inst, "VGPR indexing mode that is not straight-line code up "
                                     "to its s_set_gpr_idx_off")
        src, imm = inst.operands[0], inst.operands[1].value & 0xF
        return _m0_writer(src, env, imm << 12, INDEX_BITS | MODE_BITS)
    if name == OFF:
        return lambda w: None
    if name == IDX:
        return _m0_writer(inst.operands[0], env, 0, INDEX_BITS)
    if name == MODE:
        return _m0_writer(None, env, (inst.operands[0].value & 0xF) << 12, MODE_BITS)
    return None


__all__ = ["bind_gpr_idx"]
