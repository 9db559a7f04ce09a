"""`sim.valu_mad` (GFX9's unfused, always-flushing V_MAD_F32 family) against values worked
out by hand: each step (inputs, the rounded product, the sum) flushes f32 subnormals to a
zero of the same sign (Vega/CDNA2 ISA "V_MAD_F32": no denormal support), a NaN keeps its
payload, quieted (x86's rule for one NaN operand, Intel SDM Vol. 1 Table 4-7), and uniform
(0-d) operands give what per-lane ones give."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.semantics.valu_mad import mad_f32, mad_legacy_f32

F32 = np.float32


def f32(*bits: int) -> np.ndarray:
    return np.array(bits, np.uint32).view(F32)


def bits(x: object) -> list[int]:
    return np.atleast_1d(np.asarray(x, F32)).view(np.uint32).tolist()


def test_every_step_flushes_to_a_signed_zero() -> None:
    # (a, b, c) as bit patterns, and the expected result
    lanes = [
        (0x9C80_0000, 0x1C80_0000, 0x8000_0000, 0x8000_0000),  # -2**-70 * 2**-70 = -2**-140,
        # a subnormal product, flushed to -0; -0 + -0 = -0
        (0x0000_0001, 0x7180_0000, 0x0000_0000, 0x0000_0000),  # the subnormal input 2**-149
        # is 0 before the multiply (not 2**-149 * 2**100 = 2**-49)
        (0x0D80_0000, 0x3080_0000, 0x8000_0000, 0x0000_0000),  # 2**-100 * 2**-30 = 2**-130
        # flushed to +0; +0 + -0 = +0 (IEEE 754 §6.3)
        (0x00C0_0000, 0x3F80_0000, 0x8080_0000, 0x0000_0000),  # 1.5 * 2**-126 - 2**-126 =
        # 2**-127, a subnormal sum, flushed to +0
        (0x0080_0000, 0x3F80_0000, 0x8000_0001, 0x0080_0000),  # 2**-126 + (-2**-149 flushed
        # to -0) = 2**-126; unflushed, the sum would be subnormal, then +0
        (0x4040_0000, 0x4000_0000, 0x807F_FFFF, 0x40C0_0000),  # 3 * 2 + (-0) = 6
        (0x7FC0_0123, 0x4000_0000, 0x3F80_0000, 0x7FC0_0123),  # a quiet NaN passes
        (0x3F80_0000, 0xFF80_0005, 0x3F80_0000, 0xFFC0_0005),  # a signalling NaN, quieted
        (0x3F80_0000, 0x3F80_0000, 0x7FA0_0456, 0x7FE0_0456),  # a signalling NaN addend
    ]
    a, b, c = (f32(*(lane[k] for lane in lanes)) for k in range(3))
    with np.errstate(all="ignore"):
        got = mad_f32(a, b, c)
    assert bits(got) == [lane[3] for lane in lanes]


def test_uniform_operands_and_the_legacy_zero_rule() -> None:
    """0-d operands (an SGPR or a constant in each slot) give the per-lane results; the
    legacy form's 0 * anything is +0, a flushed subnormal counting as 0 (DX9 rules)."""
    with np.errstate(all="ignore"):
        assert bits(mad_f32(f32(0xFFC0_0123)[0], F32(1.0), F32(0.0))) == [0xFFC0_0123]
        assert bits(mad_f32(np.asarray(F32(-2.0**-70)), np.asarray(F32(2.0**-70)),
                            np.asarray(F32(-0.0)))) == [0x8000_0000]
        got = mad_legacy_f32(f32(0x0000_0000, 0x0000_0005, 0x8000_0000),
                             f32(0x7F80_0000, 0x7F80_0000, 0x40A0_0000),
                             f32(0x4040_0000, 0x4040_0000, 0x8000_0000))
    assert bits(got) == [0x4040_0000, 0x4040_0000, 0x0000_0000]
