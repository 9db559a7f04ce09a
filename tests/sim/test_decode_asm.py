"""Differential on hand-written assembly (tests/sim/data/asm/*.s): operand syntax the
compiled kernels rarely reach — SDWA and DPP forms, VOP3/VOP3P modifiers, inline and
literal constants, named registers, every memory format's offsets and cache bits, the
special immediates of SOPP/SOPK. llvm-mc-22 assembles each line; our rendering of the bytes
must equal LLVM's canonical printing of the same instruction."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.sim.isa import Encoding, decode, render
from tests.toolchain import debian_llvm_tool

DATA = Path(__file__).parent / "data" / "asm"
FILES = {"gfx942": ("gfx9", "gfx942"), "gfx90a": ("gfx9", "gfx90a"), "gfx1100": ("gfx1100",)}


def _assemble(llvm_mc: str, target: str, source: str) -> list[tuple[str, bytes]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "in.s")
        path.write_text(source)
        proc = run_bounded([llvm_mc, "-arch=amdgcn", f"-mcpu={target}", "--show-encoding",
                            str(path)], timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s+(.*?)\s*; encoding: \[(.*)\]", line)
        if m:
            out.append((re.sub(r"\s+", " ", m.group(1)),
                        bytes(int(b, 16) for b in m.group(2).split(","))))
    return out


@pytest.mark.parametrize("target", sorted(FILES))
def test_rendering_equals_llvm_mc(target: str) -> None:
    llvm_mc = debian_llvm_tool("llvm-mc", 22)
    source = "".join((DATA / f"{name}.s").read_text() for name in FILES[target])
    lines = [ln for ln in source.splitlines() if ln.strip()]
    assembled = _assemble(llvm_mc, target, source)
    assert len(assembled) == len(lines), "every line assembles to one instruction"
    wrong = []
    for text, data in assembled:
        insts = decode(data, target)
        assert len(insts) == 1 and insts[0].size == len(data), text
        assert insts[0].encoding is not Encoding.UNKNOWN, text
        if render(insts[0]) != text:
            wrong.append((text, render(insts[0])))
    assert not wrong, "\n".join(f"LLVM {a!r}\nours {b!r}" for a, b in wrong)
