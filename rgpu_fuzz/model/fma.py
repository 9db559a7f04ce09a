"""Correctly rounded fused multiply-add on numpy arrays: binary32 and binary64,
`(a*b + c) * 2**scale` with one rounding to nearest, ties to even (IEEE 754 §5.4.1
fusedMultiplyAdd, §4.3.1 roundTiesToEven).

numpy has no fma. The language's `mul_add` (lang.semantics) and the simulator's
`V_DIV_FMAS_*` (sim) need the same operation, so it lives here, below both (`sim` must not
import `lang`). `scale` is the power of two `V_DIV_FMAS` applies before its single rounding;
the language passes 0. The simulator's other fma instructions run on the host's FMA
instruction (`sim.hostfma`, 15-25x cheaper), which is checked against this module, lane for
lane, in its tests and at start-up; NaN results still come from here.

binary64 runs in two tiers: error-free transformations on whole arrays for lanes well inside
the normal range, and exact integer arithmetic on the significands for every other finite
lane (subnormal results, overflow, huge exponent gaps). Neither uses `Fraction`: one
`Fraction` lane cost ~30 µs, a default `mul_add` launch ~9 ms.
"""

from __future__ import annotations

import math

import numpy as np

_VELTKAMP = np.float64(2.0**27 + 1)
"""Veltkamp's splitting constant for binary64 (p = 53: 2**ceil(p/2) + 1)."""
_MIN_EXP = -1074
"""The exponent of binary64's smallest subnormal, 2**-1074: the finest ulp there is."""
_TWO53 = 9007199254740992.0


def fma16(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded binary16 `a*b + c`: `fma32`'s method (an exact binary64 product,
    the sum rounded to odd, one final rounding), which needs p + 2 = 13 extra bits and has
    42; numpy narrows binary64 to binary16 with one rounding to nearest even."""
    return fma32(a, b, c, dtype=np.float16)


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0, dtype: type[np.floating] = np.float32) -> np.ndarray:
    """Correctly rounded binary32 `(a*b + c) * 2**scale`. The product of two 24-bit
    significands is exact in binary64; the sum is rounded to odd in binary64 (TwoSum gives
    its exact error), which makes the final rounding to binary32 correct: round-to-odd with
    at least p + 2 extra bits makes double rounding innocuous (Boldo and Melquiond,
    "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
    IEEE Trans. Computers 57(4), 2008, Theorem 1). The scale is exact in binary64 for
    binary32 operands and the scales `V_DIV_FMAS` uses (±64 at most)."""
    with np.errstate(all="ignore"):
        x = np.asarray(a, dtype).astype(np.float64) * np.asarray(b, dtype).astype(np.float64)
        y = np.asarray(c, dtype).astype(np.float64)
        s = x + y
        bp = s - x
        err = (x - (s - bp)) + (y - bp)
        bits = np.asarray(s).view(np.int64)
        step = (err != 0) & np.isfinite(s) & ((bits & 1) == 0)
        if np.any(step):
            s = np.where(step, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        if np.any(scale):
            s = np.ldexp(s, np.asarray(scale, np.int32))
        return np.asarray(s).astype(dtype)


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary64 `(a*b + c) * 2**scale`, elementwise (broadcast).

    Fast tier (Boldo and Melquiond 2008, Algorithm 5): `a*b = uh + ul` exactly (Dekker's
    product on Veltkamp's split), `c + uh = th + tl` exactly (TwoSum), `v = tl + ul` rounded
    to odd, result `RN(th + v)`. The proof assumes no overflow or underflow anywhere, so the
    tier keeps only lanes with |a|, |b| in [2**-450, 2**450], c zero or in [2**-900, 2**900],
    the result in [2**-900, 2**900] before the scale and [2**-1000, 2**1000] after, and lanes
    whose product is an exact zero. Non-finite lanes follow IEEE 754 §7 as the unfused
    expression does (an infinite or NaN product gives `a*b + c`; a finite product plus an
    infinite or NaN `c` gives `c`). Every other lane goes to `fma64_exact`."""
    a, b, c, k = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                     np.asarray(c, np.float64), np.asarray(scale, np.int64))
    with np.errstate(all="ignore"):
        uh = a * b
        t = _VELTKAMP * a
        ah = t - (t - a)
        al = a - ah
        t = _VELTKAMP * b
        bh = t - (t - b)
        bl = b - bh
        ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
        th = c + uh
        bv = th - uh
        tl = (uh - (th - bv)) + (c - bv)
        v = tl + ul
        vb = v - tl
        err = (tl - (v - vb)) + (ul - vb)
        even = (v.view(np.int64) & 1) == 0
        v = np.where((err != 0) & even, np.nextafter(v, np.where(err > 0, np.inf, -np.inf)),
                     v)
        r = th + v
        finite_product = np.isfinite(a) & np.isfinite(b)
        zero_product = ((a == 0) | (b == 0)) & finite_product & np.isfinite(c)
        # 0 * y + z: the sum of an exact signed zero and c, which binary64 adds exactly
        # (IEEE 754 §6.3 gives the sign of an exact zero sum).
        r = np.where(zero_product, uh + c, r)
        # x * y + 0 with x, y finite and nonzero: the exact sum is the exact product, which
        # is not zero, so the result is RN(x * y) whatever the sign of the zero (IEEE 754
        # §6.3), the one rounding of the product itself, underflow included.
        product_only = (c == 0) & finite_product & ~zero_product & (k == 0)
        r = np.where(product_only, uh, r)
        out = np.ldexp(r, k.astype(np.int32)) if np.any(k) else r
        aa, ab, ac, ar, ao = np.abs(a), np.abs(b), np.abs(c), np.abs(r), np.abs(out)
        lo, hi = 2.0**-900, 2.0**900
        fast = zero_product | product_only | (
            (aa >= 2.0**-450) & (aa <= 2.0**450) & (ab >= 2.0**-450) & (ab <= 2.0**450)
            & ((c == 0) | ((ac >= lo) & (ac <= hi))) & (ar >= lo) & (ar <= hi)
            & (ao >= 2.0**-1000) & (ao <= 2.0**1000))
        if fast.all():
            return out
        out = np.array(out, np.float64)
        special = ~(finite_product & np.isfinite(c))
        if special.any():
            out[special] = nonfinite64(a, b, c, k)[special]
    slow = ~(fast | special)
    if slow.any():
        out[slow] = [fma64_exact(x, y, z, s) for x, y, z, s in
                     zip(a[slow].tolist(), b[slow].tolist(), c[slow].tolist(),
                         k[slow].tolist(), strict=True)]
    return out


