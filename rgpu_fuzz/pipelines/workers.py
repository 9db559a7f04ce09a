"""Sandboxed, long-lived worker processes for everything that can abort, crash or hang.

LLVM reports fatal errors by aborting the process, JIT-compiled code can segfault or loop, and
rustc can crash (docs/design.md §3). All of that runs here, in a child process with a per-job
timeout and an address-space limit. A worker that dies or hangs is replaced and its job
becomes a value (`Died`, `TimedOut`); the parent never dies with it. Workers are reused
between jobs because start-up (importing llvmlite, numpy) costs far more than a small job.

Protocol: length-prefixed pickle frames on the child's stdin/stdout; the child's stderr goes
to a file, and the tail written during a job is the `log` of a `Died`. Jobs name a top-level
function as `"module:function"`; it takes one picklable payload and returns a picklable value.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import gc
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, TypeAlias

from rgpu_fuzz.process import signal_name

_HEADER = struct.Struct("<Q")

IMPORT_TIMEOUT_S = 120.0
"""How long a worker may take to start and import a job's module before the job's own
timeout starts (importing llvmlite and numpy takes seconds on a loaded machine)."""


PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal this process gets when the thread that created it ends."""

PARENT_PID_ENV = "RGPU_PARENT_PID"

MAX_JOBS_ENV = "RGPU_WORKER_MAX_JOBS"
RECYCLE_MB_ENV = "RGPU_WORKER_RECYCLE_MB"
DEFAULT_MAX_JOBS = 1000
"""A worker is replaced after this many jobs (`RGPU_WORKER_MAX_JOBS`; 0: never)."""

DEFAULT_RECYCLE_SHARE = 0.5
"""A worker whose address space (VmSize, what RLIMIT_AS limits) has grown past this share
of its memory limit is replaced after its job (`RGPU_WORKER_RECYCLE_MB` sets the size in
MiB; 0: never). A worker grows with every case it runs (1.6 MiB per amdgpu-sim
O0 case measured, 3.4 MiB in campaign, whose workers reached the 4 GiB limit in
10 minutes and reported LLVM's `out of memory` as compiler crashes); half the limit leaves
the other half to one job's own peak."""

OUT_OF_MEMORY_MARKS = ("LLVM ERROR: out of memory", "std::bad_alloc", "MemoryError",
                       "Cannot allocate memory", "Unable to allocate")
"""What a job that hit the worker's memory limit leaves in its log or traceback: LLVM's
`report_bad_alloc_error` (llvm/lib/Support/ErrorHandling.cpp), the C++ runtime, Python,
errno ENOMEM, numpy."""


def out_of_memory(result: object) -> bool:
    """Whether a job died or raised because its worker ran out of address space."""
    text = (result.log if isinstance(result, Died) else
            result.traceback if isinstance(result, Raised) else "")
    return any(mark in text for mark in OUT_OF_MEMORY_MARKS)


def address_space_mb(pid: int) -> float | None:
    """A process's virtual memory size in MiB (/proc/PID/status VmSize); None off Linux."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def die_with_parent(parent_pid: int | None = None) -> None:
    """Make the calling process receive SIGKILL when its parent ends, however it ends (a
    SIGKILLed campaign leaves no job process, LLVM worker or resource tracker behind).
    Linux only (prctl(2) PR_SET_PDEATHSIG); elsewhere a no-op. `parent_pid` closes the race
    in which the parent died before the call: then this process exits at once."""
    libc_name = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or libc_name is None:
        return
    libc = ctypes.CDLL(libc_name, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


WORKER_GC_THRESHOLD = (10_000, 10, 10)
"""Collector thresholds of every long-lived worker process (LLVM workers, campaign job
processes). Checking and lowering allocate many short-lived objects with reference cycles
(typed AST copies, IR): with the default gen-0 threshold (700) collections run every few
statements. Measured: ~10 % less LLVM-worker CPU on llvm-cpu:O0; in a campaign job process
1.37 -> 0.61 ms GC per default case (front.md, Follow-up)."""


def tune_worker_gc() -> None:
    """Apply `WORKER_GC_THRESHOLD` and freeze what the imports so far left (`gc.freeze`: the
    modules live as long as the process, so full collections need not rescan them)."""
    gc.set_threshold(*WORKER_GC_THRESHOLD)
    gc.freeze()


class _Spawner:
    """Starts worker processes from one thread that lives as long as this process.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, and pipelines
    run on short-lived watchdog threads (`Pipeline.run`); a worker forked there would be
    killed when its first job returns."""

    def __init__(self) -> None:
        self._requests: queue.Queue[tuple[list[str], dict[str, str], Any,
                                          queue.Queue[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _serve(self) -> None:
        while True:
            argv, env, log, reply = self._requests.get()
            try:
                reply.put(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=log, env=env))
            except BaseException as e:
                reply.put(e)

    def popen(self, argv: list[str], env: dict[str, str], log: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="rgpu-worker-spawner",
                                                daemon=True)
                self._thread.start()
        reply: queue.Queue[Any] = queue.Queue()
        self._requests.put((argv, env, log, reply))
        got = reply.get()
        if isinstance(got, BaseException):
            raise got
        return got  # type: ignore[no-any-return]


_spawner = _Spawner()


class _Expired(Exception):
    """A deadline passed while waiting for a worker's frame."""


