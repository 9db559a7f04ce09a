"""Literal values the grammar writes: edge values of every type, as typed literal ASTs.

Every literal is suffixed (or is an `f32::from_bits` call), so the checker never has to
infer a literal's type from context. Edge values are where compilers go wrong: `MIN`, `MAX`,
`-1`, shift amounts near the width, `-0.0`, NaN, infinities, subnormals, 2^24 + 1.
"""

from __future__ import annotations

import math
import struct
from functools import cache

from generators.choice import ChoiceSource
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.literals import float_bits, float_literal, int_literal
from rgpu_fuzz.model.scalars import Scalar

_FLOAT_EDGES: tuple[float, ...] = (
    0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1.5, -2.5, 0.1, 3.0, 10.0, 100.0, 255.5, 65535.0,
    16777216.0, 16777217.0, 2.0**31, 2.0**32, -(2.0**31), 2.0**63, 1e10, 1e-3, 0.333,
)

_F32_SPECIAL_BITS: tuple[int, ...] = (
    0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFC0_0000, 0x7F80_0001,  # ±inf, NaNs
    0x0000_0001, 0x007F_FFFF, 0x0080_0000, 0x8000_0001, 0x7F7F_FFFF, 0xFF7F_FFFF,
)
_F64_SPECIAL_BITS: tuple[int, ...] = (
    0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x7FF8_0000_0000_0000,
    0x7FF0_0000_0000_0001, 0x0000_0000_0000_0001, 0x000F_FFFF_FFFF_FFFF,
    0x0010_0000_0000_0000, 0x7FEF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0001,
)

_F16_SPECIAL_BITS: tuple[int, ...] = (
    0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01,  # ±inf, quiet NaNs, a signalling NaN
    0x0001, 0x03FF, 0x0400, 0x8001, 0x7BFF, 0xFBFF, 0x3C01, 0x3555,
)


def _special_bits(ty: Scalar) -> tuple[int, ...]:
    return {Scalar.F16: _F16_SPECIAL_BITS, Scalar.F32: _F32_SPECIAL_BITS}.get(
        ty, _F64_SPECIAL_BITS)


@cache
def int_edges(ty: Scalar) -> tuple[int, ...]:
    """Interesting values of an integer type, simplest first."""
    vals = [0, 1, 2, 3, 7, 8, ty.bits - 1, ty.bits, ty.max_value, ty.max_value - 1]
    if ty.is_signed:
        vals += [-1, -2, ty.min_value, ty.min_value + 1]
    vals += [0x55 & ty.max_value, 100 % (ty.max_value + 1)]
    return tuple(dict.fromkeys(v for v in vals if ty.min_value <= v <= ty.max_value))


def float_value(bits: int, ty: Scalar) -> float:
    if ty is Scalar.F16:
        return float(struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0])
    if ty is Scalar.F32:
        return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFF_FFFF))[0])
    return float(struct.unpack("<d", struct.pack("<Q", bits & 0xFFFF_FFFF_FFFF_FFFF))[0])


def float_from_bits(bits: int, ty: Scalar) -> ast.Expr:
    """The exact float with these IEEE bits: a decimal literal when one reads back exactly,
    otherwise `f32::from_bits(...)` (NaN payloads survive only that way)."""
    value = float_value(bits, ty)
    if math.isnan(value):
        return ast.AssocCall(scalar=ty, name="from_bits",
                             args=(ast.IntLit(value=bits, suffix=ty.uint),))
    return float_literal(value, ty)


def explicit_from_bits(bits: int, ty: Scalar) -> ast.Expr:
    """`f32::from_bits(0x...)` even where a decimal would do: the constant form itself is a
    feature the pipelines must get right."""
    return ast.AssocCall(scalar=ty, name="from_bits",
                         args=(ast.IntLit(value=bits, suffix=ty.uint),))


def literal(src: ChoiceSource, ty: Scalar, *, specials: bool = True) -> ast.Expr:
    """A literal of type `ty`: mostly edge values, sometimes uniformly random bits."""
    if ty is Scalar.BOOL:
        return ast.BoolLit(value=src.boolean())
    if ty.is_int:
        if src.boolean(0.8):
            return int_literal(src.choice(int_edges(ty)), ty)
        raw = src.bits(ty.bits)
        if ty.is_signed and raw > ty.max_value:
            raw -= 1 << ty.bits
        return int_literal(raw, ty)
    kind = src.integer(0, 9)
    if kind < 6 or not specials:
        return float_literal(src.choice(_FLOAT_EDGES), ty)
    if kind < 8:
        return explicit_from_bits(src.choice(_special_bits(ty)), ty)
    bits = src.bits(ty.bits)
    if not specials and math.isnan(float_value(bits, ty)):
        bits = 0
    return float_from_bits(bits, ty)


def zero(ty: Scalar) -> ast.Expr:
    """The zero of a type (the `[0u32; N]` initialisers)."""
    if ty is Scalar.BOOL:
        return ast.BoolLit(value=False)
    if ty.is_int:
        return ast.IntLit(value=0, suffix=ty)
    return ast.FloatLit(text="0.0", suffix=ty)


def one(ty: Scalar) -> ast.Expr:
    if ty.is_int:
        return ast.IntLit(value=1, suffix=ty)
    return ast.FloatLit(text="1.0", suffix=ty)


def usize(n: int) -> ast.Expr:
    return ast.IntLit(value=n, suffix=Scalar.USIZE)


def value_bits(src: ChoiceSource, ty: Scalar) -> int:
    """The bit pattern of an edge-biased value of `ty`, for scalar kernel arguments."""
    if ty is Scalar.BOOL:
        return int(src.boolean())
    if ty.is_int:
        v = src.choice(int_edges(ty)) if src.boolean(0.7) else src.bits(ty.bits)
        return v & ((1 << ty.bits) - 1)
    if src.boolean(0.6):
        x = src.choice(_FLOAT_EDGES)
        if ty is Scalar.F16:  # rounded to binary16, past 65504 infinite
            return float_bits(x, ty)
        fmt = ("<f", "<I") if ty is Scalar.F32 else ("<d", "<Q")
        return int(struct.unpack(fmt[1], struct.pack(fmt[0], x))[0])
    return src.bits(ty.bits)
