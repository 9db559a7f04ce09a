"""Float operators and methods: IEEE 754 binary32/binary64, round to nearest even.

numpy computes `+ - * / sqrt` in the array's own precision with hardware IEEE arithmetic and
does not flush subnormals, which is exactly Rust's semantics (no contraction, DESIGN.md §3).
Floating-point exceptions never raise or warn: IEEE 754 §7 default results (inf, NaN) are the
values Rust gives.

`mul_add` is the one operation numpy does not have: it must round once (IEEE 754 §5.4.1
fusedMultiplyAdd), so it is built here from exact pieces.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rgpu_fuzz.model.scalars import Scalar

_QUIET = {"all": "ignore"}


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(**_QUIET):
        return np.add(a, b)


def sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(**_QUIET):
        return np.subtract(a, b)


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(**_QUIET):
        return np.multiply(a, b)


def div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(**_QUIET):
        return np.divide(a, b)


def rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust float `%` is C `fmod`: exact, sign of the dividend; NaN for `x % 0` and `inf % y`."""
    with np.errstate(**_QUIET):
        return np.fmod(a, b)


def sqrt(a: np.ndarray) -> np.ndarray:
    """Correctly rounded (IEEE 754 §5.4.1 squareRoot); NaN below zero, `sqrt(-0) == -0`."""
    with np.errstate(**_QUIET):
        return np.sqrt(a)


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `f32::min`: if one operand is NaN, quiet *or signalling*, the other is returned
    (Rust docs: "handles all NaNs the same way"). Not numpy's `fmin` alone: it follows
    IEEE 754-2008 minNum, which turns a signalling NaN into a quiet NaN result (found by a
    campaign: rustc and llvm-cpu returned 2.0 for `2.0f32.max(sNaN)`, we returned NaN)."""
    with np.errstate(**_QUIET):
        return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.fmin(a, b)))


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `f32::max`: as `fmin`, the non-NaN operand wins for every kind of NaN."""
    with np.errstate(**_QUIET):
        return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.fmax(a, b)))


def mul_add(ty: Scalar, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`a * b + c` with one rounding (IEEE 754 fusedMultiplyAdd)."""
    if ty is Scalar.F32:
        return _mul_add_f32(a, b, c)
    return _mul_add_f64(a, b, c)


def _mul_add_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """binary32 fma via binary64: the product of two 24-bit significands is exact in 53 bits;
    the sum is rounded to odd in binary64, then to nearest even in binary32. Round-to-odd with
    at least p + 2 bits of extra precision makes the double rounding innocuous (Boldo and
    Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
    rounding to odd", IEEE Trans. Computers 2008)."""
    with np.errstate(**_QUIET):
        wide_a = np.asarray(a, np.float32).astype(np.float64)
        wide_b = np.asarray(b, np.float32).astype(np.float64)
        x = wide_a * wide_b                           # exact: 48 significant bits at most
        y = np.asarray(c, np.float32).astype(np.float64)
        s = x + y
        # TwoSum (Knuth): e is the exact error of s = fl(x + y) when s is finite.
        bp = s - x
        ap = s - bp
        e = (x - ap) + (y - bp)
        inexact = np.isfinite(s) & (e != 0)
        even = (np.asarray(s).view(np.uint64) & np.uint64(1)) == 0
        step = inexact & even
        if np.any(step):
            toward = np.where(e > 0, np.inf, -np.inf)
            s = np.where(step, np.nextafter(s, toward), s)
        return np.asarray(s, dtype=np.float64).astype(np.float32)


def _mul_add_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """binary64 fma lane by lane with exact rational arithmetic. CPython's int / int true
    division is correctly rounded (round half to even, subnormals included), so
    `float(Fraction)` rounds once."""
    a, b, c = np.broadcast_arrays(
        np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    )
    with np.errstate(**_QUIET):
        # The IEEE results for every lane whose answer is not a single rounding of a finite
        # nonzero exact value: NaN/inf operands (inf * 0 is NaN; inf - inf is NaN) and the
        # signs of exact zeros (IEEE 754 §6.3: x*y + z with both zero follows the sum rule).
        out = a * b + c
    finite_product = np.isfinite(a) & np.isfinite(b)
    # A finite product plus an infinite c is c exactly, even where fl(a * b) overflowed to
    # the opposite infinity and the unfused sum gave NaN.
    out = np.where(finite_product & np.isinf(c), c, out)
    finite = finite_product & np.isfinite(c)
    flat_out = out.reshape(-1)
    fa, fb, fc = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    for i in np.flatnonzero(finite.reshape(-1)):
        x, y, z = float(fa[i]), float(fb[i]), float(fc[i])
        if x == 0.0 or y == 0.0:
            # The product is an exact (signed) zero: 0 * y + z is z, or the signed-zero sum.
            flat_out[i] = (x * y) + z
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            flat_out[i] = 0.0  # IEEE 754 §6.3: an exact zero sum is +0 in round-to-nearest
            continue
        try:
            flat_out[i] = exact.numerator / exact.denominator
        except OverflowError:
            flat_out[i] = np.inf if exact > 0 else -np.inf
    return flat_out.reshape(out.shape)
