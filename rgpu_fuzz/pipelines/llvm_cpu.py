"""`llvm-cpu`: our lowering → LLVM IR → new-pass-manager optimisation → MCJIT on the host.

Options: `O0`…`O3` (default `O2`) and `timeout=SECONDS` (default 60; compile and run
together), e.g. `llvm-cpu:O3:timeout=30`.

Everything that touches LLVM runs in a worker process (`execute`), since LLVM aborts on
fatal errors and JIT code can crash or loop. The worker writes `rgpu-stage: <stage>` lines to
stderr as it goes, so a dead or hung worker's log says which stage it was in: `lower`,
`transform`, `optimise` and `codegen` deaths are `CompileCrash`, `run` deaths `RunCrash`, and
a `Timeout` carries the stage the worker last reported.

The extension point is `LlvmCpuPipeline.transform_ir` (see the class docstring). The worker
rebuilds the pipeline from a `ClassRef`, importing the `--plugin` file first when the class
came from one, so a subclass may live in an installed module or in a plugin file.
"""

from __future__ import annotations

import ctypes
import hashlib
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.lower import HostTarget, LoweredKernel, LowerError, lower_module
from rgpu_fuzz.lower.context import TRAP_CODES
from rgpu_fuzz.model.case import Case, ScalarArg
from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Location,
    Ok,
    Outcome,
    PipelineFailure,
    RunCrash,
    Stats,
    Timeout,
    Trap,
    Unsupported,
    detail,
)
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.options import Flag, OptLevel
from rgpu_fuzz.pipelines.registry import ClassRef
from rgpu_fuzz.pipelines.workers import IMPORT_TIMEOUT_S

STAGE_PREFIX = "rgpu-stage: "
COMPILE_STAGES = ("check", "lower", "transform", "optimise", "determinism", "codegen")
DEFAULT_TIMEOUT = 60.0
ARTEFACT_KEYS = ("llvm-ir", "llvm-ir-opt", "asm")
"""What `artefacts` returns: lowered (and transformed) IR, optimised IR, host assembly."""
_KIND_OF_CODE = {code: kind for kind, code in TRAP_CODES.items()}


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker needs: the case as canonical TOML, the optimisation level, and the
    pipeline class and spec whose `transform_ir` to apply."""

    case_toml: str
    opt_level: int
    pipeline_class: ClassRef
    spec: str
    check_determinism: bool = False


@dataclass(frozen=True, slots=True)
class ArtefactJob:
    """`compile_texts` up to and including the artefact `upto` (one of `ARTEFACT_KEYS`)."""

    job: Job
    upto: str


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _stage(name: str) -> None:
    print(f"{STAGE_PREFIX}{name}", file=sys.stderr, flush=True)


class LlvmCpuPipeline(Pipeline):
    """Our LLVM lowering, optimised at `O0`…`O3`, JIT-compiled and run on the host CPU.

    Extension point: subclass it, give the subclass a `name`, and override `transform_ir`
    to rewrite the lowered module's IR text before optimisation and code generation — to
    seed a miscompilation, add a pass of your own, or feed the IR to another tool. Register
    the subclass through the `rgpu_fuzz.pipelines` entry-point group or pass its file with
    `--plugin`. The hook runs in the sandboxed worker, so IR that makes LLVM abort becomes
    a `CompileCrash` and code that hangs a `Timeout`; a subclass may set the class attribute
    `timeout` (seconds) to change the default of the `timeout=` option.
    """

    name = "llvm-cpu"
    description = "our lowering -> LLVM IR -> llvmlite MCJIT on the host (threads as loops)"
    OPT = OptLevel(level=2)
    DET = Flag(name="det", execution=True,
               help="compile twice and compare (DESIGN.md §4: a difference is a finding)")
    options = (OPT, DET)
    timeout: float = DEFAULT_TIMEOUT
    watchdog_grace = IMPORT_TIMEOUT_S + 30.0
    """The worker bounds the job itself (and reports the stage); `run`'s own limit is the
    last resort, past the worker's start-up allowance."""

    @property
    def opt_level(self) -> int:
        return self.option(self.OPT)

    @property
    def check_determinism(self) -> bool:
        return self.option(self.DET)

    def transform_ir(self, ir_text: str) -> str:
        """Rewrite the lowered IR text before optimisation; the identity here.

        Runs in the worker, once per compilation. The input is the whole module (the
        kernel's entry function `rgpu_kernel_<entry>`, its per-thread function, helpers);
        the output must parse and verify: IR that does not is a bug in the hook, reported
        as an exception, while valid IR that makes LLVM abort is a `CompileCrash`."""
        return ir_text

    def job(self, case: Case) -> Job:
        """The worker's description of compiling and running `case` with this pipeline."""
        return Job(casefile.dumps(case), self.opt_level, ClassRef.of(type(self)),
                   str(self.spec), self.check_determinism)

    def artefact_text(self, case: Case, kind: str) -> str | None:
        """`reproduce --show ir|asm`: the IR before and after optimisation, or the assembly."""
        texts = artefacts(case, str(self.spec), pipeline=self)
        error = f"; {texts['error']}\n" if "error" in texts else ""
        if kind == "asm":
            return texts.get("asm", "") + error
        if kind == "ir":
            parts = [f"; ---- {key}\n{texts[key]}" for key in ARTEFACT_KEYS[:2] if key in texts]
            return "\n".join(parts) + error
        return None

    def _run(self, case: Case) -> Outcome:
        from rgpu_fuzz.pipelines.workers import Died, Done, Raised, TimedOut, call_in_worker

        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:execute", self.job(case),
                                timeout=self.timeout)
        match result:
            case Done(value=outcome):
                return outcome  # type: ignore[no-any-return]
            case TimedOut(seconds=seconds, log=log):
                return Timeout(stage=last_stage(log), seconds=seconds)
            case Died(signal=sig, log=log):
                stage = last_stage(log)
                if stage in COMPILE_STAGES:
                    return CompileCrash(stage=stage, signature=first_error_line(log, sig),
                                        log=log)
                return RunCrash(signal=sig, log=log)
            case Raised(traceback=tb):
                if self.is_plugin:
                    return PipelineFailure(error=_last_line(tb), traceback=tb)
                raise HarnessBug(f"{self.label} worker raised:\n{tb}")
        raise AssertionError(result)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else "raised"


