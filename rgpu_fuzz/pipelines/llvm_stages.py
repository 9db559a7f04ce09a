"""The stages every pipeline built on our lowering runs in its worker, in order:
`check` → `lower` → `transform` → `optimise` → (`determinism`) — then each pipeline's own
code generation and execution (`llvm_cpu`: MCJIT on the host; `gpu_build`: an amdgcn object).

`lower_and_optimise` reports each stage (`rgpu_fuzz.pipelines.stages`), times it, hashes its
artefacts, and answers with an `LlvmBuild` or, when the case stops early, the Outcome that
says why: `Rejected` (not a valid case), `Unsupported` (outside the lowering), `CompileCrash`
(LLVM refused or failed: `toolchain.LlvmError`). An LLVM abort kills the worker instead and
the parent reads the stage from the log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from rgpu_fuzz.lower import LoweredKernel, LowerError, TargetHooks, lower_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import CompileCrash, Outcome, Unsupported
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.stages import report_stage
from rgpu_fuzz.pipelines.toolchain import Llc, LlvmError, Target

T = TypeVar("T")

COMPILE_STAGES = ("check", "lower", "transform", "optimise", "determinism", "codegen")
"""The stages in which a worker's death is a `CompileCrash` (later: a `RunCrash`)."""


@dataclass
class StageClock:
    """Seconds per stage and artefact hashes, collected as the stages run (`Stats`)."""

    seconds: dict[str, float] = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)

    def run(self, stage: str, work: Callable[[], T]) -> T:
        report_stage(stage)
        t = time.perf_counter()
        try:
            return work()
        finally:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - t


@dataclass(frozen=True)
class LlvmBuild:
    """A case lowered, transformed and optimised for one target."""

    lowered: LoweredKernel
    ir: str
    """The lowered IR after the pipeline's `transform_ir`."""
    ir_opt: str


def crash(stage: str, e: LlvmError) -> CompileCrash:
    """An `LlvmError` in `stage` as the outcome it is."""
    return CompileCrash(stage=stage, signature=e.signature, log=e.message)


def lower_and_optimise(case: Case, hooks: TargetHooks, target: Target, level: int, *,
                       transform: Callable[[str], str] | None = None,
                       clock: StageClock, upto: str = "llvm-ir-opt",
                       determinism: bool = False, llc: Llc | None = None,
                       ) -> LlvmBuild | Outcome:
    """Run the shared stages for `case`; stop after the lowered IR when `upto` is
    `"llvm-ir"` (then `ir_opt` is ""). `transform` is a pipeline's IR hook (None: none);
    see `_transformed` for what a faulty hook gives. With `determinism`, optimise again and emit the
    object twice (`toolchain.determinism`), recording the hashes in `clock.artefacts`."""
    from rgpu_fuzz.lang.printer import print_module

    report_stage("check")
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return prepared
    checked, _kernel = prepared
    clock.artefacts["source"] = toolchain.sha256(print_module(checked.module))
    try:
        lowered = clock.run("lower", lambda: lower_module(checked, case.entry, hooks))
    except LowerError as e:
        return Unsupported(features=(f"{hooks.name}: {e.feature}",))
    ir_text = clock.run("transform", lambda: lowered.ir if transform is None
                        else _transformed(transform, lowered.ir))
    if not isinstance(ir_text, str):
        assert isinstance(ir_text, CompileCrash)
        return ir_text
    clock.artefacts["llvm-ir"] = toolchain.sha256(ir_text)
    if upto == "llvm-ir":
        return LlvmBuild(lowered, ir_text, "")
    try:
        opt = clock.run("optimise", lambda: toolchain.optimise(ir_text, target, level))
    except LlvmError as e:
        return crash("optimise", e)
    clock.artefacts["llvm-ir-opt"] = toolchain.sha256(opt)
    if determinism:
        try:
            clock.artefacts.update(clock.run(
                "determinism", lambda: toolchain.determinism(ir_text, opt, target, level, llc)))
        except LlvmError as e:
            return crash("determinism", e)
    return LlvmBuild(lowered, ir_text, opt)


def _transformed(transform: Callable[[str], str], ir_text: str) -> str | CompileCrash:
    """A hook's result, or the `CompileCrash(stage="transform")` the README promises when
    it raises, returns something that is not text, or text LLVM cannot parse or verify."""
    import traceback

    try:
        out = transform(ir_text)
    except Exception as e:
        return CompileCrash(stage="transform", signature=f"transform_ir raised "
                            f"{type(e).__name__}: {e}".splitlines()[0][:200],
                            log=traceback.format_exc())
    if not isinstance(out, str):
        return CompileCrash(stage="transform", signature=f"transform_ir returned "
                            f"{type(out).__name__}, not LLVM IR text")
    try:
        toolchain.parse(out)
    except LlvmError as e:
        return CompileCrash(stage="transform", signature=f"transform_ir returned IR LLVM "
                            f"rejects: {e.signature[:160]}", log=e.message)
    return out


__all__ = ["COMPILE_STAGES", "LlvmBuild", "StageClock", "crash", "lower_and_optimise"]
