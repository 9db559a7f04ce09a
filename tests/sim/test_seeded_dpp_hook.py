"""The seeded DPP bug (`rgpu_fuzz/bench/seeded/dpp_row_shr.py`): the first `row_shr:1` of a
code object becomes `row_shr:2`, nothing else.

Independent source: Debian's `llvm-objdump-22` disassembles the code object before and after
the hook (LLVM's own decoder, not the simulator's); llc-22 compiles a kernel of two
`llvm.amdgcn.update.dpp` calls, `row_shr:1` (DPP_CTRL 0x111) and `row_shr:3` (0x113), so the
second one shows that only the first `row_shr:1` moves."""

from __future__ import annotations

import re
import subprocess

import pytest

from rgpu_fuzz.bench.seeded.dpp_row_shr import row_shr_1_to_2
from rgpu_fuzz.codeobj.link import link
from tests.toolchain import debian_llvm_tool

_IR = """define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  %q = getelementptr i32, ptr addrspace(1) %p, i32 %i
  %v = load i32, ptr addrspace(1) %q
  %a = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %v, i32 273, i32 15, i32 15, i1 false)
  %b = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %a, i32 275, i32 15, i32 15, i1 false)
  store i32 %b, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
"""


def _dpp_lines(code_object: bytes, tmp: str) -> list[str]:
    path = f"{tmp}/k.co"
    with open(path, "wb") as f:
        f.write(code_object)
    dump = subprocess.run([debian_llvm_tool("llvm-objdump", 22), "-d", path],
                          capture_output=True, text=True, check=True).stdout
    return [re.sub(r"\s*//.*$", "", line).strip() for line in dump.splitlines()
            if "_dpp" in line]


@pytest.mark.parametrize("cpu", ["gfx942", "gfx1100"])
def test_the_first_row_shr_1_becomes_row_shr_2(cpu: str, tmp_path: object) -> None:
    llc = debian_llvm_tool("llc", 22)
    obj = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-O2",
                          "-filetype=obj", "-", "-o", "-"], input=_IR.encode(),
                         capture_output=True, check=True).stdout
    code_object = link(obj)
    assert isinstance(code_object, bytes), code_object
    before = _dpp_lines(code_object, str(tmp_path))
    hooked = row_shr_1_to_2(code_object)
    after = _dpp_lines(hooked, str(tmp_path))
    assert len(before) == 2 and "row_shr:1 " in before[0] and "row_shr:3 " in before[1]
    assert after == [before[0].replace("row_shr:1 ", "row_shr:2 "), before[1]]
    assert len(hooked) == len(code_object)
    assert sum(a != b for a, b in zip(hooked, code_object, strict=True)) == 1  # one byte
    assert row_shr_1_to_2(hooked) == hooked  # no row_shr:1 left: unchanged
