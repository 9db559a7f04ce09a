"""The amdgcn lowering and the GPU build stage: every conformance kernel and the
corpus compile for gfx942, and the object follows the ABI documented in
`rgpu_fuzz.lower.amdgcn`.

Every assertion about the ABI reads LLVM's own output — the assembly text and the code-object
metadata the AMDGPU asm printer writes — against facts from AMDGPUUsage (cited per test) or
hand calculation, never against constants of the code under test."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lower import AmdgcnTarget, lower_module
from rgpu_fuzz.lower.amdgcn import DATA_LAYOUT
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, ScalarArg
from rgpu_fuzz.model.outcome import Unsupported
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target
from tests.conformance.known import known_failure

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "semantics" / "cases").glob("*.toml")) + sorted(
    (ROOT / "corpus").glob("*.toml"))

KERNEL = """use rgpu::*;
#[inline(never)]
fn h(x: i32, s: u8) -> i32 { (x << s) + x.wrapping_div(x | 1i32) - x * x }
#[shared]
static mut T: [f32; 16] = [0.0f32; 16];
#[kernel]
pub fn k(a: &[f32], out: &mut [f32], n: i32) {
    let t: usize = thread_idx_x() as usize;
    let mut local: [u32; 8] = [0u32; 8];
    local[t % 8usize] = block_dim_x() + grid_dim_z();
    unsafe { T[t] = a[t] * a[t] + 1.0f32; }
    sync_threads();
    let v: f32 = unsafe { T[(t + 1usize) % 16usize] };
    out[t] = v.mul_add(2.0f32, v.min(v.sqrt())) + (h(n, 3u8) / 7i32) as f32
        + local[(t + 3usize) % 8usize] as f32;
}
"""


def _case(kernel: str = KERNEL) -> Case:
    return Case(entry="k", kernel=kernel, launch=Launch(block=(16, 1, 1)), args=(
        BufferArg(name="a", elem=Scalar.F32, len=16, init=Fill(0x3F80_0000)),
        BufferArg(name="out", elem=Scalar.F32, len=16, init=Fill(0)),
        ScalarArg(name="n", ty=Scalar.I32, bits=5)))


@cache
def _build(cpu: str = "gfx942", level: int = 2) -> GpuBuild:
    got = build_gpu(_case(), gpu_target(cpu), level)
    assert isinstance(got, GpuBuild), got
    return got


def _compile_params() -> list[object]:
    """Every case at O0 and O3, but those whose known failure on gfx942 is an LLVM crash:
    `LLVM ERROR` aborts the process that compiles (the pipelines compile in workers, this
    test in-process), and tests/conformance/known.py already holds them as strict xfails."""
    params: list[object] = []
    for level in (0, 3):
        for path in CASES:
            known = known_failure(path.stem, f"amdgpu-sim:gfx942:O{level}")
            crash = known is not None and known.observed.startswith("CompileCrash")
            marks = (pytest.mark.skip(reason=f"aborts LLVM: {known.klass}"),) \
                if crash and known is not None else ()
            params.append(pytest.param(path, level, marks=marks, id=f"{path.stem}-{level}"))
    return params


@pytest.mark.parametrize(("path", "level"), _compile_params())
def test_every_conformance_and_corpus_kernel_compiles_for_gfx942(path: Path, level: int) -> None:
    """The IR verifies (the toolchain parses and verifies before optimising) and LLVM emits
    an AMDGPU relocatable object whose kernel is the case's entry."""
    case = casefile.load(path)
    got = build_gpu(case, gpu_target("gfx942"), level, assembly=False)
    assert isinstance(got, GpuBuild), got
    assert got.object[:4] == b"\x7fELF" and got.object[16] == 1  # e_type ET_REL
    assert int.from_bytes(got.object[18:20], "little") == 224     # EM_AMDGPU
    assert got.kernel.encode() + b".kd" in got.object               # descriptor symbol


def _args(asm: str) -> list[dict[str, str]]:
    """The `.args` entries of the first kernel in LLVM's `amdgpu_metadata` block."""
    block = asm.split(".amdgpu_metadata", 1)[1].split(".args:", 1)[1]
    block = re.split(r"\n    \.\w", block, maxsplit=1)[0]
    out = []
    for item in block.split("\n      - ")[1:]:
        # LLVM 19 tags YAML-1.1-ambiguous strings (`.name: !str n`); LLVM 22 does not
        out.append(dict(re.findall(r"\.(\w+):\s+(?:!str )?(\S+)", item)))
    return out


