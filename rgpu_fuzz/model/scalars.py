"""Scalar element types shared by every stage (docs/language.md "Types").

This is the one place that says how wide a type is, whether it is signed and which numpy
dtype holds it; the front end, the interpreter, case files and the pipelines all read it here.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np


class Scalar(StrEnum):
    """A scalar type of the kernel language, named as Rust spells it."""

    BOOL = "bool"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    USIZE = "usize"
    F32 = "f32"
    F64 = "f64"
    F16 = "f16"
    """IEEE binary16, Rust's unstable `f16` (`#![feature(f16)]`): last, so that code iterating
    the enum sees the older types in their old order."""

    @property
    def bits(self) -> int:
        """Width in bits; `bool` is stored as one byte but has one meaningful bit."""
        return _BITS[self]

    @property
    def is_int(self) -> bool:
        return self not in (Scalar.BOOL, Scalar.F32, Scalar.F64, Scalar.F16)

    @property
    def is_float(self) -> bool:
        return self in (Scalar.F32, Scalar.F64, Scalar.F16)

    @property
    def is_signed(self) -> bool:
        return self in (Scalar.I8, Scalar.I16, Scalar.I32, Scalar.I64)

    @property
    def min_value(self) -> int:
        """Smallest value of an integer type (two's complement for signed types)."""
        if not self.is_int:
            raise TypeError(f"{self} is not an integer type")
        return -(1 << (self.bits - 1)) if self.is_signed else 0

    @property
    def max_value(self) -> int:
        """Largest value of an integer type."""
        if not self.is_int:
            raise TypeError(f"{self} is not an integer type")
        return (1 << (self.bits - 1)) - 1 if self.is_signed else (1 << self.bits) - 1

    @property
    def uint(self) -> Scalar:
        """The unsigned integer type of the same width (`f16` → `u16`: `to_bits`'s result)."""
        return _UINT_OF_WIDTH[self.bits]

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype that holds values of this type exactly."""
        return np.dtype(_DTYPES[self])

    @property
    def bits_dtype(self) -> np.dtype:
        """The unsigned numpy dtype of the same width, used to carry raw bit patterns."""
        return np.dtype(_BITS_DTYPES[self])


_BITS: dict[Scalar, int] = {
    Scalar.BOOL: 1,
    Scalar.I8: 8,
    Scalar.I16: 16,
    Scalar.I32: 32,
    Scalar.I64: 64,
    Scalar.U8: 8,
    Scalar.U16: 16,
    Scalar.U32: 32,
    Scalar.U64: 64,
    Scalar.USIZE: 64,  # docs/language.md: usize is 64-bit on every target we run
    Scalar.F32: 32,
    Scalar.F64: 64,
    Scalar.F16: 16,
}

_DTYPES: dict[Scalar, str] = {
    Scalar.BOOL: "bool",
    Scalar.I8: "int8",
    Scalar.I16: "int16",
    Scalar.I32: "int32",
    Scalar.I64: "int64",
    Scalar.U8: "uint8",
    Scalar.U16: "uint16",
    Scalar.U32: "uint32",
    Scalar.U64: "uint64",
    Scalar.USIZE: "uint64",
    Scalar.F32: "float32",
    Scalar.F64: "float64",
    Scalar.F16: "float16",
}

_BITS_DTYPES: dict[Scalar, str] = {
    Scalar.BOOL: "uint8",
    Scalar.I8: "uint8",
    Scalar.I16: "uint16",
    Scalar.I32: "uint32",
    Scalar.I64: "uint64",
    Scalar.U8: "uint8",
    Scalar.U16: "uint16",
    Scalar.U32: "uint32",
    Scalar.U64: "uint64",
    Scalar.USIZE: "uint64",
    Scalar.F32: "uint32",
    Scalar.F64: "uint64",
    Scalar.F16: "uint16",
}

_UINT_OF_WIDTH: dict[int, Scalar] = {8: Scalar.U8, 16: Scalar.U16, 32: Scalar.U32, 64: Scalar.U64}

INT_TYPES: tuple[Scalar, ...] = tuple(s for s in Scalar if s.is_int)
FLOAT_TYPES: tuple[Scalar, ...] = (Scalar.F32, Scalar.F64, Scalar.F16)


def to_bits(values: np.ndarray, ty: Scalar) -> list[int]:
    """Unsigned bit patterns of `values` (two's complement, IEEE bits, 0/1 for bool)."""
    arr = np.ascontiguousarray(values, dtype=ty.dtype)
    if ty is Scalar.BOOL:
        return [int(v) for v in arr.astype(np.uint8)]
    return [int(v) for v in arr.view(ty.bits_dtype)]


def from_bits(bits: list[int] | np.ndarray, ty: Scalar) -> np.ndarray:
    """The inverse of `to_bits`: an array of `ty` from unsigned bit patterns."""
    raw = np.asarray(bits, dtype=np.uint64).astype(ty.bits_dtype)
    if ty is Scalar.BOOL:
        return raw.astype(bool)
    return raw.view(ty.dtype).copy()
