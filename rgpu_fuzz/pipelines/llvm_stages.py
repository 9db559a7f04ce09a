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
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.checker import CheckedModule
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
    """Seconds per stage and artefact hashes, collected as the stages run (`Stats`).
    `tag` goes before every stage this clock reports (`3:lower`: case 3 of a batch), so a
    worker's death is charged to the case it happened in."""

    seconds: dict[str, float] = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)
    tag: str = ""

    def report(self, stage: str) -> None:
        report_stage(self.tag + stage)

    def run(self, stage: str, work: Callable[[], T]) -> T:
        self.report(stage)
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
    clock.report("check")
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return prepared
    checked, _kernel = prepared
    got = clock.run("lower", lambda: _lowered(checked, case.kernel, case.entry, hooks))
    if isinstance(got, LowerError):
        return Unsupported(features=(f"{hooks.name}: {got.feature}",))
    lowered, clock.artefacts["source"] = got
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


@lru_cache(maxsize=128)
def case_of(case_toml: str) -> Case:
    """A worker's job's case, parsed once per worker: the pipelines of a campaign (each
    level of `llvm-cpu`, the simulators) send the same cases one after the other."""
    return casefile.loads(case_toml)


_LOWERED: OrderedDict[tuple[str, str, TargetHooks],
                      tuple[LoweredKernel, str] | LowerError] = OrderedDict()
LOWERED_CACHE_SIZE = 64
"""Lowered kernels a worker keeps: `llvm-cpu:O0` and `llvm-cpu:O3` (any level, any
`transform_ir` subclass) lower the same case for the same target the same way, and a
campaign sends both to the same worker one after the other."""


def _lowered(checked: CheckedModule, kernel: str, entry: str,
             hooks: TargetHooks) -> tuple[LoweredKernel, str] | LowerError:
    """The lowered kernel and the hash of the checked source, or why it cannot be lowered;
    cached on what lowering reads (the kernel text decides `checked`)."""
    from rgpu_fuzz.lang.printer import print_module

    key = (kernel, entry, hooks)
    got = _LOWERED.get(key)
    if got is None:
        try:
            got = (lower_module(checked, entry, hooks),
                   toolchain.sha256(print_module(checked.module)))
        except LowerError as e:
            got = e
        _LOWERED[key] = got
        if len(_LOWERED) > LOWERED_CACHE_SIZE:
            _LOWERED.popitem(last=False)
    else:
        _LOWERED.move_to_end(key)
    return got


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


__all__ = ["COMPILE_STAGES", "LlvmBuild", "StageClock", "case_of", "crash",
           "lower_and_optimise"]
