"""Bit-field extracts and 64-bit shifts whose offset, width or amount is the same in every
lane (an SGPR or a constant: a numpy scalar) and per lane (a VGPR). Expected values are
hand-derived from the CDNA3 ISA pseudocode: V_BFE_I32 D = sext((S0 >> S1[4:0]) &
((1 << S2[4:0]) - 1)) from bit S2[4:0] - 1 of the field; V_LSHLREV_B64 D = S1 << S0[5:0];
V_LSHRREV_B64 D = S1 >> S0[5:0]; V_ASHRREV_I64 the same, arithmetic; V_LSHL_ADD_U64
D = (S0 << S1[2:0]) + S2."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.semantics.valu import VALU

U32, U64, I64 = np.uint32, np.uint64, np.int64

BFE_I32 = [  # (S0, offset, width, result)
    (0x0000_00F0, 4, 4, -1),
    (0x0000_0070, 4, 4, 7),
    (0x8000_0000, 31, 1, -1),
    (0x8000_0000, 28, 8, 8),  # the field runs past bit 31: no sign bit inside it
    (0xFFFF_FFFF, 0, 0, 0),
    (0x0000_0001, 0, 33, -1),  # width 33 & 31 = 1
    (0x0000_00F0, 36, 4, -1),  # offset 36 & 31 = 4
    (0x1234_5678, 8, 16, 0x3456),
    (0x00AB_CDEF, 12, 12, 0xABC - 0x1000),
    (0xFFFF_FFFF, 1, 31, -1),
    (0x7FFF_FFFF, 0, 31, -1),
]


@pytest.mark.parametrize(("s0", "off", "width", "want"), BFE_I32)
def test_bfe_i32(s0: int, off: int, width: int, want: int) -> None:
    fn = VALU["V_BFE_I32"].fn
    lanes = np.array([s0, s0], U32)
    assert np.asarray(fn(lanes, U32(off), U32(width))).tolist() == [want, want]
    assert np.asarray(fn(lanes, np.array([off] * 2, U32),
                         np.array([width] * 2, U32))).tolist() == [want, want]
    assert int(fn(U32(s0), U32(off), U32(width))) == want


SHIFTS = [  # (opcode, amount, source, result)
    ("V_LSHLREV_B64", 1, 1, 2),
    ("V_LSHLREV_B64", 32, 0x1, 0x1_0000_0000),
    ("V_LSHLREV_B64", 65, 3, 6),  # 65 & 63 = 1
    ("V_LSHRREV_B64", 64, 0x8000_0000_0000_0000, 0x8000_0000_0000_0000),
    ("V_LSHRREV_B64", 63, 0x8000_0000_0000_0000, 1),
    ("V_ASHRREV_I64", 63, -2, -1),
    ("V_ASHRREV_I64", 4, -256, -16),
]


@pytest.mark.parametrize(("opcode", "amount", "source", "want"), SHIFTS)
def test_shift64(opcode: str, amount: int, source: int, want: int) -> None:
    ty = I64 if opcode == "V_ASHRREV_I64" else U64
    fn = VALU[opcode].fn
    src = np.array([source] * 2, ty)
    assert np.asarray(fn(U32(amount), src)).tolist() == [want, want]
    assert np.asarray(fn(np.array([amount] * 2, U32), src)).tolist() == [want, want]


def test_lshl_add_u64() -> None:
    fn = VALU["V_LSHL_ADD_U64"].fn
    a, c = np.array([5, 2**63], U64), np.array([3, 1], U64)
    assert np.asarray(fn(a, U32(9), c)).tolist() == [13, 1]  # 9 & 7 = 1; 2**64 wraps
    assert np.asarray(fn(a, np.array([9, 1], U32), c)).tolist() == [13, 1]
