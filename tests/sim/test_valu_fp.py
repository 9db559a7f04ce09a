"""Float VALU functions (`sim.valu_fp`) against values worked out by hand from IEEE 754 and
the CDNA3 ISA pseudocode: each wave mixes lanes that take the fast path (plain operands)
with lanes that need the pseudocode's special cases, at the boundaries of the exponent
tests that choose between them. Expected values are bit patterns written out here."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.semantics.valu import VALU

F32, F64 = np.float32, np.float64


def f64(*bits: int) -> np.ndarray:
    return np.array(bits, np.uint64).view(F64)


def f32(*bits: int) -> np.ndarray:
    return np.array(bits, np.uint32).view(F32)


def bits(x: object) -> list[int]:
    a = np.atleast_1d(np.asarray(x))
    return a.view(np.uint64 if a.dtype == F64 else np.uint32).tolist()


def call(name: str, *args: object) -> object:
    spec = VALU[name]
    with np.errstate(all="ignore"):  # the simulator's setting (engine.simulate)
        return spec.fn(*args)


def test_ldexp_f64_subnormal_boundary_overflow_and_nan() -> None:
    x = np.array([1.0, 1.0, -1.5, 1.0, 1.0, 3.0, 1.5, float.fromhex("0x1p-1074"),
                  float.fromhex("0x1p-1074"), float.fromhex("0x1.fffffffffffffp+1023"),
                  -0.0, 0.0, float.fromhex("0x1p-1022"), 1.0], F64)
    x = np.concatenate([x, f64(0x7FF8000000000123, 0xFFF8000000000000)])
    e = np.array([1023, 1024, 1024, -1074, -1075, -1075, -1074, 1074, 2**31 - 1, -2**31,
                  5, -7, -1, -1022, 9, -9], np.int32)
    got = call("V_LDEXP_F64", x, e)
    assert got.dtype == F64
    assert bits(got) == [
        0x7FE0000000000000,  # 2**1023, the largest power of two
        0x7FF0000000000000,  # 2**1024 overflows to +inf
        0xFFF0000000000000,  # -1.5 * 2**1024: -inf
        0x0000000000000001,  # 2**-1074, the smallest subnormal
        0x0000000000000000,  # 2**-1075: halfway to 2**-1074, ties to even (0)
        0x0000000000000002,  # 3 * 2**-1075 = 1.5 ulp: ties to even (2 ulp)
        0x0000000000000002,  # 1.5 * 2**-1074: the same value
        0x3FF0000000000000,  # the smallest subnormal scaled back to 1.0
        0x7FF0000000000000,  # any nonzero finite value times 2**(2**31 - 1): inf
        0x0000000000000000,  # the largest finite value times 2**-(2**31): +0
        0x8000000000000000,  # -0 stays -0
        0x0000000000000000,  # +0 stays +0
        0x0008000000000000,  # 2**-1023: a normal number becomes subnormal exactly
        0x0010000000000000,  # 1.0 * 2**-1022: the smallest normal
        0x7FF8000000000123,  # a quiet NaN keeps its payload
        0xFFF8000000000000,  # and its sign
    ]


def test_ldexp_f32_boundaries_and_uniform_exponent() -> None:
    x = f32(0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x00000001, 0x00400000,
            0xBF800000)
    e = np.array([127, 128, -149, -150, 149, 1, -126], np.int32)
    got = call("V_LDEXP_F32", x, e)
    assert got.dtype == F32
    assert bits(got) == [0x7F000000, 0x7F800000, 0x00000001, 0x00000000, 0x3F800000,
                         0x00800000, 0x80800000]
    # a uniform exponent (an SGPR or inline constant: a numpy scalar)
    assert bits(call("V_LDEXP_F32", f32(0x3FC00000, 0x7F7FFFFF), np.int32(-1))) == \
        [0x3F400000, 0x7EFFFFFF]


def test_div_scale_plain_operands_give_s0_without_vcc() -> None:
    """No rule applies: D = S0, VCC clear (the fast path), up to the boundaries of its
    exponent tests (`valu_fp.div_scale`: a denominator exponent field of 2044 is not huge,
    an exponent gap of 767 or -767 is inside the band, a numerator field of 54 is not
    tiny)."""
    s1 = np.array([3.0, float.fromhex("0x1.fffffffffffffp+1021"), 1.0, 2.0**767, -2.0**-700],
                  F64)
    s2 = np.array([1.0, 2.0**300, 2.0**767, 1.0, 2.0**-969], F64)
    d, vcc = call("V_DIV_SCALE_F64", s1, s1, s2)
    assert bits(d) == bits(s1) and not vcc.any()


def test_div_scale_rules_checked_on_hardware() -> None:
    """One lane per rule, in a wave with plain lanes (which keep D = S0, VCC clear). The
    rules are those AMD's emulator rocjitsu states were checked on gfx1100/gfx1201
    (ROCm/rocm-systems PR #11613; `valu_fp.div_scale`), worked by hand on the exponent
    fields here: de of |S1|, ne of |S2|, bias 1023, band 768, scale 2**128."""
    s1 = np.array([3.0, 0.0, one := 1.0, one, 2.0**1000, 1.5 * 2.0**1022, 3.0,
                   1.5 * 2.0**1022, 2.0**-900], F64)
    s2 = np.array([1.0, 1.0, 2.0**768, 2.0**-1060, 2.0**-23, 2.0**60, 1.0, 2.0**500,
                   2.0**-980], F64)
    s0 = np.array([s1[0], s1[1], s1[2], s2[3], s2[4], s1[5], s2[6], s2[7], s2[8]], F64)
    d, vcc = call("V_DIV_SCALE_F64", s0, s1, s2)
    want = [
        3.0,                   # plain
        np.nan,                # S1 == 0: NaN (gap 1023 >= 768 sets VCC all the same)
        2.0**128,              # gap 768: S0 == S1 scaled up, VCC
        2.0**-1060 * 2.0**128,  # gap -1023 (ne 0): S0 == S2 scaled up, VCC
        2.0**-23 * 2.0**128,   # gap 1000 - 2023 = -1023: S0 == S2 scaled up, VCC
        1.5 * 2.0**1022 * 2.0**-128,  # de 2045 is huge, gap 1083 - 2045 = -962: the
                                      # denominator scaled down, VCC
        1.0,                   # plain, S0 == S2
        2.0**500 * 2.0**-128,  # de 2045 huge, gap 1523 - 2045 = -522: the numerator
                               # scaled down too, no VCC
        2.0**-980 * 2.0**128,  # ne 43 <= 53 (gap 43 - 123 = -80): a tiny numerator,
                               # scaled up, no VCC
    ]
    got = d.tolist()
    assert np.isnan(got[1]) and got[:1] + got[2:] == want[:1] + want[2:]
    assert vcc.tolist() == [False, True, True, True, True, True, False, False, False]


def test_div_scale_f32_huge_denominator_and_fmas_selector() -> None:
    """The F32 case the published pseudocode misses (its reciprocal test is binary64's
    DENORM): S1 = FLT_MAX (field 254 >= 253) scales both operands down by 2**64 and sets no
    VCC (2**100 / FLT_MAX, gap 227 - 254 = -27); with a tiny quotient (-2**24 / FLT_MAX, gap
    151 - 254 = -103 <= -96; LLVM's division macro was 1 ulp off on it) only the
    denominator, and VCC. V_DIV_FMAS then scales by 2**64 when S2's field is above 127, by
    2**-64 otherwise (so 1.5, field 127, goes down)."""
    fmax = f32(0x7F7FFFFF)[0]
    s1 = np.array([fmax, fmax, fmax, fmax], F32)
    s2 = np.array([2.0**100, 2.0**100, -2.0**24, -2.0**24], F32)
    s0 = np.array([fmax, 2.0**100, fmax, -2.0**24], F32)
    d, vcc = call("V_DIV_SCALE_F32", s0, s1, s2)
    assert d.tolist() == [float(np.ldexp(fmax, -64)), 2.0**36, float(np.ldexp(fmax, -64)),
                          -2.0**24]
    assert vcc.tolist() == [False, False, True, True]
    a, b = np.full(4, 1.0, F32), np.full(4, 1.0, F32)
    c = np.array([1.5, 3.0, 1.5, 3.0], F32)
    got = call("V_DIV_FMAS_F32", a, b, c, np.array([True, True, False, False]))
    assert got.tolist() == [2.5 * 2.0**-64, 4.0 * 2.0**64, 2.5, 4.0]


def test_div_fixup_sign_and_special_cases() -> None:
    """D = |S0| with the sign of S1 ^ S2 when nothing is special, else the special value
    (pseudocode V_DIV_FIXUP_F64; S0 quotient, S1 denominator, S2 numerator)."""
    q = np.array([0.5, 0.5, -0.5, 0.25, 7.0, 7.0, 7.0, 7.0, 7.0], F64)
    d = np.array([2.0, 2.0, -2.0, 4.0, 0.0, 0.0, np.inf, 2.0**100, 3.0], F64)
    n = np.array([1.0, -1.0, -1.0, 1.0, -1.0, 0.0, 1.0, 2.0**-1000, 1.0], F64)
    n = np.concatenate([n[:8], f64(0x7FF0000000000001)])
    got = call("V_DIV_FIXUP_F64", q, d, n)
    assert bits(got) == [
        0x3FE0000000000000,  # +0.5
        0xBFE0000000000000,  # -0.5: negative numerator
        0x3FE0000000000000,  # +0.5: both negative
        0x3FD0000000000000,  # 0.25
        0xFFF0000000000000,  # -1 / 0: -inf
        0x7FF8000000000000,  # 0 / 0: the default NaN
        0x0000000000000000,  # 1 / inf: +0
        0x0000000000000000,  # exponent(S2) - exponent(S1) = -1100 < -1075: +0
        0x7FF8000000000001,  # a signalling NaN numerator, quieted
    ]
    plain = call("V_DIV_FIXUP_F32", np.full(4, 0.5, F32), np.full(4, -2.0, F32),
                 np.full(4, 1.0, F32))
    assert plain.dtype == F32 and bits(plain) == [0xBF000000] * 4


@pytest.mark.parametrize("ieee", [True, False])
def test_min_max_med3_zeros_and_nans(ieee: bool) -> None:
    """-0 < +0; a signalling NaN gives its quieted self in IEEE mode, any other NaN case
    the other operand (pseudocode V_MIN_F32 / V_MAX_F32)."""
    a = f32(0x80000000, 0x00000000, 0x3F800000, 0x7FA00000, 0x7FC00000)
    b = f32(0x00000000, 0x80000000, 0x40000000, 0x3F800000, 0x3F800000)
    mn = call("V_MIN_F32", ieee, a, b)
    mx = call("V_MAX_F32", ieee, a, b)
    snan_min = 0x7FE00000 if ieee else 0x3F800000
    assert bits(mn) == [0x80000000, 0x80000000, 0x3F800000, snan_min, 0x3F800000]
    assert bits(mx) == [0x00000000, 0x00000000, 0x40000000, snan_min, 0x3F800000]
    # no NaN in the wave: the ordered path alone
    assert bits(call("V_MIN_F32", ieee, a[:3], b[:3])) == bits(mn[:3])
    assert bits(call("V_MAX_F64", ieee, np.array([-0.0, 2.0]), np.array([0.0, -3.0]))) == \
        [0x0000000000000000, 0x4000000000000000]
    med = call("V_MED3_F32", ieee, f32(0x3F800000, 0x80000000), f32(0x40400000, 0x00000000),
               f32(0x40000000, 0x00000000))
    assert bits(med) == [0x40000000, 0x00000000]  # med3(1, 3, 2) = 2; med3(-0, +0, +0) = +0


@pytest.mark.parametrize("ieee", [True, False])
def test_min_nan_precedence(ieee: bool) -> None:
    """CDNA3 V_MIN_F32 pseudocode, in order: IEEE and S0 sNaN -> quiet(S0); IEEE and S1 sNaN
    -> quiet(S1); S0 NaN -> S1; S1 NaN -> S0. Payloads kept, quiet bit set."""
    a = f32(0x3F800000, 0x7FA00001, 0x7FC00002, 0x7FC00003)
    b = f32(0x7F800005, 0x7FA00006, 0x7F800007, 0x7FC00008)
    want = [0x7FC00005, 0x7FE00001, 0x7FC00007, 0x7FC00008] if ieee else \
        [0x3F800000, 0x7FA00006, 0x7F800007, 0x7FC00008]
    assert bits(call("V_MIN_F32", ieee, a, b)) == want
    assert bits(call("V_MAX_F32", ieee, a, b)) == want


@pytest.mark.parametrize(("name", "values"), [
    ("V_CMP_CLASS_F32", f32(0x7FA00000, 0x7FC00000, 0xFF800000, 0xBF800000, 0x80000001,
                            0x80000000, 0x00000000, 0x007FFFFF, 0x00800000, 0x7F800000,
                            0xFF800001, 0xFFC00000)),
    ("V_CMP_CLASS_F64", f64(0x7FF4000000000000, 0x7FF8000000000000, 0xFFF0000000000000,
                            0xBFF0000000000000, 0x8000000000000001, 0x8000000000000000,
                            0x0000000000000000, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
                            0x7FF0000000000000, 0xFFF0000000000001, 0xFFF8000000000000)),
    ("V_CMP_CLASS_F16", np.array([0x7D00, 0x7E00, 0xFC00, 0xBC00, 0x8001, 0x8000, 0x0000, 0x03FF,
                                  0x0400, 0x7C00, 0xFD00, 0xFE00], np.uint16).view(np.float16)),
])
def test_cmp_class_each_class(name: str, values: np.ndarray) -> None:
    """Lane i holds a value of class i (0 sNaN ... 9 +inf; then a negative sNaN, class 0,
    and a negative qNaN, class 1): mask bit k selects exactly the lanes of class k."""
    cls = [*range(10), 0, 1]
    for k in range(10):
        got = call(name, values, np.uint32(1 << k))
        assert got.tolist() == [c == k for c in cls]
    per_lane = np.array([1 << c for c in cls], np.uint32)
    assert call(name, values, per_lane).all()
    assert not call(name, values, ~per_lane & np.uint32(0x3FF)).any()
    # a uniform value with per-lane masks
    assert call(name, values[7], np.array([1 << 7, 1 << 8], np.uint32)).tolist() == \
        [True, False]


def test_fract_rcp_and_narrowing() -> None:
    x = f32(0xBFA00000, 0x80000001, 0x7F800000, 0xFF800000, 0x40400000)
    # -1.25 -> 0.75; -2**-149 -> 1 - 2**-149 rounds to 1.0, clamped below 1 (0x3f7fffff);
    # +-inf -> +qNaN; 3.0 -> +0
    assert bits(call("V_FRACT_F32", x)) == [0x3F400000, 0x3F7FFFFF, 0x7FC00000, 0x7FC00000,
                                            0x00000000]
    assert bits(call("V_RCP_F64", np.array([0.0, -0.0, 4.0]))) == \
        [0x7FF0000000000000, 0xFFF0000000000000, 0x3FD0000000000000]
    assert bits(call("V_CVT_F32_F64", np.array([1e300, -1e300, 2.0**-150]))) == \
        [0x7F800000, 0xFF800000, 0x00000000]  # overflow to inf; 2**-150 ties to even (0)
