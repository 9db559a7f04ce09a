"""The per-process instruction memo of `rgpu_fuzz.sim.code.scan` (one decoding shared by
every copy of an instruction) must still give each copy its own address, and decode
branches at theirs.

Words hand-encoded from the GCN5/CDNA3 SOPP format (CDNA3 ISA §13.3: bits 31:23 = 0x17F,
op in 22:16, simm16 in 15:0): s_nop 0 = 0xBF800000, s_endpgm = 0xBF810000, s_branch with
simm16 = 1 = 0xBF820001 (target = address + 4 + 4 * simm16, CDNA3 ISA §4.6).
"""

from __future__ import annotations

import struct

from rgpu_fuzz.sim.code import clear_memo, scan

WORDS = (0xBF800000, 0xBF820001, 0xBF800000, 0xBF810000)
TEXT = struct.pack("<4I", *WORDS)


def test_a_memoised_instruction_takes_each_code_objects_address() -> None:
    clear_memo()
    first = scan(TEXT, "gfx942", 0x1000)
    second = scan(TEXT, "gfx942", 0x2000)
    assert [i.address for i in first] == [0x1000, 0x1004, 0x1008, 0x100C]
    assert [i.address for i in second] == [0x2000, 0x2004, 0x2008, 0x200C]
    assert [i.opcode for i in second] == ["S_NOP", "S_BRANCH", "S_NOP", "S_ENDPGM"]
    # the branch is decoded at each address: its absolute target differs
    assert first[1].mods["target"] == 0x1004 + 4 + 4
    assert second[1].mods["target"] == 0x2004 + 4 + 4
    assert second[1].text == "s_branch 1"
    # s_nop is decoded once and shared (same template object) in both sections
    assert second.templates[0] is first.templates[0] is first.templates[2]