def nonfinite64(a: np.ndarray, b: np.ndarray, c: np.ndarray,
                scale: np.ndarray | int = 0) -> np.ndarray:
    """`fma64` of the lanes with an infinite or NaN operand, as the unfused expression
    (IEEE 754 §7): an infinite or NaN product gives `a*b + c`, a finite product plus an
    infinite or NaN `c` gives `c` itself (a signalling NaN stays signalling). The NaN that
    propagates is numpy's (the x86 SSE rule: the first NaN operand, quieted)."""
    with np.errstate(all="ignore"):
        unfused = np.ldexp(a * b + c, np.asarray(scale, np.int32))
        return np.where(np.isfinite(a) & np.isfinite(b), c, unfused)


def nonfinite32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`fma32` of the lanes with an infinite or NaN operand: what its binary64 arithmetic
    gives there, `a*b + c` in binary64 narrowed to binary32 (NaNs quieted, numpy's rule for
    which one propagates)."""
    with np.errstate(all="ignore"):
        return (np.asarray(a, np.float32).astype(np.float64)
                * np.asarray(b, np.float32).astype(np.float64)
                + np.asarray(c, np.float32).astype(np.float64)).astype(np.float32)


def fma64_exact(a: float, b: float, c: float, scale: int = 0) -> float:
    """One lane of `fma64`, in integers: each finite operand is `m * 2**e` with an integer
    significand `m` (frexp), the exact sum is one integer times a power of two, and rounding
    it to 53 bits, or to the subnormal grid 2**-1074, is one round-half-to-even on an integer
    (IEEE 754 §4.3.1). Non-finite operands give what `fma64` documents."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.ldexp(a * b + c, scale)
    if not math.isfinite(c):
        return c
    if a == 0.0 or b == 0.0:
        # An exact signed zero product: the sum is c, or the signed-zero sum (IEEE 754 §6.3);
        # ldexp rounds once (C11 7.12.6.13 scalbn/ldexp: exact or correctly rounded).
        return math.ldexp(a * b + c, scale)
    fa, ea = math.frexp(a)
    fb, eb = math.frexp(b)
    exact = int(fa * _TWO53) * int(fb * _TWO53)
    exp = ea + eb - 106
    if c != 0.0:
        fc, ec = math.frexp(c)
        mc, ec = int(fc * _TWO53), ec - 53
        if ec >= exp:
            exact += mc << (ec - exp)
        else:
            exact = (exact << (exp - ec)) + mc
            exp = ec
    if exact == 0:
        return 0.0  # IEEE 754 §6.3: an exact zero sum of nonzero addends is +0 (to nearest)
    exp += scale
    negative = exact < 0
    mag = -exact if negative else exact
    ulp = max(exp + mag.bit_length() - 53, _MIN_EXP)
    if ulp > exp:
        shift = ulp - exp
        kept = mag >> shift
        rest = mag - (kept << shift)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
    else:
        kept = mag << (exp - ulp)  # fits in 53 bits: exact
    try:
        result = math.ldexp(float(kept), ulp)  # kept <= 2**53: exact, or past the range
    except OverflowError:
        result = math.inf  # roundTiesToEven carries everything past the largest finite to inf
    return -result if negative else result


__all__ = ["fma16", "fma32", "fma64", "fma64_exact", "nonfinite32", "nonfinite64"]
