"""VOP3P packed 16-bit integer operations (GFX9: gfx90a, gfx942): two 16-bit results in one
VGPR, D[15:0] from the sources' halves that op_sel picks and D[31:16] from those op_sel_hi
picks (CDNA3 ISA, VOP3P: for source k, bit k of OPSEL selects S[31:16] instead of S[15:0]
for the low result, bit k of OPSEL_HI the same for the high one; pseudocode of
V_PK_LSHLREV_B16: `tmp[31:16] = S1[31:16] << S0[19:16]; tmp[15:0] = S1[15:0] << S0[3:0]`).
LLVM's O3 code uses them for pairs of 8/16-bit values (session 9's second campaign met
`v_pk_add_u16 v15, s40, 4 op_sel_hi:[1,0]` and `v_pk_sub_i16`).

A constant source is its 32-bit value, halves picked as for a register: `4` read with
OPSEL_HI = 1 gives 0 for the high result, which is why LLVM writes `op_sel_hi:[1,0]` to use
a small constant in both halves (inferred from LLVM's encoding, not from a document). Not
modelled, and so unsupported: the clamp bit (saturating add/sub), the NEG bits, a float
inline constant, and the packed f16/f32 operations.

Definedness: each result half is defined where the source halves it reads are
(`halves.bits_defined`), and a partly defined result keeps its defined half (`write_bits`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.halves import FULL, HIGH, LOW, bits_defined, write_bits
from rgpu_fuzz.sim.inst import Inst, OpKind
from rgpu_fuzz.sim.operands import Env, const_bits, hazard, vcol, vector_source
from rgpu_fuzz.sim.wave import Wave

U16, I16, U32 = np.uint16, np.int16, np.uint32


def _shift(x: np.ndarray) -> np.ndarray:
    return x & U16(15)


PK16: dict[str, tuple[bool, int, Callable[..., np.ndarray]]] = {
    "V_PK_ADD_U16": (False, 2, lambda a, b: a + b),
    "V_PK_SUB_U16": (False, 2, lambda a, b: a - b),
    "V_PK_ADD_I16": (True, 2, lambda a, b: a + b),
    "V_PK_SUB_I16": (True, 2, lambda a, b: a - b),
    "V_PK_MUL_LO_U16": (False, 2, lambda a, b: a * b),
    "V_PK_LSHLREV_B16": (False, 2, lambda a, b: b << _shift(a)),
    "V_PK_LSHRREV_B16": (False, 2, lambda a, b: b >> _shift(a)),
    "V_PK_ASHRREV_I16": (True, 2, lambda a, b: b >> _shift(a.view(U16)).astype(I16)),
    "V_PK_MAX_I16": (True, 2, np.maximum),
    "V_PK_MIN_I16": (True, 2, np.minimum),
    "V_PK_MAX_U16": (False, 2, np.maximum),
    "V_PK_MIN_U16": (False, 2, np.minimum),
    "V_PK_MAD_U16": (False, 3, lambda a, b, c: a * b + c),
    "V_PK_MAD_I16": (True, 3, lambda a, b, c: a * b + c),
}
"""Opcode → (signed, sources, the operation on one half of each source, wrapping)."""


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
