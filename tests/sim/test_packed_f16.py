"""Packed f16/f32 VOP3P and f16 VOP1/VOP2/VOP3/SDWA/true16 instructions on values worked
out by hand from the ISA pseudocode (AMD's ISA XML as tinygrad 0.14.0 carries it, quoted in
`rgpu_fuzz.sim.semantics.packed` and `.f16`) and IEEE 754 binary16 (11-bit significand,
round to nearest, ties to even; smallest subnormal 2**-24). llvm-mc-22 encodes each line.

binary16 bits used below: 1.0 = 0x3C00, 2.0 = 0x4000, 0.5 = 0x3800, -3.0 = 0xC200,
-2.0 = 0xC000, -1.0 = 0xBC00, 2.5 = 0x4100, 1.5 = 0x3E00, -1.5 = 0xBE00, 4.0 = 0x4400,
3.0 = 0x4200, +inf = 0x7C00, quiet NaN 0x7E00; binary32: 1.75 = 0x3FE00000,
6.0 = 0x40C00000, -1.75 = 0xBFE00000, 9.5 = 0x41180000, 1.25 = 0x3FA00000,
1.375 = 0x3FB00000, -15.0 = 0xC1700000, 0.375 = 0x3EC00000, 6.5 = 0x40D00000."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, run_steps

V1 = 0x4000_3C00   # hi 2.0, lo 1.0
V2 = 0x3800_C200   # hi 0.5, lo -3.0
F32 = {2: 0x3FC0_0000, 3: 0xC000_0000, 4: 0x3E80_0000, 5: 0x4100_0000}
"""v[2:3] = (1.5, -2.0), v[4:5] = (0.25, 8.0) as binary32."""


def _wave(lanes: int = 64) -> Wave:
    w = Wave(lanes, 0, 0)
    w.vdef[:, :] = True
    w.V[:, 1], w.V[:, 2], w.V[:, 0] = V1, V2, 0x1234_5678
    for col, bits in F32.items():
        w.V[:, 10 + col] = bits
    return w


def _run(line: str, cpu: str = "gfx942", w: Wave | None = None) -> Wave:
    w = w or _wave(32 if cpu == "gfx1100" else 64)
    env = replace(ENV, lanes=w.lanes, true16=cpu == "gfx1100")
    with np.errstate(all="ignore"):  # as `engine.simulate` runs every step
        run_steps(assemble([line], cpu), w, env)
    return w


@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a", "gfx1100"])
@pytest.mark.parametrize(("line", "want"), [
    # lo 1 + -3 = -2, hi 2 + 0.5 = 2.5
    ("v_pk_add_f16 v0, v1, v2", 0x4100_C000),
    # op_sel:[1,0]: lo = v1.hi + v2.lo = 2 - 3 = -1; op_sel_hi:[0,1]: hi = v1.lo + v2.hi = 1.5
    ("v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]", 0x3E00_BC00),
    # neg_lo:[0,1]: lo = 1 - (-3) = 4; neg_hi:[1,0]: hi = -2 + 0.5 = -1.5
    ("v_pk_add_f16 v0, v1, v2 neg_lo:[0,1] neg_hi:[1,0]", 0xBE00_4400),
    # clamp: lo -2 → 0, hi 2.5 → 1
    ("v_pk_add_f16 v0, v1, v2 clamp", 0x3C00_0000),
    # lo 1 * -3 = -3, hi 2 * 0.5 = 1
    ("v_pk_mul_f16 v0, v1, v2", 0x3C00_C200),
    # a float constant is its binary16 bits in the low half, 0 in the high one: lo 1 + 1,
    # hi 2 + 0; op_sel_hi:[1,0] reads the low half for the high result too: hi 2 + 1
    ("v_pk_add_f16 v0, v1, 1.0", 0x4000_4000),
    ("v_pk_add_f16 v0, v1, 1.0 op_sel_hi:[1,0]", 0x4200_4000),
    # lo fma(1, -3, 1) = -2, hi fma(2, 0.5, 2) = 3 (src2 = v1, op_sel_hi:[1,1,1])
    ("v_pk_fma_f16 v0, v1, v2, v1", 0x4200_C000),
    # max per half: lo max(1, -3) = 1, hi max(2, 0.5) = 2; min: -3, 0.5
    ("v_pk_max_f16 v0, v1, v2", 0x4000_3C00),
    ("v_pk_min_f16 v0, v1, v2", 0x3800_C200),
])
def test_packed_f16(cpu: str, line: str, want: int) -> None:
    assert _run(line, cpu).V[:, 0].tolist() == [want] * (32 if cpu == "gfx1100" else 64)


@pytest.mark.parametrize(("a", "b", "c", "want"), [
    # (1 + 2**-10)**2 = 1 + 2**-9 + 2**-20: below half an ulp (2**-11) above 1 + 2**-9
    (0x3C01, 0x3C01, 0x0000, 0x3C02),
    # fused: (1 + 2**-10)**2 - (1 + 2**-9) = 2**-20 exactly, the subnormal 16 * 2**-24
    # (a product rounded first would give 0)
    (0x3C01, 0x3C01, 0xBC02, 0x0010),
    # 1.5 * (1 + 2**-10) = 1.5 + 2**-10 + 2**-11: a tie between 0x3E01 and 0x3E02, to even
    (0x3E00, 0x3C01, 0x0000, 0x3E02),
    # 65504 * 2 overflows to +inf
    (0x7BFF, 0x4000, 0x0000, 0x7C00),
])
def test_pk_fma_f16_rounds_once_to_nearest_even(a: int, b: int, c: int, want: int) -> None:
    w = _wave()
    w.V[:, 5], w.V[:, 6], w.V[:, 7] = a | a << 16, b | b << 16, c | c << 16
    _run("v_pk_fma_f16 v0, v5, v6, v7", w=w)
    assert w.V[:, 0].tolist() == [want | want << 16] * 64


def test_pk_max_f16_nan_rules() -> None:
    """V_MAX_F16 per half: IEEE mode quiets a signalling NaN (0x7C01 → 0x7E01); a quiet NaN
    operand gives the other operand."""
    w = _wave()
    w.V[:, 5] = 0x7C01_7E00
    _run("v_pk_max_f16 v0, v5, v1", w=w)
    assert w.V[:, 0].tolist() == [0x7E01_3C00] * 64


@pytest.mark.parametrize(("line", "v5", "want"), [
    # lo max(1, -3) = 1, hi max(2, 0.5) = 2; min: -3, 0.5
    ("v_pk_max_num_f16 v0, v1, v2", 0, 0x4000_3C00),
    ("v_pk_min_num_f16 v0, v1, v2", 0, 0x3800_C200),
    # v5 = (hi signalling NaN 0x7C01, lo quiet NaN 0x7E00): minimumNumber/maximumNumber give
    # the number for either kind of NaN, no IEEE mode (RDNA4 V_MAX_NUM_F16 pseudocode:
    # "elsif isNAN(S0): D = S1"), unlike GFX9's V_PK_MAX_F16 above, which quiets the sNaN
    ("v_pk_max_num_f16 v0, v5, v1", 0x7C01_7E00, 0x4000_3C00),
    ("v_pk_min_num_f16 v0, v1, v5", 0x7C01_7E00, 0x4000_3C00),
    # two NaNs: S0 quieted (0x7C01 → 0x7E01 in the high half)
    ("v_pk_max_num_f16 v0, v5, v5 op_sel:[1,1] op_sel_hi:[1,1]", 0x7C01_7E00, 0x7E01_7E01),
    # v5 = (hi -0, lo +0) against v6 = (hi +0, lo -0): -0 is below +0 (IEEE 754-2019 §9.6)
    ("v_pk_max_num_f16 v0, v5, v6", 0x8000_0000, 0x0000_0000),
    ("v_pk_min_num_f16 v0, v5, v6", 0x8000_0000, 0x8000_8000),
    # neg_lo:[1,0]: lo max(-1, -3) = -1; clamp: hi 2 → 1, lo -1 → 0
    ("v_pk_max_num_f16 v0, v1, v2 neg_lo:[1,0] clamp", 0, 0x3C00_0000),
])
def test_rdna4_packed_min_max_num(line: str, v5: int, want: int) -> None:
    """gfx1200's V_PK_MIN_NUM_F16/V_PK_MAX_NUM_F16 (LLVM's O3 code for a pair of f16
    `min`/`max`): V_MIN_NUM_F16/V_MAX_NUM_F16 on each half (RDNA4 ISA guide, packed math
    opcodes), values and NaN rules by hand from IEEE 754-2019 minimumNumber/maximumNumber."""
    w = _wave(32)
    w.V[:, 5], w.V[:, 6] = v5, 0x0000_8000
    assert _run(line, "gfx1200", w).V[:, 0].tolist() == [want] * 32


@pytest.mark.parametrize(("line", "want"), [
    # (1.5 + 0.25, -2 + 8)
    ("v_pk_add_f32 v[0:1], v[12:13], v[14:15]", (0x3FE0_0000, 0x40C0_0000)),
    # op_sel:[1,0]: lo = v13 + v14 = -1.75; op_sel_hi:[0,1]: hi = v12 + v15 = 9.5
    ("v_pk_add_f32 v[0:1], v[12:13], v[14:15] op_sel:[1,0] op_sel_hi:[0,1]",
     (0xBFE0_0000, 0x4118_0000)),
    # neg_lo:[0,1]: lo = 1.5 - 0.25 = 1.25; hi unchanged 6
    ("v_pk_add_f32 v[0:1], v[12:13], v[14:15] neg_lo:[0,1]", (0x3FA0_0000, 0x40C0_0000)),
    # lo fma(1.5, 0.25, 1) = 1.375, hi fma(-2, 8, 1) = -15 (the constant's low dword both)
    ("v_pk_fma_f32 v[0:1], v[12:13], v[14:15], 1.0 op_sel_hi:[1,1,0]",
     (0x3FB0_0000, 0xC170_0000)),
    # clamp: (0.375, -16 → 0)
    ("v_pk_mul_f32 v[0:1], v[12:13], v[14:15] clamp", (0x3EC0_0000, 0x0000_0000)),
    # LLVM's fneg <2 x float>: -1.5 - 0, 2 - 0
    ("v_pk_add_f32 v[0:1], v[12:13], 0 neg_lo:[1,1] neg_hi:[1,1]", (0xBFC0_0000, 0x4000_0000)),
])
@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a"])
def test_packed_f32(cpu: str, line: str, want: tuple[int, int]) -> None:
    w = _run(line, cpu)
    assert (w.V[:, 0].tolist(), w.V[:, 1].tolist()) == ([want[0]] * 64, [want[1]] * 64)


@pytest.mark.parametrize(("line", "want"), [
    # lo 1 + 2 = 3 (no saturation), hi 0xFFFF + 2 saturates to 0xFFFF
    ("v_pk_add_u16 v0, v5, v6 clamp", 0xFFFF_0003),
    # lo 32767 - (-1) → 32767, hi -32768 - 1 → -32768
    ("v_pk_sub_i16 v0, v7, v8 clamp", 0x8000_7FFF),
    # lo 1 - 2 → 0 (unsigned floor), hi 0xFFFF - 2 = 0xFFFD
    ("v_pk_sub_u16 v0, v5, v6 clamp", 0xFFFD_0000),
])
def test_packed_integer_clamp_saturates(line: str, want: int) -> None:
    w = _wave()
    w.V[:, 5], w.V[:, 6] = 0xFFFF_0001, 0x0002_0002
    w.V[:, 7], w.V[:, 8] = 0x8000_7FFF, 0x0001_FFFF
    assert _run(line, w=w).V[:, 0].tolist() == [want] * 64


@pytest.mark.parametrize(("cpu", "line", "want"), [
    # GFX9: the low half of each source, D[31:16] zeroed (docs/simulator.md §12)
    ("gfx942", "v_add_f16 v0, v1, v2", 0x0000_C000),
    ("gfx90a", "v_mul_f16_e64 v0, -v1, v2", 0x0000_4200),
    # SDWA: v1's high word (2) + v2's low word (-3) = -1 into D[31:16], D[15:0] kept
    ("gfx942", "v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE "
               "src0_sel:WORD_1 src1_sel:WORD_0", 0xBC00_5678),
    ("gfx90a", "v_floor_f16_sdwa v0, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1",
     0x0000_0000),
    # true16: v1.h (2) + v2.l (-3) = -1 into v0.h, v0.l kept
    ("gfx1100", "v_add_f16 v0.h, v1.h, v2.l", 0xBC00_5678),
    ("gfx1100", "v_fma_f16 v0.l, v1.h, v2.h, v1.l", 0x1234_4000),
    ("gfx1100", "v_max_f16 v0.l, v1.l, v2.h", 0x1234_3C00),
    # V_MAXMIN_F16: min(max(1, -3), 2) = 1; V_MINMAX_F16: max(min(1, -3), 0.5) = 0.5
    ("gfx1100", "v_maxmin_f16 v0.l, v1.l, v2.l, v1.h", 0x1234_3C00),
    ("gfx1100", "v_minmax_f16 v0.l, v1.l, v2.l, v2.h", 0x1234_3800),
    # K = 0x4000 (2.0): 1 * 2 + -3 = -1; 1 * -3 + 2 = -1
    ("gfx1100", "v_fmamk_f16 v0.l, v1.l, 0x4000, v2.l", 0x1234_BC00),
    ("gfx1100", "v_fmaak_f16 v0.l, v1.l, v2.l, 0x4000", 0x1234_BC00),
    # V_PACK_B32_F16: D[15:0] = -S0 = -1, D[31:16] = S1 = -3
    ("gfx942", "v_pack_b32_f16 v0, -v1, v2", 0xC200_BC00),
    ("gfx1100", "v_pack_b32_f16 v0, v1.h, v2.h", 0x3800_4000),
])
def test_f16_vop(cpu: str, line: str, want: int) -> None:
    assert set(_run(line, cpu).V[:, 0].tolist()) == {want}


@pytest.mark.parametrize(("x", "e", "want"), [
    (0x3E00, -16, 0x0180),   # 1.5 * 2**-16 = 384 * 2**-24, exact subnormal
    (0x3C01, -24, 0x0001),   # (1 + 2**-10) * 2**-24 rounds down to 2**-24
    (0x3E00, -25, 0x0001),   # 0.75 * 2**-24 rounds up
    (0x3800, -24, 0x0000),   # 0.5 * 2**-24: a tie, to even (0)
    (0x3C00, 16, 0x7C00),    # 2**16 overflows
    (0x3C00, 20000, 0x7C00),
])
def test_ldexp_f16_rounds_once(x: int, e: int, want: int) -> None:
    w = _wave()
    w.V[:, 5], w.V[:, 6] = x, e & 0xFFFF
    assert set(_run("v_ldexp_f16 v0, v5, v6", w=w).V[:, 0].tolist()) == {want}


@pytest.mark.parametrize(("line", "src", "want"), [
    ("v_cvt_f16_u16 v0, v5", 65535, 0x7C00),   # above 65520: rounds to +inf
    ("v_cvt_f16_u16 v0, v5", 2049, 0x6800),    # tie between 2048 and 2050: to even 2048
    ("v_cvt_f16_u16 v0, v5", 2051, 0x6802),    # tie between 2050 and 2052: to even 2052
    ("v_cvt_f16_i16 v0, v5", 0x8000, 0xF800),  # -32768 exactly
    ("v_sqrt_f16 v0, v5", 0x4400, 0x4000),     # sqrt(4) = 2
    ("v_rndne_f16 v0, v5", 0x4100, 0x4000),    # rint(2.5) = 2
    ("v_rndne_f16 v0, v5", 0x4300, 0x4400),    # rint(3.5) = 4
    ("v_trunc_f16 v0, v5", 0xBE00, 0xBC00),    # trunc(-1.5) = -1
    ("v_ceil_f16 v0, v5", 0xBE00, 0xBC00),     # ceil(-1.5) = -1
    ("v_floor_f16 v0, v5", 0xBE00, 0xC000),    # floor(-1.5) = -2
    ("v_frexp_exp_i16_f16 v0, v5", 0x4400, 3),  # 4 = 0.5 * 2**3
    ("v_frexp_mant_f16 v0, v5", 0x4400, 0x3800),
])
def test_f16_vop1(line: str, src: int, want: int) -> None:
    w = _wave()
    w.V[:, 5] = src
    assert set(_run(line, w=w).V[:, 0].tolist()) == {want}


@pytest.mark.parametrize(("q", "d", "n", "want"), [
    (0x3C00, 0x0000, 0x4000, 0x7C00),   # 2 / +0 → +inf
    (0x3C00, 0x8000, 0x4000, 0xFC00),   # 2 / -0 → -inf
    (0x3C00, 0x0000, 0x0000, 0xFE00),   # 0 / 0
    (0x3C00, 0x7C00, 0xFC00, 0xFE00),   # inf / inf
    (0x3C00, 0x7C00, 0x4000, 0x0000),   # 2 / inf → +0
    (0x3C00, 0x4000, 0x7C01, 0x7E01),   # sNaN numerator, quieted
    (0x3C00, 0xC000, 0x4000, 0xBC00),   # |q| with sign(d) ^ sign(n) = -
])
def test_div_fixup_f16(q: int, d: int, n: int, want: int) -> None:
    w = _wave()
    w.V[:, 5], w.V[:, 6], w.V[:, 7] = q, d, n
    assert set(_run("v_div_fixup_f16 v0, v5, v6, v7", w=w).V[:, 0].tolist()) == {want}


def test_fma_mix_f32_reads_f16_halves_and_f32() -> None:
    """in0 = -(v1's high half: 2), in1 = v2's low half (-3), in2 = v3 as binary32 (0.5):
    -2 * -3 + 0.5 = 6.5."""
    w = _wave()
    w.V[:, 3] = 0x3F00_0000
    _run("v_fma_mix_f32 v0, -v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[1,1,0]", w=w)
    assert w.V[:, 0].tolist() == [0x40D0_0000] * 64


def test_half_defined_source_defines_the_halves_it_reads() -> None:
    """v5's high half never written: a result reading only low halves is defined; one
    reading the high half is defined only in the other half."""
    w = _wave()
    w.vdef[:, 5] = False
    w.vpart[5] = {lane: 0x0000_FFFF for lane in range(64)}
    w.V[:, 5] = 0x0000_3C00
    _run("v_pk_add_f16 v0, v5, v1 op_sel_hi:[0,1]", w=w)
    assert defined_bits(w, 0).tolist() == [0xFFFF_FFFF] * 64
    _run("v_pk_add_f16 v0, v5, v1", w=w)
    assert defined_bits(w, 0).tolist() == [0x0000_FFFF] * 64


@pytest.mark.parametrize("line", ["v_add_f16 v0, v1, v2", "v_pk_add_f16 v0, v1, v2",
                                  "v_cvt_f32_f16 v0, v1",
                                  "v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0]"])
def test_flushing_f16_denormal_mode_is_unsupported(line: str) -> None:
    """FLOAT_DENORM_MODE_16_64 other than 3 (flush none) is not modelled for binary16."""
    env = replace(ENV, flush64=True)
    with pytest.raises(SimStop) as stop:
        run_steps(assemble([line]), _wave(), env)
    assert stop.value.fault.kind is FaultKind.UNSUPPORTED
    assert "FLOAT_DENORM_MODE_16_64" in stop.value.fault.detail


def test_bfi_keeps_the_defined_half_of_a_half_defined_source() -> None:
    """LLVM's gfx1100 binary16 copysign: `v_bfi_b32 v0, 0x7fff, v5, v6` with v5 and v6 filled
    by D16 loads (high halves undefined). D = (0x7fff & v5) | (~0x7fff & v6): bits 14:0 from
    v5, bit 15 and 31:16 from v6, so D[15:0] is defined, D[31:16] not."""
    w = _wave(32)
    for col, low in ((5, 0x3C00), (6, 0x8000)):
        w.vdef[:, col] = False
        w.vpart[col] = {lane: 0x0000_FFFF for lane in range(32)}
        w.V[:, col] = low
    _run("v_bfi_b32 v0, 0x7fff, v5, v6", "gfx1100", w)
    assert w.V[:, 0].tolist() == [0xBC00] * 32   # -1.0: 1.0's magnitude, v6's sign
    assert defined_bits(w, 0).tolist() == [0x0000_FFFF] * 32


@pytest.mark.parametrize(("cpu", "line", "want"), [
    # 32767 + 1 wraps to -32768 (0x8000); with clamp it saturates at 32767
    ("gfx942", "v_add_i16 v0, v5, v6", 0x0000_8000),
    ("gfx942", "v_add_i16 v0, v5, v6 clamp", 0x0000_7FFF),
    # -32768 - 1: wraps to 32767, saturates at -32768
    ("gfx90a", "v_sub_i16 v0, v7, v6", 0x0000_7FFF),
    ("gfx90a", "v_sub_i16 v0, v7, v6 clamp", 0x0000_8000),
    # gfx1100 true16: the result into v0.l, v0.h kept
    ("gfx1100", "v_add_nc_i16 v0.l, v5.l, v6.l clamp", 0x1234_7FFF),
    ("gfx1100", "v_sub_nc_i16 v0.l, v7.l, v6.l clamp", 0x1234_8000),
    ("gfx1100", "v_add_nc_i16 v0.l, v5.l, v6.l", 0x1234_8000),
])
def test_signed_16_bit_add_sub_wrap_or_saturate(cpu: str, line: str, want: int) -> None:
    w = _wave(32 if cpu == "gfx1100" else 64)
    w.V[:, 5], w.V[:, 6], w.V[:, 7] = 0x7FFF, 0x0001, 0x8000
    assert set(_run(line, cpu, w).V[:, 0].tolist()) == {want}
