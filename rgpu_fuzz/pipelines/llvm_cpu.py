"""`llvm-cpu`: our lowering → LLVM IR → new-pass-manager optimisation → MCJIT on the host.

Options: `O0`…`O3` (default `O2`), `timeout=SECONDS` (default 60; compile and run together),
`isel=dag|global` (the instruction selector, `toolchain.Isel`; default `dag`),
`det` (compile twice and compare: every case run alone, and in a batch one case in
`detsample=N`, default 4, chosen by its id; `DET_SAMPLE`), `llc=PATH` (code generation by
an external `llc`, whose object MCJIT then loads), e.g. `llvm-cpu:O3:timeout=30`,
`llvm-cpu:O2:llc=/usr/bin/llc-19`.

Everything that touches LLVM runs in a worker process (`execute`), since LLVM aborts on
fatal errors and JIT code can crash or loop; the shared stages (`llvm_stages`: check, lower,
transform, optimise, determinism) report themselves to the parent (`stages`), so a death is a
`CompileCrash` in its stage or a `RunCrash`, and a hang a `Timeout` in the stage it hung in.
What is particular to this pipeline: the host target, MCJIT, and calling the kernel through
ctypes with the host ABI of `rgpu_fuzz.lower.HostTarget`.

The extension point is `LlvmCpuPipeline.transform_ir` (see the class docstring). The worker
rebuilds the pipeline from a `ClassRef`, importing the `--plugin` file first when the class
came from one, so a subclass may live in an installed module or in a plugin file.
"""

from __future__ import annotations

