"""The GLOBAL and SCRATCH instruction offset at its format's width: 13 bits signed on GFX9
and GFX11 (CDNA3 ISA §10.1 "Global, scratch and flat", RDNA3 ISA §10.1: -4096..4095), 24 bits
signed on GFX12 (RDNA4 ISA "VGLOBAL"/"VSCRATCH" microcode formats: IOFFSET[23:0]). LLVM folds
a constant byte offset of 4100 into the instruction only where the field holds it, so on
gfx1200 `global_store_b32 ... offset:4100` reaches the simulator, which once sign-extended
the decoded offset a second time at 13 bits and stored to byte 4100 - 8192.

Expected values by hand: the kernel stores `7 + i` to byte 4100 + 4*i of `out` (i = 0, 1)
from one work-item, and copies through a private array indexed past 4 KiB of frame."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.isa.code import decode_text
from rgpu_fuzz.sim.launch.engine import Arg
from tests.sim.kernels import build, out, run

GLOBAL = """
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %p = getelementptr inbounds i8, ptr addrspace(1) %out, i64 4100
  store i32 7, ptr addrspace(1) %p, align 4
  %q = getelementptr inbounds i8, ptr addrspace(1) %out, i64 4104
  store i32 8, ptr addrspace(1) %q, align 4
  ret void
}
"""

# A private array of 1,100 words: element 1,030 (byte 4120) is past a 13-bit offset.
SCRATCH = """
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %i) {
  %a = alloca [1100 x i32], align 4, addrspace(5)
  %p = getelementptr inbounds [1100 x i32], ptr addrspace(5) %a, i32 0, i32 1030
  store volatile i32 41, ptr addrspace(5) %p, align 4
  %q = getelementptr inbounds [1100 x i32], ptr addrspace(5) %a, i32 0, i32 %i
  %v = load volatile i32, ptr addrspace(5) %q, align 4
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}
"""

TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200")


@pytest.mark.parametrize("cpu", TARGETS)
def test_a_global_store_past_4_kib_lands_at_its_offset(cpu: str) -> None:
    code = build(GLOBAL, cpu=cpu, opt=3)
    res = run(code, (1, 1, 1), (1, 1, 1), [Arg(buffer="out")],
              {"out": np.zeros(1028, np.uint32)})
    assert res.fault is None, res.fault
    got = out(res, "out", np.uint32)
    assert got[1025] == 7 and got[1026] == 8          # bytes 4100 and 4104
    assert np.count_nonzero(got) == 2


def test_gfx1200_folds_the_offset_the_others_cannot() -> None:
    """The case the test above is for: gfx1200's code has the 4100 in the instruction
    (llvm-objdump-22 prints it the same way), gfx942's adds it to the address first."""
    texts = {cpu: [i.text for i in decode_text(read_code_object(build(GLOBAL, cpu=cpu, opt=3)))]
             for cpu in ("gfx942", "gfx1200")}
    assert any("offset:4100" in t for t in texts["gfx1200"])
    assert not any("offset:4100" in t for t in texts["gfx942"])


@pytest.mark.parametrize("cpu", TARGETS)
def test_a_private_word_past_4_kib_reads_back(cpu: str) -> None:
    code = build(SCRATCH, cpu=cpu, opt=0)
    res = run(code, (1, 1, 1), (1, 1, 1),
              [Arg(buffer="out"), Arg(data=(1030).to_bytes(4, "little"))],
              {"out": np.zeros(1, np.uint32)})
    assert res.fault is None, res.fault
    assert out(res, "out", np.uint32)[0] == 41
