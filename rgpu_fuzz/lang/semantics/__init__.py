"""The meaning of every operator, method and cast of the kernel language (docs/language.md
"Run-time semantics"), vectorised over numpy arrays of lanes.

This is the single source of truth: the interpreter runs it, and the checker evaluates
`const` items with it. Every function is lane-wise; arrays hold values of the scalar type's
dtype (`Scalar.dtype`). Nothing here raises or warns for a lane that would trap: callers
ask `trap_lanes` which lanes trap and mask them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, partial

import numpy as np

from rgpu_fuzz.lang.ast import BinOp, UnOp
from rgpu_fuzz.lang.semantics import floats, ints, nan
from rgpu_fuzz.lang.semantics.casts import cast
from rgpu_fuzz.model.scalars import Scalar

__all__ = ["binary", "binary_fn", "cast", "from_bits", "method", "to_bits", "trap_lanes", "unary"]

_Arr = np.ndarray


def unary(op: UnOp, ty: Scalar, a: _Arr) -> _Arr:
    """`-a` (wraps on signed ints) or `!a` (logical on bool, bitwise on ints)."""
    if op is UnOp.NEG:
        if ty.is_float:
            return np.negative(a)
        return ints.wrapping_neg(ty, a)
    if ty is Scalar.BOOL:
        return np.logical_not(a)
    return ints.bit_not(ty, a)


_COMPARE: dict[BinOp, Callable[[_Arr, _Arr], _Arr]] = {
    BinOp.EQ: np.equal,
    BinOp.NE: np.not_equal,
    BinOp.LT: np.less,
    BinOp.LE: np.less_equal,
    BinOp.GT: np.greater,
    BinOp.GE: np.greater_equal,
}

_INT_ARITH: dict[BinOp, Callable[[Scalar, _Arr, _Arr], _Arr]] = {
    BinOp.ADD: ints.wrapping_add,
    BinOp.SUB: ints.wrapping_sub,
    BinOp.MUL: ints.wrapping_mul,
    BinOp.DIV: ints.div,
    BinOp.REM: ints.rem,
    BinOp.SHL: ints.shl,
    BinOp.SHR: ints.shr,
}

_FLOAT_ARITH: dict[BinOp, Callable[[_Arr, _Arr], _Arr]] = {
    BinOp.ADD: floats.add,
    BinOp.SUB: floats.sub,
    BinOp.MUL: floats.mul,
    BinOp.DIV: floats.div,
    BinOp.REM: floats.rem,
}

_BITWISE: dict[BinOp, Callable[[_Arr, _Arr], _Arr]] = {
    BinOp.AND: np.bitwise_and,
    BinOp.OR: np.bitwise_or,
    BinOp.XOR: np.bitwise_xor,
    BinOp.LAND: np.logical_and,
    BinOp.LOR: np.logical_or,
}


def binary(op: BinOp, ty: Scalar, a: _Arr, b: _Arr) -> _Arr:
    """`a op b` where `ty` is the type of `a` (for shifts `b` may be any integer type).

    Comparisons and `&& ||` give bool arrays; `&& ||` here combine values already evaluated
    (short-circuiting is the caller's job). Trapping lanes of `/ %` give an unspecified value.
    """
    return binary_fn(op, ty)(a, b)


@cache
def binary_fn(op: BinOp, ty: Scalar) -> Callable[[_Arr, _Arr], _Arr]:
    """`binary` with the operator and type fixed: the interpreter looks it up once per
    operator node when it compiles, not on every execution."""
    if op in _COMPARE:
        return _COMPARE[op]
    if op in _BITWISE:
        return _BITWISE[op]
    if ty.is_float:
        return _FLOAT_ARITH[op]
    if op in _WRAPPING:
        return _wrapping(_WRAPPING[op], ty.dtype, ty.bits_dtype)
    return partial(_INT_ARITH[op], ty)


_WRAPPING = {BinOp.ADD: np.add, BinOp.SUB: np.subtract, BinOp.MUL: np.multiply}


def _wrapping(ufunc: np.ufunc, dtype: np.dtype, bits: np.dtype) -> Callable[[_Arr, _Arr], _Arr]:
    """`ints.wrapping_add/sub/mul` for one type: on the unsigned view, where numpy wraps
    modulo 2**bits, viewed back (the low bits of a product do not depend on signedness)."""

    def op(a: _Arr, b: _Arr) -> _Arr:
        u = ufunc(np.asarray(a, dtype=dtype).view(bits), np.asarray(b, dtype=dtype).view(bits))
        return u.astype(bits, copy=False).view(dtype)

    return op


def trap_lanes(op: str, ty: Scalar, a: _Arr, b: _Arr) -> tuple[_Arr, _Arr]:
    """(div-by-zero, div-overflow) masks for `op` in `/`, `%`, `wrapping_div`, `wrapping_rem`,
    `div_euclid`, `rem_euclid`.

    Float division never traps (IEEE gives inf/NaN); `wrapping_*` never overflow-trap.
    """
    if op not in ("/", "%", "wrapping_div", "wrapping_rem", "div_euclid", "rem_euclid"):
        raise ValueError(f"{op!r} cannot trap")
    if ty.is_float:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        return np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    return ints.trap_masks(op, ty, a, b)


def _int_methods() -> dict[str, Callable[[Scalar, _Arr, Sequence[_Arr]], _Arr]]:
    return {
        "wrapping_add": lambda t, r, a: ints.wrapping_add(t, r, a[0]),
        "wrapping_sub": lambda t, r, a: ints.wrapping_sub(t, r, a[0]),
        "wrapping_mul": lambda t, r, a: ints.wrapping_mul(t, r, a[0]),
        "wrapping_div": lambda t, r, a: ints.div(t, r, a[0]),
        "wrapping_rem": lambda t, r, a: ints.rem(t, r, a[0]),
        "wrapping_neg": lambda t, r, a: ints.wrapping_neg(t, r),
        "wrapping_shl": lambda t, r, a: ints.shl(t, r, a[0]),
        "wrapping_shr": lambda t, r, a: ints.shr(t, r, a[0]),
        "rotate_left": lambda t, r, a: ints.rotate_left(t, r, a[0]),
        "rotate_right": lambda t, r, a: ints.rotate_right(t, r, a[0]),
        "count_ones": lambda t, r, a: ints.count_ones(t, r),
        "leading_zeros": lambda t, r, a: ints.leading_zeros(t, r),
        "trailing_zeros": lambda t, r, a: ints.trailing_zeros(t, r),
        "min": lambda t, r, a: np.minimum(r, a[0]),
        "max": lambda t, r, a: np.maximum(r, a[0]),
        "abs": lambda t, r, a: ints.wrapping_abs(t, r),
        "wrapping_abs": lambda t, r, a: ints.wrapping_abs(t, r),
        "count_zeros": lambda t, r, a: ints.count_zeros(t, r),
        "leading_ones": lambda t, r, a: ints.leading_ones(t, r),
        "trailing_ones": lambda t, r, a: ints.trailing_ones(t, r),
        "swap_bytes": lambda t, r, a: ints.swap_bytes(t, r),
        "reverse_bits": lambda t, r, a: ints.reverse_bits(t, r),
        "saturating_add": lambda t, r, a: ints.saturating_add(t, r, a[0]),
        "saturating_sub": lambda t, r, a: ints.saturating_sub(t, r, a[0]),
        "saturating_mul": lambda t, r, a: ints.saturating_mul(t, r, a[0]),
        "abs_diff": lambda t, r, a: ints.abs_diff(t, r, a[0]),
        "unsigned_abs": lambda t, r, a: ints.unsigned_abs(t, r),
        "div_euclid": lambda t, r, a: ints.div_euclid(t, r, a[0]),
        "rem_euclid": lambda t, r, a: ints.rem_euclid(t, r, a[0]),
        "pow": lambda t, r, a: ints.wrapping_pow(t, r, a[0]),
        "wrapping_pow": lambda t, r, a: ints.wrapping_pow(t, r, a[0]),
    }


def _float_methods() -> dict[str, Callable[[Scalar, _Arr, Sequence[_Arr]], _Arr]]:
    return {
        "abs": lambda t, r, a: np.abs(r),
        "sqrt": lambda t, r, a: floats.sqrt(r),
        "mul_add": lambda t, r, a: floats.mul_add(t, r, a[0], a[1]),
        "min": lambda t, r, a: floats.fmin(r, a[0]),
        "max": lambda t, r, a: floats.fmax(r, a[0]),
        "to_bits": lambda t, r, a: to_bits(r, t),
        "copysign": lambda t, r, a: floats.copysign(r, a[0]),
        "signum": lambda t, r, a: floats.signum(r),
        "floor": lambda t, r, a: floats.floor(r),
        "ceil": lambda t, r, a: floats.ceil(r),
        "round": lambda t, r, a: floats.round_away(r),
        "trunc": lambda t, r, a: floats.trunc(r),
        "is_nan": lambda t, r, a: np.isnan(r),
        "is_sign_negative": lambda t, r, a: _sign_bit(r, t),
        "clamp": lambda t, r, a: floats.clamp(r, a[0], a[1]),
    }


def _sign_bit(a: _Arr, ty: Scalar) -> _Arr:
    """Rust `is_sign_negative`: the sign bit, NaNs included, so it observes a NaN's sign
    as `to_bits` does (reported to `nan.observing`)."""
    a = np.asarray(a, dtype=ty.dtype)
    nan.observe_bits(a)
    return (a.view(ty.bits_dtype) >> (ty.bits - 1)).astype(bool)


_INT_METHODS = _int_methods()
_FLOAT_METHODS = _float_methods()


def method(name: str, ty: Scalar, recv: _Arr, args: Sequence[_Arr]) -> _Arr:
    """`recv.name(args...)` for a scalar receiver of type `ty` (docs/language.md method table;
    `len` is not a scalar method and is the caller's)."""
    table = _FLOAT_METHODS if ty.is_float else _INT_METHODS
    try:
        impl = table[name]
    except KeyError:
        raise ValueError(f"no method {name} on {ty}") from None
    return impl(ty, recv, args)


def to_bits(a: _Arr, ty: Scalar) -> _Arr:
    """The raw bits of floats (`f32::to_bits` → u32, `f64::to_bits` → u64): a view, no
    conversion, so NaN payloads survive (and are reported to `nan.observing`)."""
    a = np.asarray(a, dtype=ty.dtype)
    nan.observe_bits(a)
    return a.view(ty.bits_dtype).copy()


def from_bits(bits: _Arr, ty: Scalar) -> _Arr:
    """`f32::from_bits` / `f64::from_bits`: reinterpret the unsigned bits."""
    return np.asarray(bits, dtype=ty.bits_dtype).view(ty.dtype).copy()
