"""The nvptx target and the `nvptx-gpu` pipeline up to the launch, without a GPU.

Every conformance kernel and corpus case becomes PTX at O0 and O3, and NVIDIA's `ptxas`
(from the `nvidia-cuda-nvcc` wheel, installed by `tests.toolchain.pypi_ptxas`) must accept
it. Assertions read LLVM's PTX and ptxas's exit status and messages against the PTX ISA
(cited per test) or the case's source, never constants of the code under test. The launch
itself needs an NVIDIA GPU: those tests are marked `gpu` and skip with the reason here.
"""

from __future__ import annotations

import re
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lower import lower_module
from rgpu_fuzz.lower.nvptx import DATA_LAYOUT, NvptxTarget
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, ScalarArg
from rgpu_fuzz.model.kernel_abi import TRAP_RECORD_WORDS, flatten
from rgpu_fuzz.model.outcome import CompileCrash, Ok, RunCrash, Trap, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, nvptx_target
from rgpu_fuzz.pipelines.hip import LOCATIONS_FILE, TRAP_FILE
from rgpu_fuzz.pipelines.nvptx_gpu import (
    ERROR_FILE,
    NvptxGpuPipeline,
    check_params,
    outcome_after,
    pack_params,
    ptx_param_widths,
    run_job,
    run_ptxas,
)
from rgpu_fuzz.pipelines.options import PipelineError
from tests.toolchain import pypi_ptxas

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "semantics" / "cases").glob("*.toml")) + sorted(
    (ROOT / "corpus").glob("*.toml"))

KERNEL = """use rgpu::*;
#[inline(never)]
fn h(x: i32, s: u8) -> i32 { (x << s) + x.wrapping_div(x | 1i32) - x * x }
#[shared]
static mut T: [f32; 16] = [0.0f32; 16];
#[kernel]
pub fn k(a: &[f32], out: &mut [f32], n: i32, flag: bool) {
    let t: usize = thread_idx_x() as usize;
    let mut local: [u32; 8] = [0u32; 8];
    local[t % 8usize] = block_dim_x() + grid_dim_z();
    unsafe { T[t] = a[t] * a[t] + 1.0f32; }
    sync_threads();
    let v: f32 = unsafe { T[(t + 1usize) % 16usize] };
    let w: i32 = if flag { n } else { 1i32 };
    out[t] = v.mul_add(2.0f32, v.min(v.sqrt())) + (h(n, 3u8) / w) as f32
        + local[(t + 3usize) % 8usize] as f32;
}
"""


def _case() -> Case:
    return Case(entry="k", kernel=KERNEL, launch=Launch(block=(16, 1, 1)), args=(
        BufferArg(name="a", elem=Scalar.F32, len=16, init=Fill(0x3F80_0000)),
        BufferArg(name="out", elem=Scalar.F32, len=16, init=Fill(0)),
        ScalarArg(name="n", ty=Scalar.I32, bits=5),
        ScalarArg(name="flag", ty=Scalar.BOOL, bits=1)))


@cache
def _build(level: int = 2, sm: str = "sm_90") -> GpuBuild:
    got = build_gpu(_case(), nvptx_target(sm), level)
    assert isinstance(got, GpuBuild), got
    return got


@pytest.fixture(scope="session")
def ptxas() -> str:
    return pypi_ptxas()


def _ptxas_accepts(ptxas: str, ptx: str, sm: str = "sm_90") -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        got = run_ptxas(ptxas, ptx, sm, Path(tmp))
    assert isinstance(got, bytes), got
    return got


def test_data_layout_is_the_target_machines() -> None:
    """The module carries LLVM's own NVPTX64 layout (llvmlite emits with the module's)."""
    machine = toolchain.target_machine(nvptx_target("sm_90"), 2)
    assert str(machine.target_data) == DATA_LAYOUT


