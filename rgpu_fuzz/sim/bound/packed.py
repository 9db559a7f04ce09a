"""The bound steps of VOP3P packed operations: 16-bit integer and binary16 pairs in one VGPR
(`bind_pk16`), binary32 pairs in a VGPR pair (`bind_pkf32`, gfx90a/gfx942), and the mixed
f16/f32 fused multiply-add V_FMA_MIX_F32 (`bind_fma_mix`). What each computes, and the
sources of those rules, is `rgpu_fuzz.sim.semantics.packed` (and `semantics.f16`).

Definedness: each result half is defined where the source halves (dwords) it reads are
(`halves.bits_defined`), and a partly defined result keeps its defined half (`write_bits`;
a pair's dwords are tracked per column).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import (
    Env,
    hazard,
    scalar_bits_source,
    vcol,
    vector_dest,
    vector_source,
)
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics import fp
from rgpu_fuzz.sim.semantics.packed import I16, PK16, PK16_CLAMP, PKF16, PKF32, U16, U32
from rgpu_fuzz.sim.state.halves import FULL, HIGH, LOW, bits_defined, write_bits
from rgpu_fuzz.sim.state.wave import Wave

F16, F32, F64 = np.float16, np.float32, np.float64

_F32_INLINE = {0x3F00_0000, 0xBF00_0000, 0x3F80_0000, 0xBF80_0000, 0x4000_0000, 0xC000_0000,
               0x4080_0000, 0xC080_0000, 0x3E22_F983}
"""The binary32 inline float constants (±0.5, ±1, ±2, ±4, 1/(2π)) as the decoder gives a
32-bit operand's: the same codes in a packed f16 operand are their binary16 values."""
_F64_INLINE = {0x3FE0_0000_0000_0000: 0x3F00_0000, 0xBFE0_0000_0000_0000: 0xBF00_0000,
               0x3FF0_0000_0000_0000: 0x3F80_0000, 0xBFF0_0000_0000_0000: 0xBF80_0000,
               0x4000_0000_0000_0000: 0x4000_0000, 0xC000_0000_0000_0000: 0xC000_0000,
               0x4010_0000_0000_0000: 0x4080_0000, 0xC010_0000_0000_0000: 0xC080_0000,
               0x3FC4_5F30_6DC9_C882: 0x3E22_F983}
"""A 64-bit operand's inline float constants → the binary32 bits a packed f32 operation
reads in its low dword (`semantics.packed`)."""


def _const32(o: Opnd, f16: bool) -> int:
    """The 32-bit value a constant source of a packed 16-bit operation reads."""
    if o.kind is OpKind.FLOAT:
        if not f16:
            raise ValueError("a float inline constant in a packed integer operation")
        return int(np.array(o.fvalue, F16).view(U16))
    v = o.value & 0xFFFF_FFFF
    if f16 and not o.literal and v in _F32_INLINE:
        return int(np.array(v, U32).view(F32).astype(F16).view(U16))
    return v


def _sources16(ops: tuple[Opnd, ...], env: Env, f16: bool) -> list[Any]:
    """Per source: ("const", low half, high half) or (kind, value getter, ...) with the
    half each result reads and its definedness."""
    sources: list[tuple[Any, ...]] = []
    for o in ops:
        if not f16 and (o.neg or getattr(o, "neg_hi", False)):
            raise ValueError("NEG bits on a packed integer operation")
        lo_hi, hi_hi = bool(getattr(o, "hi", False)), not getattr(o, "lo_hi", False)
        if o.kind in (OpKind.INT, OpKind.BITS, OpKind.FLOAT):
            v = _const32(o, f16)
            sources.append(("const", U16((v >> 16) if lo_hi else v & 0xFFFF),
                            U16((v >> 16) if hi_hi else v & 0xFFFF)))
            continue
        get, defined = vector_source(Opnd(o.kind, o.index, o.count), "b32", env)
        if o.kind in (OpKind.VGPR, OpKind.AGPR):
            sources.append(("vgpr", get, vcol(o), HIGH if lo_hi else LOW,
                            HIGH if hi_hi else LOW, lo_hi, hi_hi))
        else:
            sources.append(("sgpr", get, defined, lo_hi, hi_hi))
    return sources


