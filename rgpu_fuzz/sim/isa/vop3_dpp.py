"""GFX11 VOP3 with a DPP dword (`v_add_co_u32_e64_dpp`, `v_add3_u32_e64_dpp`, ...): a VOP3
(or VOP3SD) instruction whose SRC0 field holds the DPP16 code 250 or a DPP8 code (233; 234
with FI) is followed by a third dword laid out as the VOP1/VOP2 DPP dword (RDNA3 ISA §7.7
"DPP16"/"DPP8", "VOP3 ... DPP": SRC0 VGPR in bits 7:0, then DPP_CTRL, FI, BOUND_CTRL,
BANK_MASK, ROW_MASK; or LANE_SEL). Source modifiers stay in the VOP3 dwords (their NEG, ABS,
OP_SEL); the DPP dword's own modifier bits are not used.

LLVM 22 emits it for the atomic optimizer's 64-bit add scan on gfx1100 (`v_add_co_u32_e64_dpp`
with `v_add_co_ci_u32_e64_dpp`): the decoder records its DPP fields as modifiers of the VOP3
instruction (`bound.dpp.is_dpp` binds it), SRC0 as the VGPR, and LLVM's spelling
`<name>_e64_dpp`."""

from __future__ import annotations

from typing import Any

from rgpu_fuzz.sim.isa.formats import Field, _Extension

DPP16_CODE, DPP8_CODE, DPP8FI_CODE = 250, 233, 234


class VOP3_DPP16_EXT(_Extension):
    """The DPP16 dword as dword 2 of a VOP3 (bits relative to the whole instruction)."""

    dpp_src0 = Field(71, 64)
    dpp_ctrl = Field(80, 72)
    fi = Field(82, 82)
    bound_ctrl = Field(83, 83)
    bank_mask = Field(91, 88)
    row_mask = Field(95, 92)


class VOP3_DPP8_EXT(_Extension):
    """The DPP8 dword as dword 2 of a VOP3."""

    dpp_src0 = Field(71, 64)
    lane_sel = Field(95, 72)


def extension(code: int) -> type[_Extension] | None:
    """The DPP dword a VOP3 SRC0 code announces (None: an ordinary source)."""
    if code == DPP16_CODE:
        return VOP3_DPP16_EXT
    if code in (DPP8_CODE, DPP8FI_CODE):
        return VOP3_DPP8_EXT
    return None


def fields(ext: type[_Extension], bits: int, code: int) -> dict[str, Any]:
    """The DPP dword's fields, SRC0 as the VGPR source code (256 + index) the VOP3 SRC0
    field then holds."""
    values = {n: f.get(bits) for n, f in ext.fields.items()}
    values["src0"] = 256 + values.pop("dpp_src0")
    if ext is VOP3_DPP8_EXT:
        values["fi"] = int(code == DPP8FI_CODE)
    return values


def mnemonic(base: str) -> str:
    """LLVM's spelling: `_e64_dpp` on every VOP3 DPP form (llvm-mc-22: `v_add3_u32_e64_dpp`,
    `v_add_nc_u32_e64_dpp`, `v_cmp_eq_u32_e64_dpp`)."""
    return f"{base}_e64_dpp"


__all__ = ["VOP3_DPP8_EXT", "VOP3_DPP16_EXT", "extension", "fields", "mnemonic"]
