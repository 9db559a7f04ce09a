"""Integer operators and methods with Rust release semantics (overflow checks off).

Every function takes and returns numpy arrays of the type's dtype (`Scalar.dtype`) and works
lane-wise. Wrapping arithmetic is done on the unsigned view of the same width, where numpy's
ufuncs wrap modulo 2**bits without warnings; the bits are then viewed back as the signed type
(two's complement, Rust reference "Arithmetic and Logical Binary Operators").

Lanes that would trap (`/` and `%` by zero, `MIN / -1`) never raise here: their result is
unspecified and the caller masks them using `trap_lanes`.
"""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.model.scalars import Scalar


def _u(a: np.ndarray, ty: Scalar) -> np.ndarray:
    """The unsigned view of `a` (same width): the bits that Rust's wrapping ops act on."""
    return np.asarray(a, dtype=ty.dtype).view(ty.bits_dtype)


def _back(u: np.ndarray, ty: Scalar) -> np.ndarray:
    return u.astype(ty.bits_dtype, copy=False).view(ty.dtype)


def wrapping_add(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _back(_u(a, ty) + _u(b, ty), ty)


def wrapping_sub(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _back(_u(a, ty) - _u(b, ty), ty)


def wrapping_mul(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # The low `bits` bits of a product do not depend on signedness.
    return _back(_u(a, ty) * _u(b, ty), ty)


def wrapping_neg(ty: Scalar, a: np.ndarray) -> np.ndarray:
    return _back(np.negative(_u(a, ty)), ty)


def bit_not(ty: Scalar, a: np.ndarray) -> np.ndarray:
    return _back(np.invert(_u(a, ty)), ty)


def wrapping_abs(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """`abs` on signed ints in release builds: `MIN.abs() == MIN` (wraps)."""
    a = np.asarray(a, dtype=ty.dtype)
    if not ty.is_signed:
        return a.copy()
    return np.where(a < 0, wrapping_neg(ty, a), a)


def trap_masks(op: str, ty: Scalar, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(divisor is zero, `MIN / -1` overflow) per lane; `wrapping_div/rem` never overflow-trap
    (Rust: they return `MIN` and `0` for `MIN, -1`)."""
    a = np.asarray(a, dtype=ty.dtype)
    b = np.asarray(b, dtype=ty.dtype)
    shape = np.broadcast_shapes(a.shape, b.shape)
    zero = np.broadcast_to(b == 0, shape).copy()
    if ty.is_signed and op in ("/", "%", "div_euclid", "rem_euclid"):
        overflow = np.broadcast_to((a == ty.min_value) & (b == -1), shape).copy()
    else:
        overflow = np.zeros(shape, dtype=bool)
    return zero, overflow


def _divmod_trunc(ty: Scalar, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quotient rounded toward zero and remainder with the dividend's sign (Rust `/`, `%`).

    For `MIN / -1` this gives the wrapping answer (`MIN`, `0`); lanes dividing by zero get
    0 and are masked by the caller.
    """
    a = np.asarray(a, dtype=ty.dtype)
    b = np.asarray(b, dtype=ty.dtype)
    bad = b == 0
    if ty.is_signed:
        overflow = (a == ty.min_value) & (b == -1)
        bad = bad | overflow
    safe_b = np.where(bad, np.ones_like(b), b)
    # np.fmod on integers is C's `%`: truncated division, sign of the dividend.
    rem = np.fmod(a, safe_b)
    # a - rem is an exact multiple of b and lies between 0 and a, so it cannot overflow and
    # floor division of it is exact (no rounding direction left to matter).
    quot = (a - rem) // safe_b
    if ty.is_signed:
        quot = np.where(overflow, a, quot)
        rem = np.where(bad, np.zeros_like(rem), rem)
    else:
        rem = np.where(bad, np.zeros_like(rem), rem)
    quot = np.where(b == 0, np.zeros_like(quot), quot)
    return quot.astype(ty.dtype, copy=False), rem.astype(ty.dtype, copy=False)


def div(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _divmod_trunc(ty, a, b)[0]


def rem(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _divmod_trunc(ty, a, b)[1]


def shift_amount(ty: Scalar, amount: np.ndarray) -> np.ndarray:
    """The amount Rust actually shifts by: the unsigned bits of `amount` (any integer type)
    masked to `bits - 1`, in `ty`'s unsigned dtype (Rust reference: `<<` and `>>` with
    overflow checks off; `wrapping_shl/shr`)."""
    amount = np.asarray(amount)
    if amount.dtype.kind == "i":
        amount = amount.view(np.dtype(f"u{amount.dtype.itemsize}"))
    masked = amount & np.asarray(ty.bits - 1, dtype=amount.dtype)
    return masked.astype(ty.bits_dtype)


def shl(ty: Scalar, a: np.ndarray, amount: np.ndarray) -> np.ndarray:
    return _back(np.left_shift(_u(a, ty), shift_amount(ty, amount)), ty)


def shr(ty: Scalar, a: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """Arithmetic on signed types, logical on unsigned (Rust reference)."""
    k = shift_amount(ty, amount)
    if ty.is_signed:
        a = np.asarray(a, dtype=ty.dtype)
        return np.right_shift(a, k.astype(ty.dtype))
    return _back(np.right_shift(_u(a, ty), k), ty)


def rotate_left(ty: Scalar, a: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """Rotates by `amount % bits` (Rust `rotate_left`)."""
    u = _u(a, ty)
    k = shift_amount(ty, amount)
    back = (np.asarray(ty.bits, dtype=ty.bits_dtype) - k) & np.asarray(ty.bits - 1, ty.bits_dtype)
    return _back(np.left_shift(u, k) | np.right_shift(u, back), ty)


def rotate_right(ty: Scalar, a: np.ndarray, amount: np.ndarray) -> np.ndarray:
    u = _u(a, ty)
    k = shift_amount(ty, amount)
    back = (np.asarray(ty.bits, dtype=ty.bits_dtype) - k) & np.asarray(ty.bits - 1, ty.bits_dtype)
    return _back(np.right_shift(u, k) | np.left_shift(u, back), ty)


def count_ones(ty: Scalar, a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(_u(a, ty)).astype(np.uint32)


def leading_zeros(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """`bits` for 0 (Rust `leading_zeros`)."""
    u = _u(a, ty).copy()
    shift = 1
    while shift < ty.bits:
        u |= np.right_shift(u, np.asarray(shift, dtype=ty.bits_dtype))
        shift *= 2
    return (ty.bits - np.bitwise_count(u).astype(np.int64)).astype(np.uint32)


def trailing_zeros(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """`bits` for 0 (Rust `trailing_zeros`): popcount of the ones below the lowest set bit."""
    u = _u(a, ty)
    lowest = u & np.negative(u)
    return np.bitwise_count(lowest - np.asarray(1, dtype=ty.bits_dtype)).astype(np.uint32)


def bit_length(u: np.ndarray) -> np.ndarray:
    """Number of significant bits of unsigned 64-bit values (0 for 0), as int64."""
    return 64 - leading_zeros(Scalar.U64, u).astype(np.int64)


def count_zeros(ty: Scalar, a: np.ndarray) -> np.ndarray:
    return (ty.bits - np.bitwise_count(_u(a, ty)).astype(np.int64)).astype(np.uint32)


def leading_ones(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """Rust `leading_ones`: `(!x).leading_zeros()`."""
    return leading_zeros(ty, bit_not(ty, a))


def trailing_ones(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """Rust `trailing_ones`: `(!x).trailing_zeros()`."""
    return trailing_zeros(ty, bit_not(ty, a))


def swap_bytes(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """Rust `swap_bytes`: the bytes in reverse order (the identity on 8-bit types)."""
    return _back(_u(a, ty).byteswap(), ty)


def reverse_bits(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """Rust `reverse_bits`: bit i goes to bit `bits-1-i`."""
    u = _u(a, ty).astype(np.uint64)
    out = np.zeros(u.shape, dtype=np.uint64)
    one = np.uint64(1)
    for i in range(ty.bits):
        out |= ((u >> np.uint64(i)) & one) << np.uint64(ty.bits - 1 - i)
    return _back(out, ty)


def _exact(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """Lanes as Python ints (object array): exact sums and products of 64-bit values."""
    return np.asarray(a, dtype=ty.dtype).astype(object)


def _saturate(ty: Scalar, v: np.ndarray) -> np.ndarray:
    lo, hi = ty.min_value, ty.max_value
    clipped = [min(max(int(x), lo), hi) for x in v.ravel()]
    return np.array(clipped, dtype=object).reshape(v.shape).astype(ty.dtype)


def saturating_add(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _saturate(ty, _exact(ty, a) + _exact(ty, b))


def saturating_sub(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _saturate(ty, _exact(ty, a) - _exact(ty, b))


def saturating_mul(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _saturate(ty, _exact(ty, a) * _exact(ty, b))


def abs_diff(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `abs_diff`: `|a - b|` in the unsigned type of the same width (never overflows)."""
    d = np.abs(_exact(ty, a) - _exact(ty, b))
    return d.astype(ty.uint.dtype)


def unsigned_abs(ty: Scalar, a: np.ndarray) -> np.ndarray:
    """Rust `unsigned_abs` (signed types): `|a|` as the unsigned type (`MIN` → 2**(bits-1))."""
    return np.abs(_exact(ty, a)).astype(ty.uint.dtype)


def div_euclid(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `div_euclid`: the `q` with `a = q*b + r`, `0 <= r < |b|`. Trapping lanes (zero
    divisor, `MIN / -1`) give 0; the caller masks them (`trap_masks` of `/`)."""
    q, r = _divmod_trunc(ty, a, b)
    if not ty.is_signed:
        return q
    b = np.asarray(b, dtype=ty.dtype)
    adjust = np.where(b > 0, np.asarray(-1, ty.dtype), np.asarray(1, ty.dtype))
    return np.where(r < 0, wrapping_add(ty, q, adjust), q)


def rem_euclid(ty: Scalar, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rust `rem_euclid`: the least non-negative remainder (`r + |b|` when `%` is
    negative, core's `r.wrapping_add(rhs.wrapping_abs())`)."""
    _, r = _divmod_trunc(ty, a, b)
    if not ty.is_signed:
        return r
    return np.where(r < 0, wrapping_add(ty, r, wrapping_abs(ty, b)), r)


def wrapping_pow(ty: Scalar, a: np.ndarray, exp: np.ndarray) -> np.ndarray:
    """`a.wrapping_pow(exp)` (and `pow` in release builds, which wraps): the product of `exp`
    copies of `a` modulo 2**bits (1 for `exp == 0`), by square and multiply per lane."""
    base = np.asarray(a, dtype=ty.dtype)
    e = np.asarray(exp, dtype=np.uint32).astype(np.uint64)
    shape = np.broadcast_shapes(base.shape, e.shape)
    base = np.broadcast_to(base, shape)
    e = np.broadcast_to(e, shape)
    out = np.ones(shape, dtype=ty.dtype)
    for bit in range(32):
        if not (e >> np.uint64(bit)).any():
            break
        odd = ((e >> np.uint64(bit)) & np.uint64(1)) == 1
        out = np.where(odd, wrapping_mul(ty, out, base), out)
        base = wrapping_mul(ty, base, base)
    return out
