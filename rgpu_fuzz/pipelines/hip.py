"""`hip`: our lowering → amdgcn object for the device's own processor → ld.lld → code object
→ the HIP runtime (hip-python) on a real AMD GPU (docs/design.md §3).

Options: `O0`…`O3` (default `O2`), `device=N` (HIP device ordinal, default 0), `llc=PATH`,
`det`, `timeout=SECONDS`; e.g. `hip:O3`, `hip:O0:device=1`. The processor is read from the
device (`gcnArchName`, e.g. `gfx942:sramecc+:xnack-`: CPU and features), so the label does
not name it; the outcome's artefacts record the code object's hash.

Steps, each a stage of the worker protocol (`stages`): check, lower, transform, optimise,
codegen (`gpu_build`), `link` and `codeobj` (link, read, verify: `rgpu_fuzz.codeobj`),
`kernarg` (explicit values from the kernel ABI packed by the metadata — the same packer the
simulator uses), then `load` (hipModuleLoadData, hipModuleGetFunction) and `run` (hipMalloc,
hipMemcpy, hipModuleLaunchKernel with the packed segment as the kernarg buffer,
hipDeviceSynchronize, copy back). Device memory and the module are freed also on errors.

Failures are outcomes: a runtime error is `RunCrash(signal="hipErrorXxx")` (or
`CompileCrash(stage="load")` when the runtime refuses the code object). A GPU trap aborts
the HIP process (ROCm's queue-error handler), so the trap record lives in a file the
worker maps into the GPU's address space (hipHostRegister): the parent reads it after the
worker has ended, however it ended, and a record with a code is the `Trap` outcome.

Where hip-python, the ROCm runtime or an AMD GPU is missing, `unavailable_reason` says which
in one line (`rgpu-fuzz pipelines` shows `hip: unavailable (<reason>)`), and campaigns skip
the pipeline.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.codeobj import LoadedKernel, load_kernel
from rgpu_fuzz.codeobj.launch import LaunchPlan
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.kernel_abi import (
    TRAP_RECORD_WORDS,
    decode_trap,
)
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Ok,
    Outcome,
    RunCrash,
    Stats,
    Trap,
)
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.device_probe import ask_runtime
from rgpu_fuzz.pipelines.options import Flag, Int, OptLevel, PathOption
from rgpu_fuzz.pipelines.stages import outcome_of, report_stage
from rgpu_fuzz.pipelines.workers import IMPORT_TIMEOUT_S
from rgpu_fuzz.targets import by_name

__all__ = ["HipPipeline", "Job", "LaunchPlan", "arch_target", "execute", "probe"]

TRAP_RECORD_BYTES = 4 * TRAP_RECORD_WORDS
COMPILE_STAGES = ("check", "lower", "transform", "optimise", "determinism", "codegen",
                  "link", "codeobj", "kernarg", "load")
"""A worker death in these is a `CompileCrash`; in `run` a `RunCrash`."""


# ---------------------------------------------------------------------- availability

_PROBE = """
import json, sys
try:
    from hip import hip
except Exception as e:  # the ROCm runtime library is missing or broken
    print(json.dumps({"reason": f"hip-python cannot load the HIP runtime: {e}"})); sys.exit()
err, count = hip.hipGetDeviceCount()
if int(err) != 0 or count == 0:
    name = getattr(err, "name", str(err))
    print(json.dumps({"reason": f"no AMD GPU visible to HIP ({name})"})); sys.exit()
archs = []
for dev in range(count):
    props = hip.hipDeviceProp_t()
    hip.hipGetDeviceProperties(props, dev)
    arch = props.gcnArchName
    archs.append(arch.decode() if isinstance(arch, bytes) else str(arch))
print(json.dumps({"archs": archs}))
"""


@dataclass(frozen=True, slots=True)
class Probe:
    """What HIP offers here: the devices' `gcnArchName`s, or why nothing."""

    archs: tuple[str, ...] = ()
    reason: str | None = None


@cache
def probe() -> Probe:
    """Ask HIP (in a child process: a broken ROCm install may crash) for its devices; cached
    for the life of this process."""
    got = ask_runtime(module="hip", runtime="HIP", script=_PROBE,
                      missing="hip-python is not installed (pip install 'rgpu-fuzz[hip]' on a "
                              "ROCm machine)")
    if isinstance(got, str):
        return Probe(reason=got)
    return Probe(archs=tuple(got["archs"]))


