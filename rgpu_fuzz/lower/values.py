"""How kernel-language values look in LLVM IR: SSA types, memory types, constants, intrinsics.

A value lives in SSA form with its *value type* (`bool` is `i1`) and in memory with its
*memory type* (`bool` is one byte, `i8`, as Rust and numpy store it). Every load and store of a
scalar goes through `load_scalar`/`store_scalar` so the two never get mixed up.
"""

from __future__ import annotations

import struct

import numpy as np

from rgpu_fuzz.lower import irapi
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.model.scalars import Scalar

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()


def value_type(s: Scalar) -> ir.Type:
    """The SSA type of a scalar."""
    if s is Scalar.BOOL:
        return I1
    if s is Scalar.F32:
        return ir.FloatType()
    if s is Scalar.F64:
        return ir.DoubleType()
    if s is Scalar.F16:
        return ir.HalfType()
    return ir.IntType(s.bits)


def memory_type(s: Scalar) -> ir.Type:
    """The in-memory type of a scalar (bool is a byte)."""
    return I8 if s is Scalar.BOOL else value_type(s)


def byte_size(s: Scalar) -> int:
    return 1 if s is Scalar.BOOL else s.bits // 8


def load_scalar(b: ir.IRBuilder, ptr: ir.Value, s: Scalar) -> ir.Value:
    v = b.load(ptr, typ=memory_type(s))
    if s is Scalar.BOOL:
        return b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    return v


def store_scalar(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, s: Scalar) -> None:
    if s is Scalar.BOOL:
        value = b.zext(value, I8)
    b.store(value, ptr)


def int_const(s: Scalar, value: int) -> ir.Constant:
    """An integer constant of `s` from any Python int (taken modulo 2**bits)."""
    return ir.Constant(value_type(s), value & ((1 << s.bits) - 1))


def float_const(s: Scalar, bits: int) -> ir.Constant:
    """A float constant with exactly these IEEE bits. LLVM IR spells every float constant as
    the hex of a double (LangRef "Simple Constants"): for f32 the double of the same value,
    and for an f32 NaN the double with the payload shifted up 29 bits, which the IR parser
    narrows back bit for bit, a signalling NaN included. Never through a Python float: its
    f32 -> f64 widening sets the quiet bit."""
    if s is Scalar.F64:
        return ir.FormattedConstant(value_type(s), f"0x{bits:016X}")
    if s is Scalar.F16:  # LangRef: `0xH` and the four hex digits of the half's own bits
        return ir.FormattedConstant(value_type(s), f"0xH{bits:04X}")
    sign, exponent, mantissa = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7F_FFFF
    if exponent == 0xFF:  # inf and NaN: exponent all ones, payload moved to the top
        double = sign << 63 | 0x7FF << 52 | mantissa << 29
    else:  # finite: widening is exact
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        double = struct.unpack("<Q", struct.pack("<d", value))[0]
    return ir.FormattedConstant(value_type(s), f"0x{double:016X}")


def scalar_const(s: Scalar, value: int | float | bool | np.floating) -> ir.Constant:
    """A constant of `s` from a literal's value or a checker-evaluated const (floats there
    are numpy scalars holding the exact bits)."""
    if s is Scalar.BOOL:
        return ir.Constant(I1, int(bool(value)))
    if s.is_float:
        return float_const(s, int(np.asarray(value, dtype=s.dtype).view(s.bits_dtype)))
    return int_const(s, int(value))


def private_alloca(b: ir.IRBuilder, t: ir.Type, name: str, addrspace: int) -> ir.Value:
    """An alloca of `t` at the builder's position, in `addrspace`, typed as opaque ptr."""
    return irapi.private_alloca(b, t, name, addrspace)


def memcpy(intrinsics: Intrinsics, dst: ir.Value, src: ir.Value) -> ir.Function:
    """`llvm.memcpy` overloaded for the address spaces of `dst` and `src`."""
    name = f"llvm.memcpy.p{dst.type.addrspace}.p{src.type.addrspace}.i64"
    return intrinsics.get(name, VOID, [dst.type, src.type, I64, I1])


def string_attribute(fn: ir.Function, key: str, value: str) -> None:
    """A string function attribute `"key"="value"` (llvmlite only knows enum attributes)."""
    set.add(fn.attributes, f'"{key}"="{value}"')


class Intrinsics:
    """Declares LLVM intrinsics on demand, once per module."""

    def __init__(self, module: ir.Module) -> None:
        self._module = module
        self._fns: dict[str, ir.Function] = {}

    def get(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        fn = self._fns.get(name)
        if fn is None:
            fn = ir.Function(self._module, ir.FunctionType(ret, args), name=name)
            self._fns[name] = fn
        return fn


def type_suffix(t: ir.Type) -> str:
    """The overload suffix of an intrinsic name (`i32`, `f16`, `f32`, `f64`)."""
    if isinstance(t, ir.HalfType):
        return "f16"
    if isinstance(t, ir.FloatType):
        return "f32"
    if isinstance(t, ir.DoubleType):
        return "f64"
    assert isinstance(t, ir.IntType), t
    return f"i{t.width}"
