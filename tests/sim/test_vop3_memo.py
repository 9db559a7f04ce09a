"""The decoder's miss path in `rgpu_fuzz.sim.isa.code.scan`: VOP3-family and one-dword ALU
instructions composed from operands decoded before (`rgpu_fuzz.sim.isa.vop3_memo`, `Vop3Memo`
and `AluMemo`) and address-bound instructions
moved from another address (`Inst.relocated`) must be what decoding them alone gives.

Expected values: the decoder run on each instruction alone (`decode_at`, checked against
llvm-objdump by test_decode_llvm/test_decode_sweep) for every VOP3, VOP3SD and VOP3P opcode
of three targets with random fields; and by hand from the CDNA3 ISA for v_writelane_b32 /
v_readlane_b32 (§12.3 VOP3A: dword 0 = 0b110100 << 26 | op << 16 | vdst, dword 1 = src0 |
src1 << 9; opcodes 0x28A / 0x289, LLVM's `V_WRITELANE_B32_vi`/`V_READLANE_B32_vi`; source
codes: SGPR n = n, inline integer k = 128 + k, VGPR n = 256 + n) and s_cbranch_execz
(SOPP op 8: target = address + 4 + 4 * simm16, §4.6).
"""

from __future__ import annotations

import random
import struct

import pytest

from rgpu_fuzz.sim.isa import code
from rgpu_fuzz.sim.isa.code import clear_memo, scan
from rgpu_fuzz.sim.isa.decode import decode_at
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, from_decoded
from rgpu_fuzz.sim.isa.tables import tables
from rgpu_fuzz.sim.isa.vop3_memo import _KEEP, ONE_DWORD

_FAMILY_TABLES = ("VOP3Op", "VOP3SDOp", "VOP3POp")
_SOURCES = (*range(0, 102), 106, 107, 124, 125, 126, 127, *range(128, 209), 235, 240, 242,
            248, 253, *range(256, 512))
"""Source codes: SGPRs, specials, inline constants, VGPRs; not 255 (a literal: a third
dword on gfx1100, which would shift the stream of test words)."""


def _family_words(target: str, rng: random.Random) -> list[int]:
    """Every VOP3-family opcode of `target`, each with one set of modifier bits and ten
    (vdst, src0, src1, src2) combinations of two random values per field (so that shapes
    and field values repeat in new combinations)."""
    t = tables(target)
    out: list[int] = []
    for fmt in t.spec.formats:
        if fmt.op_table not in _FAMILY_TABLES:
            continue
        for op in t.ops.get(fmt.op_table, {}):
            mods = rng.getrandbits(8) << 8 if rng.random() < 0.3 else 0
            hi = rng.getrandbits(5) if rng.random() < 0.3 else 0
            w0_shape = (fmt.match | (op << fmt.op.lo) | mods) & ~0xFF
            w0_shape = (w0_shape & ~fmt.mask) | fmt.match
            pools = [rng.sample(range(256), 2), *(rng.sample(_SOURCES, 2) for _ in range(3))]
            for _ in range(10):
                vdst, src0, src1, src2 = (rng.choice(p) for p in pools)
                pair = (w0_shape | vdst, hi << 27 | src0 | src1 << 9 | src2 << 18)
                # only pairs that decode as one two-dword instruction (an operand code the
                # opcode does not take makes it undecodable: the stream would shift) and
                # that the executor takes (a scalar vdst of 254 is lds_direct: it has none)
                try:
                    if from_decoded(decode_at(pair, 0, target, 0)).size == 8:
                        out += pair
                except KeyError:
                    pass
    return out


