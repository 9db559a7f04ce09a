"""Evidence for docs/findings/rustc-convergent.md: rustc (1.95) marks no amdgcn function
`convergent`, so LLVM may move a call to a function that runs a wave operation into
divergent control flow, which changes what the wave operation sees.

The kernel (the minicore plus the text below, built as rustc-amdgpu builds its crates) calls
`votes(true)`, a helper returning `ballot(true)`, before a branch on `thread_idx_x() < 5`
that is the only use of the result. With every lane of the wave active at the call, the
ballot has one bit per launched lane; moved into the branch, it has five.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from rgpu_fuzz.pipelines.rustc_amdgpu_build import AMDGPU_FLAGS, RUSTC_ENV, TARGET_TRIPLE
from rgpu_fuzz.pipelines.rustc_amdgpu_program import minicore_source
from rgpu_fuzz.pipelines.rustc_program import find_rustc

pytestmark = pytest.mark.rustc

OPT = "/usr/lib/llvm-22/bin/opt"

KERNEL = r"""
#[inline(never)]
fn votes(c: bool) -> u64 { gpu::ballot(c) }

#[no_mangle]
pub extern "gpu-kernel" fn k(out: *mut u64) {
    let v = votes(true);
    let t = gpu::thread_idx_x();
    if t < 5u32 {
        unsafe { *crate::intrinsics::offset(out, t as usize) = v; }
    }
}
"""


def _rustc_ir(tmp: Path) -> str:
    rustc = find_rustc()
    if rustc is None:
        pytest.skip("rustc not found")
    src = tmp / "conv.rs"
    src.write_text(minicore_source("minicore.rs") + "\n" + minicore_source("gpu_amdgcn.rs")
                   + KERNEL, encoding="utf-8")
    done = subprocess.run([rustc, *AMDGPU_FLAGS, "--target", TARGET_TRIPLE,
                           "-C", "target-cpu=gfx942", "-C", "opt-level=0",
                           "--emit=llvm-ir=conv.ll", src.name], cwd=tmp, capture_output=True,
                          text=True, env={**os.environ, **RUSTC_ENV}, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return (tmp / "conv.ll").read_text()


def _kernel_body(ir: str) -> str:
    m = re.search(r"^define amdgpu_kernel void @k\(.*?^\}", ir, re.MULTILINE | re.DOTALL)
    assert m, ir[:2000]
    return m.group(0)


def _attributes_of(ir: str, fn_pattern: str) -> str:
    """The attribute group text of the definition whose name matches `fn_pattern`."""
    m = re.search(rf"^(?:define|declare) [^\n]*{fn_pattern}[^\n]*#(\d+)(?: \{{)?$", ir,
                  re.MULTILINE)
    assert m, fn_pattern
    group = re.search(rf"^attributes #{m.group(1)} = \{{(.*)\}}$", ir, re.MULTILINE)
    assert group
    return group.group(1)


def _sunk(ir: str, tmp: Path) -> bool:
    """Whether LLVM 22's FunctionAttrs + InstCombine (both in the default pipelines) move
    the call to `votes` below the branch, into the block that stores its value."""
    if not os.access(OPT, os.X_OK):
        pytest.skip("opt-22 not installed")
    path = tmp / "in.ll"
    path.write_text(ir)
    done = subprocess.run([OPT, "-S", "-passes=function-attrs,instcombine", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    body = _kernel_body(done.stdout)
    entry = body.split("\nbb", 1)[0]
    return "votes" not in entry and "votes" in body


def test_rustc_marks_no_function_convergent(tmp_path: Path) -> None:
    ir = _rustc_ir(tmp_path)
    assert "call i64 @llvm.amdgcn.ballot.i64" in ir          # the intrinsic is convergent
    assert "convergent" in _attributes_of(ir, r"@llvm\.amdgcn\.ballot\.i64")
    assert "convergent" not in _attributes_of(ir, "5votes")   # the helper calling it is not
    assert "convergent" not in _attributes_of(ir, "@k")


def test_llvm_sinks_the_call_unless_the_helper_is_convergent(tmp_path: Path) -> None:
    ir = _rustc_ir(tmp_path)
    assert _sunk(ir, tmp_path), "the call to votes stayed before the branch"
    # the same IR with `convergent` on the helper and its call (what clang gives every HIP
    # function, -fconvergent-functions): the call stays where rustc put it
    group = re.search(r"^define [^\n]*5votes[^\n]*#(\d+) \{", ir, re.MULTILINE)
    call = re.search(r"call i64 @\S*5votes\([^)]*\) #(\d+)", ir)
    assert group and call
    for n in {group.group(1), call.group(1)}:
        ir = re.sub(rf"^attributes #{n} = \{{", f"attributes #{n} = {{ convergent", ir,
                    flags=re.MULTILINE)
    assert not _sunk(ir, tmp_path)
