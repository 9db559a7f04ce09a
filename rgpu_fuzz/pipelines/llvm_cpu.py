"""`llvm-cpu`: our lowering → LLVM IR → new-pass-manager optimisation → MCJIT on the host.

Options: `O0`…`O3` (default `O2`), e.g. `llvm-cpu:O3`.

Everything that touches LLVM runs in a worker process (`execute`), since LLVM aborts on
fatal errors and JIT code can crash. The worker writes `rgpu-stage: <stage>` lines to stderr
as it goes, so a dead worker's log says which stage it died in: `lower`, `optimise` and
`codegen` deaths are `CompileCrash`, `run` deaths are `RunCrash`.

Plugin hook: a subclass may override `transform_ir(ir_text) -> ir_text`, applied to the
lowered IR before optimisation and code generation (to seed a miscompilation, say). The
worker re-creates the pipeline from `module:qualname` and the spec, so the subclass must be
importable by module name in the worker (a module on `sys.path`, not a `--plugin` file).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.lower import HostTarget, LowerError, lower_module
from rgpu_fuzz.lower.context import TRAP_CODES
from rgpu_fuzz.model.case import Case, ScalarArg
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Location,
    Ok,
    Outcome,
    RunCrash,
    Stats,
    Timeout,
    Trap,
    Unsupported,
)
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.frontend import prepare

STAGE_PREFIX = "rgpu-stage: "
COMPILE_STAGES = ("check", "lower", "transform", "optimise", "codegen")
DEFAULT_TIMEOUT = 60.0
_KIND_OF_CODE = {code: kind for kind, code in TRAP_CODES.items()}


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker needs: the case as canonical TOML, the optimisation level and the
    pipeline class (`module:qualname`) and spec whose `transform_ir` to apply."""

    case_toml: str
    opt_level: int
    pipeline_class: str
    spec: str


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _stage(name: str) -> None:
    print(f"{STAGE_PREFIX}{name}", file=sys.stderr, flush=True)


class LlvmCpuPipeline(Pipeline):
    """Our LLVM lowering, optimised at `O0`…`O3`, JIT-compiled and run on the host CPU."""

    name = "llvm-cpu"
    description = "our lowering -> LLVM IR -> llvmlite MCJIT on the host (threads as loops)"
    option_help = "O0|O1|O2|O3: optimisation level (default O2)"
    timeout: float = DEFAULT_TIMEOUT

    @property
    def opt_level(self) -> int:
        for opt in self.spec.options:
            if len(opt) == 2 and opt[0] in "Oo" and opt[1] in "0123":
                return int(opt[1])
        return 2

    def transform_ir(self, ir_text: str) -> str:
        """Rewrite the lowered IR before optimisation (identity; a hook for subclasses)."""
        return ir_text

    def _run(self, case: Case) -> Outcome:
        from rgpu_fuzz.pipelines.workers import Died, Done, Raised, TimedOut, call_in_worker

        cls = type(self)
        job = Job(casefile.dumps(case), self.opt_level, f"{cls.__module__}:{cls.__qualname__}",
                  str(self.spec))
        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:execute", job,
                                timeout=self.timeout)
        match result:
            case Done(value=outcome):
                return outcome  # type: ignore[no-any-return]
            case TimedOut(seconds=seconds):
                return Timeout(stage="run", seconds=seconds)
            case Died(signal=sig, log=log):
                stage = last_stage(log)
                if stage in COMPILE_STAGES:
                    return CompileCrash(stage=stage, signature=first_error_line(log, sig),
                                        log=log)
                return RunCrash(signal=sig, log=log)
            case Raised(traceback=tb):
                raise RuntimeError(f"llvm-cpu worker raised:\n{tb}")
        raise AssertionError(result)


def last_stage(log: str) -> str:
    stages = [ln[len(STAGE_PREFIX):].strip() for ln in log.splitlines()
              if ln.startswith(STAGE_PREFIX)]
    return stages[-1] if stages else "run"


def first_error_line(log: str, fallback: str) -> str:
    """The normalised first error line of a crash log (DESIGN.md §6 signatures)."""
    for ln in log.splitlines():
        if ln.startswith(("LLVM ERROR", "error:")) or "Assertion" in ln:
            return ln.strip()
    return fallback


# ---------------------------------------------------------------------- in the worker

_TARGET_MACHINES: dict[int, Any] = {}


