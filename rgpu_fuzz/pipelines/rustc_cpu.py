"""`rustc-cpu`: the printed kernel compiled by the real rustc for the host, and run there.

Options: `O0`…`O3` (default `O2`), e.g. `rustc-cpu:O3`. Release semantics
(`-C overflow-checks=off`), exactly the language's (docs/language.md).

The kernel that rustc compiles is our printer's canonical text of the checked module, so
the printer is under test too. Every kernel our checker accepts is valid Rust, so rustc
rejecting one is a finding, not an invalid case:

| what happened | outcome |
|---|---|
| rustc reports an error | `CompileCrash(stage="rustc-error", signature=first error line)` |
| rustc panics (internal compiler error) or dies by a signal | `CompileCrash(stage="rustc")` |
| rustc runs past its time limit | `Timeout(stage="rustc")` |
| the program panics with a release-mode check | `Trap(kind, where=kernel line)` |
| the program dies, or panics otherwise | `RunCrash(signal)` |
| the program runs past its time limit | `Timeout(stage="run")` |

rustc and the program are separate processes already, so they run as subprocesses with
timeouts (`rgpu_fuzz.process.run_bounded`) rather than in the Python worker pool. `run_batch`
compiles many cases into one program to amortise rustc's start-up and linking.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence

import numpy as np

from rgpu_fuzz.lang.features import FEATURES, case_features
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Location,
    Ok,
    Outcome,
    Rejected,
    RunCrash,
    Stats,
    Timeout,
    Trap,
    Unsupported,
)
from rgpu_fuzz.model.scalars import from_bits
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.options import OptLevel
from rgpu_fuzz.pipelines.rustc_batch import (
    COMPILE_TIMEOUT,
    RUN_TIMEOUT,
    CaseResult,
    compile_batch,
    compile_timeout,
)
from rgpu_fuzz.pipelines.rustc_program import (
    ProgramCase,
    find_rustc,
    printed_program_case,
)

__all__ = ["RustcCpuPipeline"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class RustcCpuPipeline(Pipeline):
    """The real rustc at `O0`…`O3` on the printed kernel, run on the host CPU."""

    name = "rustc-cpu"
    description = "the printed kernel compiled by the real rustc, run on the host"
    OPT = OptLevel(level=2, help="rustc -C opt-level")
    options = (OPT,)
    UNSUPPORTED = frozenset({"wave"})
    """A CPU has no waves: a kernel with wave functions is `Unsupported(("wave",))`, one
    answer for the whole kernel (the host program's threads run one after another, with
    no lanes to read)."""
    features = frozenset(FEATURES) - UNSUPPORTED
    compile_timeout: float = COMPILE_TIMEOUT
    watchdog_grace = 600.0
    """rustc and the program run under their own bounded-subprocess timeouts."""
    run_timeout: float = RUN_TIMEOUT

    @property
    def opt_level(self) -> int:
        return self.option(self.OPT)

    def unavailable_reason(self) -> str | None:
        rustc = find_rustc()
        if rustc is None:
            return "rustc not found (put it on PATH or set RGPU_RUSTC)"
        if not _is_executable(rustc):
            return f"rustc not found at {rustc} (from RGPU_RUSTC or PATH)"
        return None

    def program_case(self, case: Case) -> ProgramCase | Rejected:
        """The case with its canonical printed kernel, or why it is not a valid case."""
        return printed_program_case(case)

    def _run(self, case: Case) -> Outcome:
        return self._run_cases([case])[0]

    def run_batch(self, cases: Sequence[Case]) -> list[Outcome]:
        """Every case's outcome, as `run` gives it, from one rustc program (falling back to
        smaller programs when it does not compile). Outcomes carry the rustc seconds
        amortised over the cases that shared the compilation."""
        return self.run_many(cases)

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        return self._run_cases(cases)

    def _run_cases(self, cases: Sequence[Case]) -> list[Outcome]:
        rustc = find_rustc()
        assert rustc is not None, "availability is checked before running"
        outcomes: list[Outcome | None] = [None] * len(cases)
        units: list[ProgramCase] = []
        where: list[int] = []
        for i, case in enumerate(cases):
            # run_many's callers may leave the feature check to the pipeline
            if missing := case_features(case) & self.UNSUPPORTED:
                outcomes[i] = Unsupported(features=tuple(sorted(missing)))
                continue
            unit = self.program_case(case)
            if isinstance(unit, Rejected):
                outcomes[i] = unit
            else:
                units.append(unit)
                where.append(i)
        results = compile_batch(units, rustc=rustc, opt_level=self.opt_level,
                                compile_timeout_s=self.compile_timeout,
                                run_timeout_s=self.run_timeout)
        for i, unit, result in zip(where, units, results, strict=True):
            outcomes[i] = self._outcome(unit, result)
        return [o for o in outcomes if o is not None]

    def _outcome(self, unit: ProgramCase, result: CaseResult) -> Outcome:
        build, run = result.build, result.run
        seconds = {"rustc": result.compile_seconds}
        artefacts = {"source": _sha(unit.kernel_source), "rust-source": build.source_sha256}
        if run is None:
            stats = Stats(seconds={**seconds, "total": result.compile_seconds},
                          artefacts=artefacts)
            if build.failure == "timeout":
                return Timeout(stage="rustc", seconds=compile_timeout(build.cases,
                                                                      self.compile_timeout),
                               stats=stats)
            stage = "rustc" if build.failure == "crash" else "rustc-error"
            return CompileCrash(stage=stage, signature=build.signature, log=build.log,
                                stats=stats)
        artefacts["binary"] = build.binary_sha256
        seconds["run"] = run.seconds
        stats = Stats(seconds={**seconds, "total": result.compile_seconds + run.seconds},
                      artefacts=artefacts)
        if run.timed_out:
            return Timeout(stage="run", seconds=self.run_timeout, stats=stats)
        if run.trap is not None:
            where = (Location(line=run.trap_line, col=0, block=run.block, thread=run.thread)
                     if run.trap_line is not None else None)
            return Trap(kind=run.trap, where=where, stats=stats)
        if run.outputs is None:
            return RunCrash(signal=run.crash or "unknown", log=run.log, stats=stats)
        outputs: dict[str, Buffer] = {}
        for name, bits in run.outputs.items():
            arg = unit.case.arg(name)
            assert isinstance(arg, BufferArg), name
            outputs[name] = Buffer(arg.elem, from_bits(np.asarray(bits, dtype=np.uint64),
                                                       arg.elem))
        return Ok(outputs=outputs, stats=stats)


def _is_executable(path: str) -> bool:
    return (os.path.isfile(path) and os.access(path, os.X_OK)) or shutil.which(path) is not None
