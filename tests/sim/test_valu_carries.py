"""32-bit adds and subtracts with carry-out and carry-in (CDNA3 ISA "V_ADD_CO_U32": D = S0 +
S1, VCC = the carry out of bit 31; "V_ADDC_CO_U32": D = S0 + S1 + VCC; "V_SUB_CO_U32":
D = S0 - S1, VCC = the borrow; "V_SUBB_CO_U32": D = S0 - S1 - VCC; the REV forms swap S0
and S1). Expected values are hand-computed in 33-bit arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.semantics.valu import VALU

M = 0xFFFF_FFFF

CASES = [  # (opcode, S0, S1, carry-in or None, D, carry-out)
    ("V_ADD_CO_U32", M, 1, None, 0, True),
    ("V_ADD_CO_U32", 0x8000_0000, 0x7FFF_FFFF, None, M, False),
    ("V_ADDC_CO_U32", M, 0, True, 0, True),
    ("V_ADDC_CO_U32", M, M, True, M, True),
    ("V_ADDC_CO_U32", 5, 6, True, 12, False),
    ("V_ADDC_CO_U32", M, 1, False, 0, True),
    ("V_SUB_CO_U32", 0, 1, None, M, True),
    ("V_SUB_CO_U32", 5, 5, None, 0, False),
    ("V_SUBREV_CO_U32", 3, 1, None, M - 1, True),
    ("V_SUBB_CO_U32", 5, 5, True, M, True),
    ("V_SUBB_CO_U32", 0, M, True, 0, True),
    ("V_SUBB_CO_U32", 7, 2, True, 4, False),
    ("V_SUBB_CO_U32", 0, 0, False, 0, False),
    ("V_SUBBREV_CO_U32", 1, 3, True, 1, False),
    ("V_SUBBREV_CO_U32", 3, 3, True, M, True),
]


@pytest.mark.parametrize(("opcode", "s0", "s1", "cin", "want", "carry"), CASES)
def test_carry(opcode: str, s0: int, s1: int, cin: bool | None, want: int,
               carry: bool) -> None:
    fn = VALU[opcode].fn
    cins = () if cin is None else (np.array([cin] * 3),)
    # per lane, and uniform sources as the binders pass them (0-d arrays)
    for a, b in ((np.array([s0] * 3, np.uint32), np.array([s1] * 3, np.uint32)),
                 (np.asarray(np.uint32(s0)), np.asarray(np.uint32(s1)))):
        r, c = fn(a, b, *cins)
        assert np.broadcast_to(r, (3,)).tolist() == [want] * 3
        assert np.broadcast_to(c, (3,)).tolist() == [carry] * 3
