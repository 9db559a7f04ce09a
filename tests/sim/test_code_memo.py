"""The per-process instruction memo of `rgpu_fuzz.sim.isa.code.scan` (one decoding shared by
every copy of an instruction) must still give each copy its own address, and decode
branches at theirs; branches with new offsets and instructions with new literals, composed
from one decoded before (`code.Branches`, `code.Literals`), must be what decoding them
alone gives and what the ISA says.

Words hand-encoded from the GCN5/CDNA3 SOPP format (CDNA3 ISA §13.3: bits 31:23 = 0x17F,
op in 22:16, simm16 in 15:0): s_nop 0 = 0xBF800000, s_endpgm = 0xBF810000, s_branch with
simm16 = 1 = 0xBF820001 (target = address + 4 + 4 * simm16, CDNA3 ISA §4.6).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, TypeVar

from rgpu_fuzz.sim.isa import code, decode, render
from rgpu_fuzz.sim.isa.code import clear_memo, scan
from rgpu_fuzz.sim.isa.decode import decode_at
from rgpu_fuzz.sim.isa.inst import OpKind, from_decoded

T = TypeVar("T")

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


def _spied(memo_class: type, compose: str, run: Callable[[], T]) -> tuple[T, list[int]]:
    """`run()` with `memo_class.compose` recording the addresses it composed."""
    real = getattr(memo_class, compose)
    composed: list[int] = []

    def spy(self: object, *args: Any) -> Any:
        got = real(self, *args)
        if got is not None:
            composed.append(got.address)
        return got

    setattr(memo_class, compose, spy)
    try:
        return run(), composed
    finally:
        setattr(memo_class, compose, real)


def test_a_branch_with_an_offset_not_met_before_targets_its_own() -> None:
    # s_branch (SOPP op 2) and s_cbranch_scc1 (op 5), hand-encoded: 0xBF82 << 16 | simm16,
    # 0xBF85 << 16 | simm16; target = address + 4 + 4 * sext(simm16) (CDNA3 ISA §4.6)
    simms = (3, 7, 0xFFFE, 0x8000, 0x7FFF, 1)
    words = [0xBF820000 | s for s in simms] + [0xBF850000 | s for s in simms] + [0xBF810000]
    clear_memo()
    got, composed = _spied(code.Branches, "compose", lambda: scan(
        struct.pack(f"<{len(words)}I", *words), "gfx942", 0x4000))
    assert len(composed) >= 8, "branches after the first of each opcode are composed"
    for k, simm in enumerate(simms * 2):
        address = 0x4000 + 4 * k
        signed = simm - 0x10000 if simm & 0x8000 else simm
        inst = got[k]
        assert inst.opcode == ("S_BRANCH" if k < len(simms) else "S_CBRANCH_SCC1")
        assert inst.mods["target"] == address + 4 + 4 * signed
        assert inst.text == f"{inst.mnemonic} {simm}"
        assert inst == from_decoded(decode_at(tuple(words), k, "gfx942", address))


def test_an_instruction_with_a_literal_not_met_before_reads_its_own() -> None:
    # SOP1 (CDNA3 ISA §12.1): 0b101111101 << 23 | sdst << 16 | op << 8 | ssrc0; s_mov_b32 is
    # op 0, ssrc0 255 = a literal dword after it. VOP1 (§12.2): 0b0111111 << 25 | vdst << 17
    # | op << 9 | src0; v_mov_b32 is op 1. s_add_u32 (SOP2 op 0: 0b10 << 30 | sdst << 16 |
    # ssrc1 << 8 | ssrc0) s32, s32, literal
    s_mov, v_mov, s_add = 0xBE8000FF | 5 << 16, 0x7E0002FF | 3 << 17, 0x80202020 | 0xFF << 8
    literals = (0x1234, 0xFFFFF000, 0x40490FDB, 0x8000_0000, 0x10)
    words = [w for lit in literals for w in (s_mov, lit, v_mov, lit, s_add, lit)]
    words.append(0xBF810000)
    clear_memo()
    got, composed = _spied(code.Literals, "compose", lambda: scan(
        struct.pack(f"<{len(words)}I", *words), "gfx942", 0x8000))
    assert len(composed) >= 9, "literals after the first of each opcode are composed"
    assert len(got) == 3 * len(literals) + 1
    for k, inst in enumerate(got[:-1]):
        lit = literals[k // 3]
        assert inst.opcode == ("S_MOV_B32", "V_MOV_B32", "S_ADD_U32")[k % 3]
        (op,) = [o for o in inst.operands if o.literal]
        assert op.kind is OpKind.BITS and op.value == lit
        assert inst.size == 8 and inst.share_key[1][1] == lit
        alone = from_decoded(decode_at(tuple(words), 2 * k, "gfx942", 0x8000 + 8 * k))
        assert inst == alone and inst.text == alone.text
    assert got[0].text == "s_mov_b32 s5, 0x1234"
    assert got[5].text == "s_add_u32 s32, s32, 0xfffff000"


def test_a_memory_instruction_with_an_offset_not_met_before_has_its_own() -> None:
    # encodings from llvm-mc-22 -mcpu=gfx942 -show-encoding: `scratch_store_dword off, v1,
    # s33 offset:16` = dc704010 00210100, `global_load_dword v3, v[4:5], off offset:-8` =
    # dc509ff8 037f0004, `buffer_load_dword v1, off, s[0:3], 0 offset:8` = e0500008
    # 80000100; the offset is bits 12:0 (scratch, global: signed) or 11:0 (buffer: unsigned)
    # of dword 0 (CDNA3 ISA §13.8, §13.5); the expected texts are what `llvm-mc-22 -mcpu=gfx942
    # -disassemble` prints for these words
    scratch = [16, -16, 32, 4092, -4096, 48, -4]
    glob = [-8, 2040, 0, -4096, 4095]
    buffer = [8, 4092, 0, 2048, 12]
    pairs = ([(0xDC704000 | (o & 0x1FFF), 0x00210100) for o in scratch]
             + [(0xDC508000 | (o & 0x1FFF), 0x037F0004) for o in glob]
             + [(0xE0500000 | o, 0x80000100) for o in buffer])
    words = [w for pair in pairs for w in pair] + [0xBF810000]
    clear_memo()
    got, composed = _spied(code.Offsets, "compose", lambda: scan(
        struct.pack(f"<{len(words)}I", *words), "gfx942", 0x6000))
    assert len(composed) == len(pairs) - 6, "all but the first two of each are composed"
    expect = ([f"scratch_store_dword off, v1, s33 offset:{o}" for o in scratch]
              + [f"global_load_dword v3, v[4:5], off offset:{o}" if o else
                 "global_load_dword v3, v[4:5], off" for o in glob]
              + [f"buffer_load_dword v1, off, s[0:3], 0 offset:{o}" if o else
                 "buffer_load_dword v1, off, s[0:3], 0" for o in buffer])
    for k, (inst, text, offset) in enumerate(zip(got, expect, scratch + glob + buffer,
                                                 strict=False)):
        assert inst.mods["offset"] == offset
        assert inst.text == text
        assert inst == from_decoded(decode_at(tuple(words), 2 * k, "gfx942", 0x6000 + 8 * k))


# s_mov_b32 s0, <literal> (SOP1, ssrc0 255: CDNA3 ISA §12.1) followed by s_endpgm; llvm-mc-22
# -mcpu=gfx942 --disassemble of ff 00 80 be 78 56 34 12 00 00 81 bf prints
# "s_mov_b32 s0, 0x12345678" and "s_endpgm"
S_MOV_LITERAL, LITERAL, S_ENDPGM = 0xBE8000FF, 0x12345678, 0xBF810000


def test_an_instruction_cut_off_by_the_end_of_a_section_is_not_memoised() -> None:
    # the first section ends before the literal: its decoding (UNKNOWN, one dword) holds
    # only there, and must not stand for the same first dword in a later section, where a
    # real literal follows it
    clear_memo()
    cut = scan(struct.pack("<I", S_MOV_LITERAL), "gfx942", 0x1000)
    assert [i.encoding for i in cut] == ["UNKNOWN"]
    whole = scan(struct.pack("<3I", S_MOV_LITERAL, LITERAL, S_ENDPGM), "gfx942", 0x1000)
    assert [i.text for i in whole] == ["s_mov_b32 s0, 0x12345678", "s_endpgm"]
    assert [i.size for i in whole] == [8, 4]


def test_the_decoder_does_not_memoise_an_instruction_cut_off_by_the_end() -> None:
    # the same for the decoder's own memo (`decode`, used by disassembly)
    clear_memo()
    cut = decode(struct.pack("<I", S_MOV_LITERAL), "gfx942", 0x1000)
    assert [i.encoding.value for i in cut] == ["UNKNOWN"]
    whole = decode(struct.pack("<3I", S_MOV_LITERAL, LITERAL, S_ENDPGM), "gfx942", 0x1000)
    assert [render(i) for i in whole] == ["s_mov_b32 s0, 0x12345678", "s_endpgm"]