def last_stage(log: str) -> str:
    """The stage the worker reported last (`run` when it reported none)."""
    stages = [ln[len(STAGE_PREFIX):].strip() for ln in log.splitlines()
              if ln.startswith(STAGE_PREFIX)]
    return stages[-1] if stages else "run"


def first_error_line(log: str, fallback: str) -> str:
    """The first error line of a crash log (`LLVM ERROR: ...`), the signature of DESIGN.md §6;
    the oracle blanks addresses and value numbers in it."""
    for ln in log.splitlines():
        if ln.startswith(("LLVM ERROR", "error:")) or "Assertion" in ln:
            return ln.strip()
    return fallback


def artefacts(case: Case, spec: str = "llvm-cpu", *,
              pipeline: LlvmCpuPipeline | None = None) -> dict[str, str]:
    """The texts behind a run of `case` on `spec` (or on `pipeline`, a plugin subclass
    included): `llvm-ir` (lowered and transformed), `llvm-ir-opt` and `asm` (host assembly),
    computed in a worker. Where a stage crashes, hangs or the case does not compile, the
    texts before it are returned with `error` saying what happened."""
    from rgpu_fuzz.pipelines.workers import Died, Done, Raised, TimedOut, call_in_worker

    p = pipeline if pipeline is not None else LlvmCpuPipeline(PipelineSpec.parse(spec))
    job = p.job(case)
    texts: dict[str, str] = {}
    for upto in reversed(ARTEFACT_KEYS):
        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:compile_texts",
                                ArtefactJob(job, upto), timeout=p.timeout)
        match result:
            case Done(value=got):
                return {**got, **texts}  # type: ignore[dict-item]
            case TimedOut(seconds=seconds, log=log):
                texts.setdefault("error", f"timeout after {seconds:g}s in {last_stage(log)}")
            case Died(signal=sig, log=log):
                texts.setdefault("error", f"{last_stage(log)}: {first_error_line(log, sig)}")
            case Raised(traceback=tb):
                raise HarnessBug(f"{p.label} worker raised:\n{tb}")
    return texts


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


def _lowered_ir(job: Job, case: Case, artefacts_out: dict[str, str],
                seconds: dict[str, float]) -> tuple[LoweredKernel, str | Outcome] | Outcome:
    """Check, lower and transform: the lowered kernel and the IR text to optimise."""
    from rgpu_fuzz.lang.printer import print_module

    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return prepared
    checked, _kernel = prepared
    artefacts_out["source"] = _sha(print_module(checked.module))
    _stage("lower")
    t = time.perf_counter()
    try:
        lowered = lower_module(checked, case.entry, HostTarget())
    except LowerError as e:
        return Unsupported(features=(f"llvm-cpu: {e.feature}",))
    seconds["lower"] = time.perf_counter() - t
    _stage("transform")
    pipeline = job.pipeline_class.load()(PipelineSpec.parse(job.spec))
    assert isinstance(pipeline, LlvmCpuPipeline), pipeline
    if type(pipeline).transform_ir is LlvmCpuPipeline.transform_ir:
        return lowered, lowered.ir
    return lowered, _transformed(pipeline, lowered.ir)