import ctypes
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.lower import HostTarget, LoweredKernel
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.kernel_abi import TRAP_RECORD_WORDS, ArgumentValues, decode_trap
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, Stats, detail
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.batching import BATCH_PREFIX, link_modules, run_in_batches
from rgpu_fuzz.pipelines.llvm_stages import (
    COMPILE_STAGES,
    LlvmBuild,
    StageClock,
    case_of,
    crash,
    lower_and_optimise,
)
from rgpu_fuzz.pipelines.options import Flag, Int, KeyChoice, OptLevel, PathOption
from rgpu_fuzz.pipelines.registry import ClassRef
from rgpu_fuzz.pipelines.stages import (
    describe_failure,
    outcome_of,
    report_stage,
)
from rgpu_fuzz.pipelines.toolchain import Isel, Llc, LlvmError, Target
from rgpu_fuzz.pipelines.workers import IMPORT_TIMEOUT_S

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
DET_SAMPLE = 4
"""`det`'s default `detsample`. The determinism check (docs/design.md §3) compiles a case a second
time (O3 optimisation and code generation again: ~20 ms of a ~70 ms case, the largest part
after the first compilation). In a campaign's batches it runs on one case in N, chosen by
the case's id so that a finding reproduces from its own case; every case run alone (a
campaign's re-check of every case with a finding, each reduction candidate, `reproduce`) is
compiled twice. What sampling gives up: nondeterminism that shows on a fraction p of cases
is first seen after ~N/p cases instead of 1/p; what it keeps: every such case that also has
another finding is checked, and every finding reproduces and reduces with the check on."""
ARTEFACT_KEYS = ("llvm-ir", "llvm-ir-opt", "asm")
"""What `artefacts` returns: lowered (and transformed) IR, optimised IR, host assembly."""


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker needs: the case as canonical TOML, the optimisation level, the
    pipeline class and spec whose `transform_ir` to apply, and the code generator."""

    case_toml: str
    opt_level: int
    pipeline_class: ClassRef
    spec: str
    check_determinism: bool = False
    llc: str | None = None
    isel: Isel = Isel.DAG


@dataclass(frozen=True, slots=True)
class ArtefactJob:
    """`compile_texts` up to and including the artefact `upto` (one of `ARTEFACT_KEYS`)."""

    job: Job
    upto: str


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
               help="compile twice and compare (docs/design.md §3: a difference is a finding)")
    LLC = PathOption(name="llc", executable=True,
                     help="code generation by this external llc (MCJIT loads its object)")
    DET_SAMPLE = Int(name="detsample", value=DET_SAMPLE, min=1, execution=True,
                     help="with det: in a batch compile twice 1 case in N (default "
                          f"{DET_SAMPLE}), chosen by the case id; a case run alone (a "
                          "finding checked alone, reduction, reproduce) every time")
    THREAD_CALLS = Flag(name="threadcall",
                        help="no effect: the host lowering always keeps the kernel's code "
                             "out of the harness's loops (lower.host); accepted so that "
                             "specs written before still parse")
    ISEL = KeyChoice(name="isel", choices=tuple(Isel),
                     help="instruction selector: SelectionDAG or GlobalISel (aborts where it "
                          "cannot select: a CompileCrash, no fallback)")
    WAVE = KeyChoice(name="wave", choices=("64", "32"),
                     help="the wave size the lanes of a block are grouped in for wave "
                          "operations (lower.host)")
    options = (OPT, ISEL, WAVE, DET, DET_SAMPLE, LLC, THREAD_CALLS)
    timeout: float = DEFAULT_TIMEOUT
    watchdog_grace = IMPORT_TIMEOUT_S + 30.0
    """The worker bounds the job itself (and reports the stage); `run`'s own limit is the
    last resort, past the worker's start-up allowance."""

    @property
    def opt_level(self) -> int:
        return self.option(self.OPT)

    @property
    def wave_size(self) -> int:
        return int(self.option(self.WAVE))

    def host_target(self) -> HostTarget:
        """The lowering's host target, with this pipeline's wave size."""
        return HostTarget(wave_size=int(self.option(self.WAVE)))

    @property
    def check_determinism(self) -> bool:
        return self.option(self.DET)

    def checks_determinism_of(self, case: Case) -> bool:
        """Whether `case` is compiled twice in a batch: with `det`, the cases whose id (a
        hash of the case's content) is 0 modulo `detsample` (every case with 1)."""
        n = self.option(self.DET_SAMPLE)
        return self.check_determinism and (n == 1 or int(case.id, 16) % n == 0)

    @property
    def llc(self) -> str | None:
        return self.option(self.LLC)

    @property
    def isel(self) -> Isel:
        return Isel(self.option(self.ISEL))

    def ir_transform(self) -> Callable[[str], str] | None:
        """What the worker applies to a case's lowered IR before optimisation: a
        subclass's `transform_ir` (None: the IR as lowered)."""
        custom = type(self).transform_ir is not LlvmCpuPipeline.transform_ir
        return self.transform_ir if custom else None

    def transform_ir(self, ir_text: str) -> str:
        """Rewrite the lowered IR text before optimisation; the identity here.

        Runs in the worker, once per compilation. The input is the whole module (the
        kernel's entry function `rgpu_kernel_<entry>`, its per-thread function, helpers);
        the output must parse and verify: a hook that raises, returns something else than
        text, or returns IR LLVM rejects is a `CompileCrash(stage="transform")`, and valid
        IR that makes LLVM abort a `CompileCrash` in the stage it aborts in."""
        return ir_text

    def job(self, case: Case) -> Job:
        """The worker's description of compiling and running `case` alone with this
        pipeline: with `det`, compiled twice whatever `detsample` says (`DET_SAMPLE`)."""
        return Job(casefile.dumps(case), self.opt_level, ClassRef.of(type(self)),
                   str(self.spec), self.check_determinism, self.llc, self.isel)

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
        from rgpu_fuzz.pipelines.workers import call_in_worker

        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:execute", self.job(case),
                                timeout=self.timeout)
        return outcome_of(result, self.label, COMPILE_STAGES, is_plugin=self.is_plugin)

    MAX_BATCH = 32
    """Cases per batch job (a campaign chunk is 8)."""

    def batch_job(self, cases: Sequence[Case]) -> BatchJob:
        return BatchJob(tuple(casefile.dumps(c) for c in cases),
                        tuple(self.checks_determinism_of(c) for c in cases), self.opt_level,
                        ClassRef.of(type(self)), str(self.spec), self.llc, self.timeout,
                        self.isel)

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        """A chunk's cases compiled as one module (one per determinism group), optimised
        once, run from one MCJIT engine (`execute_batch`). Nothing of one case is lost to
        another: a case whose own stage kills the worker runs alone (`_run`) for its own
        outcome, a run that overstays its timeout is its own `Timeout`, and after a failure
        of a whole group (no case to blame; a worker death costs a new worker, seconds of
        imports, more than halving saves on 8 cases) every case runs alone.
        A batch's finding is checked alone by the campaign (`campaigns.jobs`).
        A subclass that overrides `_run` or `job` (not only `transform_ir`) runs each case
        through its own `_run`: a batch would bypass its override."""
        cls = type(self)
        if cls._run is not LlvmCpuPipeline._run or cls.job is not LlvmCpuPipeline.job:
            return [self._run(c) for c in cases]
        return run_in_batches(self, cases, entry="rgpu_fuzz.pipelines.llvm_cpu:execute_batch",
                              hang_stage="run", max_batch=self.MAX_BATCH)


