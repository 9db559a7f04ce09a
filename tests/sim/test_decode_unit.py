"""Decoder unit tests on hand-encoded words. Expected values come from the ISA guides'
encodings (CDNA3 "Microcode Formats", RDNA3 §15), IEEE 754 bit patterns computed with
`struct`, and llvm-objdump-22's disassembly of the same bytes (quoted beside each case)."""

from __future__ import annotations

import math
import struct

import pytest

from rgpu_fuzz.sim.isa import Encoding, OperandKind, Special, UnknownTarget, decode, render


def _words(*words: int) -> bytes:
    return b"".join(w.to_bytes(4, "little") for w in words)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def test_sopp_endpgm_has_no_operands() -> None:
    (inst,) = decode(_words(0xBF810000), "gfx942")      # SOPP op 1 = S_ENDPGM
    assert (inst.encoding, inst.opcode, inst.size, inst.defs, inst.uses) == (
        Encoding.SOPP, "S_ENDPGM", 4, (), ())
    assert render(inst) == "s_endpgm"


def test_inline_float_reads_ieee_bits_at_operand_width() -> None:
    # v_mul_f64 v[4:5], v[4:5], 0.5  (objdump: D2810004 0001E104)
    (inst,) = decode(_words(0xD2810004, 0x0001E104), "gfx942")
    src0, src1 = inst.uses
    assert (src0.kind, src0.index, src0.count) == (OperandKind.VGPR, 4, 2)
    assert (src1.kind, src1.width, src1.value) == (OperandKind.INLINE_FLOAT, 64, _f64_bits(0.5))
    # v_mul_f32_e32 v0, 0.15915494, v1: code 248 is 1/(2*pi) on gfx9+
    (inv2pi,) = decode(_words((5 << 25) | (1 << 9) | 248), "gfx942")
    assert inv2pi.opcode == "V_MUL_F32"
    assert inv2pi.uses[0].value == _f32_bits(1 / (2 * math.pi))
    assert render(inv2pi) == "v_mul_f32_e32 v0, 0.15915494, v1"


def test_inline_negative_integer_is_sign_extended_to_width() -> None:
    (inst,) = decode(_words(0xBE8000C1), "gfx942")      # s_mov_b32 s0, -1 (code 193)
    assert inst.uses[0].kind is OperandKind.INLINE_INT
    assert inst.uses[0].value == 0xFFFFFFFF
    assert render(inst) == "s_mov_b32 s0, -1"


def test_literal_dword_follows_and_extends_size() -> None:
    # v_and_b32_e32 v0, 0x3ff, v0  (objdump: 260000FF 000003FF)
    (inst,) = decode(_words(0x260000FF, 0x000003FF), "gfx942")
    assert inst.size == 8 and inst.uses[0].kind is OperandKind.LITERAL
    assert inst.uses[0].value == 0x3FF


def test_f64_literal_is_the_high_dword() -> None:
    # v_cmp_gt_f64_e32 vcc_lo, 0x10000000, v[1:2]  (gfx1100 objdump: 7C4802FF 10000000)
    (inst,) = decode(_words(0x7C4802FF, 0x10000000), "gfx1100")
    assert inst.defs[0].kind is OperandKind.SPECIAL and inst.defs[0].index == Special.VCC_LO
    assert inst.defs[0].count == 1                       # wave32: vcc_lo alone
    lit = inst.uses[0]
    assert (lit.kind, lit.width, lit.value) == (OperandKind.LITERAL, 64, 0x10000000 << 32)
    assert render(inst) == "v_cmp_gt_f64_e32 vcc_lo, 0x10000000, v[1:2]"


def test_undecodable_word_is_unknown_and_decoding_continues() -> None:
    insts = decode(_words(0xFFFFFFFF, 0xBF810000), "gfx942")
    assert [i.encoding for i in insts] == [Encoding.UNKNOWN, Encoding.SOPP]
    assert insts[0].size == 4 and insts[1].address == 4


def test_literal_past_the_end_is_unknown() -> None:
    (inst,) = decode(_words(0x7E0002FF), "gfx942")      # v_mov_b32_e32 v0, <literal missing>
    assert inst.encoding is Encoding.UNKNOWN


def test_branch_target_is_absolute() -> None:
    # s_cbranch_execz 69 at 0x34  (objdump: BF880045 <k+0x14c>)
    (inst,) = decode(_words(0xBF880045), "gfx942", base_address=0x34)
    assert inst.modifiers["target"] == 0x14C
    assert render(inst) == "s_cbranch_execz 69"


def test_global_saddr_and_off() -> None:
    # global_load_dword v1, v1, s[2:3]  (objdump: DC508000 01020001): 32-bit vaddr offset
    (inst,) = decode(_words(0xDC508000, 0x01020001), "gfx942")
    vaddr, saddr = inst.uses
    assert (vaddr.kind, vaddr.count, saddr.kind, saddr.index, saddr.count) == (
        OperandKind.VGPR, 1, OperandKind.SGPR, 2, 2)
    # the same with saddr = 0x7f: a 64-bit vaddr and `off`
    (off,) = decode(_words(0xDC508000, 0x017F0000), "gfx942")
    assert off.uses[0].count == 2 and off.uses[1].index == Special.OFF
    assert render(off) == "global_load_dword v1, v[0:1], off"


def test_scratch_without_sve_has_no_vaddr() -> None:
    # scratch_store_dword off, v2, off sc0 sc1  (gfx942 objdump: DE714000 007F0200)
    (inst,) = decode(_words(0xDE714000, 0x007F0200), "gfx942")
    assert inst.uses[0].index == Special.OFF and inst.uses[2].index == Special.OFF
    assert render(inst) == "scratch_store_dword off, v2, off sc0 sc1"


def test_readfirstlane_writes_an_sgpr() -> None:
    (inst,) = decode(_words(0x7E060503), "gfx942")      # v_readfirstlane_b32 s3, v3
    assert inst.defs[0].kind is OperandKind.SGPR and inst.defs[0].index == 3


def test_true16_high_half_in_vop1_encoding() -> None:
    # v_cmp_lt_f16_e32 vcc_lo, v1.h, v1.l  (gfx1100 objdump: 7C020381)
    (inst,) = decode(_words(0x7C020381), "gfx1100")
    src0, src1 = inst.uses
    assert (src0.index, src0.hi, src1.index, src1.hi) == (1, True, 1, False)
    assert render(inst) == "v_cmp_lt_f16_e32 vcc_lo, v1.h, v1.l"


def test_vopd_halves() -> None:
    # v_dual_cndmask_b32 v2, v2, v4 :: v_dual_cndmask_b32 v3, v3, v5  (CA520902 02020B03)
    (inst,) = decode(_words(0xCA520902, 0x02020B03), "gfx1100")
    x, y = inst.halves
    assert (x.opcode, y.opcode) == ("V_DUAL_CNDMASK_B32", "V_DUAL_CNDMASK_B32")
    assert [d.index for d in inst.defs] == [2, 3]


def test_gfx90a_has_mac_where_cdna4_has_dot2c() -> None:
    # VOP2 opcode 22: v_mac_f32_e32 on gfx90a (CDNA2 ISA), absent on gfx942
    word = (22 << 25) | (4 << 17) | (8 << 9) | (256 + 12)
    assert render(decode(_words(word), "gfx90a")[0]) == "v_mac_f32_e32 v4, v12, v8"
    assert decode(_words(word), "gfx942")[0].encoding is Encoding.UNKNOWN


def test_unknown_target() -> None:
    with pytest.raises(UnknownTarget):
        decode(b"", "gfx1234")