def _transformed(pipeline: LlvmCpuPipeline, ir_text: str) -> str | Outcome:
    """A plugin's `transform_ir` result, or the `CompileCrash(stage="transform")` the README
    promises when it raises, returns something that is not text, or text LLVM cannot parse."""
    import traceback

    import llvmlite.binding as llvm

    try:
        out = pipeline.transform_ir(ir_text)
    except Exception as e:
        return CompileCrash(stage="transform", signature=f"transform_ir raised "
                            f"{type(e).__name__}: {e}".splitlines()[0][:200],
                            log=traceback.format_exc())
    if not isinstance(out, str):
        return CompileCrash(stage="transform", signature=f"transform_ir returned "
                            f"{type(out).__name__}, not LLVM IR text")
    try:
        llvm.parse_assembly(out).verify()
    except RuntimeError as e:
        return CompileCrash(stage="transform", signature=f"transform_ir returned IR LLVM "
                            f"rejects: {str(e).strip().splitlines()[0][:160]}", log=str(e))
    return out


def compile_texts(job: ArtefactJob) -> dict[str, str]:
    """The worker side of `artefacts`."""
    import llvmlite.binding as llvm

    _stage("check")
    case = casefile.loads(job.job.case_toml)
    got = _lowered_ir(job.job, case, {}, {})
    if not isinstance(got, tuple):
        return {"error": f"{got.status}: {detail(got)}"}
    if not isinstance(got[1], str):
        return {"error": f"{got[1].status}: {detail(got[1])}"}
    texts = {"llvm-ir": got[1]}
    if job.upto == "llvm-ir":
        return texts
    _stage("optimise")
    texts["llvm-ir-opt"] = optimise(got[1], job.job.opt_level)
    if job.upto == "llvm-ir-opt":
        return texts
    _stage("codegen")
    tm = _target_machine(job.job.opt_level)
    texts["asm"] = tm.emit_assembly(llvm.parse_assembly(texts["llvm-ir-opt"]))
    return texts


def _compile_again(ir_text: str, opt_text: str, level: int, artefacts_out: dict[str, str],
                   seconds: dict[str, float]) -> None:
    """Optimise and emit an object file twice, each from a fresh module; record the object's
    hash as `object`, and any second result that differs as `<artefact>-again` (the oracle
    reports it as a nondeterminism finding)."""
    import llvmlite.binding as llvm

    _stage("determinism")
    t = time.perf_counter()
    again = optimise(ir_text, level)
    if _sha(again) != artefacts_out["llvm-ir-opt"]:
        artefacts_out["llvm-ir-opt-again"] = _sha(again)
    tm = _target_machine(level)
    first = hashlib.sha256(tm.emit_object(llvm.parse_assembly(opt_text))).hexdigest()
    second = hashlib.sha256(tm.emit_object(llvm.parse_assembly(opt_text))).hexdigest()
    artefacts_out["object"] = first
    if second != first:
        artefacts_out["object-again"] = second
    seconds["determinism"] = time.perf_counter() - t


def execute(job: Job) -> Outcome:
    """Compile and run one case in this process (the worker's job function)."""
    import llvmlite.binding as llvm

    seconds: dict[str, float] = {}
    artefacts_out: dict[str, str] = {}
    _stage("check")
    case = casefile.loads(job.case_toml)
    got = _lowered_ir(job, case, artefacts_out, seconds)
    if not isinstance(got, tuple):
        return got
    lowered, ir_text = got
    if not isinstance(ir_text, str):
        return ir_text
    artefacts_out["llvm-ir"] = _sha(ir_text)
    _stage("optimise")
    t = time.perf_counter()
    opt_text = optimise(ir_text, job.opt_level)
    seconds["optimise"] = time.perf_counter() - t
    artefacts_out["llvm-ir-opt"] = _sha(opt_text)
    if job.check_determinism:
        _compile_again(ir_text, opt_text, job.opt_level, artefacts_out, seconds)
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
    stats = Stats(seconds=seconds, artefacts=artefacts_out)
    if trap[0] != 0:
        line, col = lowered.locations[int(trap[1])]
        where = Location(line=line, col=col, block=tuple(int(x) for x in trap[2:5]),  # type: ignore[arg-type]
                         thread=tuple(int(x) for x in trap[5:8]))  # type: ignore[arg-type]
        return Trap(kind=_KIND_OF_CODE[int(trap[0])], where=where, stats=stats)
    outputs = {p.name: Buffer(p.elem, buffers[p.name]) for p in lowered.params
               if p.slice and p.mutable}
    return Ok(outputs=outputs, stats=stats)


__all__ = ["ARTEFACT_KEYS", "ArtefactJob", "Job", "LlvmCpuPipeline", "artefacts",
           "compile_texts", "execute", "optimise"]
