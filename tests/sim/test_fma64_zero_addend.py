"""`fp.fma64(x, y, ±0)`: the exact sum is the exact product, so the result is the product
rounded once (IEEE 754 §6.3: a nonzero exact result keeps its sign even when it rounds to
zero). Expected values from rational arithmetic (`test_fp_fma64._exact`); the products span
normal, subnormal, underflowing-to-zero and overflowing ranges, both zero signs, and a
scaled lane mixed in (scaled lanes keep the general path)."""

from __future__ import annotations

import numpy as np

from tests.sim.test_fp_fma64 import _check


def test_fma64_with_a_zero_addend_is_the_rounded_product() -> None:
    rng = np.random.default_rng(20261201)
    n = 256
    e = rng.integers(-560, 560, size=(2, n))
    a = rng.standard_normal(n) * 2.0 ** e[0]
    b = rng.standard_normal(n) * 2.0 ** e[1]
    zeros = np.where(rng.integers(0, 2, n) == 1, 0.0, -0.0)
    _check(a, b, zeros, np.zeros(n, np.int64))
    # products at the bottom of the subnormal range (2**-1074 units): 1, -1, 1.5 (a tie, to
    # even: 2), 0.156 (to +0 beside a -0 addend), -0.25 (to -0 beside a +0 addend)
    a_t = np.array([2.0**-537, -(2.0**-537), 1.5 * 2.0**-537, 1.25 * 2.0**-538, -(2.0**-538)])
    b_t = np.array([2.0**-537, 2.0**-537, 2.0**-537, 2.0**-539, 2.0**-538])
    _check(a_t, b_t, np.array([0.0, -0.0, 0.0, -0.0, 0.0]), np.zeros(5, np.int64))
    # the same lanes with a scale: one lane of four scaled
    _check(a[:4], b[:4], zeros[:4], np.array([0, 3, 0, 0]))
