"""DPP16 and DPP8: any VALU operation whose first source is read from other lanes.

Why one mechanism for every operation: the DPP dword changes only where SRC0 comes from and
which lanes are written (CDNA3/CDNA2 ISA "VOP_DPP", RDNA3 ISA §7.7 "DPP16"/"DPP8"); what is
computed is the operation's own row. LLVM emits `v_mov_b32_dpp` for `llvm.amdgcn.mov.dpp`/
`update.dpp`, and GCNDPPCombine folds those moves into the ALU operation that reads them
(`v_add_u32_dpp`, `v_max_i32_dpp`, ...: the wave reductions and the atomic optimizer's
scans), so the step here wraps the operation's ordinary bound step:

1. SRC0's lane map (`semantics.dpp`) picks a source lane per lane. A lane reads nothing
   ("invalid") when the map gives none, the lane is past the wave, or (DPP16 with FI = 0,
   every GFX9 DPP) the source lane is disabled by EXEC: AMDGPUModifierSyntax "fi" ("fi:0:
   interaction with inactive lanes is controlled by bound_ctrl").
2. An invalid lane reads 0 when BOUND_CTRL = 1 (assembler `bound_ctrl:0` on GFX9, which
   LLVM encodes as 1); with BOUND_CTRL = 0 it is not written and keeps its old value
   ("bound_ctrl": "Accessing data from an invalid lane will return zero"; LLVM ties the
   destination to `old` for the lanes DPP does not write). DPP8 has no BOUND_CTRL: FI = 0
   fetches 0 from an inactive lane, FI = 1 its value ("dpp8 fi").
3. ROW_MASK / BANK_MASK disable writes to whole rows / banks (DPP16 only).

The permuted values (with their definedness, per lane, and `Wave.vpart` partial lanes) are
put into a register column the instruction does not name (`_scratch_column`), the operation is
bound with SRC0 naming that column, its step runs with EXEC narrowed to the lanes DPP writes,
and EXEC and the borrowed column are put back. A zero from
BOUND_CTRL is a defined zero; a copied lane keeps its source lane's definedness.

A lane mask the operation writes (a VOPC's SDST, a carry-out) gets, for an active lane DPP
does not write, the bit a lane outside EXEC gets: 0. No ISA text we have says so; LLVM's code
relies on it: its 64-bit add scan on gfx1100 adds the high halves with a plain
`v_add_co_ci_u32_e64 ..., vcc_lo` after `v_add_co_u32_e64_dpp v2, vcc_lo, v5, v2 ...
row_mask:0xa`, correct only if row 0's carry bits (not written by the DPP add) are 0.

Not modelled (the step reports `unsupported-instruction`): V_CMPX (it writes EXEC, which the
step narrows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env, hazard, vcol
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.isa.tables import TARGETS
from rgpu_fuzz.sim.semantics.dpp import dpp8_sources, dpp16_sources, write_enabled
from rgpu_fuzz.sim.semantics.valu import VALU
from rgpu_fuzz.sim.state.regfile import N_VECTOR
from rgpu_fuzz.sim.state.wave import AGPR_BASE, Wave, mask_of

Step = Callable[[Wave], Any]

LANE_PERMUTING = frozenset({"DPP", "DPP8"})
"""Encodings whose first source is read from other lanes (bound by `bind_dpp`)."""

_DPP_KEYS = frozenset({"dpp_ctrl", "row_mask", "bank_mask", "bound_ctrl", "fi", "lane_sel"})
"""The modifiers the decoder records for a DPP16 or DPP8 dword."""


def is_dpp(inst: Inst) -> bool:
    """Whether SRC0 of `inst` is read through a DPP16/DPP8 dword: the DPP encodings of
    VOP1/VOP2/VOPC, or a VOP3 carrying one (GFX11 `_e64_dpp`, recorded as its modifiers)."""
    return inst.encoding in LANE_PERMUTING or "dpp_ctrl" in inst.mods or \
        "lane_sel" in inst.mods


class Unmodelled(ValueError):
    """A DPP form the step does not model; the binder reports it unsupported."""


def target_of(inst: Inst) -> str:
    """The target an instruction was decoded for (its share key, or its origin when it is
    address-bound)."""
    key = inst.share_key or inst.origin
    if not key:
        raise Unmodelled("no target recorded for the instruction")
    return str(key[0])


def gfx9(inst: Inst) -> bool:
    """GFX9/CDNA DPP_CTRL table (wave shifts, row_bcast) rather than GFX10+'s."""
    return TARGETS[target_of(inst)].family == "cdna"


def _src0(inst: Inst) -> int:
    """Position of SRC0 among the operands: the first VGPR after the destination whose
    index is the DPP dword's SRC0 field (bits 7:0 of the DPP dword, the instruction's last:
    a DPP form has no literal)."""
    key = inst.share_key or inst.origin
    words: tuple[int, ...] = tuple(key[1]) if key else ()
    if len(words) < 2:
        raise Unmodelled("DPP words not recorded")
    field = words[-1] & 0xFF
    for k, op in enumerate(inst.operands):
        # a true16 16-bit SRC0 names v.h with bit 7 (RDNA3 ISA §7.3 "16-bit VGPRs")
        if k >= 1 and op.kind is OpKind.VGPR and (op.index == field or (
                getattr(op, "hi", False) and op.index == field & 0x7F)):
            return k
    raise Unmodelled("SRC0 not found among the operands")


