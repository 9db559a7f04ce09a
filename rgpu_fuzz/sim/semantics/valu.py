"""Vector ALU semantics as data: AMD opcode name → operand types and a numpy function over
whole waves ("op semantics as a table, not an if-chain").

Each `VOp` says how its operands are laid out (`shape`), the type of its destination and of
each source (which fixes how many registers an operand spans, how an inline constant is
encoded, and whether the neg/abs modifiers apply), and `fn`, called with the typed source
vectors. Semantics follow the ISA manuals' pseudocode (CDNA3 ISA, "Vector ALU
instructions"); where numpy's arithmetic is IEEE 754 round-to-nearest-even it is used as
is, and the cases it does not cover (fused multiply-add, AMD min/max NaN rules, hardware
saturating conversions) are spelled out in `rgpu_fuzz.sim.semantics.fp` and here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz.sim.semantics import fp
from rgpu_fuzz.sim.semantics import valu_fp as vf
from rgpu_fuzz.sim.semantics.bitop3 import CDNA4_OPS
from rgpu_fuzz.sim.semantics.f16 import F16_OPS
from rgpu_fuzz.sim.semantics.int16 import INT16_CLAMP, INT16_OPS
from rgpu_fuzz.sim.semantics.packed import PK16, PKF16, PKF32
from rgpu_fuzz.sim.semantics.rdna4 import RDNA4_OPS
from rgpu_fuzz.sim.semantics.valu_mad import MAD_OPS
from rgpu_fuzz.sim.semantics.valu_rdna3 import RDNA3_OPS

U32 = np.uint32
I32 = np.int32
U64 = np.uint64
I64 = np.int64
F32 = np.float32
F64 = np.float64


@dataclass(frozen=True, slots=True)
class VOp:
    shape: str
    """plain | cmp | cmpx | cndmask | carry_out | carry_in | div_scale | div_fmas | mad64 |
    readlane | readfirstlane | writelane."""
    dst: str
    src: tuple[str, ...]
    fn: Callable[..., Any]
    mode: bool = False
    """`fn` takes the wave's float mode (IEEE bit) as its first argument."""


def _p(dst: str, *src: str, mode: bool = False) -> Callable[[Callable[..., Any]], VOp]:
    def make(fn: Callable[..., Any]) -> VOp:
        return VOp("plain", dst, src, fn, mode)
    return make


def _sh(x: np.ndarray, bits: int) -> np.ndarray:
    return x & (bits - 1)


def _mulhi_u32(a, b):
    return ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32)


def _mulhi_i32(a, b):
    return ((a.astype(I64) * b.astype(I64)) >> 32).astype(U32)


def _u24(x):
    return x & U32(0xFFFFFF)


def _i24(x):
    return ((x.astype(U32) << U32(8)).astype(I32) >> 8).astype(I64)


def _f2i(x, lo, hi, out):
    """Hardware float→int: truncate, saturate to [lo, hi], NaN → 0 (f32_to_i32 etc.).
    NaN is replaced before anything else, so no step warns (the bound step of a conversion
    ran 10 us with `np.errstate`, `np.nan_to_num` and `np.clip`; these ufuncs take 3);
    ±inf saturate through maximum/minimum as `np.clip` would. The cast truncates toward
    zero (C conversion), so saturating first and truncating in the cast gives what
    truncating first would: the bounds are integers. An unsigned conversion's lower bound
    is NaN's 0, which `np.fmax` (the non-NaN operand) gives without the `where`."""
    x = np.asarray(x, F64)
    if lo == 0:
        return np.fmin(np.fmax(x, 0.0), hi).astype(out)
    return np.minimum(np.maximum(np.where(x == x, x, 0.0), lo), hi).astype(out)


def _bfe_u(x, off, w):
    off = off & 31
    w = w & 31
    mask = ((U64(1) << w.astype(U64)) - U64(1)).astype(U64)
    return ((x.astype(U64) >> off.astype(U64)) & mask).astype(U32)


def _amount(a, mask, ty):
    """A shift amount `a & mask` as `ty`: a uniform one (an SGPR or a constant, a numpy
    scalar) through Python ints, ~5x cheaper than numpy's scalar operations."""
    if isinstance(a, np.generic):
        return ty(int(a) & mask)
    return (a & U32(mask)).astype(ty)


