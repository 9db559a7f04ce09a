"""`fp.fma64` (vectorised, error-free transformations with rounding to odd) against exact
rational arithmetic: the expected value is `float(Fraction(a) * Fraction(b) + Fraction(c))`
scaled by 2**k, which Python rounds correctly (int/int true division), with IEEE 754 §6.3's
sign of an exact zero sum. Cases: random operands over a wide exponent range, products
cancelled by c to within a few ulps (the hard cases for double rounding), near-halfway
products, and the special values (zeros, infinities, NaN, subnormals, extremes)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from rgpu_fuzz.sim.semantics.fp import fma64


def _exact(a: float, b: float, c: float, k: int) -> float:
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        return math.ldexp(a * b + c, k)      # an infinite product: inf + c or inf - inf
    if math.isinf(c):
        return c                             # a finite product is exact, however large
    exact = (Fraction(a) * Fraction(b) + Fraction(c)) * Fraction(2) ** k
    if exact == 0:
        prod_neg = math.copysign(1.0, a) * math.copysign(1.0, b) < 0
        return -0.0 if prod_neg and math.copysign(1.0, c) < 0 else 0.0
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def _check(a: np.ndarray, b: np.ndarray, c: np.ndarray, k: np.ndarray) -> None:
    got = fma64(a, b, c, k)
    for x, y, z, s, g in zip(a.tolist(), b.tolist(), c.tolist(), k.tolist(), got.tolist(),
                             strict=True):
        want = _exact(x, y, z, s)
        same = (math.isnan(g) and math.isnan(want)) or (
            g == want and math.copysign(1.0, g) == math.copysign(1.0, want))
        assert same, f"fma({x!r}, {y!r}, {z!r}) * 2**{s}: got {g!r}, exact {want!r}"


def test_fma64_is_correctly_rounded() -> None:
    rng = np.random.default_rng(20261130)
    n = 256
    e = rng.integers(-80, 80, size=(3, n))
    a = rng.standard_normal(n) * 2.0 ** e[0]
    b = rng.standard_normal(n) * 2.0 ** e[1]
    zeros = np.zeros(n, np.int64)
    _check(a, b, rng.standard_normal(n) * 2.0 ** e[2], zeros)
    _check(a, b, rng.standard_normal(n) * 2.0 ** e[2], rng.integers(-4, 5, n))
    # c cancels the product to within a few ulps: the result is the product's rounding error
    _check(a, b, -(a * b) * (1 + rng.integers(-3, 4, n) * 2.0**-52), zeros)
    # products of 53-bit mantissas plus c at half an ulp: rounding ties and near-ties
    m1 = 1 + rng.integers(0, 2**52, n) * 2.0**-52
    m2 = 1 + rng.integers(0, 2**52, n) * 2.0**-52
    p = m1 * m2
    _check(m1, m2, -(p + rng.choice([-1, 1], n) * np.spacing(p) *
                     rng.choice([0.25, 0.5, 0.75, 1.0], n)), zeros)
    # a*b just below half an ulp of c and c + round(a*b) a tie: rounding the low parts to
    # nearest instead of to odd rounds twice and lands on the wrong side of the tie
    # (a = 1 + 2**-30, b = (1 - 2**-30) * 2**-53: a*b = 2**-53 - 2**-113, c = 1 + 2**-52)
    ks = np.arange(27, 40)
    a = np.concatenate([1 + 2.0**-ks, -(1 + 2.0**-ks)])
    b = np.concatenate([(1 - 2.0**-ks) * 2.0**-53, -(1 - 2.0**-ks) * 2.0**-53])
    for j in (1, 2, 3):
        _check(a, b, np.full(a.size, 1 + j * 2.0**-52), np.zeros(a.size, np.int64))
    # the exponent range's ends and special values, every combination
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-310, 2.0**-1022,
                     1e-300, 1.0, -3.0, 1e300, -1.7e308, 2.0**450, 2.0**-450])
    x, y, z = (v.ravel() for v in np.meshgrid(edge, edge, edge))
    _check(x, y, z, np.zeros(x.size, np.int64))
    _check(x, y, z, np.full(x.size, -64, np.int64))
