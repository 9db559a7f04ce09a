"""The default executor: a pool of `jobs` spawned processes on this machine.

Jobs cross into the pool as `wire` bytes, the same encoding Ray jobs use, though a pickle
would do here: one path means a value the codec cannot carry fails every campaign, not only
runs on a cluster, and local-vs-Ray comparisons test the transport alone. The cost is small
next to a chunk (measured in the executor note: well under 1 % of a chunk's time).
"""

from __future__ import annotations

import itertools
import os
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

from campaigns import wire
from campaigns.executors.base import (
    Done,
    Executor,
    Runner,
    decode_outcome,
    run_encoded,
)
from rgpu_fuzz.pipelines.workers import die_with_parent, tune_worker_gc


def _init_worker(parent_pid: int) -> None:
    """A pool process: it dies with the campaign, and collects garbage like the LLVM workers
    (its chunks check, interpret and judge: the same short-lived cyclic objects)."""
    die_with_parent(parent_pid)
    tune_worker_gc()


class LocalExecutor(Executor):
    """`jobs` worker processes that die with this one (PR_SET_PDEATHSIG), so a SIGKILLed
    campaign leaves none behind. A worker process that dies takes the pool with it
    (`BrokenProcessPool`): every job in the pool is reported lost and a new pool starts."""

    name = "local"

    def __init__(self, jobs: int, runner: Runner = run_encoded) -> None:
        self.jobs = jobs
        self.runner = runner
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[Future[bytes], tuple[int, wire.Job]] = {}
        self._tickets = itertools.count()

    @property
    def workers(self) -> int:
        return self.jobs

    def start(self) -> None:
        self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=get_context("spawn"),
                                         initializer=_init_worker, initargs=(os.getpid(),))

    def worker_pids(self) -> list[int]:
        """The pool's processes (started as jobs are submitted)."""
        return list((getattr(self._pool, "_processes", None) or {}).keys())

    def submit(self, job: wire.Job) -> int:
        assert self._pool is not None, "start() first"
        ticket = next(self._tickets)
        self._futures[self._pool.submit(self.runner, wire.encode_job(job))] = (ticket, job)
        return ticket

    def wait(self, timeout: float) -> list[Done]:
        if not self._futures:
            return []
        finished, _ = wait_futures(self._futures, timeout=timeout, return_when=FIRST_COMPLETED)
        out: list[Done] = []
        broken = False
        for fut in finished:
            ticket, job = self._futures.pop(fut)
            try:
                payload = fut.result()
            except BrokenProcessPool:
                broken = True
                out.append(Done(ticket, job, lost=True))
            except Exception as e:
                out.append(Done(ticket, job, error="".join(traceback.format_exception(e))))
            else:
                out.append(decode_outcome(ticket, job, payload))
        if broken:
            out.extend(Done(t, j, lost=True) for t, j in self._futures.values())
            self._futures.clear()
            self.stop(kill=True)
            self.start()
        return out

    def stop(self, *, kill: bool) -> None:
        """Shut the pool down; with `kill`, kill its processes too, since a job stuck in a
        pipeline would otherwise keep the interpreter from exiting (concurrent.futures joins
        its workers at exit). `_processes` is CPython's table of the pool's processes."""
        pool, self._pool = self._pool, None
        self._futures.clear()
        if pool is None:
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        if kill:
            for proc in processes:
                if proc.is_alive():
                    proc.kill()
            for proc in processes:
                proc.join(timeout=5)