def _bfe_i(x, off, w):
    if isinstance(off, np.generic) and isinstance(w, np.generic):
        return _bfe_i_uniform(x, int(off) & 31, int(w) & 31)
    w = np.asarray(w & 31, I64)
    v = _bfe_u(x, off, w).astype(I64)
    sign = np.where(w > 0, (v >> np.maximum(w - 1, 0)) & 1, 0)
    return np.where(sign == 1, v - (I64(1) << w), v).astype(I32)


def _bfe_i_uniform(x, off, width):
    """`_bfe_i` with the same offset and width in every lane (constants, at O0 nearly
    always): the field shifted to the top of the dword, then arithmetically back down; a
    field that reaches past bit 31 has no sign bit inside it (zero-filled above)."""
    x = np.asarray(x, U32)
    if width == 0:
        return np.zeros(x.shape, I32)
    if off + width <= 32:
        return (x << U32(32 - off - width)).view(I32) >> (32 - width)
    return (x >> U32(off)).view(I32)


def _ffbh(x):
    """Leading zeros of a u32, -1 (0xffffffff) for 0."""
    x = np.asarray(x, U32)
    out = np.full(x.shape, 0xFFFFFFFF, U64)
    nz = x != 0
    bl = np.floor(np.log2(np.where(nz, x, 1).astype(F64))).astype(I64)
    return np.where(nz, 31 - bl, out).astype(U32)


def _ffbl(x):
    x = np.asarray(x, U32)
    low = (x & (~x + U32(1))).astype(F64)
    nz = x != 0
    return np.where(nz, np.log2(np.where(nz, low, 1)).astype(I64), 0xFFFFFFFF).astype(U32)


def _ffbh_i32(x):
    """Count of leading bits equal to the sign bit, -1 when all are."""
    u = np.asarray(x, I32).view(U32)
    flipped = np.where(np.asarray(x, I32) < 0, ~u, u)
    return _ffbh(flipped)


def _popcount(x):
    return np.bitwise_count(np.asarray(x, U32)).astype(U32)


def _brev(x):
    shape = np.shape(x)
    b = np.atleast_1d(np.asarray(x, U32)).astype(">u4").view(np.uint8).reshape(-1, 4)
    r = np.unpackbits(b, axis=1, bitorder="big")[:, ::-1]
    return np.packbits(r, axis=1, bitorder="big").view(">u4").reshape(shape).astype(U32)


def _perm(s0, s1, sel):
    """V_PERM_B32 (pseudocode BYTE_PERMUTE over {S0, S1})."""
    s0, s1, sel = np.broadcast_arrays(np.asarray(s0, U32), np.asarray(s1, U32),
                                      np.asarray(sel, U32))
    data = (s0.astype(U64) << U64(32)) | s1.astype(U64)
    out = np.zeros(s0.shape, U32)
    for byte in range(4):
        sb = (sel >> U32(8 * byte)) & U32(0xFF)
        pick = ((data >> (np.minimum(sb, 7).astype(U64) * U64(8))) & U64(0xFF)).astype(U32)
        sign_of = {8: 15, 9: 31, 10: 47, 11: 63}
        val = np.where(sb >= 13, 0xFF, np.where(sb == 12, 0, pick)).astype(U32)
        for k, bit in sign_of.items():
            sgn = ((data >> U64(bit)) & U64(1)).astype(U32) * U32(0xFF)
            val = np.where(sb == k, sgn, val)
        out |= val << U32(8 * byte)
    return out


def _cvt_ubyte(k):
    return lambda x: ((x >> U32(8 * k)) & U32(0xFF)).astype(F32)


def _minmax3(f):
    return lambda a, b, c: f(f(a, b), c)


