"""V_BITOP3 (gfx950): the truth table's place in the encoding and its meaning.

Expected values: the encodings are llvm-mc-22's (`-mcpu=gfx950 -show-encoding`, independent
of our decoder); the results are worked by hand from the CDNA4 pseudocode (table bit k
selects the minterm whose S0, S1, S2 bits are bits 2, 1, 0 of k)."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.isa import decode, render
from rgpu_fuzz.sim.semantics.bitop3 import bitop3

# llvm-mc-22 -mcpu=gfx950 -show-encoding of `v_bitop3_b32 v4, v1, v2, v3 bitop3:T`
ENCODED = {
    0x96: bytes([0x04, 0x02, 0x34, 0xD2, 0x01, 0x05, 0x0E, 0xD4]),
    0x01: bytes([0x04, 0x00, 0x34, 0xD2, 0x01, 0x05, 0x0E, 0x24]),
    0x80: bytes([0x04, 0x00, 0x34, 0xD2, 0x01, 0x05, 0x0E, 0x14]),
    0xE8: bytes([0x04, 0x05, 0x34, 0xD2, 0x01, 0x05, 0x0E, 0x1C]),
    0x5A: bytes([0x04, 0x03, 0x34, 0xD2, 0x01, 0x05, 0x0E, 0x4C]),
}


@pytest.mark.parametrize("table", sorted(ENCODED))
def test_table_decoded_from_abs_omod_neg(table: int) -> None:
    (inst,) = decode(ENCODED[table], "gfx950")
    assert inst.opcode == "V_BITOP3_B32"
    assert inst.modifiers["bitop3"] == table
    assert "omod" not in inst.modifiers
    assert not any(o.neg or o.abs for o in inst.uses), "the table bits are no modifiers"
    assert render(inst).endswith(f"bitop3:{table if table <= 10 else hex(table)}")


def test_canonical_inputs_reproduce_the_table() -> None:
    # S0 = 0xF0, S1 = 0xCC, S2 = 0xAA put (S0, S1, S2) = bits of k at bit k of each byte,
    # so the result's every byte is the table itself (the identity LLVM's selection uses).
    a, b, c = (np.full(4, x, np.uint32) for x in (0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA))
    for table in (0x00, 0x01, 0x80, 0x96, 0xE8, 0xFE, 0xFF):
        assert (bitop3(table, a, b, c) == table * 0x01010101).all()


def test_hand_worked_functions() -> None:
    a, b, c = np.uint32(0b1110), np.uint32(0b1101), np.uint32(0b1011)
    assert int(bitop3(0xE8, a, b, c)) == 0b1111          # majority: two of three per bit
    assert int(bitop3(0x80, a, b, c)) == 0b1000          # S0 & S1 & S2
    assert int(bitop3(0x96, a, b, c)) == 0b1000          # S0 ^ S1 ^ S2
    assert int(bitop3(0x01, a, b, c)) == 0xFFFF_FFF0     # ~S0 & ~S1 & ~S2
    h = np.uint16
    assert int(bitop3(0xFE, h(0), h(0x00F0), h(0x0F00))) == 0x0FF0   # S0 | S1 | S2, 16 bits
