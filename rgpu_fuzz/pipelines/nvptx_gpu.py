"""`nvptx-gpu`: our SIMT lowering → nvptx64 PTX (llvmlite) → `ptxas` (when present) → the
CUDA driver through CuPy on a real NVIDIA GPU.

Options: `sm_90` | `sm_80` | `sm_70` (the PTX target, default `sm_90`), `O0`…`O3` (default
`O2`), `device=N` (CUDA device ordinal), `ptxas=PATH` (default: the `ptxas` of the
`nvidia-cuda-nvcc` wheel in this Python environment, if installed), `det`, `timeout=`; e.g.
`nvptx-gpu:sm_90:O3`.

Stages, each reported by the worker (`stages`): check, lower, transform, optimise, codegen
(`gpu_build`: PTX text, a fresh module per emission), `ptxas` (NVIDIA's assembler run on
LLVM's PTX for the pipeline's SM; a rejection is `CompileCrash(stage="ptxas")` with the
first error line normalised — a finding against LLVM's NVPTX back end or ptxas; skipped
where no ptxas is found or it does not know the SM: CUDA 13's ptxas has no sm_70),
`params` (the argument values packed for the PTX entry's `.param` list, checked against the
widths LLVM declared), then `load` (the driver JIT-compiles the
PTX: `cupy.cuda.function.Module.load`) and `run` (buffers allocated and copied in, launch,
synchronise, outputs copied out).

Kernel arguments: the flattened ABI (`kernel_abi.flatten`, trap record pointer last), one
numpy scalar per PTX `.param`: pointers and lengths `u64`, a scalar its bit pattern as the
unsigned integer of its width (`bool` as `u8`), so floats travel bit-exact (a float object
would quiet an sNaN).

Traps: `llvm.trap` is PTX `trap;`, which aborts the grid and leaves the CUDA context in a
sticky error state (every later call fails with CUDA_ERROR_LAUNCH_FAILED or
CUDA_ERROR_ILLEGAL_INSTRUCTION). So, as for `hip`, the trap record lives in a file in the
parent's exchange folder, mapped by the worker and registered as mapped pinned host memory
(`cudaHostRegister(..., cudaHostRegisterMapped)`): the kernel's system-scope release fence
before `trap;` makes the record visible to the host. After a CUDA error the worker writes
the error's name to the exchange folder and exits (its context is unusable; the pool starts a
fresh worker). The parent then decides: a record with a code is the `Trap` it names
(location, block, thread); an error without a record is `RunCrash(signal=<CUDA error
name>)`; a worker that died without either is the `RunCrash`/`CompileCrash` of the stage it
was in (`stages.outcome_of`).

The worker runs without the pool's address-space limit: CUDA reserves far more virtual
address space than any limit that would still catch a runaway compile.

`unavailable_reason`: CuPy not installed, no CUDA driver, no device, or a device older than
the chosen SM — one line (`rgpu-fuzz pipelines` shows `nvptx-gpu: unavailable (<reason>)`).
"""

from __future__ import annotations

import importlib.util
import json
import mmap
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.lower.nvptx import PTX_SM_DEFAULT, PTX_SMS
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.kernel_abi import (
    TRAP_RECORD_WORDS,
    ArgRole,
    ArgumentValues,
    FlatArg,
    KernelParam,
    flatten,
)
from rgpu_fuzz.model.outcome import Buffer, CompileCrash, Ok, Outcome, RunCrash, Stats
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.device_probe import ask_runtime
from rgpu_fuzz.pipelines.hip import LOCATIONS_FILE, TRAP_FILE, trap_after
from rgpu_fuzz.pipelines.options import Choice, Flag, Int, KeyChoice, OptLevel, PathOption
from rgpu_fuzz.pipelines.stages import outcome_of, report_stage
from rgpu_fuzz.pipelines.toolchain import normalise_error_line
from rgpu_fuzz.pipelines.workers import IMPORT_TIMEOUT_S
from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.targets import NVPTX_WARP_SIZE