def artefacts(case: Case, spec: str = "llvm-cpu", *,
              pipeline: LlvmCpuPipeline | None = None) -> dict[str, str]:
    """The texts behind a run of `case` on `spec` (or on `pipeline`, a plugin subclass
    included): `llvm-ir` (lowered and transformed), `llvm-ir-opt` and `asm` (host assembly),
    computed in a worker. Where a stage crashes, hangs or the case does not compile, the
    texts before it are returned with `error` saying what happened."""
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker

    p = pipeline if pipeline is not None else LlvmCpuPipeline(PipelineSpec.parse(spec))
    job = p.job(case)
    texts: dict[str, str] = {}
    for upto in reversed(ARTEFACT_KEYS):
        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:compile_texts",
                                ArtefactJob(job, upto), timeout=p.timeout)
        if isinstance(result, Done):
            return {**result.value, **texts}  # type: ignore[dict-item]
        failure = describe_failure(result, p.label)
        assert failure is not None
        texts.setdefault("error", failure)
    return texts


# ---------------------------------------------------------------------- in the worker


def _build(job: Job, case: Case, clock: StageClock, upto: str) -> LlvmBuild | Outcome:
    pipeline = job.pipeline_class.load()(PipelineSpec.parse(job.spec))
    assert isinstance(pipeline, LlvmCpuPipeline), pipeline
    return lower_and_optimise(case, pipeline.host_target(), Target.host(job.isel),
                              job.opt_level,
                              transform=pipeline.ir_transform(),
                              clock=clock, upto=upto)


def compile_texts(job: ArtefactJob) -> dict[str, str]:
    """The worker side of `artefacts`."""
    case = casefile.loads(job.job.case_toml)
    got = _build(job.job, case, StageClock(), "llvm-ir" if job.upto == "llvm-ir"
                 else "llvm-ir-opt")
    if not isinstance(got, LlvmBuild):
        return {"error": f"{got.status}: {detail(got)}"}
    texts = {"llvm-ir": got.ir}
    if job.upto == "llvm-ir":
        return texts
    texts["llvm-ir-opt"] = got.ir_opt
    if job.upto == "llvm-ir-opt":
        return texts
    report_stage("codegen")
    llc = None if job.job.llc is None else Llc(job.job.llc)
    try:
        texts["asm"] = toolchain.emit_assembly(got.ir_opt, Target.host(job.job.isel),
                                               job.job.opt_level, llc)
    except LlvmError as e:
        texts["error"] = f"codegen: {e.signature}"
    return texts


def _object(ir_opt: str, level: int, llc: Llc | None, isel: Isel) -> bytes:
    """The host object of optimised IR (llvmlite's code generator or `llc`'s)."""
    return toolchain.emit_object(ir_opt, Target.host(isel), level, llc)


@cache
def _half_runtime() -> None:
    """Make the half-precision conversions x86-64 code calls resolvable in this process.
    Without F16C (the host target is a generic CPU) LLVM computes `half` in `float` and
    converts with the runtime's `__extendhfsf2`, `__truncsfhf2` and `__truncdfhf2`
    (compiler-rt; libgcc_s since GCC 12, same ABI: the value in an XMM register). MCJIT
    resolves an external symbol among the libraries loaded into the process, and libgcc_s
    is not always one of them: an unresolved symbol is address 0, a SIGSEGV at the call."""
    import ctypes.util

    import llvmlite.binding as llvm

    name = ctypes.util.find_library("gcc_s")
    if name is not None:
        try:
            llvm.load_library_permanently(name)
        except RuntimeError:
            pass  # then an f16 kernel crashes, which the case's outcome reports


def _engine(objects: Sequence[bytes], level: int, isel: Isel) -> Any:
    """An MCJIT engine holding `objects`, relocated and ready to call. MCJIT runs the very
    object the determinism check hashes (no second code generation inside MCJIT); the engine
    must outlive the calls."""
    import llvmlite.binding as llvm

    _half_runtime()
    # MCJIT takes ownership of its target machine: a fresh one for every engine
    tm = toolchain.target_machine(Target.host(isel), level, fresh=True)
    try:
        engine = llvm.create_mcjit_compiler(toolchain.parse(""), tm)
        for obj in objects:
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
    except RuntimeError as e:
        raise LlvmError("codegen", str(e)) from e
    return engine


