"""VOP3P packed 16-bit integer operations (GFX9: gfx90a, gfx942): two 16-bit results in one
VGPR, D[15:0] from the sources' halves that op_sel picks and D[31:16] from those op_sel_hi
picks (CDNA3 ISA, VOP3P: for source k, bit k of OPSEL selects S[31:16] instead of S[15:0]
for the low result, bit k of OPSEL_HI the same for the high one; pseudocode of
V_PK_LSHLREV_B16: `tmp[31:16] = S1[31:16] << S0[19:16]; tmp[15:0] = S1[15:0] << S0[3:0]`).
LLVM's O3 code uses them for pairs of 8/16-bit values (second campaign met
`v_pk_add_u16 v15, s40, 4 op_sel_hi:[1,0]` and `v_pk_sub_i16`).

A constant source is its 32-bit value, halves picked as for a register: `4` read with
OPSEL_HI = 1 gives 0 for the high result, which is why LLVM writes `op_sel_hi:[1,0]` to use
a small constant in both halves (inferred from LLVM's encoding, not from a document). Not
modelled, and so unsupported: the clamp bit (saturating add/sub), the NEG bits, a float
inline constant, and the packed f16/f32 operations.

Their bound steps are `rgpu_fuzz.sim.bound.packed`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

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


__all__ = ["I16", "PK16", "U16", "U32"]
