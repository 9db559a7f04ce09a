"""Campaign job processes collect garbage like the LLVM workers (`tune_worker_gc`)."""

from __future__ import annotations

import gc
import subprocess
import sys

from campaigns.executors.local import LocalExecutor
from campaigns.jobs import ChunkJob, Setup
from rgpu_fuzz.pipelines.workers import WORKER_GC_THRESHOLD


def report_gc(payload: bytes) -> bytes:
    """Runs in the pool process in place of `run_encoded`; its answer comes back as the
    job's error text."""
    raise ValueError(f"threshold={gc.get_threshold()} frozen={gc.get_freeze_count()}")


def test_pool_processes_use_the_worker_gc_thresholds_and_a_frozen_import_set() -> None:
    assert gc.get_threshold() != WORKER_GC_THRESHOLD  # this process: the defaults (700, ...)
    ex = LocalExecutor(1, runner=report_gc)
    ex.start()
    try:
        ex.submit(ChunkJob(Setup(("ref",), "default", "default"), 0, ()))
        done = ex.wait(120.0)
    finally:
        ex.stop(kill=True)
    assert len(done) == 1 and done[0].error is not None
    line = done[0].error.strip().splitlines()[-1]
    assert f"threshold={WORKER_GC_THRESHOLD}" in line
    frozen = int(line.rsplit("frozen=", 1)[1])
    assert frozen > 10_000  # the imported rgpu_fuzz and stdlib modules' objects


def test_a_ray_chunk_actor_sets_the_same_gc_thresholds() -> None:
    """The actor's constructor runs in the Ray worker process; here in a child process so
    this one keeps its defaults (Ray itself is not needed to test the constructor)."""
    code = ("import gc; from campaigns.executors.ray import ChunkActor; ChunkActor(); "
            "print(gc.get_threshold(), gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split(")")
    assert out[0] + ")" == str(WORKER_GC_THRESHOLD)
    assert int(out[1]) > 10_000
