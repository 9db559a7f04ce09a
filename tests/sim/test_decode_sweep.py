"""The opcode sweep (tests/sim/opcode_sweep.py): every opcode value of every encoding class,
through `llvm-mc-22 --disassemble` and our decoder. It pins the correction lists of
rgpu_fuzz/sim/isa/corrections.toml: a table update (or a new LLVM) that breaks agreement
fails here with the probes that changed.

Where LLVM and we still differ the difference is listed below with its reason; the test
fails when the list is stale in either direction."""

from __future__ import annotations

import pytest

from tests.sim.opcode_sweep import Probe, probes
from tests.toolchain import debian_llvm_tool

# Opcodes AMD's XML lists for the target and our decoder accepts, which llvm-mc-22 rejects
# for it. We keep them (AMD's description is the independent source); LLVM never emits them.
OURS_ONLY: dict[str, frozenset[str]] = {
    # the VOP3 forms of opcodes LLVM models as VOP1 only
    "gfx942": frozenset({"V_READFIRSTLANE_B32", "V_SWAP_B32", "V_ACCVGPR_MOV_B32"}),
    "gfx90a": frozenset({"V_READFIRSTLANE_B32", "V_SWAP_B32", "V_ACCVGPR_MOV_B32"}),
    "gfx950": frozenset({
        "V_READFIRSTLANE_B32", "V_SWAP_B32", "V_ACCVGPR_MOV_B32",
        # in the CDNA4 XML, rejected by llvm-mc-22 for gfx950: the coexec-mode hint, and
        # the xf32 MFMAs (LLVM's gfx950 has no FeatureXF32Insts)
        "S_SET_VALU_COEXEC_MODE", "V_MFMA_F32_16X16X8_XF32", "V_MFMA_F32_32X32X4_XF32",
        # the F8F6F4 MFMAs' A/B operand widths follow their cbsz/blgp format bits; the
        # probe's registers do not fit the widths the XML gives (matrix ops are outside
        # generated code)
        "V_MFMA_F32_16X16X128_F8F6F4", "V_MFMA_F32_32X32X64_F8F6F4",
    }),
    "gfx1100": frozenset({
        "V_READFIRSTLANE_B32",
        # LDS-DMA loads, GS-register and ordered-count DS ops: in the RDNA3 XML; LLVM 22
        # has no gfx11 encoding for them.
        "GLOBAL_LOAD_LDS_U8", "GLOBAL_LOAD_LDS_I8", "GLOBAL_LOAD_LDS_U16",
        "GLOBAL_LOAD_LDS_I16", "GLOBAL_LOAD_LDS_B32", "GLOBAL_LOAD_LDS_ADDTID_B32",
        "SCRATCH_LOAD_LDS_U8", "SCRATCH_LOAD_LDS_I8", "SCRATCH_LOAD_LDS_U16",
        "SCRATCH_LOAD_LDS_I16", "SCRATCH_LOAD_LDS_B32",
        "BUFFER_LOAD_LDS_U8", "BUFFER_LOAD_LDS_I8", "BUFFER_LOAD_LDS_U16",
        "BUFFER_LOAD_LDS_I16", "BUFFER_LOAD_LDS_B32", "BUFFER_LOAD_LDS_FORMAT_X",
        "DS_ORDERED_COUNT", "DS_ADD_GS_REG_RTN", "DS_SUB_GS_REG_RTN",
    }),
    "gfx1200": frozenset({
        "V_READFIRSTLANE_B32",
        # GLOBAL-only address-by-thread-id forms: in the RDNA4 XML; llvm-mc-22 rejects them
        "GLOBAL_LOAD_ADDTID_B32", "GLOBAL_STORE_ADDTID_B32",
        # the 16-bit moves LLVM 22 encodes only with real true16, which it does not enable
        # for gfx1200 (its gfx1200 assembly names whole VGPRs)
        "V_MOV_B16", "V_SWAP_B16",
    }),
}