@pytest.mark.parametrize("target", ["gfx942", "gfx90a", "gfx1100"])
def test_composed_vop3_instructions_equal_their_decoding_alone(target: str) -> None:
    rng = random.Random(f"vop3-memo-{target}")
    words = _family_words(target, rng)
    text = struct.pack(f"<{len(words)}I", *words)
    composed = []
    real = code.Vop3Memo.compose

    def spy(self: code.Vop3Memo, w0: int, w1: int, address: int) -> Inst | None:
        got = real(self, w0, w1, address)
        if got is not None:
            composed.append(address)
        return got

    clear_memo()
    try:
        code.Vop3Memo.compose = spy  # type: ignore[method-assign]
        got = scan(text, target, 0x1000)
    finally:
        code.Vop3Memo.compose = real  # type: ignore[method-assign]
    assert len(composed) > len(words) // 2 // 5, "the memo should compose many of these"
    for k, inst in enumerate(got):
        i = (got.addresses[k] - 0x1000) // 4
        alone = from_decoded(decode_at(tuple(words), i, target, got.addresses[k]))
        assert inst == alone, (hex(words[i]), hex(words[i + 1]) if i + 1 < len(words) else "")


def _lanes(vdst: int, src0: int, lane: int, op: int) -> tuple[int, int]:
    return 0b110100 << 26 | op << 16 | vdst, src0 | (128 + lane) << 9


def test_spill_lanes_composed_from_earlier_operands_hold_the_right_registers() -> None:
    writelane, readlane = 0x28A, 0x289
    # the first two share a shape and teach s30/lane 0 and s31/lane 1; the third combines
    # s31 with lane 0 (never decoded together), the fourth v41 with s30 and lane 1
    words = [*_lanes(40, 30, 0, writelane), *_lanes(40, 31, 1, writelane),
             *_lanes(40, 31, 0, writelane), *_lanes(41, 30, 1, writelane),
             *_lanes(30, 256 + 40, 0, readlane), *_lanes(31, 256 + 40, 1, readlane),
             *_lanes(31, 256 + 41, 0, readlane)]
    clear_memo()
    got = scan(struct.pack(f"<{len(words)}I", *words), "gfx942", 0x2000)
    expect = [("V_WRITELANE_B32", (OpKind.VGPR, 40), (OpKind.SGPR, 30), 0),
              ("V_WRITELANE_B32", (OpKind.VGPR, 40), (OpKind.SGPR, 31), 1),
              ("V_WRITELANE_B32", (OpKind.VGPR, 40), (OpKind.SGPR, 31), 0),
              ("V_WRITELANE_B32", (OpKind.VGPR, 41), (OpKind.SGPR, 30), 1),
              ("V_READLANE_B32", (OpKind.SGPR, 30), (OpKind.VGPR, 40), 0),
              ("V_READLANE_B32", (OpKind.SGPR, 31), (OpKind.VGPR, 40), 1),
              ("V_READLANE_B32", (OpKind.SGPR, 31), (OpKind.VGPR, 41), 0)]
    assert len(got) == len(expect)
    for inst, (opcode, dst, src, lane) in zip(got, expect, strict=True):
        d, s, k = inst.operands
        assert inst.opcode == opcode
        assert (d.kind, d.index) == dst and (s.kind, s.index) == src
        assert k.kind is OpKind.BITS and k.value == lane
    assert got[2].text == "v_writelane_b32 v40, s31, 0"
    assert got[6].text == "v_readlane_b32 s31, v41, 0"


def test_a_branch_met_at_another_address_targets_from_there() -> None:
    execz = 0xBF880000 | 5            # s_cbranch_execz, simm16 = 5
    getpc = 0xBE801C00 | 4 << 16      # s_getpc_b64 s[4:5] (SOP1 op 0x1C, sdst 4)
    text = struct.pack("<3I", execz, getpc, 0xBF810000)
    clear_memo()
    first = scan(text, "gfx942", 0x1000)
    moved = scan(b"\0\0\x80\xbf" + text, "gfx942", 0x3000)   # after an s_nop: 0x3004
    assert first[0].mods["target"] == 0x1000 + 4 + 4 * 5
    assert moved[1].mods["target"] == 0x3004 + 4 + 4 * 5
    assert moved[1].text == "s_cbranch_execz 5" and moved[2].text == "s_getpc_b64 s[4:5]"
    words = (0xBF800000, execz, getpc, 0xBF810000)
    for k in (1, 2):
        alone = from_decoded(decode_at(words, k, "gfx942", 0x3000 + 4 * k))
        assert moved[k] == alone


