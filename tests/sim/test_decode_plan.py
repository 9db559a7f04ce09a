"""The decoder's per-variant operand memo (`rgpu_fuzz.sim.isa.decode_plan`): an operand is
memoised by its field's value and the per-operand modifier fields of its encoding
(`OPERAND_MODIFIERS`); a memoised operand must be the one the decoder computes with nothing
memoised.

Expected values: the same decoder with its plans forgotten before each instruction, so that
every operand is computed by `_Decoder._field_operand` and `_with_modifiers` (which
test_decode_llvm and test_decode_sweep check against llvm-objdump-22 and llvm-mc-22). The
memo is first filled with neighbours of each instruction that differ from it only in
modifier bits: VOP3/VOP3P dword 0 bits 15:8 (ABS, OP_SEL, OP_SEL_HI2, CLAMP) and dword 1
bits 63:59 (OMOD, NEG / OP_SEL_HI, NEG) (CDNA3 ISA §12.3 "VOP3A", §12.4 "VOP3P"; RDNA3 ISA
§15.3.3), and the SDWA / DPP16 dword's bits 63:40 (CDNA3 §12.2 "VOP_SDWA", "VOP_DPP"). A
modifier field missing from a memo key would hand the instruction a neighbour's operand.
"""

from __future__ import annotations

import random

import pytest

from rgpu_fuzz.sim.isa.decode import clear_memo, decode_at, forget_plans
from rgpu_fuzz.sim.isa.tables import tables

_TARGETS = ("gfx942", "gfx90a", "gfx950", "gfx1100", "gfx1200")
_VOP3 = ("VOP3Op", "VOP3SDOp", "VOP3POp")
_SHORT = ("VOP1Op", "VOP2Op", "VOPCOp")
_SDWA, _DPP16 = 249, 250


def _instructions(target: str, rng: random.Random) -> list[tuple[tuple[int, ...], list[int]]]:
    """(words, modifier bit masks per dword) for every VOP3-family opcode and, with an
    SDWA or DPP16 dword, every VOP1/VOP2/VOPC opcode of `target`: random register fields
    and modifier bits, a random dword after (a literal where one is read)."""
    t = tables(target)
    out: list[tuple[tuple[int, ...], list[int]]] = []
    for fmt in t.spec.formats:
        if fmt.op_table in _VOP3:
            for op in t.ops.get(fmt.op_table, {}):
                w0 = fmt.match | op << fmt.op.lo | rng.getrandbits(16)
                words = (w0 & ~(fmt.mask | ((1 << fmt.op.width) - 1) << fmt.op.lo)
                         | fmt.match | op << fmt.op.lo, rng.getrandbits(32), rng.getrandbits(32))
                out.append((words, [0xFF00, 0xF8000000, 0]))
        elif fmt.op_table in _SHORT and "src0" in fmt.fields:
            for op in t.ops.get(fmt.op_table, {}):
                for code in (_SDWA, _DPP16):
                    w0 = (rng.getrandbits(32) & ~(fmt.mask | 0x1FF
                                                   | ((1 << fmt.op.width) - 1) << fmt.op.lo)
                          | fmt.match | op << fmt.op.lo | code)
                    out.append(((w0, rng.getrandbits(32), rng.getrandbits(32)),
                                [0, 0xFFFFFF00, 0]))
    return out


def _decoded(words: tuple[int, ...], target: str) -> object:
    try:
        return decode_at(words, 0, target, 0x1000)
    except KeyError as e:          # a field names a register this target lacks
        return ("KeyError", str(e))


@pytest.mark.parametrize("target", _TARGETS)
def test_memoised_operands_match_unmemoised(target: str) -> None:
    rng = random.Random(f"decode-plan-{target}")
    cases = _instructions(target, rng)
    assert len(cases) > 300
    clear_memo()
    expected = []
    for words, _ in cases:
        forget_plans()
        expected.append(_decoded(words, target))
    forget_plans()
    compared = 0
    for (words, masks), want in zip(cases, expected, strict=True):
        for _ in range(6):
            _decoded(tuple(w ^ (rng.getrandbits(32) & m) for w, m in zip(words, masks,
                                                                          strict=True)),
                     target)
        got = _decoded(words, target)
        assert got == want, (target, [hex(w) for w in words])
        compared += 1
    assert compared == len(cases)