# Opcode values LLVM decodes for the target that the tables leave undecoded: gfx90a MFMA
# variants the CDNA4 XML lacks (its slots hold CDNA3/4 MFMAs, dropped in corrections.toml
# rather than decoded as the wrong operation). Matrix ops are outside generated code.
LLVM_ONLY: dict[str, frozenset[str]] = {
    "gfx942": frozenset(),
    "gfx950": frozenset(),
    "gfx90a": frozenset({
        "v_mfma_i32_32x32x8i8", "v_mfma_i32_16x16x16i8", "v_mfma_f32_32x32x4bf16_1k",
        "v_mfma_f32_16x16x4bf16_1k", "v_mfma_f32_4x4x4bf16_1k", "v_mfma_f32_32x32x8bf16_1k",
        "v_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_32x32x2bf16", "v_mfma_f32_16x16x2bf16",
        "v_mfma_f32_4x4x2bf16", "v_mfma_f32_32x32x4bf16", "v_mfma_f32_16x16x8bf16",
    }),
    "gfx1100": frozenset(),
    "gfx1200": frozenset(),
}

# Opcodes both decode whose text still differs: syntax we do not render yet, none of it
# emitted for the kernels this project compiles (the differential test would say so).
TEXT_DIFFERS: dict[str, frozenset[str]] = {
    # The XML gives the xf32 MFMAs no operand types, so the probe's registers are not
    # theirs (LLVM marks them invalid); gfx942 has no other text difference.
    "gfx942": frozenset({"V_MFMA_F32_16X16X8_XF32", "V_MFMA_F32_32X32X4_XF32"}),
    "gfx90a": frozenset(),
    # the scale-load MFMA prefix: its scalar operands and op_sel_hi are not rendered
    "gfx950": frozenset({"V_MFMA_LD_SCALE_B32"}),
    "gfx1100": frozenset({
        # RDNA3's unified buffer format (format:[BUF_FMT_*], 128 names): not rendered
        *(f"TBUFFER_{op}_{d16}FORMAT_{c}" for op in ("LOAD", "STORE") for d16 in ("", "D16_")
          for c in ("X", "XY", "XYZ", "XYZW")),
        "S_VERSION",                 # UC_VERSION_* names
        "S_SUBVECTOR_LOOP_BEGIN", "S_SUBVECTOR_LOOP_END",   # sdst + label syntax
    }),
    "gfx1200": frozenset({
        # the unified buffer format (format:[BUF_FMT_*]): not rendered, as on gfx1100
        *(f"TBUFFER_{op}_{d16}FORMAT_{c}" for op in ("LOAD", "STORE") for d16 in ("", "D16_")
          for c in ("X", "XY", "XYZ", "XYZW")),
        "S_VERSION",                 # UC_VERSION_* names
        # the XML gives these no operands (LLVM: the barrier id in m0 or an SGPR)
        "S_GET_BARRIER_STATE", "S_BARRIER_INIT", "S_BARRIER_JOIN",
        # the legacy s_waitcnt: the XML gives it no simm16 (RDNA4 code waits per counter)
        "S_WAITCNT",
        # prefetches: LLVM's `sbase, offset, soffset, length` syntax
        "S_PREFETCH_INST", "S_PREFETCH_INST_PC_REL", "S_PREFETCH_DATA",
        "S_BUFFER_PREFETCH_DATA", "S_PREFETCH_DATA_PC_REL",
    }),
}


@pytest.fixture(scope="module")
def llvm_mc() -> str:
    return debian_llvm_tool("llvm-mc", 22)


def _summary(bad: list[Probe]) -> str:
    return "\n".join(f"{p.format} {p.op}: LLVM {p.llvm!r} ours {p.ours!r}" for p in bad[:20])


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1200"])
def test_opcode_sweep_matches_llvm(llvm_mc: str, target: str) -> None:
    result = probes(target, llvm_mc)
    llvm_only = [p for p in result if p.llvm is not None and not p.our_opcode
                 and p.llvm.split()[0] not in LLVM_ONLY[target]]
    ours_only = {p.our_opcode for p in result if p.llvm is None and p.our_opcode}
    differ = [p for p in result if p.llvm is not None and p.our_opcode and not p.agrees]
    assert not llvm_only, "LLVM decodes, we do not:\n" + _summary(llvm_only)
    assert ours_only == OURS_ONLY[target]
    assert {p.our_opcode for p in differ} == TEXT_DIFFERS[target], _summary(
        [p for p in differ if p.our_opcode not in TEXT_DIFFERS[target]])