def _lane_map(inst: Inst, lanes: int) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """(source lane per lane, DPP-enabled lanes, invalid reads 0, fetch inactive)."""
    m = inst.mods
    if "lane_sel" in m:
        return dpp8_sources(int(m["lane_sel"]), lanes), np.ones(lanes, bool), True, \
            bool(m.get("fi", 0))
    src = dpp16_sources(int(m["dpp_ctrl"]), lanes, gfx9(inst))
    enabled = write_enabled(int(m.get("row_mask", 15)), int(m.get("bank_mask", 15)), lanes)
    return src, enabled, bool(m.get("bound_ctrl", 0)), bool(m.get("fi", 0))


def _scratch_column(inst: Inst) -> int:
    """A register column the instruction does not name (the highest AGPR first): SRC0's
    permuted values are put there for the operation to read, and the column is restored
    after it, so another operand naming SRC0's register (`v_add_u32_dpp v1, v1, v1`) still
    reads its own lane."""
    named = {vcol(o) + j for o in inst.operands if o.kind in (OpKind.VGPR, OpKind.AGPR)
             for j in range(max(1, o.count))}
    for col in range(N_VECTOR - 2, 0, -2):
        if col not in named and col + 1 not in named:
            return col
    raise Unmodelled("no free register column")


def _moved(op: Any, col: int) -> Any:
    """Operand `op` naming register column `col` instead (an AGPR or VGPR as the column
    falls), its modifiers kept."""
    kind, index = (OpKind.AGPR, col - AGPR_BASE) if col >= AGPR_BASE else (OpKind.VGPR, col)
    if type(op) is Opnd:
        return replace(op, kind=kind, index=index)
    return replace(op, base=replace(op.base, kind=kind, index=index))


def bind_dpp(inst: Inst, env: Env, bind_plain: Callable[[Inst], Step]) -> Step:
    """The step of a DPP16/DPP8 VALU instruction (module docstring)."""
    if inst.opcode not in VALU:
        raise Unmodelled(f"{inst.opcode} is not a VALU table row")
    shape = VALU[inst.opcode].shape
    if shape == "cmpx":
        raise Unmodelled("V_CMPX with DPP (writes EXEC)")
    k = _src0(inst)
    op = inst.operands[k]
    ncols = max(1, op.count)
    col = vcol(op)
    tmp = _scratch_column(inst)
    cols = [(col + j, tmp + j) for j in range(ncols)]
    lanes = env.lanes
    src, enabled, zero_invalid, fetch_inactive = _lane_map(inst, lanes)
    in_wave = (src >= 0) & (src < lanes)
    at = np.where(in_wave, src, 0)
    ops = list(inst.operands)
    ops[k] = _moved(op, tmp)
    mods = {name: v for name, v in inst.mods.items() if name not in _DPP_KEYS}
    plain = bind_plain(replace(inst, operands=tuple(ops), encoding="DPP-SOURCE", mods=mods))
    if getattr(plain, "unsupported", False):
        return plain
    mnemonic = inst.mnemonic

    def step(w: Wave) -> None:
        pv = w.pend_v
        if pv and any(c in pv or t in pv for c, t in cols):
            if any(c in pv for c, _ in cols):
                raise hazard(w, f"v{col} read before the s_waitcnt covering its load")
            raise SimStop(Fault(FaultKind.UNSUPPORTED, f"{mnemonic}: the register column "
                                "DPP borrows has a load in flight", w.pc, mnemonic))
        e = w.exec
        valid = in_wave if fetch_inactive else in_wave & e[at]
        write = enabled if zero_invalid else enabled & valid
        narrowed = e & write
        V, vdef, vpart = w.V, w.vdef, w.vpart
        saved = [(V[:, t].copy(), vdef[:, t].copy(), vpart.pop(t, None)) for _, t in cols]
        for c, t in cols:
            V[:, t] = np.where(valid, V[at, c], np.uint32(0))
            vdef[:, t] = np.where(valid, vdef[at, c], True)
            part = vpart.get(c)
            if part:
                moved = {ln: part[int(at[ln])] for ln in range(lanes)
                         if valid[ln] and int(at[ln]) in part}
                if moved:
                    vpart[t] = moved
        bits = w.exec_bits
        w.refresh_exec(mask_of(narrowed))
        try:
            plain(w)
        finally:
            w.refresh_exec(bits)
            for (_, t), (v0, d0, p0) in zip(cols, saved, strict=True):
                V[:, t], vdef[:, t] = v0, d0
                w.vpart.pop(t, None)
                if p0:
                    w.vpart[t] = p0
    return step


__all__ = ["LANE_PERMUTING", "Unmodelled", "bind_dpp", "gfx9", "is_dpp", "target_of"]
