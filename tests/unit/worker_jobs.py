"""Jobs for test_workers: each misbehaves in one way a compiler or JIT can."""

from __future__ import annotations

import ctypes
import os
import sys


def pid_and_double(x: int) -> tuple[int, int]:
    return os.getpid(), 2 * x


def abort_after_message(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
    os.abort()


def segfault(_: object) -> None:
    ctypes.string_at(0)


def spin(_: object) -> None:
    while True:
        pass


def allocate_gib(n: int) -> int:
    return len(bytearray(n << 30))


def fail(message: str) -> None:
    raise ValueError(message)


def pid_and_env_after(args: tuple[float, str]) -> tuple[int, str | None]:
    """This worker's pid and its value of an environment variable, after `args[0]` seconds
    (a job still running while the parent changes its environment)."""
    import time

    time.sleep(args[0])
    return os.getpid(), os.environ.get(args[1])