__all__ = ["NvptxGpuPipeline", "NvptxJob", "check_params", "execute", "find_ptxas",
           "outcome_after", "pack_params", "probe", "ptx_param_widths", "run_job", "run_ptxas"]

TRAP_RECORD_BYTES = 4 * TRAP_RECORD_WORDS
ERROR_FILE = "cuda-error.txt"
COMPILE_STAGES = ("check", "lower", "transform", "optimise", "determinism", "codegen",
                  "ptxas", "params", "load")
"""A worker death in these is a `CompileCrash`; in `run` a `RunCrash`."""
PTXAS_TIMEOUT_S = 120.0
CUDA_HOST_REGISTER_MAPPED = 2
"""`cudaHostRegisterMapped` (CUDA Runtime API, `cudaHostRegister` flags)."""


# ---------------------------------------------------------------------- ptxas


def find_ptxas() -> str | None:
    """The `ptxas` of the `nvidia-cuda-nvcc` wheel installed in this environment (CUDA 13
    wheels: `nvidia/cu13/bin`; CUDA 12: `nvidia/cuda_nvcc/bin`), or None. Deliberately not
    `PATH`: a result must not depend on whatever toolkit a machine happens to have."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for found in sorted(Path(root).glob("*/bin/ptxas")):
            if os.access(found, os.X_OK):
                return str(found)
    return None


_PTXAS_NOISE = (
    (re.compile(r"^ptxas\s+\S+,\s*line\s+\d+;\s*"), ""),  # `ptxas k.ptx, line 12; `
)


_UNKNOWN_SM = re.compile(r"Value '\w+' is not defined for option 'gpu-name'")
"""ptxas's answer for an SM it no longer supports (CUDA 13 dropped sm_70)."""


def run_ptxas(ptxas: str, ptx: str, sm: str, workdir: Path) -> CompileCrash | bytes | None:
    """Assemble `ptx` for `sm`: the cubin, the `CompileCrash(stage="ptxas")` it is, or None
    when this ptxas does not know `sm` at all (no verdict on the PTX)."""
    (workdir / "k.ptx").write_text(ptx)
    proc = run_bounded([ptxas, f"-arch={sm}", "k.ptx", "-o", "k.cubin"], cwd=workdir,
                       timeout=PTXAS_TIMEOUT_S)
    if proc.returncode != 0:
        text = (proc.stderr or proc.stdout).strip()
        if _UNKNOWN_SM.search(text):
            return None
        lines = [ln for ln in text.splitlines() if "error" in ln.lower()] or text.splitlines()
        first = lines[0] if lines else f"ptxas ended by {proc.ended_by}"
        for pattern, repl in _PTXAS_NOISE:
            first = pattern.sub(repl, first)
        return CompileCrash(stage="ptxas", signature="ptxas: " + normalise_error_line(first),
                            log=text[-4000:])
    return (workdir / "k.cubin").read_bytes()


# ---------------------------------------------------------------------- kernel arguments

_PARAM_LINE = re.compile(r"\.param\s+\.(?:[usb](\d+)|f(\d+))\b[^,)]*?(\w+_param_(\d+))")


