"""Worker recycling (flaky `LLVM ERROR: out of memory` findings): a
worker is replaced after `max_jobs` jobs or once its address space passes `recycle_mb`, and a
job that runs out of memory is run again in a fresh worker; out of memory there too, it is a
harness failure (`Raised`, `HarnessBug` for a built-in pipeline), never a compile crash."""

from __future__ import annotations

import pytest

from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.pipelines.stages import outcome_of
from rgpu_fuzz.pipelines.workers import (
    Done,
    Raised,
    WorkerPool,
    address_space_mb,
    default_pool,
)

JOBS = "tests.unit.worker_memory_jobs"


def _pid(pool: WorkerPool, hold_mib: int = 0) -> int:
    got = pool.call(f"{JOBS}:pid_after_holding", hold_mib, timeout=60)
    assert isinstance(got, Done), got
    return got.value[0]  # type: ignore[no-any-return]


def test_a_worker_is_replaced_after_max_jobs() -> None:
    pool = WorkerPool(size=1, memory_mb=1024, max_jobs=2, recycle_mb=0)
    try:
        pids = [_pid(pool) for _ in range(5)]
    finally:
        pool.close()
    # two jobs per process: a a b b c
    assert pids[0] == pids[1] != pids[2] == pids[3] != pids[4]
    assert pool.recycled == 2 and pool.replaced == 0


def test_a_worker_grown_past_recycle_mb_is_replaced() -> None:
    pool = WorkerPool(size=1, memory_mb=1024, max_jobs=0, recycle_mb=0)
    try:
        first = _pid(pool)
        base = address_space_mb(first)
        assert base is not None and base < 400
        pool.recycle_mb = base + 100
        assert _pid(pool, 40) == first          # +40 MiB: under the threshold, kept
        assert _pid(pool, 80) == first          # +120 MiB: past it, replaced after this job
        fresh = _pid(pool)
        assert fresh != first
        assert pool.recycled == 1
    finally:
        pool.close()


def test_out_of_memory_in_a_grown_worker_reruns_in_a_fresh_one() -> None:
    """600 MiB held + 500 MiB asked > 1024 MiB: MemoryError in the old worker; a fresh
    worker (~30 MiB of Python) fits the 500 MiB, so the job's answer is its own."""
    pool = WorkerPool(size=1, memory_mb=1024, max_jobs=0, recycle_mb=0)
    try:
        grown = _pid(pool, 600)
        got = pool.call(f"{JOBS}:allocate_mib", 500, timeout=60)
        assert isinstance(got, Done) and got.value == 500
        assert pool.out_of_memory == 1
        assert _pid(pool) != grown
    finally:
        pool.close()


def test_llvm_out_of_memory_twice_is_a_harness_failure_not_a_compile_crash() -> None:
    """A real LLVM allocation failure (SelectionDAG of a 60,000-element aggregate copy
    under a 320 MiB limit) kills the worker; the fresh worker dies the same way: the result
    is `Raised` with LLVM's message, which a built-in pipeline turns into `HarnessBug`
    (a campaign's harness error) instead of a `CompileCrash` finding."""
    pool = WorkerPool(size=1, memory_mb=320, max_jobs=0, recycle_mb=0)
    try:
        got = pool.call(f"{JOBS}:llvm_big_copy", None, timeout=120)
    finally:
        pool.close()
    assert isinstance(got, Raised), got
    assert "harness failure" in got.traceback
    assert "out of memory" in got.traceback or "std::bad_alloc" in got.traceback
    assert pool.out_of_memory == 2 and pool.replaced == 2
    with pytest.raises(HarnessBug):
        outcome_of(got, "llvm-cpu:O0", ("codegen",))


def test_default_pool_takes_its_policy_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RGPU_WORKER_MAX_JOBS", "7")
    monkeypatch.setenv("RGPU_WORKER_RECYCLE_MB", "1500")
    pool = default_pool(memory_mb=3333)   # a limit no other test uses: a pool of its own
    assert (pool.max_jobs, pool.recycle_mb) == (7, 1500)
    monkeypatch.delenv("RGPU_WORKER_MAX_JOBS")
    monkeypatch.delenv("RGPU_WORKER_RECYCLE_MB")
    assert (default_pool(memory_mb=3334).recycle_mb, default_pool(memory_mb=3334).max_jobs) \
        == (1667, 1000)
