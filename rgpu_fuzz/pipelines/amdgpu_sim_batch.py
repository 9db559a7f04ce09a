"""`amdgpu-sim` in batches: a campaign chunk's kernels in one amdgcn module, so one
optimisation, one code generation, one `ld.lld`, one code object read and one decode serve
every case of the chunk (what the simulator adds per case in a campaign).

Per case, in the worker, exactly what the case has alone: check, lower, `transform_ir`
(the hook sees the case's own IR). Then every symbol case `i` defines is renamed with
`batching.BATCH_PREFIX` (`k3.<entry>`: its kernel, descriptor `k3.<entry>.kd`, helpers, LDS
variables) and the modules are linked into one, optimised, emitted, linked by `ld.lld` into
one code object; the simulator decodes its `.text` once and binds it once (its caches are
per code object and shared by the object's kernels). Each case is then launched from that
code object, verified by the whole-object rules and its own kernel's
(`codeobj.launch.load_kernels`), with its own outcome: a trap, fault or hang in one kernel
is that case's.

Stages are reported as `<i>:<stage>` for a case's own work and `<stage>` for the batch's,
so the parent (`AmdgpuSimPipeline._batch`) knows whom a worker's death concerns. A batch
stage that fails as a value (`LlvmError`, an `ld.lld` failure, the code-object hook) is a
`BatchFailed`: no case is to blame, and the parent runs each case alone. The campaign reruns
a case with a finding alone (`campaigns.jobs`), so what is recorded and reduced is
what the single case does.

Batch stage seconds are shared out evenly between the batch's cases (`ir-link`,
`optimise`, `codegen`, `link`, `code-object-hook`, `memory-model` (which decodes `.text`
first, so that `sim-decode` is then a memo hit), `codeobj`, `sim-decode`); a case's own
stages are its own. Artefacts: each case's `source` and `llvm-ir`; the batch's
`batch-object` and `batch-code-object` hashes.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.outcome import CompileCrash, Outcome, Stats
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.amdgpu_sim import (
    DEFAULT_STEPS,
    DEFAULT_TIMEOUT,
    AmdgpuSimPipeline,
    Job,
    _Built,
    _hooked,
    _simulate,
    _spec,
    sim_target,
)
from rgpu_fuzz.pipelines.batching import BATCH_PREFIX, link_modules
from rgpu_fuzz.pipelines.llvm_stages import LlvmBuild, StageClock, case_of, lower_and_optimise
from rgpu_fuzz.pipelines.registry import ClassRef
from rgpu_fuzz.pipelines.stages import report_stage
from rgpu_fuzz.pipelines.toolchain import Isel, Llc, LlvmError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BatchJob:
    """Several cases of one `amdgpu-sim` pipeline, compiled into one code object."""

    cases: tuple[str, ...]
    """Canonical TOML of each case."""
    target: str
    opt_level: int
    pipeline_class: ClassRef
    spec: str
    llc: str | None = None
    steps: int = DEFAULT_STEPS
    timeout: float = DEFAULT_TIMEOUT
    """Seconds per case; a case's launch stops (SIGALRM) when its share is spent."""
    isel: Isel = Isel.DAG
    waveops: WaveOps = WaveOps.INTRINSIC
    wave64: bool = False
    interleave: int = 0

    def job(self, i: int) -> Job:
        """Case `i` as the single-case job it would be alone."""
        return Job(self.cases[i], self.target, self.opt_level, self.pipeline_class, self.spec,
                   self.llc, self.steps, isel=self.isel, waveops=self.waveops,
                   wave64=self.wave64, interleave=self.interleave)


@dataclass(frozen=True, slots=True)
class BatchFailed:
    """A batch stage failed as a value (LLVM refused the linked module, `ld.lld` or the
    code-object hook failed): no single case is to blame, so the parent runs each alone."""

    stage: str
    signature: str


