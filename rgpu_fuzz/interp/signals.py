"""How a lane-parallel execution stops early: a trap or a rejection raised as an exception
inside the compiled closures, and turned into an outcome value once, by `run_kernel`.

These never leave the package: `run_kernel` converts them to `Trap` / `Rejected` with the
block and thread of the lane that caused them.
"""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.model.outcome import RejectReason, TrapKind


class StopLanes(Exception):
    """Base: execution of the launch ends here; `lane` is the thread index within the block."""

    def __init__(self, span: Span, lane: int | None) -> None:
        super().__init__()
        self.span = span
        self.lane = lane


class TrapSignal(StopLanes):
    def __init__(self, kind: TrapKind, span: Span, lane: int | None) -> None:
        super().__init__(span, lane)
        self.kind = kind


class RejectSignal(StopLanes):
    def __init__(self, reason: RejectReason, detail: str, span: Span, lane: int | None) -> None:
        super().__init__(span, lane)
        self.reason = reason
        self.detail = detail


class BudgetSignal(RejectSignal):
    """The launch ran out of time (`run_kernel`'s `time_budget`): unlike every other stop,
    re-running it block by block would only run out of time again."""


def first_lane(mask: np.ndarray) -> int:
    """The lowest lane set in `mask` (the reported thread when several trap at once)."""
    return int(np.flatnonzero(mask)[0])


def check_trap(bad: np.ndarray, kind: TrapKind, span: Span) -> None:
    """Raise a trap for the first lane of `bad` (already restricted to active lanes)."""
    if bad.any():
        raise TrapSignal(kind, span, first_lane(bad))