def _med3(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def _sh16(x):
    return x & 15


def _cmp_ops() -> dict[str, VOp]:
    rel = {"F": None, "LT": np.less, "EQ": np.equal, "LE": np.less_equal,
           "GT": np.greater, "LG": np.not_equal, "NE": np.not_equal, "GE": np.greater_equal,
           "T": None}
    out: dict[str, VOp] = {}
    for ty in ("I16", "U16", "I32", "U32", "I64", "U64"):
        t = ty.lower()
        for name, f in rel.items():
            if name == "LG":
                continue
            if f is None:
                fn = (lambda v: lambda a, b: np.full(np.broadcast(a, b).shape, v))(name == "T")
            else:
                fn = f  # the ufunc itself: no Python frame per compare
            for x in ("", "X"):
                out[f"V_CMP{x}_{name}_{ty}"] = VOp("cmpx" if x else "cmp", "b64", (t, t), fn)
    # floats: ordered and unordered forms (N... = negated, U = unordered, O = ordered)
    fl: dict[str, Callable[..., Any]] = {
        "F": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
        "LT": np.less, "EQ": np.equal, "LE": np.less_equal, "GT": np.greater,
        "LG": lambda a, b: np.less(a, b) | np.greater(a, b),
        "GE": np.greater_equal,
        "O": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
        "U": lambda a, b: np.isnan(a) | np.isnan(b),
        "NGE": lambda a, b: ~np.greater_equal(a, b),
        "NLG": lambda a, b: ~(np.less(a, b) | np.greater(a, b)),
        "NGT": lambda a, b: ~np.greater(a, b), "NLE": lambda a, b: ~np.less_equal(a, b),
        "NEQ": lambda a, b: ~np.equal(a, b), "NLT": lambda a, b: ~np.less(a, b),
        "TRU": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
    }
    for ty in ("F16", "F32", "F64"):
        t = ty.lower()
        for name, pred in fl.items():
            for x in ("", "X"):
                out[f"V_CMP{x}_{name}_{ty}"] = VOp("cmpx" if x else "cmp", "b64", (t, t), pred)
        for x in ("", "X"):
            out[f"V_CMP{x}_CLASS_{ty}"] = VOp("cmpx" if x else "cmp", "b64", (t, "u32"),
                                              vf.cmp_class)
    return out


def _registrar(t: dict[str, VOp]):
    """`op(name, dst, *src, mode=False)(fn)`: enters `fn` in `t` as a "plain" `VOp`."""

    def op(name: str, dst: str, *src: str, mode: bool = False):
        def reg(fn):
            t[name] = VOp("plain", dst, src, fn, mode)
            return fn
        return reg
    return op


def _move_ops() -> dict[str, VOp]:
    """Moves, lane reads and writes, selects, the packed 16-bit forms."""
    t: dict[str, VOp] = {}
    op = _registrar(t)
    op("V_MOV_B32", "b32", "b32")(lambda a: a)
    op("V_MOV_B64", "b64", "b64")(lambda a: a)
    op("V_MOV_B16", "b16", "b16")(lambda a: a)
    op("V_ACCVGPR_WRITE", "b32", "b32")(lambda a: a)
    op("V_ACCVGPR_READ", "b32", "b32")(lambda a: a)
    op("V_ACCVGPR_MOV_B32", "b32", "b32")(lambda a: a)
    t["V_READLANE_B32"] = VOp("readlane", "b32", ("b32", "u32"), lambda a: a)
    t["V_READFIRSTLANE_B32"] = VOp("readfirstlane", "b32", ("b32",), lambda a: a)
    t["V_WRITELANE_B32"] = VOp("writelane", "b32", ("b32", "u32"), lambda a: a)
    t["V_CNDMASK_B32"] = VOp("cndmask", "b32", ("b32", "b32"), lambda a: a)
    t["V_SWAP_B32"] = VOp("swap", "b32", ("b32",), lambda a: a)  # bound.lane_steps.swap
    t["V_PK_MOV_B32"] = VOp("pk_mov", "b64", ("b64", "b64"), lambda a: a)
    for name, (_, n, fn) in PK16.items():
        t[name] = VOp("pk16", "b32", ("b32",) * n, fn)
    op("V_NOP", "", )(lambda: None)
    return t


def _int32_ops() -> dict[str, VOp]:
    """32-bit integer arithmetic, logic, shifts, multiplies and bit fields."""
    t: dict[str, VOp] = {}
    op = _registrar(t)
    op("V_ADD_U32", "u32", "u32", "u32")(lambda a, b: a + b)
    op("V_SUB_U32", "u32", "u32", "u32")(lambda a, b: a - b)
    op("V_SUBREV_U32", "u32", "u32", "u32")(lambda a, b: b - a)
    op("V_ADD_I32", "i32", "i32", "i32")(lambda a, b: a + b)
    op("V_SUB_I32", "i32", "i32", "i32")(lambda a, b: a - b)
    op("V_ADD3_U32", "u32", "u32", "u32", "u32")(lambda a, b, c: a + b + c)
    op("V_AND_B32", "b32", "b32", "b32")(lambda a, b: a & b)
    op("V_OR_B32", "b32", "b32", "b32")(lambda a, b: a | b)
    op("V_XOR_B32", "b32", "b32", "b32")(lambda a, b: a ^ b)
    op("V_XNOR_B32", "b32", "b32", "b32")(lambda a, b: ~(a ^ b))
    op("V_NOT_B32", "b32", "b32")(lambda a: ~a)
    op("V_OR3_B32", "b32", "b32", "b32", "b32")(lambda a, b, c: a | b | c)
    op("V_AND_OR_B32", "b32", "b32", "b32", "b32")(lambda a, b, c: (a & b) | c)
    op("V_XAD_U32", "u32", "u32", "u32", "u32")(lambda a, b, c: (a ^ b) + c)
    op("V_LSHLREV_B32", "b32", "u32", "b32")(lambda a, b: b << _sh(a, 32))
    op("V_LSHRREV_B32", "b32", "u32", "b32")(lambda a, b: b >> _sh(a, 32))
    op("V_ASHRREV_I32", "i32", "u32", "i32")(lambda a, b: b >> _sh(a, 32).astype(I32))
    op("V_LSHL_ADD_U32", "u32", "u32", "u32", "u32")(lambda a, b, c: (a << _sh(b, 32)) + c)
    op("V_ADD_LSHL_U32", "u32", "u32", "u32", "u32")(lambda a, b, c: (a + b) << _sh(c, 32))
    op("V_LSHL_OR_B32", "b32", "b32", "u32", "b32")(lambda a, b, c: (a << _sh(b, 32)) | c)
    op("V_MUL_LO_U32", "u32", "u32", "u32")(lambda a, b: a * b)
    op("V_MUL_HI_U32", "u32", "u32", "u32")(_mulhi_u32)
    op("V_MUL_HI_I32", "u32", "i32", "i32")(_mulhi_i32)
    op("V_MUL_U32_U24", "u32", "u32", "u32")(lambda a, b: _u24(a) * _u24(b))
    op("V_MUL_HI_U32_U24", "u32", "u32", "u32")(
        lambda a, b: ((_u24(a).astype(U64) * _u24(b).astype(U64)) >> U64(32)).astype(U32))
    op("V_MUL_I32_I24", "u32", "u32", "u32")(lambda a, b: (_i24(a) * _i24(b)).astype(U32))
    op("V_MUL_HI_I32_I24", "u32", "u32", "u32")(
        lambda a, b: ((_i24(a) * _i24(b)) >> 32).astype(U32))
    op("V_MAD_U32_U24", "u32", "u32", "u32", "u32")(lambda a, b, c: _u24(a) * _u24(b) + c)
    op("V_MAD_I32_I24", "u32", "u32", "u32", "u32")(
        lambda a, b, c: (_i24(a) * _i24(b) + c.astype(I32).astype(I64)).astype(U32))
    op("V_MIN_U32", "u32", "u32", "u32")(np.minimum)
    op("V_MAX_U32", "u32", "u32", "u32")(np.maximum)
    op("V_MIN_I32", "i32", "i32", "i32")(np.minimum)
    op("V_MAX_I32", "i32", "i32", "i32")(np.maximum)
    op("V_MIN3_U32", "u32", "u32", "u32", "u32")(_minmax3(np.minimum))
    op("V_MAX3_U32", "u32", "u32", "u32", "u32")(_minmax3(np.maximum))
    op("V_MIN3_I32", "i32", "i32", "i32", "i32")(_minmax3(np.minimum))
    op("V_MAX3_I32", "i32", "i32", "i32", "i32")(_minmax3(np.maximum))
    op("V_MED3_U32", "u32", "u32", "u32", "u32")(_med3)
    op("V_MED3_I32", "i32", "i32", "i32", "i32")(_med3)
    op("V_BFE_U32", "u32", "u32", "u32", "u32")(_bfe_u)
    op("V_BFE_I32", "i32", "u32", "u32", "u32")(_bfe_i)
    op("V_BFI_B32", "b32", "b32", "b32", "b32")(lambda a, b, c: (a & b) | (~a & c))
    op("V_BFM_B32", "b32", "u32", "u32")(
        lambda a, b: (((U64(1) << _sh(a, 32).astype(U64)) - U64(1)).astype(U32)
                      << _sh(b, 32)))
    op("V_ALIGNBIT_B32", "b32", "b32", "b32", "u32")(
        lambda a, b, c: (((a.astype(U64) << U64(32)) | b.astype(U64))
                         >> _sh(c, 32).astype(U64)).astype(U32))
    op("V_ALIGNBYTE_B32", "b32", "b32", "b32", "u32")(
        lambda a, b, c: (((a.astype(U64) << U64(32)) | b.astype(U64))
                         >> (U64(8) * (c & U32(3)).astype(U64))).astype(U32))
    op("V_PERM_B32", "b32", "b32", "b32", "b32")(_perm)
    op("V_BCNT_U32_B32", "u32", "b32", "u32")(lambda a, b: _popcount(a) + b)
    op("V_FFBH_U32", "u32", "b32")(_ffbh)
    op("V_FFBL_B32", "u32", "b32")(_ffbl)
    op("V_FFBH_I32", "u32", "i32")(_ffbh_i32)
    op("V_BFREV_B32", "b32", "b32")(_brev)
    op("V_SAD_U32", "u32", "u32", "u32", "u32")(
        lambda a, b, c: np.where(a > b, a - b, b - a) + c)
    t["V_MBCNT_LO_U32_B32"] = VOp("mbcnt_lo", "u32", ("u32", "u32"), lambda a: a)
    t["V_MBCNT_HI_U32_B32"] = VOp("mbcnt_hi", "u32", ("u32", "u32"), lambda a: a)
    return t


def _carry_ops() -> dict[str, VOp]:
    """Add/subtract with carry out (to VCC or an SGPR pair) and in, and the 64-bit
    multiply-adds with a carry out."""
    t: dict[str, VOp] = {}

    # in uint32, 2-5 numpy operations instead of 5-8 through 64 bits: a wrapped sum is below
    # an addend exactly when it carried, a difference borrowed exactly when the subtrahend
    # was larger, and adding (subtracting) the carry-in wraps only where the first step did
    # not (0-d arrays, as the binders pass uniform sources, wrap without overflow warnings)
    def add_co(a, b, cin=None):
        a, b = np.asarray(a, U32), np.asarray(b, U32)
        r = a + b
        if cin is None:
            return r, r < a
        r2 = r + np.asarray(cin, bool)
        return r2, (r < a) | (r2 < r)

    def sub_co(a, b, cin=None):
        a, b = np.asarray(a, U32), np.asarray(b, U32)
        r = a - b
        if cin is None:
            return r, a < b
        c = np.asarray(cin, bool)
        return r - c, (a < b) | (r < c)

    t["V_ADD_CO_U32"] = VOp("carry_out", "u32", ("u32", "u32"), add_co)
    t["V_SUB_CO_U32"] = VOp("carry_out", "u32", ("u32", "u32"), sub_co)
    t["V_SUBREV_CO_U32"] = VOp("carry_out", "u32", ("u32", "u32"),
                               lambda a, b: sub_co(b, a))
    t["V_ADDC_CO_U32"] = VOp("carry_in", "u32", ("u32", "u32"), add_co)
    t["V_SUBB_CO_U32"] = VOp("carry_in", "u32", ("u32", "u32"), sub_co)
    t["V_SUBBREV_CO_U32"] = VOp("carry_in", "u32", ("u32", "u32"),
                                lambda a, b, c: sub_co(b, a, c))

    def mad_u64(a, b, c):
        p = a.astype(U64) * b.astype(U64)
        s = p + c
        return s, s < p

    def mad_i64(a, b, c):
        p = a.astype(I64) * b.astype(I64)
        s = (p.view(U64) + c.view(U64)).view(I64)
        # signed overflow of the 64-bit sum is the carry-out of the pseudocode's 65-bit form
        ovf = ((p >= 0) == (c >= 0)) & ((s >= 0) != (p >= 0))
        return s, ovf

    t["V_MAD_U64_U32"] = VOp("mad64", "u64", ("u32", "u32", "u64"), mad_u64)
    t["V_MAD_I64_I32"] = VOp("mad64", "i64", ("i32", "i32", "i64"), mad_i64)
    return t


def _int64_ops() -> dict[str, VOp]:
    """64-bit shifts."""
    t: dict[str, VOp] = {}
    op = _registrar(t)
    op("V_LSHLREV_B64", "b64", "u32", "b64")(lambda a, b: b << _amount(a, 63, U64))
    op("V_LSHRREV_B64", "b64", "u32", "b64")(lambda a, b: b >> _amount(a, 63, U64))
    op("V_ASHRREV_I64", "i64", "u32", "i64")(lambda a, b: b >> _amount(a, 63, I64))
    op("V_LSHL_ADD_U64", "u64", "u64", "u32", "u64")(
        lambda a, b, c: (a << _amount(b, 7, U64)) + c)
    return t


def _int16_ops() -> dict[str, VOp]:
    """16-bit integer operations."""
    t: dict[str, VOp] = {}
    op = _registrar(t)

    # 16-bit integer (gfx9: the high half of the destination is zeroed)
    op("V_ADD_U16", "u16", "u16", "u16")(lambda a, b: a + b)
    op("V_SUB_U16", "u16", "u16", "u16")(lambda a, b: a - b)
    op("V_SUBREV_U16", "u16", "u16", "u16")(lambda a, b: b - a)
    op("V_MUL_LO_U16", "u16", "u16", "u16")(lambda a, b: a * b)
    op("V_LSHLREV_B16", "u16", "u16", "u16")(lambda a, b: b << _sh16(a))
    op("V_LSHRREV_B16", "u16", "u16", "u16")(lambda a, b: b >> _sh16(a))
    op("V_ASHRREV_I16", "i16", "u16", "i16")(lambda a, b: b >> _sh16(a).astype(np.int16))
    op("V_MAX_U16", "u16", "u16", "u16")(np.maximum)
    op("V_MIN_U16", "u16", "u16", "u16")(np.minimum)
    op("V_MAX_I16", "i16", "i16", "i16")(np.maximum)
    op("V_MIN_I16", "i16", "i16", "i16")(np.minimum)
    op("V_MAD_U16", "u16", "u16", "u16", "u16")(lambda a, b, c: a * b + c)
    op("V_MAD_LEGACY_U16", "u16", "u16", "u16", "u16")(lambda a, b, c: a * b + c)
    op("V_MAD_LEGACY_I16", "i16", "i16", "i16", "i16")(lambda a, b, c: a * b + c)
    op("V_AND_B16", "b16", "b16", "b16")(lambda a, b: a & b)
    op("V_OR_B16", "b16", "b16", "b16")(lambda a, b: a | b)
    op("V_XOR_B16", "b16", "b16", "b16")(lambda a, b: a ^ b)
    op("V_NOT_B16", "b16", "b16")(lambda a: ~a)
    op("V_MUL_LO_U16", "u16", "u16", "u16")(lambda a, b: a * b)
    op("V_MAD_U16", "u16", "u16", "u16", "u16")(lambda a, b, c: a * b + c)
    op("V_MAD_I16", "i16", "i16", "i16", "i16")(lambda a, b, c: a * b + c)
    # GFX9 VOP3 (CDNA3 ISA: D.i16 = v_min_i16(v_min_i16(S0, S1), S2), med3 the middle one).
    # D[31:16] is zeroed as by V_MIN_I16/V_MAX_I16 on GFX9, which LLVM lists as zeroing
    # (`GCNSubtarget::zeroesHigh16BitsOfDest`, "derived from experimentation"); it does not
    # list these, so LLVM assumes nothing of those bits and correct code never reads them.
    op("V_MIN3_I16", "i16", "i16", "i16", "i16")(_minmax3(np.minimum))
    op("V_MAX3_I16", "i16", "i16", "i16", "i16")(_minmax3(np.maximum))
    op("V_MED3_I16", "i16", "i16", "i16", "i16")(_med3)
    op("V_MIN3_U16", "u16", "u16", "u16", "u16")(_minmax3(np.minimum))
    op("V_MAX3_U16", "u16", "u16", "u16", "u16")(_minmax3(np.maximum))
    op("V_MED3_U16", "u16", "u16", "u16", "u16")(_med3)
    return t


def _f32_ops() -> dict[str, VOp]:
    """Single-precision float operations."""
    t: dict[str, VOp] = {}
    op = _registrar(t)
    op("V_ADD_F32", "f32", "f32", "f32")(lambda a, b: a + b)
    op("V_SUB_F32", "f32", "f32", "f32")(lambda a, b: a - b)
    op("V_SUBREV_F32", "f32", "f32", "f32")(lambda a, b: b - a)
    op("V_MUL_F32", "f32", "f32", "f32")(lambda a, b: a * b)
    op("V_FMA_F32", "f32", "f32", "f32", "f32")(fp.fma32)
    t["V_FMAC_F32"] = VOp("fmac", "f32", ("f32", "f32", "f32"), fp.fma32)
    op("V_FMAMK_F32", "f32", "f32", "f32", "f32")(lambda a, k, b: fp.fma32(a, k, b))
    op("V_FMAAK_F32", "f32", "f32", "f32", "f32")(fp.fma32)
    op("V_MIN_F32", "f32", "f32", "f32", mode=True)(vf.fmin)
    op("V_MAX_F32", "f32", "f32", "f32", mode=True)(vf.fmax)
    # RDNA3 VOP3 (RDNA3 ISA pseudocode: V_MAXMIN_F32 D = v_min_f32(v_max_f32(S0, S1), S2);
    # V_MINMAX_F32 the other way round), with V_MIN/V_MAX's NaN rules at each step
    op("V_MAXMIN_F32", "f32", "f32", "f32", "f32", mode=True)(
        lambda ieee, a, b, c: vf.fmin(ieee, vf.fmax(ieee, a, b), c))
    op("V_MINMAX_F32", "f32", "f32", "f32", "f32", mode=True)(
        lambda ieee, a, b, c: vf.fmax(ieee, vf.fmin(ieee, a, b), c))
    op("V_MIN3_F32", "f32", "f32", "f32", "f32", mode=True)(vf.fmin3)
    op("V_MAX3_F32", "f32", "f32", "f32", "f32", mode=True)(vf.fmax3)
    op("V_MED3_F32", "f32", "f32", "f32", "f32", mode=True)(vf.fmed3)
    op("V_RCP_F32", "f32", "f32")(vf.recip)
    op("V_RCP_IFLAG_F32", "f32", "f32")(vf.recip)
    op("V_RSQ_F32", "f32", "f32")(vf.rsq)
    op("V_SQRT_F32", "f32", "f32")(np.sqrt)
    op("V_TRUNC_F32", "f32", "f32")(np.trunc)
    op("V_CEIL_F32", "f32", "f32")(np.ceil)
    op("V_FLOOR_F32", "f32", "f32")(np.floor)
    op("V_RNDNE_F32", "f32", "f32")(np.rint)
    op("V_FRACT_F32", "f32", "f32")(vf.fract)
    op("V_EXP_F32", "f32", "f32")(np.exp2)
    op("V_LOG_F32", "f32", "f32")(np.log2)
    op("V_LDEXP_F32", "f32", "f32", "i32")(vf.ldexp)
    op("V_FREXP_EXP_I32_F32", "i32", "f32")(vf.frexp_exp)
    op("V_FREXP_MANT_F32", "f32", "f32")(vf.frexp_mant)
    op("V_DIV_FIXUP_F32", "f32", "f32", "f32", "f32")(vf.div_fixup)
    t["V_DIV_SCALE_F32"] = VOp("div_scale", "f32", ("f32", "f32", "f32"), vf.div_scale)
    t["V_DIV_FMAS_F32"] = VOp("div_fmas", "f32", ("f32", "f32", "f32"), vf.div_fmas)
    return t


def _f64_ops() -> dict[str, VOp]:
    """Double-precision float operations."""
    t: dict[str, VOp] = {}
    op = _registrar(t)
    op("V_ADD_F64", "f64", "f64", "f64")(lambda a, b: a + b)
    op("V_MUL_F64", "f64", "f64", "f64")(lambda a, b: a * b)
    op("V_FMA_F64", "f64", "f64", "f64", "f64")(fp.fma64)
    t["V_FMAC_F64"] = VOp("fmac", "f64", ("f64", "f64", "f64"), fp.fma64)
    op("V_MIN_F64", "f64", "f64", "f64", mode=True)(vf.fmin)
    op("V_MAX_F64", "f64", "f64", "f64", mode=True)(vf.fmax)
    op("V_RCP_F64", "f64", "f64")(vf.recip)
    op("V_RSQ_F64", "f64", "f64")(vf.rsq)
    op("V_SQRT_F64", "f64", "f64")(np.sqrt)
    op("V_TRUNC_F64", "f64", "f64")(np.trunc)
    op("V_CEIL_F64", "f64", "f64")(np.ceil)
    op("V_FLOOR_F64", "f64", "f64")(np.floor)
    op("V_RNDNE_F64", "f64", "f64")(np.rint)
    op("V_FRACT_F64", "f64", "f64")(vf.fract)
    op("V_LDEXP_F64", "f64", "f64", "i32")(vf.ldexp)
    op("V_FREXP_EXP_I32_F64", "i32", "f64")(vf.frexp_exp)
    op("V_FREXP_MANT_F64", "f64", "f64")(vf.frexp_mant)
    op("V_DIV_FIXUP_F64", "f64", "f64", "f64", "f64")(vf.div_fixup)
    t["V_DIV_SCALE_F64"] = VOp("div_scale", "f64", ("f64", "f64", "f64"), vf.div_scale)
    t["V_DIV_FMAS_F64"] = VOp("div_fmas", "f64", ("f64", "f64", "f64"), vf.div_fmas)
    return t


def _cvt_ops() -> dict[str, VOp]:
    """Conversions between integer and float types and float widths."""
    t: dict[str, VOp] = {}
    op = _registrar(t)
    op("V_CVT_F32_I32", "f32", "i32")(lambda a: a.astype(F32))
    op("V_CVT_F32_U32", "f32", "u32")(lambda a: a.astype(F32))
    op("V_CVT_I32_F32", "i32", "f32")(lambda a: _f2i(a, -2**31, 2**31 - 1, I32))
    op("V_CVT_U32_F32", "u32", "f32")(lambda a: _f2i(a, 0, 2**32 - 1, U32))
    op("V_CVT_F64_I32", "f64", "i32")(lambda a: a.astype(F64))
    op("V_CVT_F64_U32", "f64", "u32")(lambda a: a.astype(F64))
    op("V_CVT_I32_F64", "i32", "f64")(lambda a: _f2i(a, -2**31, 2**31 - 1, I32))
    op("V_CVT_U32_F64", "u32", "f64")(lambda a: _f2i(a, 0, 2**32 - 1, U32))
    op("V_CVT_F32_F64", "f32", "f64")(vf.f64_to_f32)
    op("V_CVT_F64_F32", "f64", "f32")(lambda a: a.astype(F64))
    for k in range(4):
        op(f"V_CVT_F32_UBYTE{k}", "f32", "u32")(_cvt_ubyte(k))
    op("V_CVT_F32_F16", "f32", "f16")(lambda a: a.astype(F32))
    op("V_CVT_F16_F32", "f16", "f32")(lambda a: a.astype(np.float16))
    op("V_CVT_U16_F16", "u16", "f16")(lambda a: _f2i(a, 0, 65535, np.uint16))
    op("V_CVT_I16_F16", "i16", "f16")(lambda a: _f2i(a, -32768, 32767, np.int16))
    return t


def _half_ops() -> dict[str, VOp]:
    """binary16 rows (`semantics.f16`) and the packed float rows (`semantics.packed`,
    bound by `bound.packed`)."""
    t = {name: VOp(shape, dst, src, fn, mode)
         for name, (shape, dst, src, fn, mode) in F16_OPS.items()}
    for name, (n, fn, mode) in PKF16.items():
        t[name] = VOp("pk16", "b32", ("b32",) * n, fn, mode)
    for name, (n, _) in PKF32.items():
        t[name] = VOp("pkf32", "b64", ("b64",) * n, lambda *a: a)
    for name in ("V_FMA_MIX_F32", "V_MAD_MIX_F32"):
        t[name] = VOp("fma_mix", "f32", ("f32",) * 3, lambda *a: a)
    for name, (shape, dst, src, fn) in INT16_OPS.items():
        t[name] = VOp(shape, dst, src, fn)
    return t


def _table() -> dict[str, VOp]:
    t: dict[str, VOp] = {}
    with np.errstate(all="ignore"):  # float ops report IEEE results, never numpy warnings
        for family in (_move_ops, _int32_ops, _carry_ops, _int64_ops, _int16_ops, _f32_ops,
                       _f64_ops, _cvt_ops, _cmp_ops):
            t.update(family())
        for name, (shape, dst, src, fn) in {**MAD_OPS, **RDNA3_OPS, **CDNA4_OPS,
                                          **RDNA4_OPS}.items():
            t[name] = VOp(shape, dst, src, fn)
        t.update(_half_ops())
    return t



VALU: dict[str, VOp] = _table()
"""Every vector ALU opcode the simulator implements, by AMD name."""

INT_CLAMP: dict[str, object] = {
    "V_ADD_U32": lambda a, b: np.minimum(a.astype(U64) + b, 0xFFFF_FFFF).astype(U32),
    "V_SUB_U32": lambda a, b: np.where(b > a, 0, a - b).astype(U32),
    "V_SUBREV_U32": lambda a, b: np.where(a > b, 0, b - a).astype(U32),
    "V_ADD_I32": lambda a, b: np.clip(a.astype(I64) + b, -2**31, 2**31 - 1).astype(I32),
    "V_SUB_I32": lambda a, b: np.clip(a.astype(I64) - b, -2**31, 2**31 - 1).astype(I32),
    "V_ADD_U16": lambda a, b: np.minimum(a.astype(U32) + b, 0xFFFF).astype(np.uint16),
    "V_SUB_U16": lambda a, b: np.where(b > a, 0, a - b).astype(np.uint16),
    **INT16_CLAMP,
}
"""With the `clamp` modifier an integer add/subtract saturates (CDNA3 ISA §6.2 "clamp":
unsigned results to [0, 2**n - 1], signed to [-2**(n-1), 2**(n-1) - 1])."""