class _BatchClock:
    """Seconds of the batch's stages, shared out evenly between its cases at the end."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def run(self, stage: str, work: Callable[[], T]) -> T:
        report_stage(stage)
        t = time.perf_counter()
        try:
            return work()
        finally:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - t


def _compile(job: BatchJob, pipeline: AmdgpuSimPipeline, builds: dict[int, LlvmBuild],
             clock: _BatchClock) -> bytes | BatchFailed:
    """The batch's linked (and hooked) code object, or why there is none."""
    from rgpu_fuzz.codeobj.link import LinkFailure, link

    target = sim_target(job.target, job.isel, pipeline.atomic_config(), job.wave64)
    level = job.opt_level
    llc = None if job.llc is None else Llc(job.llc)
    try:
        text = clock.run("ir-link", lambda: link_modules({i: b.ir for i, b in builds.items()}))
        # O0 runs no pass: `optimise` would only parse, verify and print the linked text
        # again (as llvm-cpu's batches skip it); code generation parses and verifies it.
        # Above O0 the object is emitted from the optimised module itself (nothing of a
        # batch needs the optimised text: `GpuBuild.ir_opt` is empty), except by an
        # external `llc`, which reads text.
        if level == 0:
            obj = clock.run("codegen", lambda: toolchain.emit_object(text, target, level, llc))
        elif llc is not None:
            opt = clock.run("optimise", lambda: toolchain.optimise(text, target, level))
            obj = clock.run("codegen", lambda: toolchain.emit_object(opt, target, level, llc))
        else:
            mod = clock.run("optimise",
                            lambda: toolchain.optimised_module(text, target, level))
            obj = clock.run("codegen", lambda: toolchain.emit_module(mod, target, level))
    except LlvmError as e:
        return BatchFailed(e.stage, e.signature)
    linked = clock.run("link", lambda: link(obj))
    if isinstance(linked, LinkFailure):
        return BatchFailed("link", linked.first_line)
    if type(pipeline).transform_code_object is not AmdgpuSimPipeline.transform_code_object:
        given = linked
        hooked = clock.run("code-object-hook", lambda: _hooked(pipeline, given))
        if isinstance(hooked, CompileCrash):
            return BatchFailed("code-object-hook", hooked.signature)
        linked = hooked
    # Judged on the IR before optimisation (the batch has no optimised text): a mismatch
    # sends each case to run alone, where the check reads the optimised IR.
    from rgpu_fuzz.memmodel import STAGE, compile_crash
    code_object = linked
    if (wrong := clock.run(STAGE, lambda: compile_crash(code_object, text, job.target))) \
            is not None:
        return BatchFailed(wrong.stage, wrong.signature)
    return linked


def execute_batch(job: BatchJob) -> list[Outcome] | BatchFailed:
    """Compile the batch into one code object and launch each case from it (the worker's
    job function); one outcome per case, in order."""
    from rgpu_fuzz.codeobj.launch import LoadedKernel, load_kernels
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, lowering_for
    from rgpu_fuzz.sim import decode_text

    pipeline = job.pipeline_class.load()(_spec(job.spec))
    assert isinstance(pipeline, AmdgpuSimPipeline), pipeline
    custom_ir = type(pipeline).transform_ir is not AmdgpuSimPipeline.transform_ir
    target = sim_target(job.target, job.isel, pipeline.atomic_config(), job.wave64)
    clocks = [StageClock(tag=f"{i}:") for i in range(len(job.cases))]
    out: list[Outcome | None] = [None] * len(job.cases)
    builds: dict[int, LlvmBuild] = {}
    for i, text in enumerate(job.cases):
        got = lower_and_optimise(case_of(text), lowering_for(target, job.waveops), target,
                                 job.opt_level,
                                 transform=pipeline.transform_ir if custom_ir else None,
                                 clock=clocks[i], upto="llvm-ir")
        if isinstance(got, LlvmBuild):
            builds[i] = got
        else:
            out[i] = got
    if builds:
        clock = _BatchClock()
        code_object = _compile(job, pipeline, builds, clock)
        if isinstance(code_object, BatchFailed):
            return code_object
        names = {i: BATCH_PREFIX.format(i) + b.lowered.symbol for i, b in builds.items()}
        loaded = clock.run("codeobj", lambda: load_kernels(code_object, list(names.values())))
        read = next((k.code_object for k in loaded.values() if isinstance(k, LoadedKernel)),
                    None)
        if read is not None:  # decoded once here; every launch below is a cache hit
            clock.run("sim-decode", lambda: decode_text(read))
        shares = {k: v / len(builds) for k, v in clock.seconds.items()}
        arts = {"batch-code-object": toolchain.sha256(code_object)}
        for i, b in builds.items():
            lowered = b.lowered
            build = GpuBuild(target=target, opt_level=job.opt_level, kernel=names[i],
                             params=lowered.params, ir=b.ir, ir_opt="", asm="",
                             object=b"", locations=lowered.locations,
                             shared_bytes=lowered.shared_bytes)
            seconds = {**clocks[i].seconds, **shares}
            built = _Built(build, code_object, seconds, {**clocks[i].artefacts, **arts})
            budget = max(1.0, job.timeout - sum(seconds.values()))
            signal.setitimer(signal.ITIMER_REAL, budget)  # SIGALRM's default action ends us
            try:
                outcome, _ = _simulate(job.job(i), built, loaded=loaded[names[i]],
                                       tag=f"{i}:")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            out[i] = _with_decode(outcome, shares.get("sim-decode", 0.0))
    assert all(o is not None for o in out)
    return out  # type: ignore[return-value]


def _with_decode(outcome: Outcome, share: float) -> Outcome:
    """`sim-decode` as the simulator measured it for the launch (a cache hit) plus the
    case's share of the batch's decode."""
    seconds = outcome.stats.seconds
    if "sim-decode" not in seconds:
        return outcome
    from dataclasses import replace

    stats = Stats(seconds={**seconds, "sim-decode": seconds["sim-decode"] + share},
                  artefacts=outcome.stats.artefacts)
    return replace(outcome, stats=stats)  # type: ignore[type-var]


__all__ = ["BatchFailed", "BatchJob", "execute_batch"]
