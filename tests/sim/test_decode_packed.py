"""Decoding of packed math, f16, SDWA and true16 instructions against LLVM: our rendering of
every instruction of the packed/f16 test kernels (`packed_kernels`, compiled by llvmlite's
LLVM 22 for gfx942, gfx90a and gfx1100 at O0 and O3) equals `llvm-objdump-22 -d` of the
same code object; and of hand-written lines (tests/sim/data/asm/packed_*.s: op_sel,
op_sel_hi, neg_lo/neg_hi and clamp in every combination LLVM prints, constants in packed
operands, the mixed-precision FMA, SDWA selections with sext and neg/abs, true16 halves)
equals llvm-mc-22's canonical printing of the bytes it assembled them to."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from rgpu_fuzz.codeobj import read_code_object
from rgpu_fuzz.sim.isa import Encoding, decode, decode_code_object, render
from tests.sim.asm_steps import encodings
from tests.sim.kernels import build
from tests.sim.llvm_disasm import objdump
from tests.sim.packed_kernels import all_kernels
from tests.toolchain import debian_llvm_tool

DATA = Path(__file__).parent / "data" / "asm"
FILES = {"gfx942": ("packed_gfx9", "packed_cdna"), "gfx90a": ("packed_gfx9", "packed_cdna"),
         "gfx1100": ("packed_gfx1100",)}


@pytest.mark.parametrize("target", sorted(FILES))
def test_packed_rendering_equals_llvm_mc(target: str) -> None:
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


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("target", ["gfx942", "gfx90a", "gfx1100"])
def test_packed_kernels_render_as_llvm_objdump(target: str, opt: int) -> None:
    tool = debian_llvm_tool("llvm-objdump", 22)
    total, mismatches = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for k in all_kernels():
            path = Path(tmp, f"{k.name}.hsaco")
            path.write_bytes(build(k.ir(), target, opt))
            ours = decode_code_object(read_code_object(path.read_bytes()))
            theirs = objdump(tool, path)
            assert [i.address for i in ours] == sorted(theirs), k.name
            total += len(ours)
            mismatches += [(k.name, theirs[i.address], render(i)) for i in ours
                           if render(i) != theirs[i.address]]
    assert total > 1000
    assert not mismatches, f"{len(mismatches)}/{total} differ: {mismatches[:10]}"