def test_ir_uses_ptx_kernel_and_nvvm_intrinsics() -> None:
    """LLVM LangRef: `ptx_kernel` marks a PTX entry (LLVM >= 20); ids and sizes are the PTX
    special registers %tid/%ctaid/%ntid/%nctaid (PTX ISA §10)."""
    checked = check_source(KERNEL)
    ir = lower_module(checked, "k", NvptxTarget()).ir
    assert re.search(r'define ptx_kernel void @"?k"?\(', ir)
    assert "llvm.nvvm.read.ptx.sreg.tid.x" in ir and "llvm.nvvm.read.ptx.sreg.ntid.x" in ir
    assert "llvm.nvvm.read.ptx.sreg.nctaid.z" in ir
    assert "addrspace(3)" in ir and "addrspace(5)" not in ir
    assert "fast" not in re.findall(r"\bf(?:add|mul|sub|div)\s+(\w+)", ir)


def test_ptx_follows_the_abi() -> None:
    """Read from LLVM's PTX (PTX ISA 8.x): one `.entry k` with one `.param` per flattened
    argument plus the trap record (a, a.len, out, out.len, n, flag, trap = 7); `bar.sync 0`
    for `sync_threads`; `.shared` for T; the slices via `ld.global`/`st.global`; the
    `#[inline(never)]` helper a real `call`; the local array in the `.local` depot; `trap;`
    after a system-scope compare-exchange of the record (`atom...sys...cas`)."""
    ptx = _build().asm
    assert ".target sm_90" in ptx and ".address_size 64" in ptx
    assert ".visible .entry k(" in ptx
    assert len(ptx_param_widths(ptx, "k")) == 7
    assert re.search(r"\bbar\.sync\s+0;", ptx)
    assert re.search(r"\.shared\s+\.align\s+16\s+\.b8\s+\S+\[64\]", ptx)  # 16 × f32
    assert re.search(r"\bld\.global\.", ptx) and re.search(r"\bst\.global\.", ptx)
    assert re.search(r"\bcall(\.uni)?\s", ptx)
    assert "__local_depot" in ptx
    assert re.search(r"\btrap;", ptx)
    assert re.search(r"\batom\.\S*sys\S*\.cas\.b32|\batom\.\S*cas\S*sys", ptx), ptx[-2000:]
    for sreg in ("%tid.x", "%ntid.x", "%nctaid.z", "%ctaid.x"):
        assert sreg in ptx, sreg


def test_f32_keeps_denormals() -> None:
    """No `.ftz` (flush to zero) on any f32 instruction: our functions ask for IEEE
    denormals. The same IR with `preserve-sign` gets `.ftz` forms from LLVM — so the
    attribute is what decides, and LLVM reads it."""
    build = _build()
    assert ".ftz" not in build.asm
    flushed = build.ir_opt.replace('"denormal-fp-math-f32"="ieee,ieee"',
                                   '"denormal-fp-math-f32"="preserve-sign,preserve-sign"')
    assert flushed != build.ir_opt
    ptx = toolchain.emit_assembly(flushed, nvptx_target("sm_90"), 2)
    assert ".ftz" in ptx
    assert re.search(r"\bfma\.rn\.f32", build.asm) and re.search(r"\bsqrt\.rn\.f32", build.asm)


def test_packing_matches_llvms_param_widths() -> None:
    """PTX ISA "Kernel Function Parameters": pointers and the u64 length are `.u64`, the i32
    `.u32`; a `bool` (IR `i1`) LLVM widens to a byte (`.u8`)."""
    build = _build()
    assert ptx_param_widths(build.asm, "k") == [8, 8, 8, 8, 4, 1, 8]
    packed = pack_params(build.flat_args, [0x1000, 16, 0x2000, 16, 5, 1], 0x3000)
    assert [p.dtype.itemsize for p in packed] == [8, 8, 8, 8, 4, 1, 8]
    assert check_params(packed, [8, 8, 8, 8, 4, 8, 8]) is not None