def arch_target(gcn_arch_name: str) -> tuple[str, str]:
    """(cpu, LLVM feature string) of a `gcnArchName`: `gfx90a:sramecc+:xnack-` →
    (`gfx90a`, `+sramecc,-xnack`) — the code object must carry the device's settings or the
    loader refuses it (AMDGPUUsage "Target ID")."""
    cpu, *features = gcn_arch_name.strip().split(":")
    feats = [f"{f[-1]}{f[:-1]}" for f in features if f and f[-1] in "+-"]
    return cpu, ",".join(feats)


# ---------------------------------------------------------------------- the pipeline


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker needs: the case, the device and its processor, the code generator, and
    the folder (made by the parent) where it leaves the trap record and the location table."""

    case_toml: str
    opt_level: int
    device: int
    arch: str
    llc: str | None
    check_determinism: bool
    exchange: str


class HipPipeline(Pipeline):
    """The same code object the simulator runs, on real hardware through the HIP runtime."""

    name = "hip"
    description = "our lowering -> amdgcn code object for the device -> HIP runtime (AMD GPU)"
    OPT = OptLevel(level=2)
    DEVICE = Int(name="device", value=0, min=0, help="HIP device ordinal")
    LLC = PathOption(name="llc", executable=True,
                     help="code generation by this external llc instead of llvmlite")
    DET = Flag(name="det", execution=True,
               help="compile twice and compare (docs/design.md §3: a difference is a finding)")
    options = (OPT, DEVICE, LLC, DET)
    timeout: float = 120.0
    watchdog_grace = IMPORT_TIMEOUT_S + 30.0

    def unavailable_reason(self) -> str | None:
        found = probe()
        if found.reason is not None:
            return found.reason
        device = self.option(self.DEVICE)
        if device >= len(found.archs):
            return f"device={device} but HIP sees {len(found.archs)} device(s)"
        return None

    @property
    def wave_size(self) -> int:
        """The device's wave size: its processor's default in the target table (the code is
        built without `+wavefrontsize64`); the base rule where no device is here."""
        found = probe()
        device = self.option(self.DEVICE)
        if found.reason is None and device < len(found.archs):
            row = by_name(arch_target(found.archs[device])[0])
            if row is not None:
                return row.wave_size
        return super().wave_size

    def job(self, case: Case, exchange: Path) -> Job:
        arch = probe().archs[self.option(self.DEVICE)]
        return Job(casefile.dumps(case), self.option(self.OPT), self.option(self.DEVICE),
                   arch, self.option(self.LLC), self.option(self.DET), str(exchange))

    def _run(self, case: Case) -> Outcome:
        from rgpu_fuzz.pipelines.workers import call_in_worker

        # /dev/shm where there is one: the trap record's pages are pinned for the GPU
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        with tempfile.TemporaryDirectory(prefix="rgpu-hip-", dir=shm) as tmp:
            exchange = Path(tmp)
            (exchange / TRAP_FILE).write_bytes(bytes(TRAP_RECORD_BYTES))
            result = call_in_worker("rgpu_fuzz.pipelines.hip:execute",
                                    self.job(case, exchange), timeout=self.timeout)
            outcome = outcome_of(result, self.label, COMPILE_STAGES)
            return trap_after(exchange, outcome)


TRAP_FILE = "trap.bin"
LOCATIONS_FILE = "locations.json"


def trap_after(exchange: Path, outcome: Outcome) -> Outcome:
    """The `Trap` the trap record in `exchange` reports — whatever happened to the worker
    after the kernel wrote it (a GPU trap aborts the HIP process) — else `outcome`."""
    record = exchange / TRAP_FILE
    locations = exchange / LOCATIONS_FILE
    if isinstance(outcome, Trap | CompileCrash) or not record.exists() \
            or not locations.exists():
        return outcome
    words = np.frombuffer(record.read_bytes()[:TRAP_RECORD_BYTES], dtype="<u4").tolist()
    table = [tuple(x) for x in json.loads(locations.read_text())]
    trapped = decode_trap(words, table, outcome.stats)  # type: ignore[arg-type]
    return trapped if trapped is not None else outcome


# ---------------------------------------------------------------------- in the worker


class _HipCallError(Exception):
    """A HIP call returned an error: `call` and the runtime's error name."""

    def __init__(self, call: str, name: str) -> None:
        self.call = call
        self.name = name
        super().__init__(f"{call}: {name}")


