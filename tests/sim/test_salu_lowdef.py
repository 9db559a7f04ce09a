"""Per-bit definedness of SALU arithmetic (`SOp.lowdef`): S_ADD_I32, S_SUB_I32, S_MUL_I32,
S_ADDK_I32, S_MULK_I32, S_LSHL<k>_ADD_U32, S_SEXT_I32_I8/I16.

On gfx1100 a uniform i8/i16 kernel value is loaded by a D16 load (`global_load_d16_i8 v2`:
RDNA3 ISA "FLAT, Scratch and Global Instructions", D16 loads write VGPR[15:0] and keep
[31:16], here never written, so undefined), moved to an SGPR by `v_readfirstlane_b32 s1, v2`
with its high half undefined, and computed on in 32-bit SALU instructions whose results LLVM
reads only in their low 16 bits (`s_sext_i32_i16`, `s_bfe_i32 …, 0x100000`). Before these
rules every SALU arithmetic result with one undefined source bit was wholly undefined, so the
compare at the end was a false `sim-uninit-read`.

Expected definedness is worked by hand from the operations' definitions (RDNA3 ISA "SOP2
Instructions": S_ADD_I32 `D = S0 + S1`, S_MUL_I32 `D = S0 * S1` (low 32 bits), S_BFE_U32/I32;
"SOP1 Instructions": S_SEXT_I32_I16 `D = signext(S0[15:0])`): bit k of a sum, difference or low
product depends only on bits 0..k of the sources; the bits of a sign extension above the
field copy its top bit. llvm-mc-22 (`-mcpu=gfx1100 --show-encoding`) encodes the sequences.
"""

from __future__ import annotations

import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

M32 = 0xFFFF_FFFF
ENV32 = Env(lanes=32, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: ((simm >> 10) & 0x3F, (simm >> 4) & 0x3F), true16=True,
            stores_in_vmcnt=False)


def _wave() -> Wave:
    w = Wave(32, 0, 0)
    # s1: what v_readfirstlane_b32 gives after global_load_d16_i8 of -3 (0xFFFD): the low
    # half defined, the high half whatever the VGPR held (0xABCD here) and undefined
    w.S[1], w.sdef[1] = 0xABCD_FFFD, 0x0000_FFFF
    w.S[3], w.sdef[3] = 300, M32
    return w


def _run(lines: list[str], w: Wave) -> None:
    run_steps(assemble(lines, "gfx1100"), w, ENV32)


def test_the_sign_extended_low_half_of_partly_defined_arithmetic_is_defined() -> None:
    w = _wave()
    _run(["s_mul_i32 s2, s1, s3",          # 0xABCDFFFD * 300: low 16 bits defined
          "s_add_i32 s2, s2, 7",           # still the low 16 bits
          "s_sub_i32 s2, s2, s3",
          "s_sext_i32_i16 s4, s2",          # signext(bits 15:0): all 32 bits defined
          "s_bfe_i32 s5, s2, 0x100000",      # the same field by BFE (offset 0, width 16)
          "s_cmp_lt_i32 s4, 0"], w)
    # by hand, the low 16 bits only (the rest is undefined and must not matter):
    # 0xFFFD * 300 = -3 * 300 = -900 = 0xFC7C; + 7 = 0xFC83; - 300 = -1193 = 0xFB57
    assert w.sdef[2] == 0x0000_FFFF
    assert w.S[2] & 0xFFFF == 0xFB57
    assert (w.S[4], w.sdef[4]) == (0xFFFF_FB57, M32)
    assert (w.S[5], w.sdef[5]) == (0xFFFF_FB57, M32)
    assert (w.scc, w.scc_def) == (1, True)


def test_bits_from_the_lowest_undefined_source_bit_up_are_undefined() -> None:
    w = _wave()
    w.sdef[1] = M32 & ~(1 << 3)  # only bit 3 undefined
    _run(["s_add_i32 s2, s1, s3", "s_lshl2_add_u32 s6, s1, s3"], w)
    assert w.sdef[2] == 0b111  # bits 0..2
    assert w.scc_def is False  # signed overflow depends on every bit
    # (s1 << 2): bit 3 moves to bit 5, bits 1:0 are defined zeros
    assert w.sdef[6] == 0b1_1111


