"""Where a campaign's jobs run: `local` (a process pool, the default) or `ray` (a cluster).

`make_executor` reads the `--executor` value; the Ray executor is imported only when asked
for, so `ray` stays an optional dependency."""

from __future__ import annotations

from campaigns.executors.base import Done, Executor, run_encoded
from campaigns.executors.local import LocalExecutor
from rgpu_fuzz.model.errors import RgpuError


def make_executor(spec: str, jobs: int | None) -> Executor:
    """`local`, `ray` (a local instance, or $RAY_ADDRESS) or `ray://HOST:PORT` (Ray Client).
    `jobs` None: all local cores, or one actor per CPU of the Ray cluster."""
    import os

    if spec == "local":
        return LocalExecutor(jobs or os.cpu_count() or 1)
    if spec == "ray" or spec.startswith("ray://"):
        from campaigns.executors.ray import RayExecutor

        address = spec if spec != "ray" else os.environ.get("RAY_ADDRESS") or None
        return RayExecutor(address, jobs)
    raise RgpuError(f"--executor: expected local, ray or ray://HOST:PORT, got \"{spec}\"")


__all__ = ["Done", "Executor", "LocalExecutor", "make_executor", "run_encoded"]
