"""Materialise argument initialisers into arrays, reproducibly on every machine.

Random contents come from numpy's PCG64 *raw* output (`random_raw`), whose stream is fixed
by the algorithm, not by numpy's distribution code, so a seed names the same bits across
numpy versions and machines.
"""

from __future__ import annotations

import struct
from functools import cache

import numpy as np

from rgpu_fuzz.model.case import Arg, BufferArg, Dist, Fill, Random, ScalarArg, Values
from rgpu_fuzz.model.scalars import Scalar, from_bits


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _f16_bits(x: float) -> int:
    """binary16 bits of `x`; values past its range (65504) are infinite."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0x7c00


def edge_bits(ty: Scalar) -> tuple[int, ...]:
    """Edge values of a type as bit patterns: what breaks arithmetic, casts and comparisons."""
    mask = (1 << ty.bits) - 1 if ty is not Scalar.BOOL else 1
    if ty is Scalar.BOOL:
        return (0, 1)
    if ty.is_int:
        vals = {0, 1, 2, 3, -1, -2, ty.min_value, ty.min_value + 1, ty.max_value,
                ty.max_value - 1, 7, 8, ty.bits - 1, ty.bits, ty.bits + 1}
        vals |= {1 << k for k in range(0, ty.bits, 7)}
        return tuple(sorted(v & mask for v in vals))
    pack = {Scalar.F16: _f16_bits, Scalar.F32: _f32_bits, Scalar.F64: _f64_bits}[ty]
    mant = {Scalar.F16: 10, Scalar.F32: 23, Scalar.F64: 52}[ty]
    sign = 1 << (ty.bits - 1)
    exp_all = ((1 << (ty.bits - 1 - mant)) - 1) << mant
    specials = {
        0, 1, (1 << mant) - 1, 1 << mant,                # 0, min/max subnormal, min normal
        exp_all - 1,                                     # max finite
        exp_all, exp_all | (1 << (mant - 1)),            # inf, quiet NaN
        exp_all | 1,                                     # signalling NaN
    }
    specials |= {pack(v) for v in (1.0, 2.0, 0.5, 1.5, 3.0, 0.1, 1e10, 16777217.0, 2.0**31,
                                   2.0**32, 2.0**63, 2.0**64, 255.5, 65535.0)}
    if ty is Scalar.F16:  # and its own: integers at the significand's end, rounding ties
        specials |= {pack(v) for v in (2048.0, 2049.0, 1.0 + 2.0**-10, 0.333, 65504.0, -0.0)}
    both = specials | {s | sign for s in specials}
    return tuple(sorted(both))


def materialise(arg: BufferArg) -> np.ndarray:
    """The initial contents of a buffer argument as an array of its element dtype."""
    n = arg.len
    match arg.init:
        case Fill(bits=b):
            bits = np.full(n, b, dtype=np.uint64)
        case Values(bits=bs):
            bits = np.asarray(bs, dtype=np.uint64)
        case Random(seed=seed, dist=dist):
            bits = random_bits(seed, dist, arg.elem, n)
    return from_bits(bits, arg.elem)


@cache
def _edge_array(ty: Scalar) -> np.ndarray:
    arr = np.asarray(edge_bits(ty), dtype=np.uint64)
    arr.flags.writeable = False
    return arr


def random_bits(seed: int, dist: Dist, ty: Scalar, n: int) -> np.ndarray:
    """`n` bit patterns of `ty` drawn from `dist`, as uint64."""
    raw = np.random.PCG64(seed).random_raw(2 * n).astype(np.uint64)
    width = 1 if ty is Scalar.BOOL else ty.bits
    mask = np.uint64((1 << width) - 1)
    uniform = raw[n:] & mask
    if dist is Dist.UNIFORM:
        return uniform
    edges = _edge_array(ty)
    choose = raw[:n]
    pick_edge = (choose & np.uint64(1)) == 0
    edge = edges[((choose >> np.uint64(1)) % np.uint64(len(edges))).astype(np.int64)]
    return np.where(pick_edge, edge, uniform)


def scalar_value(arg: ScalarArg) -> np.generic:
    """A scalar argument as a numpy scalar of its type."""
    return from_bits([arg.bits], arg.ty)[0]


def argument_values(args: tuple[Arg, ...]) -> dict[str, np.ndarray | np.generic]:
    """Every argument of a case, materialised (buffers as fresh arrays)."""
    out: dict[str, np.ndarray | np.generic] = {}
    for a in args:
        out[a.name] = materialise(a) if isinstance(a, BufferArg) else scalar_value(a)
    return out
