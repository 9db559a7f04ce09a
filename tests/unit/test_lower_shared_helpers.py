"""A helper `fn` that reads or writes a `#[shared]` static, on the SIMT targets.

The bug this guards: the shared arrays' `addrspace(3)` globals were made with the kernel
entry, after the helpers had been lowered, so a helper computed the address from its null
shared-memory base argument; at O0 the store went through address null (`sim-oob-access`),
at O3 LLVM deleted it. Expected values come from the real rustc
(`tests/semantics/expected/shared_helpers.json`, written by `regen_expected.py`); the IR and
assembly facts are read from LLVM's own output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lower import AmdgcnTarget, lower_module
from rgpu_fuzz.lower.nvptx import NvptxTarget
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target
from rgpu_fuzz.pipelines.registry import Registry
from tests.semantics.expected_values import CASES, load_expected, output_mismatches

KERNEL = """use rgpu::*;
#[shared]
static mut S: [u32; 8] = [0u32; 8];
#[inline(never)]
fn inner(i: usize, v: u32) { unsafe { S[i] = v; S[i] += 1u32; } }
#[inline(never)]
fn outer(i: usize, v: u32) -> u32 { inner(i, v); unsafe { S[i] } }
#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    out[t] = outer(t, a[t]);
}
"""


def _helper_ir(ir_text: str, name: str) -> str:
    m = re.search(r'define internal \S+ @"?' + re.escape(name) + r'"?\(.*?\n}\n', ir_text, re.S)
    assert m, name
    return m.group(0)


@pytest.mark.parametrize("target", [AmdgcnTarget(), NvptxTarget()], ids=lambda t: t.name)
def test_helpers_address_shared_through_the_global(target: object) -> None:
    """Both helpers (the one that stores and the caller that reads after the call) index
    the `addrspace(3)` global, never their null base pointer argument."""
    lowered = lower_module(check_source(KERNEL), "k", target)  # type: ignore[arg-type]
    for name in ("inner", "outer"):
        body = _helper_ir(lowered.ir, name)
        assert 'ptr addrspace(3) @"rgpu.shared.S"' in body, body
        assert "getelementptr i8, ptr %" not in body, body  # the host's base + offset


@pytest.mark.parametrize("level", [0, 3])
def test_helper_store_is_an_lds_store(level: int) -> None:
    """LLVM's gfx942 assembly of the noinline helper `inner` writes LDS (`ds_write_b32`);
    the bug made it a flat store to address null at O0 and nothing at all at O3."""
    case = casefile.loads(casefile.dumps(casefile.load(CASES / "shared_helpers.toml")))
    got = build_gpu(case, gpu_target("gfx942"), level)
    assert isinstance(got, GpuBuild), got
    put = got.asm.split("put:", 1)[1].split(".Lfunc_end", 1)[0]
    assert "ds_write_b32" in put, put[:2000]


@pytest.mark.parametrize("name", ["shared_helpers", "shared_3d_phases"])
@pytest.mark.parametrize("spec", ["amdgpu-sim:gfx942:O0", "amdgpu-sim:gfx942:O3",
                                  "amdgpu-sim:gfx1100:O0", "amdgpu-sim:gfx90a:O2"])
def test_shared_helper_cases_compute_what_rustc_computed(spec: str, name: str) -> None:
    """`shared_helpers`: reads, writes, compound assignment, a helper-calls-helper chain, a
    sub-word element and a helper with a `mut` parameter called in a condition.
    `shared_3d_phases`: a 3-D launch of 27-thread blocks (no full wave), a writer helper
    that reads `thread_idx_z()`, `op=` on shared elements in the kernel and in helpers,
    `.len()` of shared arrays, `break`/`continue` in a loop of a kernel with barriers."""
    case = casefile.load(CASES / f"{name}.toml")
    outcome = Registry().create(spec).run(case)
    assert isinstance(outcome, Ok), outcome
    got = {b: outcome.outputs[b].bits() for b in outcome.outputs}
    assert output_mismatches(case, got, load_expected(name)["outputs"]) == []


@pytest.mark.parametrize("name", ["shared_helpers", "shared_3d_phases"])
def test_case_file_is_canonical(name: str) -> None:
    path = Path(CASES / f"{name}.toml")
    assert casefile.dumps(casefile.load(path)) == path.read_text(encoding="utf-8")