def test_a_sign_extension_of_an_undefined_top_bit_is_undefined_above_it() -> None:
    w = _wave()
    w.sdef[1] = 0x0000_7FFF  # bit 15 undefined
    _run(["s_sext_i32_i16 s4, s1", "s_sext_i32_i8 s5, s1"], w)
    assert w.sdef[4] == 0x0000_7FFF
    assert (w.S[5], w.sdef[5]) == (0xFFFF_FFFD, M32)  # bits 7:0 = 0xFD, all defined


def test_a_product_with_a_defined_zero_is_defined() -> None:
    w = _wave()
    w.S[3] = 0
    _run(["s_mul_i32 s2, s1, s3", "s_mulk_i32 s1, 0x0"], w)
    assert (w.S[2], w.sdef[2]) == (0, M32)
    assert (w.S[1], w.sdef[1]) == (0, M32)


@pytest.mark.parametrize(("line", "value"), [
    ("s_addk_i32 s1, 0xfff0", 0xABCD_FFED),   # + (-16): 0xFFFD - 0x10 = 0xFFED
    ("s_mulk_i32 s1, 0x3", 0x0369_FFF7),      # 0xABCDFFFD * 3 = 0x2_0369_FFF7
])
def test_sopk_arithmetic_keeps_the_low_bits(line: str, value: int) -> None:
    w = _wave()
    _run([line], w)
    assert w.sdef[1] == 0x0000_FFFF
    assert w.S[1] & 0xFFFF == value & 0xFFFF


def test_fully_undefined_stays_undefined() -> None:
    w = _wave()
    w.sdef[1] = 0
    _run(["s_mul_i32 s2, s1, s3", "s_sext_i32_i16 s4, s1"], w)
    assert (w.sdef[2], w.sdef[4]) == (0, 0)


def test_a_select_copies_the_defined_bits_of_what_it_selects() -> None:
    """`s_cselect_b32 s4, s25, 0` after `s_cmp_lg_u32 (s25 & 0xff), 5` (LLVM's O2 code of
    `t5[(m + 1) % 5]` on a uniform u8 `m`): S_CSELECT is `D = SCC ? S0 : S1` (RDNA3 ISA
    "SOP2 Instructions"), a copy; its low byte is then read through `s_and_b32 s7, s4, 0xff`."""
    w = _wave()
    w.scc, w.scc_def = 1, True
    _run(["s_cselect_b32 s4, s1, 0", "s_and_b32 s7, s4, 0xff",
          "s_cselect_b64 s[8:9], s[0:1], 0", "s_cmov_b32 s10, s1"], w)
    assert (w.S[4], w.sdef[4]) == (0xABCD_FFFD, 0x0000_FFFF)
    assert (w.S[7], w.sdef[7]) == (0xFD, M32)
    assert (w.S[8], w.sdef[9]) == (w.S[0], 0x0000_FFFF)
    assert (w.S[10], w.sdef[10]) == (0xABCD_FFFD, 0x0000_FFFF)


def test_a_16_bit_valu_source_reads_only_the_low_half_of_an_sgpr() -> None:
    """`v_xor_b16 v0.l, s0, v0.l` (true16, RDNA3 ISA "VOP2 Instructions": D.b16 = S0.b16 ^ S1.b16)
    reads s0[15:0]; rustc's O2 code for a uniform i16 shift leaves s0[31:24] undefined."""
    w = _wave()
    w.vdef[:, 0] = True
    w.V[:, 0] = 0x1234_00F0
    _run(["v_xor_b16 v0.l, s1, v0.l"], w)
    # 0xFFFD ^ 0x00F0 = 0xFF0D in the low half; the high half kept
    assert w.V[:, 0].tolist() == [0x1234_FF0D] * 32
    assert w.vdef[:, 0].all()
    w.sdef[1] = 0x0000_7FFF  # bit 15 undefined
    _run(["v_xor_b16 v0.l, s1, v0.l"], w)
    assert not w.vdef[:, 0].any()