def ptx_param_widths(ptx: str, kernel: str) -> list[int]:
    """Byte width of each `.param` of PTX entry `kernel`, as LLVM declared them (PTX ISA
    "Kernel Function Parameters": `.param .u64 .ptr .global .align 1 k_param_0`)."""
    start = re.search(rf"\.entry\s+{re.escape(kernel)}\s*\(", ptx)
    if start is None:
        return []
    head = ptx[start.end(): ptx.index(")", start.end())]
    return [int(m.group(1) or m.group(2)) // 8 for m in _PARAM_LINE.finditer(head)]


def _param_dtype(arg: FlatArg) -> np.dtype:
    if arg.role is not ArgRole.SCALAR:
        return np.dtype("<u8")
    return np.dtype(arg.scalar.bits_dtype)


def pack_params(flat_args: tuple[FlatArg, ...], words: list[int],
                trap_address: int) -> tuple[np.generic, ...]:
    """One numpy scalar per PTX `.param`, in order: the flattened values (`words`, buffers
    as device addresses), then the trap record's device address."""
    out: list[np.generic] = []
    for arg, value in zip(flat_args, words, strict=True):
        dtype = _param_dtype(arg)
        out.append(dtype.type(value & ((1 << (8 * dtype.itemsize)) - 1)))
    out.append(np.uint64(trap_address))
    return tuple(out)


def check_params(packed: tuple[np.generic, ...], widths: list[int]) -> CompileCrash | None:
    """A mismatch between our packing and LLVM's `.param` list (our ABI bug, or LLVM's)."""
    ours = [int(p.dtype.itemsize) for p in packed]
    if ours == widths:
        return None
    return CompileCrash(stage="params", signature="PTX .param widths differ from the ABI",
                        log=f"packed {ours}, PTX declares {widths}")


# ---------------------------------------------------------------------- availability

_PROBE = """
import json
try:
    import cupy
    from cupy.cuda import runtime
except Exception as e:
    print(json.dumps({"reason": f"CuPy cannot load CUDA: {type(e).__name__}: {e}"}))
    raise SystemExit
try:
    count = runtime.getDeviceCount()
    sms = []
    for d in range(count):
        p = runtime.getDeviceProperties(d)
        sms.append(10 * int(p["major"]) + int(p["minor"]))
except Exception as e:
    print(json.dumps({"reason": f"no CUDA device ({type(e).__name__}: {e})"[:200]}))
    raise SystemExit
print(json.dumps({"sms": sms} if sms else {"reason": "no CUDA device"}))
"""


@dataclass(frozen=True, slots=True)
class Probe:
    """The compute capabilities (`90` for sm_90) of the devices CUDA sees, or why none."""

    sms: tuple[int, ...] = ()
    reason: str | None = None


@cache
def probe() -> Probe:
    """Ask CUDA through CuPy, in a child process (a broken driver may crash it); cached."""
    got = ask_runtime(module="cupy", runtime="CUDA", script=_PROBE,
                      missing="CuPy is not installed (pip install 'rgpu-fuzz[cuda]' on a "
                              "machine with an NVIDIA GPU and driver)")
    if isinstance(got, str):
        return Probe(reason=got)
    return Probe(sms=tuple(int(x) for x in got["sms"]))


# ---------------------------------------------------------------------- the pipeline


@dataclass(frozen=True, slots=True)
class NvptxJob:
    """What the worker needs: the case, the target, where ptxas is, and the exchange folder
    (made by the parent) for the trap record, the location table and a CUDA error."""

    case_toml: str
    sm: str
    opt_level: int
    device: int
    ptxas: str | None
    check_determinism: bool
    exchange: str
    launch: bool = True
    """False: stop after `params` (everything up to the driver; tests here)."""
    waveops: WaveOps = WaveOps.INTRINSIC


class NvptxGpuPipeline(Pipeline):
    """Our lowering on an NVIDIA GPU: a third opinion beside `ref` and `amdgpu-sim`."""

    name = "nvptx-gpu"
    description = "our lowering -> nvptx64 PTX (llvmlite) -> ptxas check -> CUDA via CuPy"
    SM = Choice(name="sm", choices=PTX_SMS, choice=PTX_SM_DEFAULT)
    OPT = OptLevel(level=2)
    DEVICE = Int(name="device", value=0, min=0, help="CUDA device ordinal")
    PTXAS = PathOption(name="ptxas", executable=True,
                       help="NVIDIA ptxas to validate LLVM's PTX (default: the "
                            "nvidia-cuda-nvcc wheel's, when installed)")
    DET = Flag(name="det", execution=True,
               help="compile twice and compare (docs/design.md §3: a difference is a finding)")
    WAVEOPS = KeyChoice(name="waveops", choices=tuple(WaveOps),
                        help="wave reductions: redux.sync (sm_80 and up) or a shfl.sync "
                             "ladder (rgpu_fuzz.lower.nvptx_waves)")
    options = (SM, OPT, WAVEOPS, DEVICE, PTXAS, DET)

    timeout: float = 120.0
    watchdog_grace = IMPORT_TIMEOUT_S + 30.0

    @property
    def wave_size(self) -> int:
        """A warp: the wave functions run over 32 lanes on every SM."""
        return NVPTX_WARP_SIZE

    def unavailable_reason(self) -> str | None:
        found = probe()
        if found.reason is not None:
            return found.reason
        device = self.option(self.DEVICE)
        if device >= len(found.sms):
            return f"device={device} but CUDA sees {len(found.sms)} device(s)"
        want = int(self.option(self.SM).removeprefix("sm_"))
        if found.sms[device] < want:
            return f"device {device} is sm_{found.sms[device]}, older than {self.option(self.SM)}"
        return None

    def job(self, case: Case, exchange: Path, *, launch: bool = True) -> NvptxJob:
        return NvptxJob(casefile.dumps(case), self.option(self.SM), self.option(self.OPT),
                        self.option(self.DEVICE), self.option(self.PTXAS) or find_ptxas(),
                        self.option(self.DET), str(exchange), launch,
                        WaveOps(self.option(self.WAVEOPS)))

    def _run(self, case: Case) -> Outcome:
        return run_job(self.job, case, self.label, self.timeout)


def run_job(make_job: Any, case: Case, label: str, timeout: float,
            launch: bool = True) -> Outcome:
    """Run `execute` in a worker with a fresh exchange folder; map what it left to an
    outcome (module docstring, "Traps")."""
    from rgpu_fuzz.pipelines.workers import call_in_worker

    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="rgpu-nvptx-", dir=shm) as tmp:
        exchange = Path(tmp)
        (exchange / TRAP_FILE).write_bytes(bytes(TRAP_RECORD_BYTES))
        result = call_in_worker("rgpu_fuzz.pipelines.nvptx_gpu:execute",
                                make_job(case, exchange, launch=launch), timeout=timeout,
                                memory_mb=0)
        return outcome_after(exchange, outcome_of(result, label, COMPILE_STAGES))


