"""The one bounded-subprocess helper: every external tool (rustc, ld.lld, llc, llvm-objdump)
and every compiled program runs through `run_bounded`, and every way a process can end is
named by `ended_by` / `signal_name` (docs/design.md §3: nothing may hang or take the harness down).

It sits at the bottom of the layers (beside `model`) so `codeobj` (ld.lld) and `pipelines`
(rustc, llc) share it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Process", "run_bounded", "signal_name"]

_KILL_GRACE = 5.0


def signal_name(returncode: int) -> str:
    """`SIGSEGV` for a death by signal (a negative return code), else `exit N`."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Process:
    """How a subprocess ended: `returncode` None when it was killed on its timeout."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float

    @property
    def ended_by(self) -> str:
        """`SIGSEGV`, `exit 3`, or `timeout`."""
        return "timeout" if self.returncode is None else signal_name(self.returncode)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def run_bounded(cmd: Sequence[str], *, timeout: float, cwd: Path | None = None,
                env: Mapping[str, str] | None = None) -> Process:
    """Run `cmd` in a new process group; on `timeout` kill the group and return what it
    wrote so far. Never waits longer than `timeout` plus a few seconds. `env` entries are
    added to this process's environment."""
    t0 = time.perf_counter()
    full_env = None if env is None else {**os.environ, **env}
    with subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace", cwd=cwd,
                          env=full_env, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                out, err = proc.communicate(timeout=_KILL_GRACE)
            except subprocess.TimeoutExpired:  # a grandchild left the group and holds a pipe
                out, err = "", ""
            return Process(returncode=None, stdout=out, stderr=err,
                           seconds=time.perf_counter() - t0)
        except BaseException:
            _kill_group(proc)
            raise
    return Process(returncode=proc.returncode, stdout=out, stderr=err,
                   seconds=time.perf_counter() - t0)