@dataclass(frozen=True, slots=True)
class Done:
    value: Any


@dataclass(frozen=True, slots=True)
class Died:
    """The worker process ended during the job: `signal` is e.g. `SIGABRT` or `exit 3`."""

    signal: str
    log: str


@dataclass(frozen=True, slots=True)
class TimedOut:
    seconds: float
    log: str = ""


@dataclass(frozen=True, slots=True)
class Raised:
    """The job function raised: a bug in rgpu-fuzz (or a plugin), with its traceback."""

    traceback: str


JobResult: TypeAlias = Done | Died | TimedOut | Raised


class Worker:
    """One child process running `rgpu_fuzz.pipelines.worker_main`."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self._log = tempfile.TemporaryFile(prefix="rgpu-worker-", suffix=".log")
        env = dict(os.environ, RGPU_WORKER_MEMORY_MB=str(memory_mb), PYTHONFAULTHANDLER="1")
        env[PARENT_PID_ENV] = str(os.getpid())
        self.proc = _spawner.popen([sys.executable, "-m", "rgpu_fuzz.pipelines.worker_main"],
                                   env, self._log)
        self.jobs = 0
        self.generation = 0
        self._pending = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _log_tail(self, start: int, lines: int = 40) -> str:
        self._log.flush()
        self._log.seek(start)
        text = self._log.read().decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    def _frame(self, deadline: float) -> bytes | None:
        """The next frame from the worker; None at end of file (the worker died). Raises
        `_Expired` at `deadline` (monotonic seconds)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            if len(self._pending) >= _HEADER.size:
                (length,) = _HEADER.unpack(self._pending[:_HEADER.size])
                end = _HEADER.size + length
                if len(self._pending) >= end:
                    frame, self._pending = self._pending[_HEADER.size:end], self._pending[end:]
                    return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Expired
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._pending += chunk

    def call(self, target: str, payload: object, timeout: float) -> JobResult:
        """Run one job. The worker first imports the job's module and says so; only then
        does the job's `timeout` start, so importing llvmlite in a fresh worker (seconds) is
        never counted as the job's time (`IMPORT_TIMEOUT_S` bounds the import itself)."""
        assert self.proc.stdin is not None
        self._log.seek(0, os.SEEK_END)
        log_start = self._log.tell()
        data = pickle.dumps((target, payload), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.proc.stdin.write(_HEADER.pack(len(data)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.proc.wait()
            return Died(signal_name(self.proc.returncode), self._log_tail(log_start))
        try:
            ready = self._frame(time.monotonic() + IMPORT_TIMEOUT_S)
            if ready is not None and pickle.loads(ready)[0] == "ready":
                frame = self._frame(time.monotonic() + timeout)
            else:
                frame = ready  # the import itself failed: that frame is the answer
        except _Expired:
            self.kill()
            return TimedOut(timeout, self._log_tail(log_start))
        if frame is None:
            self.proc.wait()
            return Died(signal_name(self.proc.returncode), self._log_tail(log_start))
        self.jobs += 1
        kind, value = pickle.loads(frame)
        return Done(value) if kind == "ok" else Raised(value)

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        if self.alive() and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._log.close()


class WorkerPool:
    """A set of reusable workers; a dead or hung worker is replaced before the next job.

    Workers are recycled (closed, and a fresh one started for the next job) after
    `max_jobs` jobs or once their address space exceeds `recycle_mb`, so a long campaign
    never reaches the memory limit through growth. A job that runs out of memory anyway is
    run once more in a fresh worker; when it runs out there too, it is `Raised` with the
    log: a harness failure (a campaign's harness error), never a compiler finding.

    Thread-safe: each call takes a free worker (starting one up to `size`)."""

    def __init__(self, size: int = 1, memory_mb: int = 4096, *,
                 max_jobs: int = DEFAULT_MAX_JOBS, recycle_mb: float | None = None) -> None:
        self.size = size
        self.memory_mb = memory_mb
        self.max_jobs = max_jobs
        self.recycle_mb = memory_mb * DEFAULT_RECYCLE_SHARE if recycle_mb is None else recycle_mb
        self._free: list[Worker] = []
        self._count = 0
        self._cond = threading.Condition()
        self.replaced = 0
        self.recycled = 0
        self.out_of_memory = 0
        self._generation = 0

    def _acquire(self, *, fresh: bool = False) -> Worker:
        with self._cond:
            while True:
                while self._free:
                    w = self._free.pop()
                    if w.alive() and not fresh:
                        return w
                    w.close()  # dead, or its slot goes to a fresh worker
                    self._count -= 1
                    if fresh:
                        break
                if self._count < self.size:
                    self._count += 1
                    generation = self._generation
                    break
                self._cond.wait()
        w = Worker(self.memory_mb)
        w.generation = generation
        return w

    def worn(self, w: Worker) -> bool:
        """Whether `w` has run its `max_jobs` or grown past `recycle_mb`."""
        if self.max_jobs > 0 and w.jobs >= self.max_jobs:
            return True
        size = address_space_mb(w.proc.pid) if self.recycle_mb > 0 else None
        return size is not None and size > self.recycle_mb

    def _release(self, w: Worker, healthy: bool) -> None:
        worn = healthy and w.alive() and self.worn(w)
        with self._cond:
            if w.generation != self._generation:
                w.close()  # busy at `close()`: started with the environment of before it
                self._cond.notify()
                return
            if healthy and w.alive() and not worn:
                self._free.append(w)
            else:
                w.close()
                self._count -= 1
                if worn:
                    self.recycled += 1
                else:
                    self.replaced += 1
            self._cond.notify()

    def call(self, target: str, payload: object, *, timeout: float) -> JobResult:
        w = self._acquire()
        result = w.call(target, payload, timeout)
        self._release(w, healthy=isinstance(result, Done | Raised) and not out_of_memory(result))
        if not out_of_memory(result):
            return result
        self.out_of_memory += 1
        w = self._acquire(fresh=True)
        again = w.call(target, payload, timeout)
        self._release(w, healthy=isinstance(again, Done | Raised) and not out_of_memory(again))
        if not out_of_memory(again):
            return again
        self.out_of_memory += 1
        log = again.log if isinstance(again, Died) else again.traceback  # type: ignore[union-attr]
        return Raised(f"worker out of memory (address-space limit {self.memory_mb} MiB), "
                      f"also in a fresh worker: a harness failure, not a finding\n{log}")

    def close(self) -> None:
        """Close the idle workers now and each busy one when its job returns; the next job
        runs in a worker started after this call (with `os.environ` as it is then)."""
        with self._cond:
            self._generation += 1
            for w in self._free:
                w.close()
            self._free.clear()
            self._count = 0


_pools: dict[int, WorkerPool] = {}
_pools_lock = threading.Lock()


def default_pool(memory_mb: int = 4096) -> WorkerPool:
    """The process-wide pool for a memory limit (created on first use, closed at exit)."""
    with _pools_lock:
        pool = _pools.get(memory_mb)
        if pool is None:
            pool = _pools[memory_mb] = WorkerPool(
                size=os.cpu_count() or 1, memory_mb=memory_mb,
                max_jobs=_env_number(MAX_JOBS_ENV, DEFAULT_MAX_JOBS),
                recycle_mb=_env_number(RECYCLE_MB_ENV, memory_mb * DEFAULT_RECYCLE_SHARE))
        return pool


def _env_number(name: str, default: float) -> int:
    """A non-negative whole number from the environment; `default` when unset or not one."""
    text = os.environ.get(name, "").strip()
    return int(text) if text.isdigit() else int(default)


@atexit.register
def _close_pools() -> None:
    for pool in _pools.values():
        pool.close()


def call_in_worker(target: str, payload: object, *, timeout: float,
                   memory_mb: int = 4096) -> JobResult:
    """Run `target(payload)` in a sandboxed worker; see the module docstring."""
    return default_pool(memory_mb).call(target, payload, timeout=timeout)
