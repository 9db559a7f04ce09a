"""Numeric literals: the exact value of a literal's text, and the AST for a value.

Rust rounds a decimal float literal straight to its type, so `0.1f32` is the binary32 value
nearest to 1/10, not the binary32 nearest to the binary64 nearest to 1/10. Going through f64
first ("double rounding") is wrong for some literals, so f32 is rounded here exactly, with
rationals and round-to-nearest-even, subnormals and overflow to infinity included.
"""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction
from functools import lru_cache

import numpy as np

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.env import Infer
from rgpu_fuzz.model.scalars import Scalar

_FLOAT_TEXT = re.compile(r"(?P<int>[0-9_]+)(?:\.(?P<frac>[0-9_]*))?(?:[eE](?P<exp>[+-]?[0-9_]+))?")

# (significand bits including the hidden one, minimum normal exponent, maximum exponent)
_FORMATS: dict[Scalar, tuple[int, int, int]] = {
    Scalar.F32: (24, -126, 127),
    Scalar.F64: (53, -1022, 1023),
    Scalar.F16: (11, -14, 15),
}


def _float_format(ty: Scalar) -> tuple[int, int, int]:
    if ty not in _FORMATS:
        raise ValueError(f"{ty} is not a float type")
    return _FORMATS[ty]


def round_to_float(q: Fraction, ty: Scalar) -> float:
    """The `ty` value nearest to the rational `q` (ties to even), as a Python float; overflows
    to ±inf. For f32 the result is exactly representable in binary32."""
    precision, emin, emax = _float_format(ty)
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    exp = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** exp > q:
        exp -= 1
    # now 2**exp <= q < 2**(exp+1)
    if exp > emax:
        return sign * math.inf
    exp = max(exp, emin)                        # below the normal range: fixed quantum
    shift = exp - (precision - 1)               # value = n * 2**shift
    scaled = q / Fraction(2) ** shift
    n, rest = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rest
    if twice > scaled.denominator or (twice == scaled.denominator and n % 2 == 1):
        n += 1
    if n >= 1 << precision and exp + 1 > emax:  # rounded up past the largest finite value
        return sign * math.inf
    return sign * math.ldexp(n, shift)


@lru_cache(maxsize=4096)
def float_literal_value(text: str, ty: Scalar) -> float:
    """The exact value of a float literal's text (`FloatLit.text`) in `ty`, correctly rounded
    from the decimal (not via f64 for f32); a Python float holding that `ty` value. Cached:
    the checker, the interpreter and the lowering each ask for every literal of a case, and
    generated kernels reuse a few hundred texts."""
    m = _FLOAT_TEXT.fullmatch(text)
    if m is None:
        raise ValueError(f"not a float literal: {text!r}")
    digits = m["int"].replace("_", "") + (m["frac"] or "").replace("_", "")
    exp10 = int((m["exp"] or "0").replace("_", "")) - len((m["frac"] or "").replace("_", ""))
    q = Fraction(int(digits)) * Fraction(10) ** exp10
    return round_to_float(q, ty)


def float_bits(value: float, ty: Scalar) -> int:
    """The IEEE bit pattern of `value` rounded to `ty` (NaN keeps Python's payload)."""
    _float_format(ty)
    if ty in (Scalar.F32, Scalar.F16):
        if math.isfinite(value):
            value = round_to_float(Fraction(value), ty) if value != 0 else value
        if ty is Scalar.F16:  # struct's "e" is binary16 (and rounds, but value is exact)
            return struct.unpack("<H", struct.pack("<e", value))[0]
        return struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _shortest_text(value: float, ty: Scalar) -> str:
    """Shortest decimal that reads back as `value` in `ty`, in the lexer's canonical form:
    positional for 1e-4 <= value < 1e16 (as Python's repr), scientific otherwise."""
    v: np.floating = np.dtype(ty.dtype).type(value)
    if value == 0 or 1e-4 <= value < 1e16:
        text = np.format_float_positional(v, unique=True, trim="0")
        return text
    text = np.format_float_scientific(v, unique=True, trim="-")
    mantissa, exp = text.split("e")
    exp_value = int(exp)
    return f"{mantissa}e{exp_value}"


def float_literal(value: float, ty: Scalar) -> ast.Expr:
    """An expression of type `ty` whose value is exactly `value` (rounded to `ty` first):
    a suffixed `FloatLit` with the shortest round-tripping text, `-` in front for negative
    values including -0.0, and `f32::from_bits(...)`/`f64::from_bits(...)` for NaN and ±inf."""
    _float_format(ty)
    bits_ty = ty.uint
    if math.isfinite(value) and ty in (Scalar.F32, Scalar.F16):
        value = round_to_float(Fraction(value), ty) if value != 0 else value
    if not math.isfinite(value):
        return ast.AssocCall(scalar=ty, name="from_bits",
                             args=(ast.IntLit(value=float_bits(value, ty), suffix=bits_ty),))
    text = _shortest_text(abs(value), ty)
    if float_literal_value(text, ty) != abs(value):
        # Cannot happen with numpy's shortest repr; kept so a wrong literal is never emitted.
        return ast.AssocCall(scalar=ty, name="from_bits",
                             args=(ast.IntLit(value=float_bits(value, ty), suffix=bits_ty),))
    lit = ast.FloatLit(text=text, suffix=ty)
    if math.copysign(1.0, value) < 0:
        return ast.Unary(op=ast.UnOp.NEG, operand=lit)
    return lit


def int_literal(value: int, ty: Scalar) -> ast.Expr:
    """An expression of integer type `ty` with value `value`: a suffixed `IntLit`, or
    `Unary(NEG, IntLit)` for a negative value (`-128i8` is `-(128i8)`, which Rust accepts)."""
    if not ty.is_int:
        raise ValueError(f"{ty} is not an integer type")
    if not ty.min_value <= value <= ty.max_value:
        raise ValueError(f"{value} is out of range for {ty}")
    if value < 0:
        return ast.Unary(op=ast.UnOp.NEG, operand=ast.IntLit(value=-value, suffix=ty))
    return ast.IntLit(value=value, suffix=ty)


def is_literal(e: ast.Expr) -> bool:
    """A literal, possibly negated: what rustc types from a cast's target."""
    if isinstance(e, ast.Unary) and e.op is ast.UnOp.NEG:
        e = e.operand
    return isinstance(e, ast.IntLit | ast.FloatLit)


def first_literal(e: ast.Expr) -> ast.Expr:
    """The first unsuffixed literal of a provisional subtree (where an error points)."""
    match e:
        case ast.Unary():
            return first_literal(e.operand)
        case ast.Binary():
            return first_literal(e.lhs)
        case ast.If() if e.then.tail is not None and isinstance(e.then.tail.ty, Infer):
            return first_literal(e.then.tail)
        case ast.If() if isinstance(e.else_, ast.Block) and e.else_.tail is not None:
            return first_literal(e.else_.tail)
        case ast.If() if isinstance(e.else_, ast.If):
            return first_literal(e.else_)
        case ast.BlockExpr() if e.block.tail is not None:
            return first_literal(e.block.tail)
    return e
