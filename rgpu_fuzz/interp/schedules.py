"""Schedules: the orders in which the reference lets threads' atomic operations happen
(docs/language.md "Atomics and schedules").

Without atomics a well-defined kernel computes one result whatever the order of its threads
(every other cross-thread access is a race, or ordered by a barrier). With atomics, threads
can observe each other's order, so the reference runs such a kernel under several schedules
and a case whose outputs or traps differ between them is `Rejected(schedule-dependent)`,
never a finding:

* `ascending`: blocks as a wave, lanes of every atomic operation applied in ascending
  thread order (the plain run);
* `descending`: the same wave, lanes in descending order at every atomic operation;
* `shuffled`: the same wave, a fresh seeded permutation of the lanes at every atomic
  operation (an interleaving choice at each one);
* `blocks-descending`: blocks one by one, the last block first, lanes descending;
* `blocks-shuffled`: blocks one by one in a seeded order, lanes permuted at every operation;
* `chunks-ascending`, `chunks-descending`: blocks one by one, and in each block the threads
  in chunks of `SERIAL_CHUNK` consecutive threads (a wave of the smallest wave size any
  pipeline runs), each chunk running the whole kernel before the next starts, first chunk
  first or last chunk first. So a thread's later atomic operations can come before another
  thread's earlier ones, as between the waves of a GPU (the simulator runs each wave to its
  next barrier by default): a counter read while other waves still add to it is
  schedule-dependent. A kernel that reaches `sync_threads()` (or a wave operation at a
  wave size the chunk does not cover) cannot run in chunks; these schedules are then left
  out (`_NOT_APPLICABLE`).

In a wave (or chunk), every thread does its k-th atomic operation of one program point before
any does its (k+1)-th: the reference runs threads in lock step. Known gap: between barriers
of a kernel that has them, schedules in which one thread of a block runs several atomic
operations ahead of another (or takes the `else` arm of an `if` before another takes the
`then` arm) are not explored, so a hand-written case whose result depends only on such an
order may be accepted; the generator writes only order-independent patterns
(generators/atomics.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rgpu_fuzz.model.outcome import Rejected, RejectReason, Trap

if TYPE_CHECKING:
    from rgpu_fuzz.interp.machine import InterpResult

SEED = 0x5EED_A70


@dataclass(frozen=True, slots=True)
class Schedule:
    name: str
    lanes: str          # "ascending", "descending" or "shuffled"
    waves: bool         # blocks of a wave in lock step, or blocks one by one
    blocks: str         # block order when one by one: "ascending", "descending", "shuffled"
    chunks: str = ""    # "": a block's threads in lock step; "ascending"/"descending": in
    #                     chunks of SERIAL_CHUNK threads, one after another in that order


ASCENDING = Schedule("ascending", "ascending", True, "ascending")
SCHEDULES: tuple[Schedule, ...] = (
    ASCENDING,
    Schedule("descending", "descending", True, "ascending"),
    Schedule("shuffled", "shuffled", True, "ascending"),
    Schedule("blocks-descending", "descending", False, "descending"),
    Schedule("blocks-shuffled", "shuffled", False, "shuffled"),
    Schedule("chunks-ascending", "ascending", False, "ascending", "ascending"),
    Schedule("chunks-descending", "descending", False, "descending", "descending"),
)
SERIAL_CHUNK = 32
"""Threads per chunk of the `chunks-*` schedules: the wave of gfx1100 and of nvptx, the
smallest wave any pipeline runs (a wave64 GPU's waves are unions of such chunks)."""
_NOT_APPLICABLE = frozenset({RejectReason.BARRIER_DIVERGENCE, RejectReason.WAVE_DIVERGENCE,
                             RejectReason.INACTIVE_LANE})
"""What a kernel that cannot run chunk by chunk stops with under a `chunks-*` schedule (a
barrier or a wave operation reached by one chunk of the block): that schedule is left out,
not the case rejected."""


class _Active:
    """The schedule of the run in progress and its random stream."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.rng = np.random.default_rng(SEED)


_ACTIVE: ContextVar[_Active | None] = ContextVar("rgpu_schedule", default=None)


@contextmanager
def active(schedule: Schedule) -> Iterator[None]:
    token = _ACTIVE.set(_Active(schedule))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def lane_order(lanes: np.ndarray) -> np.ndarray:
    """The active lanes of one atomic operation in the order they take effect."""
    run = _ACTIVE.get()
    if run is None or run.schedule.lanes == "ascending":
        return lanes
    if run.schedule.lanes == "descending":
        return lanes[::-1]
    return run.rng.permutation(lanes)


def lane_masks(full: np.ndarray, threads: int) -> list[np.ndarray]:
    """The initial masks a block's run starts from, one run each in this order: `full`
    itself (lock step), or under a `chunks-*` schedule of a block of more than one chunk,
    each chunk of `SERIAL_CHUNK` consecutive threads alone."""
    run = _ACTIVE.get()
    if run is None or not run.schedule.chunks or threads <= SERIAL_CHUNK \
            or len(full) != threads:
        return [full]
    masks = []
    for start in range(0, threads, SERIAL_CHUNK):
        m = np.zeros(threads, dtype=bool)
        m[start:start + SERIAL_CHUNK] = True
        masks.append(m)
    return masks[::-1] if run.schedule.chunks == "descending" else masks


SHUFFLED_BLOCKS_MAX = 1 << 16
"""Larger grids run their blocks in descending order under `blocks-shuffled` (a permutation
of every block of a huge grid would not fit in memory; the step budget stops such runs)."""


def block_starts(blocks: int, groups: int) -> Sequence[int]:
    """The first block of each wave of `groups` blocks, in the order the waves run."""
    starts = range(0, blocks, groups)
    run = _ACTIVE.get()
    if run is None or groups != 1 or run.schedule.blocks == "ascending":
        return starts
    if run.schedule.blocks == "descending" or blocks > SHUFFLED_BLOCKS_MAX:
        return starts[::-1]
    return [int(b) for b in run.rng.permutation(blocks)]


def explore(run: Callable[[bool], InterpResult]) -> InterpResult:
    """`run(waves)` under every schedule; one result, or why the schedules disagree."""
    from rgpu_fuzz.interp.machine import Finished

    results: list[tuple[Schedule, InterpResult]] = []
    for schedule in SCHEDULES:
        with active(schedule):
            result = run(schedule.waves)
        if isinstance(result, Rejected):
            if schedule.chunks and result.reason in _NOT_APPLICABLE:
                continue
            return result
        results.append((schedule, result))
    first_schedule, first = results[0]
    for schedule, other in results[1:]:
        why = _difference(first, other)
        if why is not None:
            return Rejected(reason=RejectReason.SCHEDULE_DEPENDENT,
                            detail=f"{why} under `{first_schedule.name}` and "
                                   f"`{schedule.name}`")
    assert isinstance(first, Finished | Trap)
    return first


def _difference(a: InterpResult, b: InterpResult) -> str | None:
    """What differs between two results (None: the same outcome)."""
    from rgpu_fuzz.interp.machine import Finished

    if isinstance(a, Trap) and isinstance(b, Trap):
        return None if a.kind == b.kind else f"traps `{a.kind}` and `{b.kind}`"
    if isinstance(a, Finished) and isinstance(b, Finished):
        for name, x in a.outputs.items():
            y = b.outputs[name]
            diff = np.flatnonzero(_bits(x) != _bits(y))
            if len(diff):
                i = int(diff[0])
                return f"`{name}[{i}]` is {x[i].item()} and {y[i].item()}"
        return None
    return "a trap and a finished run"


def _bits(x: np.ndarray) -> np.ndarray:
    """Elements as unsigned integers of their width: NaNs compare by their bits."""
    if x.dtype == np.bool_:
        return x.view(np.uint8)
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))