def _launch(case: Case, lowered: LoweredKernel, address: int, clock: StageClock) -> Outcome:
    """Run the kernel at `address` on `case`'s arguments (stage `run`); its outcome."""
    values = ArgumentValues.of(case, lowered.params)
    trap = np.zeros(TRAP_RECORD_WORDS, dtype=np.int32)

    def run() -> None:
        words = values.words(lambda name: values.buffers[name].ctypes.data)
        slots = np.array(words or [0], dtype=np.uint64)
        launch = np.array(case.launch.dims, dtype=np.int32)
        shared = np.zeros(lowered.shared_bytes, dtype=np.uint64)  # 8-byte aligned
        frames = np.zeros(max(1, lowered.frame_bytes * case.launch.threads_per_block // 8 + 1),
                          dtype=np.uint64)
        kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 5)(address)
        kernel(slots.ctypes.data, launch.ctypes.data, shared.ctypes.data, frames.ctypes.data,
               trap.ctypes.data)

    clock.run("run", run)
    stats = Stats(seconds=clock.seconds, artefacts=clock.artefacts)
    trapped = decode_trap(trap.tolist(), lowered.locations, stats)
    if trapped is not None:
        return trapped
    outputs = {name: Buffer(elem, arr) for name, (elem, arr) in values.outputs().items()}
    return Ok(outputs=outputs, stats=stats)


def execute(job: Job) -> Outcome:
    """Compile and run one case in this process (the worker's job function)."""
    clock = StageClock()
    case = case_of(job.case_toml)
    got = _build(job, case, clock, "llvm-ir-opt")
    if not isinstance(got, LlvmBuild):
        return got
    llc = None if job.llc is None else Llc(job.llc)
    try:
        obj = clock.run("codegen", lambda: _object(got.ir_opt, job.opt_level, llc, job.isel))
    except LlvmError as e:
        return crash("codegen", e)
    if job.check_determinism:
        try:
            clock.artefacts.update(clock.run("determinism", lambda: toolchain.determinism(
                got.ir, got.ir_opt, Target.host(job.isel), job.opt_level, llc,
                first_object=obj)))
        except LlvmError as e:
            return crash("determinism", e)
    try:
        engine = clock.run("codegen", lambda: _engine([obj], job.opt_level, job.isel))
    except LlvmError as e:
        return crash("codegen", e)
    outcome = _launch(case, got.lowered, engine.get_function_address(got.lowered.symbol), clock)
    del engine
    return outcome


# ---------------------------------------------------------------------- batches


@dataclass(frozen=True, slots=True)
class BatchJob:
    """Several cases of one pipeline, compiled as one module per group (the cases checked
    for determinism, the others) and run from one MCJIT engine."""

    cases: tuple[str, ...]
    """Canonical TOML of each case."""
    determinism: tuple[bool, ...]
    opt_level: int
    pipeline_class: ClassRef
    spec: str
    llc: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    """Seconds per case; each case's run stops (SIGALRM) when its share is spent."""
    isel: Isel = Isel.DAG


@dataclass(frozen=True, slots=True)
class BatchFailed:
    """A stage of a whole group (`link`, `optimise`, `codegen`, `determinism`) raised an
    `LlvmError`: no single case is to blame, so the parent runs each case alone."""

    stage: str
    signature: str


