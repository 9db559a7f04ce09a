"""Differential on hand-written assembly (tests/sim/data/asm/*.s): operand syntax the
compiled kernels rarely reach — SDWA and DPP forms, VOP3/VOP3P modifiers, inline and
literal constants, named registers, every memory format's offsets and cache bits, the
special immediates of SOPP/SOPK. llvm-mc-22 assembles each line; our rendering of the bytes
must equal LLVM's canonical printing of the same instruction."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.sim.isa import Encoding, decode, render
from tests.sim.asm_steps import encodings

DATA = Path(__file__).parent / "data" / "asm"
FILES = {"gfx942": ("gfx9", "gfx942"), "gfx950": ("gfx9", "gfx942", "gfx950"),
         "gfx90a": ("gfx9", "gfx90a"), "gfx1100": ("gfx1100",), "gfx1200": ("gfx1200",)}


@pytest.mark.parametrize("target", sorted(FILES))
def test_rendering_equals_llvm_mc(target: str) -> None:
    source = "".join((DATA / f"{name}.s").read_text() for name in FILES[target])
    lines = [ln for ln in source.splitlines() if ln.strip()]
    assembled = encodings(source, target)
    assert len(assembled) == len(lines), "every line assembles to one instruction"
    wrong = []
    for text, data in assembled:
        insts = decode(data, target)
        assert len(insts) == 1 and insts[0].size == len(data), text
        assert insts[0].encoding is not Encoding.UNKNOWN, text
        if render(insts[0]) != text:
            wrong.append((text, render(insts[0])))
    assert not wrong, "\n".join(f"LLVM {a!r}\nours {b!r}" for a, b in wrong)