def _read16(w: Wave, sources: list[Any]) -> tuple[list[Any], list[Any], Any, Any]:
    """The low-result and high-result halves of every source (uint16) and the lanes where
    each result's halves are all defined."""
    lows: list[Any] = []
    highs: list[Any] = []
    dlo: Any = True
    dhi: Any = True
    for s in sources:
        if s[0] == "const":
            lows.append(s[1])
            highs.append(s[2])
            continue
        raw = np.asarray(s[1](w), U32)
        if s[0] == "vgpr":
            _, _, col, mlo, mhi, lo_hi, hi_hi = s
            dlo = dlo & bits_defined(w, col, mlo)
            dhi = dhi & bits_defined(w, col, mhi)
        else:
            _, _, defined, lo_hi, hi_hi = s
            d = defined(w)
            dlo, dhi = dlo & d, dhi & d
        lows.append(((raw >> U32(16)) if lo_hi else raw).astype(U16))
        highs.append(((raw >> U32(16)) if hi_hi else raw).astype(U16))
    return lows, highs, dlo, dhi


def _float_fn(inst: Inst, env: Env, ops: tuple[Opnd, ...]) -> tuple[Callable[..., Any],
                                                                      Callable[..., Any]]:
    """The low-result and high-result functions of a packed f16 row on uint16 halves:
    NEG / NEG_HI applied to each source's half, the row's operation, CLAMP."""
    _, fn, mode = PKF16[inst.opcode]
    if mode:
        ieee = env.ieee
        fn = (lambda f: lambda *a: f(ieee, *a))(fn)
    clamp = bool(inst.mods.get("clamp"))

    def make(negs: list[bool]) -> Callable[..., Any]:
        sign = [U16(0x8000) if neg else U16(0) for neg in negs]

        def half(*xs: Any) -> Any:
            vals = [(np.asarray(x, U16) ^ s).view(F16) for x, s in zip(xs, sign, strict=True)]
            r = np.asarray(fn(*vals), F16)
            if clamp:
                r = np.where(np.isnan(r), F16(0), np.clip(r, F16(0), F16(1))).astype(F16)
            return r.view(U16)
        return half
    return (make([bool(o.neg) for o in ops]),
            make([bool(getattr(o, "neg_hi", False)) for o in ops]))


def bind_pk16(inst: Inst, spec: Any, env: Env) -> Callable[[Wave], None]:
    """The bound step of a packed 16-bit integer (`PK16`) or binary16 (`PKF16`) operation."""
    f16 = inst.opcode in PKF16
    n = PKF16[inst.opcode][0] if f16 else PK16[inst.opcode][1]
    ops = inst.operands
    if len(ops) != n + 1 or ops[0].kind is not OpKind.VGPR:
        raise ValueError(f"{len(ops)} operands, packed op takes {n} sources and a VGPR")
    if f16:
        if env.flush64:
            raise ValueError(_F16_FLUSH)
        lo_fn, hi_fn = _float_fn(inst, env, ops[1:])
        dtype: Any = U16
    else:
        signed, _, fn = PK16[inst.opcode]
        dtype = I16 if signed else U16
        if inst.mods.get("clamp"):
            if inst.opcode not in PK16_CLAMP:
                raise ValueError("clamp on a packed integer operation other than add/sub")
            fn = PK16_CLAMP[inst.opcode]
        lo_fn = hi_fn = fn
    sources = _sources16(ops[1:], env, f16)
    dst = vcol(ops[0])

    def step(w: Wave) -> None:
        lows, highs, dlo, dhi = _read16(w, sources)
        with np.errstate(over="ignore"):
            lo = lo_fn(*(np.asarray(x, U16).view(dtype) for x in lows))
            hi = hi_fn(*(np.asarray(x, U16).view(dtype) for x in highs))
        value = np.asarray(lo).astype(U16).astype(U32) | \
            (np.asarray(hi).astype(U16).astype(U32) << U32(16))
        defined_bits = np.where(dlo, U32(LOW), U32(0)) | np.where(dhi, U32(HIGH), U32(0))
        if w.pend_v and dst in w.pend_v:
            raise hazard(w, f"v{dst} written before its load completed")
        write_bits(w, dst, np.broadcast_to(value, (w.lanes,)),
                   np.broadcast_to(defined_bits, (w.lanes,)), FULL,
                   None if w.exec_full else w.exec)
    return step