def _compile_group(group: list[int], builds: dict[int, LlvmBuild],
                   clocks: list[StageClock], job: BatchJob, llc: Llc | None) -> bytes:
    """Link, optimise and emit one group of a batch; with `determinism`, optimise and emit
    it again and compare (`_attribute_nondeterminism`). Stage seconds are shared out evenly
    between the group's cases; the group's hashes are `batch-llvm-ir-opt`, `batch-object`."""
    target, level = Target.host(job.isel), job.opt_level
    seconds: dict[str, float] = {}

    def timed(stage: str, work: Callable[[], T]) -> T:
        report_stage(stage)
        t = time.perf_counter()
        try:
            return work()
        finally:
            seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - t

    check = job.determinism[group[0]]
    text = timed("link", lambda: link_modules({i: builds[i].ir for i in group}))
    # O0 runs no pass: `optimise` would only parse, verify and print the linked text again
    # (LLVM's printer, a fixpoint; each case's module was verified when linked). With the
    # determinism check it still runs, since that compares against a second `optimise`.
    opt = text if level == 0 and not check else timed(
        "optimise", lambda: toolchain.optimise(text, target, level))
    obj = timed("codegen", lambda: _object(opt, level, llc, job.isel))
    arts = {"batch-llvm-ir-opt": toolchain.sha256(opt), "batch-object": toolchain.sha256(obj)}
    if check:
        again = timed("determinism", lambda: toolchain.determinism(
            text, opt, target, level, llc, first_object=obj))
        if any(k.endswith("-again") for k in again):
            _attribute_nondeterminism(group, builds, clocks, job, llc, again)
    for i in group:
        clocks[i].artefacts.update(arts)
        for stage, s in seconds.items():
            clocks[i].seconds[stage] = clocks[i].seconds.get(stage, 0.0) + s / len(group)
    return obj


def _attribute_nondeterminism(group: list[int], builds: dict[int, LlvmBuild],
                              clocks: list[StageClock], job: BatchJob, llc: Llc | None,
                              batch: dict[str, str]) -> None:
    """The group's second compilation differed: compile each case alone twice. A case that
    differs alone gets the single-case keys (`object-again`: reproducible from the case);
    when none does, every case of the group gets the batch's keys (`batch-object-again`,
    a bucket of its own: nondeterminism seen only in a multi-kernel module)."""
    target, level = Target.host(job.isel), job.opt_level
    alone = {}
    for i in group:
        clocks[i].report("determinism")
        opt = toolchain.optimise(builds[i].ir, target, level)
        facts = toolchain.determinism(builds[i].ir, opt, target, level, llc)
        if any(k.endswith("-again") for k in facts):
            alone[i] = {"llvm-ir-opt": toolchain.sha256(opt), **facts}
    for i in group:
        if alone:
            clocks[i].artefacts.update(alone.get(i, {}))
        else:
            clocks[i].artefacts.update({f"batch-{k}": v for k, v in batch.items()})


def execute_batch(job: BatchJob) -> list[Outcome | None] | BatchFailed:
    """Compile and run a batch in this process: per case check, lower (with its own symbol
    prefix) and transform; per group link, optimise, emit (and the determinism check); one
    engine; per case run. Each per-case stage is reported as `<index>:<stage>`, a group's
    as `<stage>`, so the parent knows whom a death concerns."""
    pipeline = job.pipeline_class.load()(PipelineSpec.parse(job.spec))
    assert isinstance(pipeline, LlvmCpuPipeline), pipeline
    llc = None if job.llc is None else Llc(job.llc)
    cases = [case_of(t) for t in job.cases]
    clocks = [StageClock(tag=f"{i}:") for i in range(len(cases))]
    out: list[Outcome | None] = [None] * len(cases)
    builds: dict[int, LlvmBuild] = {}
    for i, case in enumerate(cases):
        got = lower_and_optimise(case, pipeline.host_target(), Target.host(job.isel),
                                 job.opt_level,
                                 transform=pipeline.ir_transform(),
                                 clock=clocks[i], upto="llvm-ir")
        if isinstance(got, LlvmBuild):
            builds[i] = got
        else:
            out[i] = got
    if not builds:
        return out
    objects = []
    for check in (True, False):
        group = [i for i in builds if job.determinism[i] == check]
        if group:
            try:
                objects.append(_compile_group(group, builds, clocks, job, llc))
            except LlvmError as e:
                return BatchFailed(e.stage, e.signature)
    report_stage("codegen")
    try:
        engine = _engine(objects, job.opt_level, job.isel)
    except LlvmError as e:
        return BatchFailed("codegen", e.signature)
    for i, build in builds.items():
        budget = max(1.0, job.timeout - sum(clocks[i].seconds.values()))
        signal.setitimer(signal.ITIMER_REAL, budget)  # SIGALRM's default action ends us
        try:
            address = engine.get_function_address(BATCH_PREFIX.format(i) + build.lowered.symbol)
            out[i] = _launch(cases[i], build.lowered, address, clocks[i])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    del engine
    return out


__all__ = ["ARTEFACT_KEYS", "ArtefactJob", "BatchFailed", "BatchJob", "Job", "LlvmCpuPipeline",
           "artefacts", "compile_texts", "execute", "execute_batch"]
