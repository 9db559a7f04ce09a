"""The bound steps of VOP3P packed 16-bit integer operations (GFX9: gfx90a, gfx942); what
each computes, and the sources of those rules, is `rgpu_fuzz.sim.semantics.packed`.

Definedness: each result half is defined where the source halves it reads are
(`halves.bits_defined`), and a partly defined result keeps its defined half (`write_bits`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env, const_bits, hazard, vcol, vector_source
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.semantics.packed import I16, PK16, U16, U32
from rgpu_fuzz.sim.state.halves import FULL, HIGH, LOW, bits_defined, write_bits
from rgpu_fuzz.sim.state.wave import Wave


def bind_pk16(inst: Inst, spec: Any, env: Env) -> Callable[[Wave], None]:
    """The bound step of a packed 16-bit integer operation (`PK16`)."""
    signed, n, fn = PK16[inst.opcode]
    ops = inst.operands
    if len(ops) != n + 1 or ops[0].kind is not OpKind.VGPR:
        raise ValueError(f"{len(ops)} operands, packed op takes {n} sources and a VGPR")
    if inst.mods.get("clamp"):
        raise ValueError("clamp on a packed integer operation (saturation) is not modelled")
    dtype = I16 if signed else U16
    sources: list[tuple[Any, ...]] = []
    for o in ops[1:]:
        if o.neg or getattr(o, "neg_hi", False):
            raise ValueError("NEG bits on a packed integer operation")
        lo_hi, hi_hi = bool(getattr(o, "hi", False)), not getattr(o, "lo_hi", False)
        if o.kind is OpKind.FLOAT:
            raise ValueError("a float inline constant in a packed integer operation")
        if o.kind in (OpKind.INT, OpKind.BITS):
            v = const_bits(o, "b32")
            sources.append(("const", U16((v >> 16) if lo_hi else v & 0xFFFF),
                            U16((v >> 16) if hi_hi else v & 0xFFFF)))
            continue
        get, defined = vector_source(o, "b32", env)
        if o.kind in (OpKind.VGPR, OpKind.AGPR):
            col = vcol(o)
            sources.append(("vgpr", get, col, HIGH if lo_hi else LOW, HIGH if hi_hi else LOW,
                            lo_hi, hi_hi))
        else:
            sources.append(("sgpr", get, defined, lo_hi, hi_hi))
    dst = vcol(ops[0])

    def step(w: Wave) -> None:
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
        with np.errstate(over="ignore"):
            lo = fn(*(np.asarray(x, U16).view(dtype) for x in lows))
            hi = fn(*(np.asarray(x, U16).view(dtype) for x in highs))
        value = np.asarray(lo).astype(U16).astype(U32) | \
            (np.asarray(hi).astype(U16).astype(U32) << U32(16))
        defined_bits = np.where(dlo, U32(LOW), U32(0)) | np.where(dhi, U32(HIGH), U32(0))
        if w.pend_v and dst in w.pend_v:
            raise hazard(w, f"v{dst} written before its load completed")
        write_bits(w, dst, np.broadcast_to(value, (w.lanes,)),
                   np.broadcast_to(defined_bits, (w.lanes,)), FULL,
                   None if w.exec_full else w.exec)
    return step


__all__ = ["PK16", "bind_pk16"]
