"""The executor interface: how a campaign's jobs run, apart from what the campaign keeps.

`Campaign` (campaigns/orchestrate.py) keeps the bookkeeping — seeds and chunks, the checkpoint, the
store, reductions and their order. An `Executor` only runs jobs somewhere and hands back
what came of each. Its rules:

* **Plain data both ways.** A job leaves as `wire.encode(job)` bytes and its result comes
  back as bytes (`run_encoded` is the one worker-side entry), so where the job ran — a
  local process, a Ray actor on another machine — cannot change what the campaign records.
* **Lost is not failed.** A worker that dies (killed, out of memory, node gone) makes its jobs
  `lost`: they did nothing the campaign can see, and the campaign queues them again. A job
  that *raised* is `error` (a harness bug, with the worker's traceback).
* **Only the driver writes.** Workers return values; the campaign alone writes the store,
  the checkpoint and `OUT/`.
"""

from __future__ import annotations

import abc
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from campaigns import wire
from campaigns.jobs import judge_cases, reduce_finding, run_chunk

Runner = Callable[[bytes], bytes]
"""A worker-side entry: an encoded job in, an encoded result out (module-level, so a process
pool and Ray can name it)."""


@dataclass(frozen=True, slots=True)
class JobError:
    """A job raised in its worker (a harness bug): the traceback, sent back as plain data
    like a result rather than as a pickled exception."""

    traceback: str


def run_encoded(payload: bytes) -> bytes:
    """Decode a job, run it in this process (pipelines stay warm between jobs), encode the
    result — or the traceback, when the job raises."""
    try:
        job = wire.decode_job(payload)
        if isinstance(job, wire.ChunkJob):
            return wire.encode(run_chunk(job))
        if isinstance(job, wire.JudgeJob):
            return wire.encode(judge_cases(job))
        return wire.encode(reduce_finding(job))
    except Exception:
        return wire.encode(JobError(traceback.format_exc()))


@dataclass(frozen=True, slots=True)
class Done:
    """What came of one submitted job: exactly one of `result`, `error`, `lost`."""

    ticket: int
    job: wire.Job
    result: wire.Result | None = None
    error: str | None = None
    """The traceback of an exception the job raised in the worker (a harness bug)."""
    lost: bool = False
    """The worker died before the job finished; nothing of it reached the campaign."""


def decode_outcome(ticket: int, job: wire.Job, payload: bytes) -> Done:
    """The `Done` of a job whose worker sent back `payload`."""
    got = wire.decode(payload, wire.Result | JobError)
    if isinstance(got, JobError):
        return Done(ticket, job, error=got.traceback)
    return Done(ticket, job, result=cast(wire.Result, got))


class Executor(abc.ABC):
    """Runs campaign jobs; see the module docstring for the rules every executor keeps."""

    name: str = ""

    @property
    @abc.abstractmethod
    def workers(self) -> int:
        """How many jobs run at once (the campaign keeps about twice as many queued)."""

    @abc.abstractmethod
    def start(self) -> None:
        """Start the workers (before the first `submit`)."""

    @abc.abstractmethod
    def submit(self, job: wire.Job) -> int:
        """Queue `job`; returns the ticket its `Done` will carry."""

    @abc.abstractmethod
    def wait(self, timeout: float) -> list[Done]:
        """Jobs that finished (or were lost) within `timeout` seconds; [] when none."""

    @abc.abstractmethod
    def stop(self, *, kill: bool) -> None:
        """Release the workers; with `kill`, also those still running a job (a pipeline
        stuck past the time budget must not keep the campaign alive)."""

    def worker_pids(self) -> list[int]:
        """Process ids of the workers running now, where known (tests kill one)."""
        return []