def test_packed_floats_are_bit_exact() -> None:
    """A signalling NaN scalar travels as its bits (0x7F800001 is an f32 sNaN, IEEE 754
    §6.2.1), not as a Python float that would quiet it."""
    from rgpu_fuzz.model.kernel_abi import KernelParam

    flat = flatten((KernelParam("x", Scalar.F32, slice=False),))
    packed = pack_params(flat, [0x7F80_0001], 0)
    assert packed[0].tobytes() == np.uint32(0x7F80_0001).tobytes()


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_kernel_is_valid_ptx(path: Path, level: int, ptxas: str) -> None:
    """Every conformance and corpus kernel: PTX from LLVM that ptxas assembles for sm_90
    (a rejection is a finding), whose `.param` list our packing matches, with `bar.sync`
    exactly where the source calls `sync_threads()` and `.shared` where it has `#[shared]`."""
    case = casefile.load(path)
    got = build_gpu(case, nvptx_target("sm_90"), level)
    assert isinstance(got, GpuBuild), got
    cubin = _ptxas_accepts(ptxas, got.asm)
    assert cubin[:4] == b"\x7fELF"
    packed = pack_params(got.flat_args, [0] * len(got.flat_args), 0)
    assert check_params(packed, ptx_param_widths(got.asm, got.kernel)) is None
    barrier_in_source = "sync_threads()" in case.kernel
    if level == 0 or not barrier_in_source:
        assert bool(re.search(r"\bbar\.sync\b", got.asm)) == barrier_in_source
    if "#[shared]" in case.kernel and level == 0:
        assert re.search(r"^\s*\.shared\s", got.asm, re.M)


def test_every_sm_is_accepted_by_ptxas(ptxas: str) -> None:
    """The declared targets `sm_80` and `sm_70` are more than names: LLVM writes the PTX
    for them and ptxas assembles it for that SM — except that CUDA 13's ptxas no longer
    knows sm_70 (Volta was dropped in CUDA 13): then no verdict (None), not a finding."""
    for sm in ("sm_80", "sm_70"):
        build = _build(2, sm)
        assert f".target {sm}" in build.asm
        with tempfile.TemporaryDirectory() as tmp:
            got = run_ptxas(ptxas, build.asm, sm, Path(tmp))
        assert isinstance(got, bytes) or (sm == "sm_70" and got is None), got


def test_ptxas_rejection_is_a_compile_crash_with_a_stable_signature(ptxas: str) -> None:
    """PTX for sm_90 assembled for sm_80: ptxas refuses (the `.target` is newer than the
    architecture). The outcome names stage `ptxas`; two different kernels give one
    signature (line numbers and file names blanked)."""
    other = build_gpu(casefile.load(CASES[0]), nvptx_target("sm_90"), 0)
    assert isinstance(other, GpuBuild)
    with tempfile.TemporaryDirectory() as tmp:
        first = run_ptxas(ptxas, _build().asm, "sm_80", Path(tmp))
        second = run_ptxas(ptxas, other.asm, "sm_80", Path(tmp))
    assert isinstance(first, CompileCrash) and isinstance(second, CompileCrash)
    assert first.stage == "ptxas" and first.signature == second.signature
    assert "sm_90" in first.log or "SM" in first.log.upper(), first.log
    assert not re.search(r"line \d", first.signature) and "k.ptx" not in first.signature


def test_the_pipeline_runs_up_to_the_launch(ptxas: str) -> None:
    """In a worker: build, ptxas, param check; the cubin ptxas wrote is among the
    artefacts, each stage's time is recorded."""
    pipe = NvptxGpuPipeline(f"nvptx-gpu:sm_90:O3:ptxas={ptxas}")
    assert pipe.label == f"nvptx-gpu:sm_90:O3:ptxas={ptxas}"
    got = run_job(pipe.job, _case(), pipe.label, 120.0, launch=False)
    assert isinstance(got, Ok), got
    assert {"cubin", "object", "llvm-ir-opt"} <= set(got.stats.artefacts)
    assert {"codegen", "ptxas"} <= set(got.stats.seconds)


def test_options_are_declared() -> None:
    """The spec's tokens in declaration order (SM, level, ...); the defaults sm_90 and O2."""
    assert NvptxGpuPipeline("nvptx-gpu").option(NvptxGpuPipeline.SM) == "sm_90"
    assert NvptxGpuPipeline("nvptx-gpu").option(NvptxGpuPipeline.OPT) == 2
    assert NvptxGpuPipeline("nvptx-gpu:O0:sm_70").label == "nvptx-gpu:sm_70:O0"
    with pytest.raises(PipelineError):
        NvptxGpuPipeline("nvptx-gpu:sm_100")


