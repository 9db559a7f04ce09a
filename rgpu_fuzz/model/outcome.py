"""What one pipeline did with one case (docs/design.md §2 "Outcome").

A failure of the code under test is one of these values, never an exception: a trap in the
kernel, a crashed compiler, a hung worker. Every outcome carries timings per stage and the
hashes of the artefacts it produced, so a result can be traced back to the exact bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

import numpy as np

from rgpu_fuzz.model.latitude import Latitude
from rgpu_fuzz.model.scalars import Scalar


class Status(StrEnum):
    """The `status` field of `rgpu-fuzz run --json`."""

    OK = "ok"
    TRAP = "trap"
    REJECTED = "rejected"
    COMPILE_CRASH = "compile-crash"
    RUN_CRASH = "run-crash"
    TIMEOUT = "timeout"
    UNSUPPORTED = "unsupported"
    UNAVAILABLE = "unavailable"
    PIPELINE_ERROR = "pipeline-error"


class TrapKind(StrEnum):
    """Run-time errors Rust panics on even in release builds (docs/language.md)."""

    DIV_BY_ZERO = "div-by-zero"
    DIV_OVERFLOW = "div-overflow"  # MIN / -1 and MIN % -1
    OUT_OF_BOUNDS = "out-of-bounds"
    ASSERT = "assert"
    """A library precondition core checks with `assert!` in release builds too: `clamp`
    with `min > max` or a NaN bound."""


class RejectReason(StrEnum):
    """Why a case is outside the language (docs/language.md "well-defined")."""

    SHARED_RACE = "shared-race"
    GLOBAL_RACE = "global-race"
    UNINIT_SHARED_READ = "uninit-shared-read"
    BARRIER_DIVERGENCE = "barrier-divergence"
    WAVE_DIVERGENCE = "wave-divergence"
    """Lanes of a wave reach a wave operation apart, or give it different values for an
    argument that must be wave-uniform."""
    INACTIVE_LANE = "inactive-lane"
    """A lane read (`read_lane`, `shuffle`, `shuffle_xor`, `shuffle_down`) from a lane that
    is inactive or past the wave."""
    STEP_BUDGET = "step-budget"
    SCHEDULE_DEPENDENT = "schedule-dependent"  # outputs or traps differ between schedules
    INVALID_CASE = "invalid-case"  # the kernel does not check, or the args do not match it


@dataclass(frozen=True, slots=True, kw_only=True)
class Location:
    """Where something happened: a source position and, when known, the thread."""

    line: int
    col: int
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None

    def __str__(self) -> str:
        where = f"{self.line}:{self.col}"
        if self.block is not None and self.thread is not None:
            where += f" (block {self.block}, thread {self.thread})"
        return where


@dataclass(frozen=True, slots=True)
class Buffer:
    """The final contents of one `&mut` buffer."""

    ty: Scalar
    values: np.ndarray = field(compare=False)
    latitude: Latitude | None = field(default=None, compare=False)
    """Set by the reference when elements depend on a NaN's unspecified bits; None: exact
    (floats: any NaN equals any NaN)."""

    def bits(self) -> list[int]:
        from rgpu_fuzz.model.scalars import to_bits

        return to_bits(self.values, self.ty)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stats:
    """Timings (seconds per stage) and artefact hashes (`source`, `llvm-ir`, `object`...)."""

    seconds: dict[str, float] = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)
    wave_size: int | None = None
    """The wave size the kernel's wave functions ran at; set only for kernels that use them
    (the oracle compares each outcome with the reference's at its wave size)."""

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class Ok:
    outputs: dict[str, Buffer]
    stats: Stats = field(default_factory=Stats)
    status = Status.OK


@dataclass(frozen=True, slots=True, kw_only=True)
class Trap:
    kind: TrapKind
    where: Location | None = None
    stats: Stats = field(default_factory=Stats)
    status = Status.TRAP


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejected:
    reason: RejectReason
    detail: str = ""
    where: Location | None = None
    stats: Stats = field(default_factory=Stats)
    status = Status.REJECTED


@dataclass(frozen=True, slots=True, kw_only=True)
class CompileCrash:
    stage: str
    signature: str
    log: str = ""
    stats: Stats = field(default_factory=Stats)
    status = Status.COMPILE_CRASH


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCrash:
    signal: str
    log: str = ""
    stats: Stats = field(default_factory=Stats)
    status = Status.RUN_CRASH


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeout:
    stage: str
    seconds: float
    stats: Stats = field(default_factory=Stats)
    status = Status.TIMEOUT


@dataclass(frozen=True, slots=True, kw_only=True)
class Unsupported:
    features: tuple[str, ...]
    stats: Stats = field(default_factory=Stats)
    status = Status.UNSUPPORTED


@dataclass(frozen=True, slots=True, kw_only=True)
class Unavailable:
    reason: str
    stats: Stats = field(default_factory=Stats)
    status = Status.UNAVAILABLE


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineFailure:
    """The pipeline itself broke on this case — a plugin's `_run` raised, returned something
    that is not an outcome, or outputs that do not fit the case. It is that pipeline's
    outcome: the other pipelines' results stand, and the oracle reports it as a finding of
    its own (`pipeline-error`), never as agreement."""

    error: str
    """One line: the exception, or what was wrong with the returned value."""
    traceback: str = ""
    stats: Stats = field(default_factory=Stats)
    status = Status.PIPELINE_ERROR


Outcome: TypeAlias = (
    Ok | Trap | Rejected | CompileCrash | RunCrash | Timeout | Unsupported | Unavailable
    | PipelineFailure
)

OUTCOME_TYPES: tuple[type, ...] = (Ok, Trap, Rejected, CompileCrash, RunCrash, Timeout,
                                   Unsupported, Unavailable, PipelineFailure)
"""Every member of `Outcome`, for `isinstance` checks of values from plugins."""


def detail(outcome: Outcome) -> str:
    """The one-line `detail` of `run --json` and of the outcome table."""
    match outcome:
        case Ok():
            return ""
        case Trap(kind=kind, where=where):
            return f"{kind} at {where}" if where else str(kind)
        case Rejected(reason=reason, detail=text, where=where):
            parts = [str(reason)]
            if text:
                parts.append(text)
            if where:
                parts.append(f"at {where}")
            return ": ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")
        case CompileCrash(stage=stage, signature=sig):
            return f"{stage}: {sig}"
        case RunCrash(signal=sig):
            return sig
        case Timeout(stage=stage, seconds=secs):
            return f"{stage} after {secs:g}s"
        case Unsupported(features=feats):
            return "unsupported: " + ", ".join(feats)
        case Unavailable(reason=reason):
            return reason
        case PipelineFailure(error=error):
            return error
    return repr(outcome)