def _target_machine(level: int) -> Any:
    import llvmlite.binding as llvm

    if not _TARGET_MACHINES:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
    tm = _TARGET_MACHINES.get(level)
    if tm is None:
        tm = llvm.Target.from_default_triple().create_target_machine(opt=level)
        _TARGET_MACHINES[level] = tm
    return tm


def optimise(ir_text: str, level: int) -> str:
    """Run the new pass manager's `O<level>` pipeline on a fresh module; the optimised text."""
    import llvmlite.binding as llvm

    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    if level > 0:
        tm = _target_machine(level)
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
    return str(mod)


def _pipeline(job: Job) -> LlvmCpuPipeline:
    module, _, qualname = job.pipeline_class.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj(PipelineSpec.parse(job.spec))  # type: ignore[no-any-return]


def execute(job: Job) -> Outcome:
    """Compile and run one case in this process (the worker's job function)."""
    import llvmlite.binding as llvm

    from rgpu_fuzz.lang.printer import print_module

    seconds: dict[str, float] = {}
    artefacts: dict[str, str] = {}
    _stage("check")
    case = casefile.loads(job.case_toml)
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return prepared
    checked, _kernel = prepared
    artefacts["source"] = _sha(print_module(checked.module))
    _stage("lower")
    t = time.perf_counter()
    try:
        lowered = lower_module(checked, case.entry, HostTarget())
    except LowerError as e:
        return Unsupported(features=(f"llvm-cpu: {e.feature}",))
    seconds["lower"] = time.perf_counter() - t
    _stage("transform")
    ir_text = _pipeline(job).transform_ir(lowered.ir)
    artefacts["llvm-ir"] = _sha(ir_text)
    _stage("optimise")
    t = time.perf_counter()
    opt_text = optimise(ir_text, job.opt_level)
    seconds["optimise"] = time.perf_counter() - t
    artefacts["llvm-ir-opt"] = _sha(opt_text)
    _stage("codegen")
    t = time.perf_counter()
    _target_machine(job.opt_level)  # initialises the native target once
    # MCJIT takes ownership of its target machine: a fresh one for every engine
    tm = llvm.Target.from_default_triple().create_target_machine(opt=job.opt_level)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(opt_text), tm)
    engine.finalize_object()
    address = engine.get_function_address(lowered.symbol)
    seconds["codegen"] = time.perf_counter() - t
    _stage("run")
    t = time.perf_counter()
    values = argument_values(case.args)
    slots = np.zeros(max(1, sum(2 if p.slice else 1 for p in lowered.params)), dtype=np.uint64)
    buffers: dict[str, np.ndarray] = {}
    for p in lowered.params:
        v = values[p.name]
        if p.slice:
            arr = np.ascontiguousarray(v)
            buffers[p.name] = arr
            slots[p.slot] = arr.ctypes.data
            slots[p.slot + 1] = len(arr)
        else:
            arg = case.arg(p.name)
            assert isinstance(arg, ScalarArg)
            slots[p.slot] = arg.bits
    launch = np.array([*case.launch.grid, *case.launch.block], dtype=np.int32)
    shared = np.zeros(lowered.shared_bytes, dtype=np.uint64)  # 8-byte aligned
    frames = np.zeros(max(1, lowered.frame_bytes * case.launch.threads_per_block // 8 + 1),
                      dtype=np.uint64)
    trap = np.zeros(8, dtype=np.int32)
    kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 5)(address)
    kernel(slots.ctypes.data, launch.ctypes.data, shared.ctypes.data, frames.ctypes.data,
           trap.ctypes.data)
    seconds["run"] = time.perf_counter() - t
    stats = Stats(seconds=seconds, artefacts=artefacts)
    if trap[0] != 0:
        line, col = lowered.locations[int(trap[1])]
        where = Location(line=line, col=col, block=tuple(int(x) for x in trap[2:5]),  # type: ignore[arg-type]
                         thread=tuple(int(x) for x in trap[5:8]))  # type: ignore[arg-type]
        return Trap(kind=_KIND_OF_CODE[int(trap[0])], where=where, stats=stats)
    outputs = {p.name: Buffer(p.elem, buffers[p.name]) for p in lowered.params
               if p.slice and p.mutable}
    return Ok(outputs=outputs, stats=stats)


__all__ = ["Job", "LlvmCpuPipeline", "execute", "optimise"]