def test_unavailable_here_says_why() -> None:
    """Without CuPy or a CUDA device the pipeline is unavailable with a one-line reason."""
    reason = NvptxGpuPipeline("nvptx-gpu").unavailable_reason()
    if reason is None:
        pytest.skip("CUDA and a device are present: the pipeline is available")
    assert "\n" not in reason and ("CuPy" in reason or "CUDA" in reason)


def _exchange(tmp: Path, record: list[int] | None, error: str | None) -> Path:
    words = record if record is not None else [0] * TRAP_RECORD_WORDS
    (tmp / TRAP_FILE).write_bytes(np.array(words, dtype="<u4").tobytes())
    (tmp / LOCATIONS_FILE).write_text("[[3, 7], [9, 2]]")
    if error is not None:
        (tmp / ERROR_FILE).write_text(f"{error}\nunspecified launch failure")
    return tmp


def test_a_trap_record_survives_the_dead_context(tmp_path: Path) -> None:
    """After `trap;` the worker exits (its context is dead); the record it left names the
    trap: code 1 = div-by-zero (`kernel_abi.TRAP_CODES`), location 1 = line 9 col 2,
    block (0,1,0), thread (5,0,0)."""
    from rgpu_fuzz.model.kernel_abi import TRAP_CODES

    code = TRAP_CODES[TrapKind.DIV_BY_ZERO]
    ex = _exchange(tmp_path, [code, 1, 0, 1, 0, 5, 0, 0], "CUDA_ERROR_LAUNCH_FAILED")
    got = outcome_after(ex, RunCrash(signal="exit 3"))
    assert isinstance(got, Trap) and got.kind is TrapKind.DIV_BY_ZERO
    assert got.where is not None and (got.where.line, got.where.col) == (9, 2)
    assert got.where.block == (0, 1, 0) and got.where.thread == (5, 0, 0)


def test_a_cuda_error_without_a_record_is_a_run_crash(tmp_path: Path) -> None:
    ex = _exchange(tmp_path, None, "CUDA_ERROR_ILLEGAL_ADDRESS")
    got = outcome_after(ex, RunCrash(signal="exit 3", log="worker log"))
    assert isinstance(got, RunCrash) and got.signal == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert "worker log" in got.log
    (tmp_path / "clean").mkdir()
    clean = outcome_after(_exchange(tmp_path / "clean", None, None), Ok(outputs={}))
    assert isinstance(clean, Ok)


# ---------------------------------------------------------------------- on a GPU


def _gpu_pipeline(level: int) -> NvptxGpuPipeline:
    pipe = NvptxGpuPipeline(f"nvptx-gpu:sm_90:O{level}")
    reason = pipe.unavailable_reason()
    if reason is not None:
        pytest.skip(f"nvptx-gpu unavailable: {reason}")
    return pipe


@pytest.mark.gpu
@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_kernel_agrees_with_ref_on_the_gpu(path: Path, level: int) -> None:
    """On an NVIDIA GPU: the outcome of `nvptx-gpu` agrees with `ref` under the oracle."""
    from oracles import judge, load_policy
    from rgpu_fuzz.cli.reproduce import parsed_kernel
    from rgpu_fuzz.pipelines.registry import Registry

    pipe = _gpu_pipeline(level)
    case = casefile.load(path)
    ours = pipe.run(case)
    ref = Registry().create("ref").run(case)
    verdict = judge(case, {"ref": ref, pipe.label: ours}, load_policy(), parsed_kernel(case))
    assert verdict.agree, (ref, ours)


@pytest.mark.slow
def test_a_thousand_generated_cases_are_valid_ptx(ptxas: str) -> None:
    """1,000 generated seeds at O2: LLVM's PTX for each is accepted by ptxas."""
    from generators import from_seed

    failures = []
    for seed in range(1000):
        got = build_gpu(from_seed(seed), nvptx_target("sm_90"), 2, assembly=False)
        if isinstance(got, CompileCrash):
            failures.append((seed, got.stage, got.signature))
        if not isinstance(got, GpuBuild):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cubin = run_ptxas(ptxas, got.asm, "sm_90", Path(tmp))
        if isinstance(cubin, CompileCrash):
            failures.append((seed, cubin.signature))
    assert not failures, failures[:5]
