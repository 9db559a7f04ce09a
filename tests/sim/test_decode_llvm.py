"""Differential: our decoder's rendering equals `llvm-objdump-22 -d` for every instruction
of the decoder's test kernels (tests/sim/data/decode/*.ll: integer ops of every width incl.
div/rem/shifts, f16/f32/f64 incl. fma/sqrt/min/max/casts, divergent control flow, LDS and
barriers, private arrays with dynamic indices, global/flat memory and atomics), compiled by
llvmlite for gfx942, gfx90a and gfx1100 at O0 and O3 and linked by ld.lld. The expected
text is LLVM's own disassembly of the same bytes."""

from __future__ import annotations

import pytest

from rgpu_fuzz.codeobj import read_code_object
from rgpu_fuzz.sim.isa import Encoding, decode_code_object, render
from tests.sim.decode_kernels import KERNELS, OPTS, TARGETS, code_object
from tests.sim.llvm_disasm import objdump
from tests.toolchain import debian_llvm_tool

CASES = [(k, t, o) for k in KERNELS for t in TARGETS for o in OPTS]


@pytest.fixture(scope="session")
def llvm_objdump() -> str:
    return debian_llvm_tool("llvm-objdump", 22)


@pytest.mark.parametrize(("kernel", "target", "opt"), CASES,
                         ids=[f"{k}-{t}-O{o}" for k, t, o in CASES])
def test_rendering_equals_llvm_objdump(llvm_objdump: str, kernel: str, target: str,
                                       opt: int) -> None:
    path = code_object(kernel, target, opt)
    co = read_code_object(path.read_bytes())
    ours = decode_code_object(co)
    theirs = objdump(llvm_objdump, path)
    assert ours, "the code object has instructions"
    # Same instruction boundaries: every address LLVM prints, we decode, and vice versa.
    assert [i.address for i in ours] == sorted(theirs)
    mismatches = [(hex(i.address), theirs[i.address], render(i)) for i in ours
                  if render(i) != theirs[i.address]]
    assert not mismatches, f"{len(mismatches)}/{len(ours)} differ: {mismatches[:10]}"
    assert not [i for i in ours if i.encoding is Encoding.UNKNOWN]