def _one_dword_words(target: str, rng: random.Random) -> list[int]:
    """Every one-dword ALU opcode of `target` (SOP1, SOP2, SOPC, VOP1, VOP2, VOPC), each
    with eight combinations of two random values per register/constant field (bits from
    `vop3_memo.ONE_DWORD`), kept when the word decodes alone as one dword."""
    t = tables(target)
    out: list[int] = []
    for fmt in t.spec.formats:
        fs = ONE_DWORD.get(fmt.encoding.value)
        if fs is None:
            continue
        for op in t.ops.get(fmt.op_table, {}):
            shape = (fmt.match | (op << fmt.op.lo)) & _KEEP[fmt.encoding.value]
            pools = [rng.sample([v for v in _SOURCES if v <= mask] if source
                                else range(mask + 1), 2) for _, mask, source in fs]
            for _ in range(8):
                w = shape
                for (shift, _mask, _), pool in zip(fs, pools, strict=True):
                    w |= rng.choice(pool) << shift
                try:
                    # followed by s_nop: a literal or extension dword would show in the size
                    if from_decoded(decode_at((w, 0xBF800000), 0, target, 0)).size == 4:
                        out.append(w)
                except KeyError:
                    pass
    return out


@pytest.mark.parametrize("target", ["gfx942", "gfx90a", "gfx1100"])
def test_composed_one_dword_alu_instructions_equal_their_decoding_alone(target: str) -> None:
    rng = random.Random(f"alu-memo-{target}")
    words = _one_dword_words(target, rng)
    composed = []
    real = code.AluMemo.compose

    def spy(self: code.AluMemo, w0: int, address: int) -> Inst | None:
        got = real(self, w0, address)
        if got is not None:
            composed.append(address)
        return got

    clear_memo()
    try:
        code.AluMemo.compose = spy  # type: ignore[method-assign]
        got = scan(struct.pack(f"<{len(words)}I", *words), target, 0x1000)
    finally:
        code.AluMemo.compose = real  # type: ignore[method-assign]
    assert len(got) == len(words)
    assert len(composed) > len(words) // 8, "the memo should compose many of these"
    for k, inst in enumerate(got):
        alone = from_decoded(decode_at(tuple(words), k, target, 0x1000 + 4 * k))
        assert inst == alone, hex(words[k])


def test_scalar_moves_composed_from_earlier_operands_hold_the_right_registers() -> None:
    # SOP1 (CDNA3 ISA §12.1): 0b101111101 << 23 | sdst << 16 | op << 8 | ssrc0; s_mov_b32
    # is op 0; SGPR n = n, exec_lo = 126, inline integer k = 128 + k
    def mov(sdst: int, ssrc0: int) -> int:
        return 0xBE800000 | sdst << 16 | ssrc0

    # the first two share a shape (s_mov_b32) and teach s4/s5 and s7/inline 1; the third
    # combines s5 with s7 (never decoded together), the fourth exec_lo with inline 1
    words = [mov(4, 7), mov(5, 129), mov(5, 7), mov(126, 129), mov(4, 129)]
    clear_memo()
    got = scan(struct.pack(f"<{len(words)}I", *words), "gfx942", 0x2000)
    expect = [((OpKind.SGPR, 4), (OpKind.SGPR, 7)), ((OpKind.SGPR, 5), (OpKind.BITS, 0)),
              ((OpKind.SGPR, 5), (OpKind.SGPR, 7)), ((OpKind.SGPR, 126), (OpKind.BITS, 0)),
              ((OpKind.SGPR, 4), (OpKind.BITS, 0))]
    for inst, (dst, src) in zip(got, expect, strict=True):
        d, s = inst.operands
        assert inst.opcode == "S_MOV_B32"
        assert (d.kind, d.index) == dst and (s.kind, s.index) == src
    assert got[1].operands[1].value == 1 and got[4].operands[1].value == 1
    assert got[2].text == "s_mov_b32 s5, s7"
    assert got[3].text == "s_mov_b32 exec_lo, 1"