def outcome_after(exchange: Path, outcome: Outcome) -> Outcome:
    """The outcome once the worker has ended: the `Trap` a trap record names; else the CUDA
    error the worker left (`RunCrash(signal=<error name>)`); else `outcome`."""
    trapped = trap_after(exchange, outcome)
    if trapped is not outcome:
        return trapped
    error = exchange / ERROR_FILE
    if not error.exists() or isinstance(outcome, CompileCrash):
        return outcome
    name, _, log = error.read_text().partition("\n")
    if isinstance(outcome, RunCrash):
        log = f"{log}\n{outcome.log}".strip()
    return RunCrash(signal=name, log=log, stats=outcome.stats)


# ---------------------------------------------------------------------- in the worker


@dataclass(frozen=True)
class PtxPlan:
    """Everything up to the driver: the PTX, its kernel, the argument values and how to
    pack them once buffers have device addresses."""

    ptx: str
    kernel: str
    case: Case
    params: tuple[KernelParam, ...]
    values: ArgumentValues

    def pack(self, address_of: Any, trap_address: int) -> tuple[np.generic, ...]:
        return pack_params(flatten(self.params), self.values.words(address_of), trap_address)


class _CudaError(Exception):
    """A CUDA call failed: the error's name (`CUDA_ERROR_LAUNCH_FAILED`, ...)."""


def _cuda_error_name(e: BaseException) -> str:
    text = str(e)
    m = re.search(r"\b(CUDA_ERROR_\w+|cudaError\w+)\b", text)
    return m.group(1) if m else type(e).__name__