class _Runtime:
    """The HIP calls this pipeline makes, each checked; `free_all` releases everything taken,
    in reverse order, whatever failed."""

    def __init__(self, device: int) -> None:
        from hip import hip

        self.hip: Any = hip
        self._release: list[tuple[str, Callable[[], object]]] = []
        self.call("hipSetDevice", device)

    def call(self, name: str, *args: Any) -> Any:
        out = getattr(self.hip, name)(*args)
        err, rest = (out[0], out[1:]) if isinstance(out, tuple) else (out, ())
        if int(err) != 0:
            raise _HipCallError(name, getattr(err, "name", str(err)))
        return rest[0] if len(rest) == 1 else rest

    def malloc(self, nbytes: int) -> Any:
        ptr = self.call("hipMalloc", nbytes)
        self._release.append(("hipFree", lambda: self.hip.hipFree(ptr)))
        return ptr

    def load_module(self, image: bytes) -> Any:
        module = self.call("hipModuleLoadData", image)
        self._release.append(("hipModuleUnload", lambda: self.hip.hipModuleUnload(module)))
        return module

    def map_host(self, view: Any, nbytes: int) -> int:
        """A device address for host memory `view` (hipHostRegister, mapped)."""
        address = ctypes.addressof(ctypes.c_char.from_buffer(view))
        self.call("hipHostRegister", address, nbytes, self.hip.hipHostRegisterMapped)
        self._release.append(("hipHostUnregister",
                              lambda: self.hip.hipHostUnregister(address)))
        return int(self.call("hipHostGetDevicePointer", address, 0))

    def free_all(self) -> None:
        while self._release:
            _name, release = self._release.pop()
            release()


def _launch(rt: _Runtime, plan: LaunchPlan, trap_view: Any) -> Outcome:
    hip = rt.hip
    report_stage("load")
    try:
        module = rt.load_module(plan.loaded.hsaco)
        function = rt.call("hipModuleGetFunction", module, plan.kernel_name.encode())
    except _HipCallError as e:
        return CompileCrash(stage="load", signature=str(e))
    report_stage("run")
    addresses: dict[str, int] = {}
    for name, nbytes in plan.buffer_bytes().items():
        ptr = rt.malloc(nbytes)
        addresses[name] = int(ptr)
        host = plan.values.buffers[name]
        if host.nbytes:
            rt.call("hipMemcpy", ptr, host, host.nbytes,
                    hip.hipMemcpyKind.hipMemcpyHostToDevice)
    trap_address = rt.map_host(trap_view, TRAP_RECORD_BYTES)
    segment = plan.kernargs(addresses.__getitem__, trap_address)
    if isinstance(segment, CompileCrash):
        return segment
    payload = (ctypes.c_ubyte * len(segment.data)).from_buffer_copy(segment.data)
    rt.call("hipModuleLaunchKernel", function, *plan.grid, *plan.block, 0, None, None,
            (payload,))
    rt.call("hipDeviceSynchronize")
    outputs = {}
    for name, (elem, host) in plan.values.outputs().items():
        if host.nbytes:
            rt.call("hipMemcpy", host, addresses[name], host.nbytes,
                    hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        outputs[name] = Buffer(elem, host)
    return Ok(outputs=outputs)


def _write_locations(exchange: Path, locations: tuple[tuple[int, int], ...]) -> None:
    (exchange / LOCATIONS_FILE).write_text(json.dumps([list(x) for x in locations]))


def execute(job: Job) -> Outcome:
    """Compile, load and run one case on the GPU (the worker's job function)."""
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target
    from rgpu_fuzz.pipelines.toolchain import Llc

    case = casefile.loads(job.case_toml)
    cpu, features = arch_target(job.arch)
    build = build_gpu(case, gpu_target(cpu, features), job.opt_level,
                      llc=None if job.llc is None else Llc(job.llc),
                      determinism=job.check_determinism, assembly=False)
    if not isinstance(build, GpuBuild):
        return build
    report_stage("link")
    loaded = load_kernel(build.object, build.kernel)
    if not isinstance(loaded, LoadedKernel):
        return loaded
    exchange = Path(job.exchange)
    _write_locations(exchange, build.locations)
    plan = LaunchPlan.of(case, build.params, loaded)
    report_stage("kernarg")
    probe_segment = plan.kernargs(lambda _name: 0, 0)
    if isinstance(probe_segment, CompileCrash):
        return probe_segment
    rt = None
    fd = os.open(exchange / TRAP_FILE, os.O_RDWR)
    trap_map = mmap.mmap(fd, TRAP_RECORD_BYTES)
    try:
        rt = _Runtime(job.device)
        outcome = _launch(rt, plan, trap_map)
    except _HipCallError as e:
        outcome = RunCrash(signal=e.name, log=str(e))
    finally:
        if rt is not None:
            rt.free_all()
        trap_map.close()
        os.close(fd)
    stats = Stats(seconds=build.stats.seconds,
                  artefacts={**build.stats.artefacts,
                             "code-object": _sha256(loaded.hsaco)})
    return _with_stats(outcome, stats)


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _with_stats(outcome: Outcome, stats: Stats) -> Outcome:
    from dataclasses import replace

    return replace(outcome, stats=stats)

