"""Sandboxed workers: a job that aborts, segfaults, hangs or exhausts memory becomes a value and
the pool keeps working (docs/design.md §3 "Rules every pipeline keeps")."""

from __future__ import annotations

import os

import pytest

from rgpu_fuzz.pipelines.workers import Died, Done, Raised, TimedOut, WorkerPool

JOBS = "tests.unit.worker_jobs"


@pytest.fixture
def pool():  # type: ignore[no-untyped-def]
    p = WorkerPool(size=1, memory_mb=1024)
    yield p
    p.close()


def test_result_comes_back_and_worker_is_reused(pool: WorkerPool) -> None:
    first = pool.call(f"{JOBS}:pid_and_double", 21, timeout=30)
    second = pool.call(f"{JOBS}:pid_and_double", 5, timeout=30)
    assert isinstance(first, Done) and isinstance(second, Done)
    assert first.value[1] == 42 and second.value[1] == 10
    assert first.value[0] == second.value[0] != os.getpid()


def test_abort_is_died_with_signal_and_log(pool: WorkerPool) -> None:
    result = pool.call(f"{JOBS}:abort_after_message", "LLVM ERROR: Cannot select", timeout=30)
    assert isinstance(result, Died)
    assert result.signal == "SIGABRT"
    assert "LLVM ERROR: Cannot select" in result.log
    after = pool.call(f"{JOBS}:pid_and_double", 1, timeout=30)
    assert isinstance(after, Done) and after.value[1] == 2
    assert pool.replaced == 1


def test_segfault_is_died(pool: WorkerPool) -> None:
    result = pool.call(f"{JOBS}:segfault", None, timeout=30)
    assert isinstance(result, Died) and result.signal == "SIGSEGV"


def test_hang_is_timed_out_and_replaced(pool: WorkerPool) -> None:
    result = pool.call(f"{JOBS}:spin", None, timeout=1.0)
    assert isinstance(result, TimedOut) and result.seconds == 1.0
    after = pool.call(f"{JOBS}:pid_and_double", 3, timeout=30)
    assert isinstance(after, Done) and after.value[1] == 6


def test_memory_limit_stops_a_runaway_job(pool: WorkerPool) -> None:
    result = pool.call(f"{JOBS}:allocate_gib", 4, timeout=60)
    # Python turns the failed allocation into MemoryError inside the job: a harness-side value.
    assert isinstance(result, Raised) and "MemoryError" in result.traceback


def test_exception_in_job_is_raised_with_traceback(pool: WorkerPool) -> None:
    result = pool.call(f"{JOBS}:fail", "boom", timeout=30)
    assert isinstance(result, Raised)
    assert "ValueError: boom" in result.traceback


def test_import_time_is_not_the_jobs_time(pool: WorkerPool) -> None:
    """The job's timeout starts once the worker has imported the job's module: a 1.5 s
    import under a 1 s timeout still completes, also on a worker that has run jobs before."""
    warm = pool.call(f"{JOBS}:pid_and_double", 1, timeout=30)
    assert isinstance(warm, Done)
    result = pool.call("tests.unit.worker_slow_import:answer", None, timeout=1.0)
    assert isinstance(result, Done) and result.value == 42


def test_a_module_that_does_not_import_is_raised(pool: WorkerPool) -> None:
    result = pool.call("tests.unit.no_such_module:f", None, timeout=5.0)
    assert isinstance(result, Raised) and "ModuleNotFoundError" in result.traceback
    after = pool.call(f"{JOBS}:pid_and_double", 4, timeout=30)
    assert isinstance(after, Done) and after.value[1] == 8


def test_a_worker_busy_at_close_is_not_reused(pool: WorkerPool,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`close()` is how a new `os.environ` reaches the workers (`SimOpcodeCapture` sets
    `RGPU_SIM_STATS`, then closes the pool): a worker busy at that moment must not come back
    into the pool with the environment it started with. The job sleeps 2 s, so the close
    happens while it runs; the next job runs in a fresh worker that sees the new variable."""
    import threading

    var = "RGPU_TEST_CLOSE_MARK"
    monkeypatch.delenv(var, raising=False)
    warm = pool.call(f"{JOBS}:pid_and_env_after", (0.0, var), timeout=60)
    assert isinstance(warm, Done) and warm.value[1] is None
    got: list[object] = []
    busy = threading.Thread(target=lambda: got.append(
        pool.call(f"{JOBS}:pid_and_env_after", (2.0, var), timeout=60)))
    busy.start()
    while pool._free:  # until the thread holds the (started) worker
        busy.join(0.01)
    monkeypatch.setenv(var, "after-close")
    pool.close()
    busy.join()
    (old,) = got
    assert isinstance(old, Done) and old.value == (warm.value[0], None)
    new = pool.call(f"{JOBS}:pid_and_env_after", (0.0, var), timeout=60)
    assert isinstance(new, Done) and new.value == (new.value[0], "after-close")
    assert new.value[0] != old.value[0]
