"""The scan for GFX9 VGPR indexing regions (`s_set_gpr_idx_on` … `s_set_gpr_idx_off`): the
instructions between ON and OFF mean something else than the same words elsewhere, so
they are marked address-bound before anything is shared or fused. What the marked
instructions do is the bound tier's (`rgpu_fuzz.sim.bound.gpr_idx`, whose docstring gives
the rules and their source)."""

from __future__ import annotations

from rgpu_fuzz.sim.isa.decode import decode_at
from rgpu_fuzz.sim.isa.inst import Inst

ON, OFF = "S_SET_GPR_IDX_ON", "S_SET_GPR_IDX_OFF"
IDX, MODE = "S_SET_GPR_IDX_IDX", "S_SET_GPR_IDX_MODE"
REGION = "gpr_idx"
"""`Inst.mods` key of a marked instruction: the number of its operands that are
definitions (ON: -1)."""

_ENDS_REGION = ("S_BRANCH", "S_CBRANCH", "S_SETPC", "S_SWAPPC", "S_CALL", "S_ENDPGM",
                "S_TRAP", "S_RFE", ON, MODE)


def _region_end(templates: list[Inst], i: int) -> int | None:
    """The index of the OFF that closes the region opened at `i`, or None."""
    for j in range(i + 1, len(templates)):
        name = templates[j].opcode
        if name == OFF:
            return j
        if name.startswith(_ENDS_REGION) or "target" in templates[j].mods:
            return None
    return None


def mark_regions(templates: list[Inst], target: str) -> None:
    """Replace, in place, ON and the instructions of each well-formed region by their
    marked, address-bound copies (the list is the scan's own; the memoised instructions in
    it are not changed)."""
    names = [inst.opcode for inst in templates]
    if ON not in names:
        return  # ~40 us for a case's 2,700 instructions
    for i, inst in enumerate(templates):
        if inst.opcode != ON:
            continue
        j = _region_end(templates, i)
        if j is None:
            continue
        templates[i] = inst.unshared({REGION: -1})
        for k in range(i + 1, j):
            t = templates[k]
            key = t.share_key or t.origin
            ndefs = len(decode_at(key[1], 0, target, t.address).defs) if key else 0
            templates[k] = t.unshared({REGION: ndefs})


__all__ = ["IDX", "MODE", "OFF", "ON", "REGION", "mark_regions"]