_F16_FLUSH = ("FLOAT_DENORM_MODE_16_64 flushes binary16 denormals: f16 flushing is not "
              "modelled")


def _dword_source(o: Opnd, env: Env) -> tuple[Callable[[Wave, bool], Any],
                                               Callable[[Wave, bool], Any]]:
    """(value, defined) of dword 0 or 1 (the argument) of a 64-bit packed f32 source."""
    if o.kind in (OpKind.INT, OpKind.BITS, OpKind.FLOAT):
        if o.kind is OpKind.FLOAT:
            lo = int(np.array(o.fvalue, F32).view(U32))
        elif not o.literal and o.value in _F64_INLINE:
            lo = _F64_INLINE[o.value]
        else:
            lo = o.value & 0xFFFF_FFFF
        zero = lo == 0

        def const(w: Wave, hi: bool) -> Any:
            if hi and not zero:
                raise ValueError("reading the high dword of a constant")
            return U32(0 if hi else lo)
        return const, lambda w, hi: True
    if o.kind in (OpKind.VGPR, OpKind.AGPR):
        col = vcol(o)

        def vget(w: Wave, hi: bool) -> Any:
            c = col + int(hi)
            if w.pend_v and c in w.pend_v:
                raise hazard(w, f"v{c} read before the s_waitcnt covering its load")
            return w.V[:, c]
        return vget, lambda w, hi: w.vdef[:, col + int(hi)]
    if o.kind is OpKind.SGPR:
        get, dbits = scalar_bits_source(Opnd(o.kind, o.index, 2), 64, env)
        return ((lambda w, hi: U32((get(w) >> (32 * hi)) & 0xFFFF_FFFF)),
                (lambda w, hi: (dbits(w) >> (32 * hi)) & 0xFFFF_FFFF == 0xFFFF_FFFF))
    raise ValueError(f"operand {o} cannot be a packed f32 source")


def bind_pkf32(inst: Inst, spec: Any, env: Env) -> Callable[[Wave], None]:
    """V_PK_ADD_F32, V_PK_MUL_F32, V_PK_FMA_F32 (gfx90a, gfx942): each dword of the result
    from the dwords op_sel (low) and op_sel_hi (high) pick, NEG/NEG_HI per dword, CLAMP."""
    n, kind = PKF32[inst.opcode]
    ops = inst.operands
    if len(ops) != n + 1 or ops[0].kind is not OpKind.VGPR:
        raise ValueError(f"{len(ops)} operands, packed op takes {n} sources and a VGPR pair")
    for o in ops[1:]:
        if o.kind is OpKind.BITS and o.literal:
            raise ValueError("a literal in a packed f32 operation")
    srcs = [_dword_source(o, env) for o in ops[1:]]
    picks = [(bool(getattr(o, "hi", False)), not getattr(o, "lo_hi", False)) for o in ops[1:]]
    negs = [(bool(o.neg), bool(getattr(o, "neg_hi", False))) for o in ops[1:]]
    for o, (get, _), (plo, phi) in zip(ops[1:], srcs, picks, strict=True):
        if o.kind in (OpKind.INT, OpKind.BITS, OpKind.FLOAT):
            # a constant whose high dword would be read fails while binding
            get(None, plo)  # type: ignore[arg-type]
            get(None, phi)  # type: ignore[arg-type]
    clamp = bool(inst.mods.get("clamp"))
    flush = env.flush32
    put = vector_dest(ops[0], "b64", inst, env)

    def result(w: Wave, which: int) -> tuple[Any, Any]:
        vals, d = [], True
        for (get, defined), pick, neg in zip(srcs, picks, negs, strict=True):
            x = np.asarray(get(w, pick[which]), U32).view(F32)
            if flush:
                x = fp.flush(x)
            vals.append(-x if neg[which] else x)
            d = d & defined(w, pick[which])
        if kind == "add":
            r = vals[0] + vals[1]
        elif kind == "mul":
            r = vals[0] * vals[1]
        else:
            a, b, c = np.broadcast_arrays(*(np.atleast_1d(v) for v in vals))
            r = fp.fma32(a, b, c)
        r = np.asarray(r, F32)
        if clamp:
            r = np.where(np.isnan(r), F32(0), np.clip(r, F32(0), F32(1))).astype(F32)
        return r.view(U32), d

    def step(w: Wave) -> None:
        lo, dlo = result(w, 0)
        hi, dhi = result(w, 1)
        lo, hi = np.broadcast_arrays(lo, hi)
        put(w, lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32)), (dlo, dhi))
    return step