def test_kernarg_layout_in_llvms_metadata() -> None:
    """Explicit arguments in signature order with the IR parameter names; offsets by hand:
    pointers and i64 8-byte aligned, i32 4 bytes, explicit area 48 bytes, then the v5
    hidden arguments (AMDGPUUsage "Code Object V5 Metadata": hidden_block_count_x/y/z u32,
    hidden_group_size_x/y/z u16) and `.amdhsa_kernarg_size` = 48 + 256 (v5's implicit
    argument area is 256 bytes)."""
    asm = _build().asm
    args = _args(asm)
    explicit = [(a.get("name"), a["offset"], a["size"], a["value_kind"]) for a in args[:6]]
    assert explicit == [("a", "0", "8", "global_buffer"), ("a.len", "8", "8", "by_value"),
                        ("out", "16", "8", "global_buffer"),
                        ("out.len", "24", "8", "by_value"), ("n", "32", "4", "by_value"),
                        ("rgpu.trap", "40", "8", "global_buffer")]
    hidden = {a["value_kind"]: (a["offset"], a["size"]) for a in args[6:]}
    assert hidden["hidden_block_count_x"] == ("48", "4")
    assert hidden["hidden_block_count_z"] == ("56", "4")
    assert hidden["hidden_group_size_x"] == ("60", "2")
    assert ".amdhsa_kernarg_size 304" in asm
    assert ".amdhsa_code_object_version 5" in asm
    assert re.search(r"\.amdhsa_kernel k\n", asm)


def test_simt_ops_barrier_shared_private_calls_traps() -> None:
    """What the ABI promises, as the gfx942 instructions LLVM chose: the barrier
    (`s_barrier`), LDS accesses for `#[shared]` (`ds_write`/`ds_read`), the noinline helper
    as a real call (`s_swappc_b64`), the trap record's compare-exchange
    (`global_atomic_cmpswap`) and `llvm.trap` as `s_trap 2` (AMDGPUUsage "Trap Handler ABI"),
    the local array in scratch (nonzero `.private_segment_fixed_size`)."""
    asm = _build(level=0).asm
    for needle in ("s_barrier", "ds_write_b32", "ds_read_b32", "s_swappc_b64",
                   "global_atomic_cmpswap", "s_trap 2"):
        assert needle in asm, needle
    sizes = [int(x) for x in re.findall(r"\.amdhsa_private_segment_fixed_size (\d+)", asm)]
    assert sizes and sizes[0] > 0
    lds = re.findall(r"\.amdhsa_group_segment_fixed_size (\d+)", asm)
    assert int(lds[0]) >= 16 * 4  # T: 16 f32


def test_denormals_kept_in_the_kernel_descriptor() -> None:
    """`denormal-fp-math` ieee → FLOAT_DENORM_MODE_32 and _16_64 = 3, "no flush" in both
    directions (AMDGPUUsage, COMPUTE_PGM_RSRC1 table)."""
    for cpu in ("gfx942", "gfx90a", "gfx1100"):
        asm = _build(cpu).asm
        assert ".amdhsa_float_denorm_mode_32 3" in asm, cpu
        assert ".amdhsa_float_denorm_mode_16_64 3" in asm, cpu


def test_other_processors_and_wave_size() -> None:
    """gfx1100 defaults to wave32, gfx942/gfx90a are wave64 (AMDGPUUsage, processor table)."""
    assert '.amdgcn_target "amdgcn-amd-amdhsa--gfx90a' in _build("gfx90a").asm
    w32 = _build("gfx1100").asm
    assert '.amdgcn_target "amdgcn-amd-amdhsa--gfx1100' in w32
    assert ".amdhsa_wavefront_size32 1" in w32
    assert "s_barrier" in w32


def test_ir_facts_no_fast_math_and_module_flag() -> None:
    text = lower_module(check_source(KERNEL, "k.rs"), "k", AmdgcnTarget()).ir
    for flag in ("nsw", "nuw", "fast", "contract", "reassoc", "nnan", "ninf", "afn", "arcp"):
        assert not re.search(rf"\b{flag}\b", text), flag
    assert '!{ i32 1, !"amdhsa_code_object_version", i32 500 }' in text
    assert re.search(r'define amdgpu_kernel void @"k"\(ptr addrspace\(1\) noalias %"a", '
                     r'i64 %"a.len", ptr addrspace\(1\) noalias %"out", i64 %"out.len", '
                     r'i32 %"n", ptr addrspace\(1\) %"rgpu.trap"\)', text)
    assert "addrspace(3) global [16 x float]" in text
    assert re.search(r"alloca \[8 x i32\], addrspace\(5\)", text)
    assert text.count('"denormal-fp-math"="ieee,ieee"') == text.count("define ")


