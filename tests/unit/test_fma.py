"""`model.fma`: fused multiply-add against exact rational arithmetic.

The expected values come from `Fraction` (exact) rounded by `_round`, written here from
IEEE 754 §4.3.1 (roundTiesToEven on the precision-p grid, subnormal grid 2**emin, overflow
past the largest finite to infinity) and §6.3 (the sign of an exact zero sum); nothing of
`model.fma` is used to compute them.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from rgpu_fuzz.model.fma import fma32, fma64, fma64_exact

F64 = (53, -1074, 1024)   # precision, exponent of the smallest subnormal, 2**emax+1 bound
F32 = (24, -149, 128)


def _round(q: Fraction, fmt: tuple[int, int, int]) -> float:
    """`q` rounded to nearest, ties to even, in the format `fmt` (q nonzero)."""
    p, emin, emax1 = fmt
    mag = abs(q)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()  # within one of log2
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    ulp = Fraction(2) ** max(e - p + 1, emin)
    n = mag / ulp
    k = n.numerator // n.denominator
    rest = n - k
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and k % 2 == 1):
        k += 1
    value = k * ulp
    out = math.inf if value >= Fraction(2) ** emax1 else float(value)  # exact: on the grid
    return -out if q < 0 else out


def _expected(a: float, b: float, c: float, fmt: tuple[int, int, int], scale: int = 0) -> float:
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return math.nan  # inf * 0 (IEEE 754 §7.2)
        sign = math.copysign(1.0, a) * math.copysign(1.0, b)
        if math.isinf(c) and math.copysign(1.0, c) != sign:
            return math.nan  # inf - inf
        return math.copysign(math.inf, sign)
    if math.isinf(c):
        return c
    exact = (Fraction(a) * Fraction(b) + Fraction(c)) * Fraction(2) ** scale
    if exact == 0:
        product_negative = (math.copysign(1.0, a) * math.copysign(1.0, b)) < 0
        both_zero = (a == 0 or b == 0) and c == 0
        negative_zero = both_zero and product_negative and math.copysign(1.0, c) < 0
        return -0.0 if negative_zero else 0.0  # IEEE 754 §6.3
    return _round(exact, fmt)


def _same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def _bits64(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)


def _check64(a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: np.ndarray | int = 0) -> None:
    got = fma64(a, b, c, scale)
    ks = np.broadcast_to(np.asarray(scale), a.shape)
    bad = [(x, y, z, int(k), g) for x, y, z, k, g in zip(a.tolist(), b.tolist(), c.tolist(),
                                                         ks.tolist(), got.tolist(), strict=True)
           if not _same(g, _expected(x, y, z, F64, int(k)))]
    assert not bad, bad[:5]


def _near(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    """Random significands and signs with exponents in [lo, hi)."""
    m = rng.uniform(1.0, 2.0, n) * rng.choice([-1.0, 1.0], n)
    return np.ldexp(m, rng.integers(lo, hi, n))


def test_random_bit_patterns() -> None:
    rng = np.random.default_rng(1)
    _check64(_bits64(rng, 3000), _bits64(rng, 3000), _bits64(rng, 3000))


def test_random_normal_range_and_exponent_gaps() -> None:
    rng = np.random.default_rng(2)
    n = 3000
    a, b = _near(rng, n, -60, 60), _near(rng, n, -60, 60)
    c = _near(rng, n, -130, 130)
    _check64(a, b, c)


def test_ties_and_near_ties_round_to_even() -> None:
    """a*b exact (26-bit significands), c half an ulp of it (and one ulp of c either side):
    the exact sum lies on, or next to, the midpoint between two doubles."""
    rng = np.random.default_rng(3)
    n = 2000
    a = np.ldexp(rng.integers(2**25, 2**26, n).astype(np.float64), rng.integers(-30, 30, n))
    b = np.ldexp(rng.integers(2**25, 2**26, n).astype(np.float64), rng.integers(-30, 30, n))
    p = a * b  # exact: 52 significant bits at most
    half_ulp = np.spacing(p) / 2
    sign = rng.choice([-1.0, 1.0], n)
    c = sign * half_ulp * rng.choice([1.0, 3.0], n)
    nudge = np.where(rng.integers(0, 3, n) == 0, 0.0, np.spacing(c) * rng.choice([-1, 1], n))
    _check64(a, b, c + nudge)
    # Explicit: 1 + 2**-53 is the midpoint of 1 and 1 + 2**-52; ties to even gives 1.
    assert fma64(np.array([1.0]), np.array([1.0]), np.array([2.0**-53]))[0] == 1.0
    assert fma64(np.array([1.0 + 2**-52]), np.array([1.0]), np.array([2.0**-53]))[0] \
        == 1.0 + 2**-51


def test_cancellation_gives_the_product_error() -> None:
    """c = -fl(a*b): the result is the exact rounding error of the product (Dekker)."""
    rng = np.random.default_rng(4)
    a, b = _near(rng, 2000, -500, 500), _near(rng, 2000, -500, 500)
    _check64(a, b, -(a * b))
    x = 1.0 + 2**-30
    assert fma64(np.array([x]), np.array([x]), np.array([-(x * x)]))[0] == 2.0**-60


def test_overflow_and_products_past_the_range() -> None:
    rng = np.random.default_rng(5)
    n = 2000
    a, b = _near(rng, n, 500, 530), _near(rng, n, 480, 520)
    c = _near(rng, n, 1000, 1024)
    _check64(a, b, c)
    big = np.finfo(np.float64).max
    # max * 2 - max = max exactly although fl(max * 2) is inf (one rounding, §5.4.1).
    assert fma64(np.array([big]), np.array([2.0]), np.array([-big]))[0] == big
    assert fma64(np.array([big]), np.array([1.0 + 2**-52]), np.array([0.0]))[0] == math.inf


def test_subnormal_results_and_operands() -> None:
    rng = np.random.default_rng(6)
    n = 3000
    a, b = _near(rng, n, -560, -500), _near(rng, n, -560, -500)
    c = np.where(rng.integers(0, 2, n) == 0, _near(rng, n, -1074, -1020), 0.0)
    _check64(a, b, c)
    sub = rng.integers(1, 2**52, n, dtype=np.uint64).view(np.float64)
    _check64(sub, _near(rng, n, -5, 60), _near(rng, n, -1074, -1000))
    assert fma64(np.array([2.0**-600]), np.array([2.0**-500]), np.array([0.0]))[0] == 0.0
    # 2**-1075 is halfway between 0 and 2**-1074: to even gives +0; a hair above rounds up.
    assert _same(float(fma64(np.array([2.0**-537]), np.array([2.0**-538]),
                             np.array([-0.0]))[0]), 0.0)
    assert fma64(np.array([2.0**-537 * (1 + 2**-52)]), np.array([2.0**-538]),
                 np.array([0.0]))[0] == 2.0**-1074


def test_signed_zeros_and_exact_zero_sums() -> None:
    zs = [0.0, -0.0]
    combos = [(x, y, z) for x in [*zs, 1.5, -1.5] for y in [*zs, 2.0, -2.0] for z in zs]
    a, b, c = (np.array(v) for v in zip(*combos, strict=True))
    _check64(a, b, c)
    # x*y + z == 0 exactly with nonzero terms: +0 in round to nearest (§6.3).
    got = fma64(np.array([1.5, -1.5]), np.array([2.0, 2.0]), np.array([-3.0, 3.0]))
    assert [math.copysign(1.0, g) for g in got.tolist()] == [1.0, 1.0]


def test_infinities_and_nans() -> None:
    vals = [math.inf, -math.inf, math.nan, 0.0, -0.0, 1.0, -3.0, 2.0**1023]
    combos = [(x, y, z) for x in vals for y in vals for z in vals]
    a, b, c = (np.array(v) for v in zip(*combos, strict=True))
    _check64(a, b, c)


def test_scale_applies_before_the_one_rounding() -> None:
    rng = np.random.default_rng(7)
    n = 1500
    a, b, c = _near(rng, n, -40, 40), _near(rng, n, -40, 40), _near(rng, n, -80, 80)
    _check64(a, b, c, rng.integers(-64, 65, n))
    # Subnormal after the scale: rounded once on the 2**-1074 grid.
    a2, b2, c2 = _near(rng, n, -520, -480), _near(rng, n, -520, -480), np.zeros(n)
    _check64(a2, b2, c2, rng.integers(-64, 65, n))


def test_exact_lane_alone() -> None:
    """The integer path by itself (normally only lanes outside the fast range reach it)."""
    rng = np.random.default_rng(8)
    for x, y, z in zip(_bits64(rng, 500).tolist(), _near(rng, 500, -40, 40).tolist(),
                       _near(rng, 500, -90, 90).tolist(), strict=True):
        assert _same(fma64_exact(x, y, z), _expected(x, y, z, F64))


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def test_fma32_against_rationals() -> None:
    rng = np.random.default_rng(9)
    n = 3000
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b = np.ldexp(rng.uniform(1, 2, n), rng.integers(-20, 20, n)).astype(np.float32)
    with np.errstate(all="ignore"):  # products past binary32's range become infinities
        c = (a.astype(np.float64) * b.astype(np.float64) * -1).astype(np.float32)
    c[::3] = rng.integers(0, 2**32, len(c[::3]), dtype=np.uint64).astype(np.uint32) \
        .view(np.float32)
    got = fma32(a, b, c)
    assert got.dtype == np.float32
    for x, y, z, g in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist(), strict=True):
        want = _expected(x, y, z, F32)
        assert _same(g, want), (x, y, z, g, want)
    # A binary32 tie: 1 + 2**-24 is halfway between 1 and 1 + 2**-23; to even gives 1.
    one = np.float32(1.0)
    assert fma32(one, one, np.float32(2.0**-24)) == one
    assert _f32(float(fma32(np.float32(1 + 2**-23), one, np.float32(2.0**-24)))) \
        == 1 + 2**-22


@pytest.mark.parametrize("shape", [(), (7,), (3, 4)])
def test_shapes_broadcast(shape: tuple[int, ...]) -> None:
    a = np.full(shape, 1.0 + 2**-30)
    assert fma64(a, a, -(a * a)).shape == shape
    assert np.all(fma64(a, a, -(a * a)) == 2.0**-60)


F16 = (11, -24, 16)


def test_binary16_every_exponent_pair_and_specials() -> None:
    """`fma16` on random binary16 patterns (all exponents, subnormals, inf, NaN) and on
    products that land a hair beside a rounding tie, where rounding the binary64 sum to
    nearest first and then to binary16 would round twice."""
    from rgpu_fuzz.model.fma import fma16

    rng = np.random.default_rng(16)
    bits = rng.integers(0, 2**16, (3, 4000), dtype=np.uint16)
    a, b, c = (x.view(np.float16) for x in bits)
    # (1 + 2**-10) * (1 + 2**-10) - 1 = 2**-9 + 2**-20: exact only with one rounding
    a = np.concatenate([a, np.float16([1.0009765625, 2049 / 2048, -0.0, 65504.0])])
    b = np.concatenate([b, np.float16([1.0009765625, 2049 / 2048, 0.0, 2.0])])
    c = np.concatenate([c, np.float16([-1.0, -1.0, -0.0, -65504.0])])
    got = fma16(a, b, c)
    bad = [(x, y, z, g) for x, y, z, g in zip(a.tolist(), b.tolist(), c.tolist(),
                                              got.astype(np.float64).tolist(), strict=True)
           if not _same(g, _expected(x, y, z, F16))]
    assert not bad, bad[:5]
