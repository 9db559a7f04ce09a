"""`as` casts with Rust's semantics (Rust reference, "Numeric cast"):

* int → int: truncate to the low bits, or sign-/zero-extend by the source's signedness;
* float → int: round toward zero, saturate at the target's MIN/MAX, NaN → 0;
* int → float: round to nearest, ties to even (exactly, for 64-bit sources too);
* f32 → f64 exact; f64 → f32 round to nearest even, overflow to ±inf;
* bool → int: 0 or 1.
"""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.lang.semantics.ints import bit_length
from rgpu_fuzz.lang.semantics.nan import chosen
from rgpu_fuzz.model.scalars import Scalar

_SIGNIFICAND_BITS = {Scalar.F16: 11, Scalar.F32: 24, Scalar.F64: 53}


def cast(a: np.ndarray, src: Scalar, dst: Scalar) -> np.ndarray:
    """`a as dst` where `a` holds values of `src`."""
    a = np.asarray(a, dtype=src.dtype)
    if src is dst:
        return a.copy()
    if src is Scalar.BOOL:
        if dst.is_float:
            raise TypeError("bool as float is not a Rust cast")
        return a.astype(dst.dtype)
    if dst is Scalar.BOOL:
        raise TypeError(f"{src} as bool is not a Rust cast")
    if src.is_int and dst.is_int:
        # numpy's integer astype keeps the low bits (two's complement), which is exactly
        # truncation; widening sign-extends signed sources and zero-extends unsigned ones.
        return a.astype(dst.dtype)
    if src.is_float and dst.is_float:
        with np.errstate(all="ignore"):
            # NaN: an arithmetic NaN (LangRef fpext/fptrunc)
            return chosen(a.astype(dst.dtype), source=a)
    if src.is_float:
        with np.errstate(all="ignore"):  # a signalling NaN raises "invalid" when widened
            return _float_to_int(a, dst)
    return _int_to_float(a, src, dst)


def _float_to_int(a: np.ndarray, dst: Scalar) -> np.ndarray:
    """Saturating truncation. The bounds are compared as exact powers of two in binary64
    (2**(bits-1) for signed, 2**bits for unsigned), because `MAX` itself is not
    representable in f32 (nor, for 64-bit types, in f64)."""
    t = np.trunc(a.astype(np.float64))
    lo = float(dst.min_value)                       # 0 or -2**(bits-1): exact
    hi = float(dst.max_value + 1)                   # 2**(bits-1) or 2**bits: exact
    nan = np.isnan(t)
    above = t >= hi
    below = t < lo
    inside = ~(nan | above | below)
    safe = np.where(inside, t, 0.0)
    out = safe.astype(dst.dtype)
    out = np.where(above, np.asarray(dst.max_value, dtype=dst.dtype), out)
    out = np.where(below, np.asarray(dst.min_value, dtype=dst.dtype), out)
    return out.astype(dst.dtype, copy=False)


def _int_to_float(a: np.ndarray, src: Scalar, dst: Scalar) -> np.ndarray:
    if src.bits <= 32:
        # Every 32-bit integer is exact in binary64, so numpy's conversion (direct, or via
        # binary64 then one rounding to binary32) rounds once.
        return a.astype(np.float64).astype(dst.dtype)
    return _wide_int_to_float(a, src, dst)


def _wide_int_to_float(a: np.ndarray, src: Scalar, dst: Scalar) -> np.ndarray:
    """64-bit integer → float with a single round-to-nearest-even, done in integer arithmetic:
    converting through binary64 first would round twice (e.g. 2**60 + 2**36 + 1 → f32)."""
    p = _SIGNIFICAND_BITS[dst]
    if src.is_signed:
        neg = a < 0
        mag = np.where(neg, np.negative(a.view(np.uint64)), a.view(np.uint64))
    else:
        neg = np.zeros(a.shape, dtype=bool)
        mag = a.view(np.uint64)
    shift = np.maximum(bit_length(mag) - p, 0).astype(np.uint64)
    one = np.uint64(1)
    q = mag >> shift
    dropped = mag - (q << shift)
    half = (one << shift) >> one                      # 2**(shift-1); 0 when nothing is dropped
    round_up = (shift > 0) & ((dropped > half) | ((dropped == half) & ((q & one) == one)))
    q = q + round_up.astype(np.uint64)               # q <= 2**p: exact in binary64
    value = np.ldexp(q.astype(np.float64), shift.astype(np.int64))
    value = np.where(neg, -value, value)
    # value has at most p significant bits and is < 2**65: exact in dst.
    return value.astype(dst.dtype)