def bind_fma_mix(inst: Inst, spec: Any, env: Env) -> Callable[[Wave], None]:
    """V_FMA_MIX_F32 (LLVM's name on gfx90a/gfx942/gfx1100; V_MAD_MIX_F32 in the CDNA XML):
    each source is its binary32 value where OPSEL_HI[i] is clear, else the binary16 half
    OPSEL[i] picks, converted exactly (pseudocode: `if !OPSEL_HI.u3[i] then in[i] =
    S[i].f32 elsif OPSEL.u3[i] then in[i] = f16_to_f32(S[i][31 : 16].f16) else in[i] =
    f16_to_f32(S[i][15 : 0].f16)`); abs (the NEG_HI bits) then neg; D = fma(in0, in1, in2)
    rounded once to binary32 (LLVM selects the fused form on these targets); CLAMP [0, 1]."""
    ops = inst.operands
    if len(ops) != 4 or ops[0].kind is not OpKind.VGPR:
        raise ValueError(f"{len(ops)} operands, v_fma_mix_f32 takes 3 sources and a VGPR")
    if inst.mods.get("omod"):
        raise ValueError("omod on v_fma_mix_f32")
    if env.flush64 and any(not getattr(o, "lo_hi", False) for o in ops[1:]):
        raise ValueError(_F16_FLUSH)
    reads = []
    for o in ops[1:]:
        f16 = not getattr(o, "lo_hi", False)
        if o.kind in (OpKind.INT, OpKind.BITS, OpKind.FLOAT) and \
                not (o.kind is OpKind.BITS and not o.literal and o.value in _F32_INLINE):
            raise ValueError("a constant other than an inline float in v_fma_mix_f32")
        base = Opnd(o.kind, o.index, o.count, value=o.value, abs=o.abs, neg=o.neg,
                    literal=o.literal)
        if f16 and o.kind is OpKind.BITS:
            # an inline float is the same value at either width (its binary32 bits here)
            reads.append(vector_source(base, "f32", env))
        elif f16:
            hi = bool(getattr(o, "hi", False))
            g16, d = vector_source(_Half(base, hi), "f16", env)  # type: ignore[arg-type]
            reads.append((_widen(g16), d))
        else:
            reads.append(vector_source(base, "f32", env))
    put = vector_dest(ops[0], "f32", inst, env)
    clamp = bool(inst.mods.get("clamp"))
    (g0, d0), (g1, d1), (g2, d2) = reads

    def step(w: Wave) -> None:
        a, b, c = np.broadcast_arrays(*(np.atleast_1d(np.asarray(g(w), F32))
                                        for g in (g0, g1, g2)))
        r = fp.fma32(a, b, c)
        if clamp:
            r = np.where(np.isnan(r), F32(0), np.clip(r, F32(0), F32(1))).astype(F32)
        put(w, r, d0(w) & d1(w) & d2(w))
    return step


def _widen(g: Callable[[Wave], Any]) -> Callable[[Wave], Any]:
    """A binary16 source read as binary32 (f16_to_f32 is exact)."""
    return lambda w: np.asarray(g(w), F16).astype(F32)


class _Half:
    """An operand read as the binary16 half `hi` names (for `vector_source`)."""

    def __init__(self, base: Opnd, hi: bool) -> None:
        self.base, self.hi, self.sel, self.sext = base, hi, "", False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


__all__ = ["PK16", "bind_fma_mix", "bind_pk16", "bind_pkf32"]