def test_data_layout_is_llvms() -> None:
    tm = toolchain.target_machine(gpu_target("gfx942"), 0)
    assert str(tm.target_data) == DATA_LAYOUT


def test_same_case_twice_same_object_bytes() -> None:
    one = build_gpu(_case(), gpu_target("gfx942"), 3, determinism=True, assembly=False)
    assert isinstance(one, GpuBuild)
    assert "object-again" not in one.stats.artefacts
    assert "llvm-ir-opt-again" not in one.stats.artefacts
    two = build_gpu(_case(), gpu_target("gfx942"), 3, assembly=False)
    assert isinstance(two, GpuBuild) and two.object == one.object


def test_locations_match_the_host_lowering() -> None:
    """A trap's location id means the same source position on both targets."""
    from rgpu_fuzz.lower import HostTarget

    checked = check_source(KERNEL, "k.rs")
    host = lower_module(checked, "k", HostTarget())
    gpu = lower_module(checked, "k", AmdgcnTarget())
    assert gpu.locations == host.locations and len(gpu.locations) > 3


def test_invalid_case_is_a_value() -> None:
    got = build_gpu(_case(KERNEL.replace("n, 3u8", "nope, 3u8")), gpu_target("gfx942"), 0)
    assert not isinstance(got, GpuBuild) and got.status == "rejected"
    assert not isinstance(got, Unsupported)


def test_build_in_worker_same_bytes_and_a_plugin_hook() -> None:
    """The worker's build equals this process's (compilation is deterministic across
    processes), and a plugin's `transform_ir` reaches the GPU IR (the seeded xor → or)."""
    from rgpu_fuzz.pipelines.gpu_build import build_in_worker
    from rgpu_fuzz.pipelines.registry import ClassRef, Registry

    here = _build("gfx942", 2)
    there = build_in_worker(_case(), gpu_target("gfx942"), 2, timeout=120)
    assert isinstance(there, GpuBuild) and there.object == here.object
    reg = Registry()
    (name,) = reg.load_plugin(seeded_plugin("miscompile.py"))
    hook = (ClassRef.of(type(reg.create(name))), name)
    xor_case = _case(KERNEL.replace("x * x }", "(x ^ 3i32) }"))
    hooked = build_in_worker(xor_case, gpu_target("gfx942"), 0, hook=hook, assembly=False)
    assert isinstance(hooked, GpuBuild)
    assert "= or i32" in hooked.ir and "= xor i32" not in hooked.ir


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["gfx90a", "gfx1100"])
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_kernel_compiles_for_the_other_processors(path: Path, cpu: str) -> None:
    case = casefile.load(path)
    for level in range(4):
        known = known_failure(path.stem, f"amdgpu-sim:{cpu}:O{level}")
        if known is not None and known.observed.startswith("CompileCrash"):
            continue  # aborts LLVM in-process; a strict xfail of the conformance suite
        got = build_gpu(case, gpu_target(cpu), level, assembly=False)
        assert isinstance(got, GpuBuild), (level, got)
        assert got.object[:4] == b"\x7fELF"


@pytest.mark.parametrize("major", [19, 22])
def test_gpu_build_through_debian_llc(major: int) -> None:
    """`llc=`: the same optimised IR through Debian's llc (IR adapted for 19 by
    `toolchain.adapt_ir_for`); LLVM 19 and 22 both write the ABI's kernarg layout."""
    from tests.toolchain import debian_llvm_tool

    llc = toolchain.Llc(debian_llvm_tool("llc", major))
    got = build_gpu(_case(), gpu_target("gfx942"), 2, llc=llc)
    assert isinstance(got, GpuBuild), got
    assert ".amdhsa_kernarg_size 304" in got.asm and "s_barrier" in got.asm
    assert [a.get("name") for a in _args(got.asm)[:6]] == [
        "a", "a.len", "out", "out.len", "n", "rgpu.trap"]


@pytest.mark.slow
@pytest.mark.parametrize("major", [19, 22])
def test_every_kernel_through_debian_llc(major: int) -> None:
    from tests.toolchain import debian_llvm_tool

    llc = toolchain.Llc(debian_llvm_tool("llc", major))
    for path in CASES:
        for level in (0, 3):
            got = build_gpu(casefile.load(path), gpu_target("gfx942"), level, llc=llc,
                            assembly=False)
            known = known_failure(path.stem, f"amdgpu-sim:gfx942:O{level}")
            if known is not None and known.observed.startswith("CompileCrash"):
                # the same LLVM bug in llc 19 and 22 (docs/conformance.md "Methods and f16")
                assert "Cannot select" in str(got), (path.stem, level, got)
                continue
            assert isinstance(got, GpuBuild), (path.stem, level, got)
