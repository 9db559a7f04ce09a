"""The `hip` pipeline up to the runtime call, without a GPU: availability, the device's
processor, the code object, the kernarg bytes and the launch parameters it would use, and
trap records read back after the worker. The runtime calls themselves are `gpu` tests,
skipped with the reason where hip-python, ROCm or an AMD GPU is missing."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from rgpu_fuzz.codeobj import KernargSegment, LoadedKernel, load_kernel
from rgpu_fuzz.model.case import BufferArg, Case, Launch, ScalarArg, Values
from rgpu_fuzz.model.kernel_abi import TRAP_CODES, KernelParam
from rgpu_fuzz.model.outcome import CompileCrash, Ok, RunCrash, Trap, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines import hip
from rgpu_fuzz.pipelines.registry import Registry
from tests.amdgcn_objects import Built, build_all

ADD = next(b for b in build_all()
           if isinstance(b, Built) and b.name == "add" and b.cpu == "gfx942" and b.opt == 3)
"""tests/data/amdgcn/add.ll: `add(a: &[u32], out: &mut [u32], n: u32)` in our kernel ABI."""

PARAMS = (KernelParam("a", Scalar.U32, True), KernelParam("out", Scalar.U32, True, True),
          KernelParam("n", Scalar.U32, False))


def _case() -> Case:
    return Case(entry="add", kernel="(see tests/data/amdgcn/add.ll)",
                launch=Launch(grid=(2, 1, 1), block=(4, 1, 1)),
                args=(BufferArg(name="a", elem=Scalar.U32, len=8, init=Values(tuple(range(8)))),
                      BufferArg(name="out", elem=Scalar.U32, len=8, init=Values((0,) * 8)),
                      ScalarArg(name="n", ty=Scalar.U32, bits=0xFFFF_FFFF)))


def _plan() -> hip.LaunchPlan:
    loaded = load_kernel(ADD.obj, "add")
    assert isinstance(loaded, LoadedKernel), loaded
    return hip.LaunchPlan.of(_case(), PARAMS, loaded)


def test_registered_and_unavailable_here_with_a_reason() -> None:
    pipeline = Registry().create("hip")
    reason = pipeline.unavailable_reason()
    if reason is None:
        pytest.skip("a HIP device is present: covered by the gpu tests")
    assert "\n" not in reason and len(reason) < 200
    assert pipeline.run(_case()).status == "unavailable"


@pytest.mark.parametrize(("arch", "expected"), [
    ("gfx942:sramecc+:xnack-", ("gfx942", "+sramecc,-xnack")),
    ("gfx90a", ("gfx90a", "")),
    ("gfx1100", ("gfx1100", "")),
    ("gfx90a:xnack+", ("gfx90a", "+xnack")),
])
def test_arch_target_from_gcn_arch_name(arch: str, expected: tuple[str, str]) -> None:
    assert hip.arch_target(arch) == expected


def test_launch_parameters() -> None:
    plan = _plan()
    assert (plan.kernel_name, plan.grid, plan.block) == ("add", (2, 1, 1), (4, 1, 1))
    assert plan.buffer_bytes() == {"a": 32, "out": 32}
    assert plan.loaded.code_object.target.name == "gfx942"


def test_kernarg_bytes_at_the_offsets_llvm_reports() -> None:
    """Offsets as `llvm-readelf --notes` prints them for add.ll (a 0, a.len 8, out 16,
    out.len 24, n 32, rgpu.trap 40, hidden_block_count_x 48, hidden_group_size_x 60); the
    values by hand from the case."""
    seg = _plan().kernargs({"a": 0x1000, "out": 0x2000}.__getitem__, 0x3000)
    assert isinstance(seg, KernargSegment)
    d = seg.data
    assert struct.unpack_from("<QQQQI", d, 0) == (0x1000, 8, 0x2000, 8, 0xFFFF_FFFF)
    assert struct.unpack_from("<Q", d, 40) == (0x3000,)
    assert struct.unpack_from("<III", d, 48) == (2, 1, 1)
    assert struct.unpack_from("<HHH", d, 60) == (4, 1, 1)
    assert len(d) == 304 and seg.alignment == 8


def test_signature_that_differs_from_the_metadata_is_a_kernarg_mismatch() -> None:
    loaded = load_kernel(ADD.obj, "add")
    assert isinstance(loaded, LoadedKernel)
    wrong = (*PARAMS[:2], KernelParam("n", Scalar.U64, False))  # the kernel takes a u32
    case = _case()
    case = Case(entry=case.entry, kernel=case.kernel, launch=case.launch,
                args=(*case.args[:2], ScalarArg(name="n", ty=Scalar.U64, bits=1)))
    got = hip.LaunchPlan.of(case, wrong, loaded).kernargs(lambda _n: 0, 0)
    assert isinstance(got, CompileCrash)
    assert (got.stage, got.signature) == ("kernarg", "kernarg-mismatch")
    assert "n: metadata says 4 bytes" in got.log


def test_link_failure_and_unreadable_object_are_compile_crashes() -> None:
    bad = load_kernel(b"\x7fELF garbage", "add")
    assert isinstance(bad, CompileCrash) and bad.stage == "link"
    missing = load_kernel(ADD.obj, "nope")
    assert isinstance(missing, CompileCrash) and missing.stage == "codeobj"
    assert missing.signature.startswith("codeobj-unreadable: no kernel named nope")


def test_a_trap_record_left_by_a_dead_worker_is_the_trap(tmp_path: Path) -> None:
    words = [TRAP_CODES[TrapKind.OUT_OF_BOUNDS], 1, 3, 0, 0, 17, 0, 0]
    (tmp_path / hip.TRAP_FILE).write_bytes(np.array(words, dtype="<u4").tobytes())
    (tmp_path / hip.LOCATIONS_FILE).write_text(json.dumps([[4, 9], [7, 13]]))
    got = hip.trap_after(tmp_path, RunCrash(signal="SIGABRT", log="queue aborted"))
    assert isinstance(got, Trap) and got.kind is TrapKind.OUT_OF_BOUNDS
    assert got.where is not None
    assert (got.where.line, got.where.col, got.where.block, got.where.thread) == (
        7, 13, (3, 0, 0), (17, 0, 0))
    (tmp_path / hip.TRAP_FILE).write_bytes(bytes(32))
    ok = Ok(outputs={})
    assert hip.trap_after(tmp_path, ok) is ok


def _gpu_reason() -> str | None:
    return hip.probe().reason


@pytest.mark.gpu
def test_gpu_add_runs_on_the_device() -> None:
    """On an AMD GPU: add.ll's code object (built for the device's processor) launched with
    the packed kernarg segment; out[i] = a[i] + n by hand (n = 2^32 - 1 wraps to a[i] - 1)."""
    if (reason := _gpu_reason()) is not None:
        pytest.skip(reason)
    import mmap

    arch = hip.probe().archs[0]
    built = next((b for b in build_all() if isinstance(b, Built) and b.name == "add"
                  and b.cpu == hip.arch_target(arch)[0] and b.opt == 3), None)
    if built is None:
        pytest.skip(f"no test code object for {arch}")
    loaded = load_kernel(built.obj, "add")
    assert isinstance(loaded, LoadedKernel)
    plan = hip.LaunchPlan.of(_case(), PARAMS, loaded)
    trap = mmap.mmap(-1, hip.TRAP_RECORD_BYTES)
    rt = hip._Runtime(0)
    try:
        got = hip._launch(rt, plan, trap)
    finally:
        rt.free_all()
    assert isinstance(got, Ok)
    assert got.outputs["out"].values.tolist() == [(i - 1) % 2**32 for i in range(8)]
    assert bytes(trap[:4]) == bytes(4)
