"""The worker stage protocol every compiling pipeline shares.

A job running in a worker (`rgpu_fuzz.pipelines.workers`) writes `rgpu-stage: <stage>` lines
to stderr as it goes, so when the worker dies or hangs its log says where: a death in one of
the pipeline's compile stages is a `CompileCrash` whose signature is the log's first error
line, a death elsewhere a `RunCrash`, a hang a `Timeout` in the last stage reported. A job
that raises is a harness bug and is re-raised in the parent.
"""

from __future__ import annotations

import sys
from collections.abc import Collection

from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.model.outcome import CompileCrash, Outcome, PipelineFailure, RunCrash, Timeout
from rgpu_fuzz.pipelines.workers import Died, Done, JobResult, Raised, TimedOut

STAGE_PREFIX = "rgpu-stage: "


def report_stage(name: str) -> None:
    """In the worker: say that the job enters stage `name`."""
    print(f"{STAGE_PREFIX}{name}", file=sys.stderr, flush=True)


def last_stage(log: str, default: str = "run") -> str:
    """The stage the worker reported last (`default` when it reported none)."""
    stages = [ln[len(STAGE_PREFIX):].strip() for ln in log.splitlines()
              if ln.startswith(STAGE_PREFIX)]
    return stages[-1] if stages else default


def first_error_line(log: str, fallback: str) -> str:
    """The first error line of a crash log (`LLVM ERROR: ...`), the signature of docs/design.md §5
    (the oracle blanks numbers in it, as `normalise_error_line` does); `fallback` (the
    signal) when the log has none."""
    for ln in log.splitlines():
        if ln.startswith(("LLVM ERROR", "error:")) or "Assertion" in ln:
            return ln.strip()
    return fallback


def outcome_of(result: JobResult, label: str, compile_stages: Collection[str], *,
               is_plugin: bool = False) -> Outcome:
    """The outcome of a worker job whose value is itself an Outcome. A job that raised is a
    `PipelineFailure` for a plugin's pipeline and a `HarnessBug` for ours."""
    match result:
        case Done(value=outcome):
            return outcome  # type: ignore[no-any-return]
        case TimedOut(seconds=seconds, log=log):
            return Timeout(stage=last_stage(log), seconds=seconds)
        case Died(signal=sig, log=log):
            stage = last_stage(log)
            if stage in compile_stages:
                return CompileCrash(stage=stage, signature=first_error_line(log, sig), log=log)
            return RunCrash(signal=sig, log=log)
        case Raised(traceback=tb):
            if is_plugin:
                return PipelineFailure(error=_last_line(tb), traceback=tb)
            raise HarnessBug(f"{label} worker raised:\n{tb}")
    raise AssertionError(result)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else "raised"


def describe_failure(result: JobResult, label: str) -> str | None:
    """One line for a job that did not finish (`artefacts`' `error`); None when it did."""
    match result:
        case Done():
            return None
        case TimedOut(seconds=seconds, log=log):
            return f"timeout after {seconds:g}s in {last_stage(log)}"
        case Died(signal=sig, log=log):
            return f"{last_stage(log)}: {first_error_line(log, sig)}"
        case Raised(traceback=tb):
            raise HarnessBug(f"{label} worker raised:\n{tb}")
    raise AssertionError(result)


__all__ = ["STAGE_PREFIX", "describe_failure", "first_error_line", "last_stage",
           "outcome_of", "report_stage"]
