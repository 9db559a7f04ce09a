"""VOP3P packed 16-bit integer operations (GFX9: gfx90a, gfx942): two 16-bit results in one
VGPR, D[15:0] from the sources' halves that op_sel picks and D[31:16] from those op_sel_hi
picks (CDNA3 ISA, VOP3P: for source k, bit k of OPSEL selects S[31:16] instead of S[15:0]
for the low result, bit k of OPSEL_HI the same for the high one; pseudocode of
V_PK_LSHLREV_B16: `tmp[31:16] = S1[31:16] << S0[19:16]; tmp[15:0] = S1[15:0] << S0[3:0]`).
LLVM's O3 code uses them for pairs of 8/16-bit values (second campaign met
`v_pk_add_u16 v15, s40, 4 op_sel_hi:[1,0]` and `v_pk_sub_i16`), and the packed float forms
for `<2 x half>` (gfx90a, gfx942, gfx1100) and `<2 x float>` (gfx90a, gfx942) arithmetic.

Packed floats (pseudocode, AMD's ISA XML as tinygrad 0.14.0 carries it): V_PK_ADD_F16
`tmp[15 : 0].f16 = S0[15 : 0].f16 + S1[15 : 0].f16; tmp[31 : 16].f16 = S0[31 : 16].f16 +
S1[31 : 16].f16`, V_PK_MUL_F16, V_PK_FMA_F16 (`fma`), V_PK_MIN_F16/V_PK_MAX_F16 (`v_min_f16`
per half: `semantics.f16`), RDNA4's V_PK_MIN_NUM_F16/V_PK_MAX_NUM_F16 (RDNA4 ISA
guide, Table "Packed Math Opcodes": the renamed V_PK_MIN_F16/V_PK_MAX_F16, LLVM's
`v_pk_max_f16` alias of `v_pk_max_num_f16` at gfx12; `v_min_num_f16` per half:
`semantics.rdna4.min_num`, no IEEE mode); V_PK_ADD_F32 `tmp[31 : 0].f32 = S0[31 : 0].f32 +
S1[31 : 0].f32; tmp[63 : 32].f32 = S0[63 : 32].f32 + S1[63 : 32].f32`, V_PK_MUL_F32,
V_PK_FMA_F32, where
"S0[15 : 0]" is the half op_sel picks for the low result and "S0[31 : 16]" the one
op_sel_hi picks for the high result (CDNA3 and RDNA3 ISA guides, VOP3P encoding: OPSEL
selects the high half of source k for the low result, OPSEL_HI the same for the high one; a
dword of a register pair for the F32 forms). NEG (printed neg_lo) negates the low result's
source half, NEG_HI the high one's; CLAMP clamps each float result to [0, 1] (a NaN to +0,
as DX10_CLAMP = 1 VOP3 clamp, docs/simulator.md §7) and saturates an integer add or
subtract (`PK16_CLAMP`; CDNA3 ISA §6.2 "clamp" for integer operations).

A constant source is a 32-bit value, halves picked as for a register: an integer constant
its 32-bit value (`-1` is -1 in both halves, `4` read with OPSEL_HI = 1 gives 0 for the high
result, so LLVM writes `op_sel_hi:[1,0]` to use 4 in both halves), a float constant of a
packed f16 operation its binary16 bits in the low half and 0 in the high one. That is LLVM
22's model (not a document's): `fadd <2 x half> %a, <half 0.0, half 1.0>` is selected as
`v_pk_add_f16 v0, v0, 1.0 op_sel:[0,1] op_sel_hi:[1,0]`, `<half 1.0, half 0.0>` as plain
`1.0`. In a packed f32 operation a constant is the low dword (a float one its binary32
bits: `<float 1.0, float 1.0>` is `1.0 op_sel_hi:[1,0]`); its high dword is taken as 0 only
for the constant 0 (LLVM's `fneg <2 x float>` is `v_pk_add_f32 v, v, 0 neg_lo:[1,1]
neg_hi:[1,1]`, which reads it); reading another constant's high dword is unsupported.

Their bound steps are `rgpu_fuzz.sim.bound.packed`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rgpu_fuzz.sim.semantics.f16 import fma16, fmax16, fmin16
from rgpu_fuzz.sim.semantics.rdna4 import max_num, min_num

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

PK16_CLAMP: dict[str, Callable[..., np.ndarray]] = {
    "V_PK_ADD_U16": lambda a, b: np.minimum(a.astype(np.int64) + b, 0xFFFF),
    "V_PK_SUB_U16": lambda a, b: np.maximum(a.astype(np.int64) - b, 0),
    "V_PK_ADD_I16": lambda a, b: np.clip(a.astype(np.int64) + b, -0x8000, 0x7FFF),
    "V_PK_SUB_I16": lambda a, b: np.clip(a.astype(np.int64) - b, -0x8000, 0x7FFF),
}
"""The integer rows whose CLAMP bit is modelled: saturating to the half's type."""

PKF16: dict[str, tuple[int, Callable[..., np.ndarray], bool]] = {
    "V_PK_ADD_F16": (2, lambda a, b: a + b, False),
    "V_PK_MUL_F16": (2, lambda a, b: a * b, False),
    "V_PK_FMA_F16": (3, fma16, False),
    "V_PK_MIN_F16": (2, fmin16, True),
    "V_PK_MAX_F16": (2, fmax16, True),
    "V_PK_MIN_NUM_F16": (2, min_num, False),
    "V_PK_MAX_NUM_F16": (2, max_num, False),
}
"""Opcode → (sources, the operation on one binary16 half of each, takes the IEEE mode)."""

PKF32: dict[str, tuple[int, str]] = {
    "V_PK_ADD_F32": (2, "add"),
    "V_PK_MUL_F32": (2, "mul"),
    "V_PK_FMA_F32": (3, "fma"),
}
"""Opcode → (sources, operation on one binary32 dword of each: `bound.packed`)."""


__all__ = ["I16", "PK16", "PK16_CLAMP", "PKF16", "PKF32", "U16", "U32"]
