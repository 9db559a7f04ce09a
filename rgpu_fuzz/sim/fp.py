"""Exact IEEE helpers numpy lacks: fused multiply-add in binary32 and binary64, the AMD
min/max NaN rules, and flushing of subnormals when the float mode asks for it."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

F32_TINY = np.float32(np.finfo(np.float32).tiny)
F64_TINY = np.float64(np.finfo(np.float64).tiny)


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary32 `a*b+c`: the product is exact in binary64 (24+24 < 53
    bits); the sum is formed in binary64 rounded to odd, which makes the final rounding to
    binary32 correct (Boldo & Melquiond, "When double rounding is odd")."""
    with np.errstate(all="ignore"):
        p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
        cc = np.asarray(c, np.float64)
        s = p + cc
        bb = s - p
        err = (p - (s - bb)) + (cc - bb)
        bits = s.view(np.int64) if isinstance(s, np.ndarray) else np.float64(s).view(np.int64)
        inexact = (err != 0) & np.isfinite(s) & ((bits & 1) == 0)
        if np.any(inexact):
            toward = np.where(err > 0, np.inf, -np.inf)
            s = np.where(inexact, np.nextafter(s, toward), s)
        if np.any(scale):
            s = np.ldexp(s, np.asarray(scale, np.int32))  # exact: far from binary64's limits
        return np.asarray(s).astype(np.float32)


def _fma64_one(a: float, b: float, c: float, scale: int = 0) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.ldexp(a * b + c, scale)  # an infinite or NaN product: as unfused
    if not math.isfinite(c):
        return c  # a finite product (exact, however large) plus inf or NaN
    exact = (Fraction(a) * Fraction(b) + Fraction(c)) * Fraction(2) ** scale
    if exact == 0:
        # IEEE 754 §6.3: an exact zero sum is +0 unless both addends are -0 (or round down)
        prod_neg = math.copysign(1.0, a) * math.copysign(1.0, b) < 0
        return -0.0 if (prod_neg and math.copysign(1.0, c) < 0) else 0.0
    try:
        return float(exact)  # int/int true division: correctly rounded (subnormals too)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


_VELTKAMP = np.float64(2.0**27 + 1)


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray,
          scale: np.ndarray | int = 0) -> np.ndarray:
    """Correctly rounded binary64 `(a*b+c) * 2**scale`.

    Vectorised with error-free transformations and rounding to odd (Boldo & Melquiond,
    "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
    IEEE Trans. Computers 57(4), 2008, Algorithm 5): a*b = uh + ul exactly (Dekker's
    product on Veltkamp's split), c + uh = th + tl exactly (TwoSum), v = tl + ul rounded to
    odd, result = RN(th + v). The proof assumes no overflow or underflow, so the fast path
    keeps lanes whose operands and result lie well inside the normal range (|a|, |b| in
    [2**-450, 2**450], c zero or in [2**-900, 2**900], result in [2**-900, 2**900] before
    and [2**-1000, 2**1000] after the scale) or whose product is an exact zero; every other
    lane (infinities, NaN, subnormal results, an exact zero sum with its sign rules) is
    computed exactly with rationals by `_fma64_one`."""
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
        zero_product = ((a == 0) | (b == 0)) & np.isfinite(a) & np.isfinite(b) & \
            np.isfinite(c)
        r = np.where(zero_product, uh + c, r)
        out = np.ldexp(r, k.astype(np.int32)) if np.any(k) else r
        aa, ab, ac, ar, ao = np.abs(a), np.abs(b), np.abs(c), np.abs(r), np.abs(out)
        lo, hi = 2.0**-900, 2.0**900
        fast = zero_product | (
            (aa >= 2.0**-450) & (aa <= 2.0**450) & (ab >= 2.0**-450) & (ab <= 2.0**450)
            & ((c == 0) | ((ac >= lo) & (ac <= hi))) & (ar >= lo) & (ar <= hi)
            & (ao >= 2.0**-1000) & (ao <= 2.0**1000))
    if fast.all():
        return out
    out = np.array(out, np.float64)
    slow = ~fast
    out[slow] = [_fma64_one(x, y, z, s) for x, y, z, s in
                 zip(a[slow].tolist(), b[slow].tolist(), c[slow].tolist(), k[slow].tolist(),
                     strict=True)]
    return out


def is_snan(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        bits = x.view(np.uint32)
        return np.isnan(x) & ((bits & 0x0040_0000) == 0)
    bits = x.view(np.uint64)
    return np.isnan(x) & ((bits & np.uint64(0x0008_0000_0000_0000)) == 0)


def quiet(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        return (x.view(np.uint32) | np.uint32(0x0040_0000)).view(np.float32)
    return (x.view(np.uint64) | np.uint64(0x0008_0000_0000_0000)).view(np.float64)


def amd_min(a: np.ndarray, b: np.ndarray, ieee: bool) -> np.ndarray:
    """V_MIN_F32/F64 (ISA pseudocode): in IEEE mode a signalling NaN operand gives its
    quieted self; otherwise a NaN operand gives the other operand; -0 < +0."""
    a, b = np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b))
    r = np.where((a < b) | ((a == b) & np.signbit(a)), a, b)
    r = np.where(np.isnan(b), a, r)
    r = np.where(np.isnan(a), b, r)
    if ieee:
        r = np.where(is_snan(b), quiet(b), r)
        r = np.where(is_snan(a), quiet(a), r)
    return r


def amd_max(a: np.ndarray, b: np.ndarray, ieee: bool) -> np.ndarray:
    """V_MAX_F32/F64: as `amd_min`, +0 > -0."""
    a, b = np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b))
    r = np.where((a > b) | ((a == b) & ~np.signbit(a)), a, b)
    r = np.where(np.isnan(b), a, r)
    r = np.where(np.isnan(a), b, r)
    if ieee:
        r = np.where(is_snan(b), quiet(b), r)
        r = np.where(is_snan(a), quiet(a), r)
    return r


def flush(x: np.ndarray) -> np.ndarray:
    """Subnormals to a zero of the same sign (a float mode that flushes)."""
    tiny = F32_TINY if x.dtype == np.float32 else F64_TINY
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def exponent32(x: np.ndarray) -> np.ndarray:
    return ((x.view(np.uint32) >> 23) & 0xFF).astype(np.int64)


def exponent64(x: np.ndarray) -> np.ndarray:
    return ((x.view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