def _launch(plan: PtxPlan, device: int, trap_view: Any) -> Outcome:
    import cupy
    from cupy.cuda import runtime
    from cupy.cuda.driver import CUDADriverError

    cupy.cuda.Device(device).use()
    report_stage("load")
    try:
        module = cupy.cuda.function.Module()
        module.load(plan.ptx.encode())
        function = module.get_function(plan.kernel)
    except CUDADriverError as e:  # the driver's JIT refused LLVM's PTX
        return CompileCrash(stage="load", signature=f"cuModuleLoadData: {_cuda_error_name(e)}",
                            log=str(e)[-2000:])
    report_stage("run")
    host_address = np.frombuffer(trap_view, dtype=np.uint8).ctypes.data
    runtime.hostRegister(host_address, TRAP_RECORD_BYTES, CUDA_HOST_REGISTER_MAPPED)
    try:
        trap_address = int(runtime.hostGetDevicePointer(host_address, 0))
        device_arrays = {}
        for name, host in plan.values.buffers.items():
            arr = cupy.empty(max(1, host.nbytes), dtype=np.uint8)
            if host.nbytes:
                arr[: host.nbytes].set(host.view(np.uint8).reshape(-1))
            device_arrays[name] = arr
        args = plan.pack(lambda name: int(device_arrays[name].data.ptr), trap_address)
        function(plan.case.launch.grid, plan.case.launch.block, args)
        runtime.deviceSynchronize()
        outputs = {}
        for name, (elem, host) in plan.values.outputs().items():
            if host.nbytes:
                got = device_arrays[name][: host.nbytes].get()
                host.view(np.uint8).reshape(-1)[:] = got
            outputs[name] = Buffer(elem, host)
        return Ok(outputs=outputs)
    finally:
        try:
            runtime.hostUnregister(host_address)
        except runtime.CUDARuntimeError:  # the context died with a trap: nothing to release
            pass


def execute(job: NvptxJob) -> Outcome:
    """Compile, check, load and run one case (the worker's job function). After a CUDA
    error the worker leaves the error's name in the exchange folder and exits (module
    docstring, "Traps")."""
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, nvptx_target

    case = casefile.loads(job.case_toml)
    build = build_gpu(case, nvptx_target(job.sm), job.opt_level,
                      determinism=job.check_determinism, waveops=job.waveops)
    if not isinstance(build, GpuBuild):
        return build
    exchange = Path(job.exchange)
    (exchange / LOCATIONS_FILE).write_text(json.dumps([list(x) for x in build.locations]))
    artefacts = dict(build.stats.artefacts)
    seconds = dict(build.stats.seconds)
    if job.ptxas is not None:
        report_stage("ptxas")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="rgpu-ptxas-") as tmp:
            cubin = run_ptxas(job.ptxas, build.asm, job.sm, Path(tmp))
        seconds["ptxas"] = time.perf_counter() - started
        if isinstance(cubin, CompileCrash):
            return replace(cubin, stats=build.stats)
        if cubin is not None:
            artefacts["cubin"] = _sha256(cubin)
    stats = Stats(seconds=seconds, artefacts=artefacts)
    report_stage("params")
    plan = PtxPlan(build.asm, build.kernel, case, build.params,
                   ArgumentValues.of(case, build.params))
    mismatch = check_params(plan.pack(lambda _name: 0, 0),
                            ptx_param_widths(build.asm, build.kernel))
    if mismatch is not None:
        return replace(mismatch, stats=stats)
    if not job.launch:
        return Ok(outputs={}, stats=stats)
    from cupy.cuda.driver import CUDADriverError
    from cupy.cuda.runtime import CUDARuntimeError

    fd = os.open(exchange / TRAP_FILE, os.O_RDWR)
    trap_map = mmap.mmap(fd, TRAP_RECORD_BYTES)
    try:
        outcome = _launch(plan, job.device, trap_map)
    except (CUDADriverError, CUDARuntimeError) as e:  # the context may be dead: end here
        (exchange / ERROR_FILE).write_text(f"{_cuda_error_name(e)}\n{e}"[:4000])
        sys.stderr.flush()
        os._exit(3)
    finally:
        trap_map.close()
        os.close(fd)
    return replace(outcome, stats=stats)


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
