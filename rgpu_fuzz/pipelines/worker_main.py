"""The worker process of `workers.py`: read a job, run it, write the result, repeat.

Only a clean `("ok", value)` or `("raised", traceback)` ever goes back; anything that kills
the process (abort, segfault, the memory limit) is seen by the parent as end of file.
"""

from __future__ import annotations

import gc
import importlib
import os
import pickle
import resource
import struct
import sys
import traceback

_HEADER = struct.Struct("<Q")


def _read_exact(stream, n: int) -> bytes | None:  # type: ignore[no-untyped-def]
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _send(proto, reply: tuple[str, object]) -> None:  # type: ignore[no-untyped-def]
    data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    proto.write(_HEADER.pack(len(data)) + data)
    proto.flush()


def main() -> int:
    from rgpu_fuzz.pipelines.workers import PARENT_PID_ENV, die_with_parent, tune_worker_gc

    parent = os.environ.get(PARENT_PID_ENV)
    die_with_parent(int(parent) if parent else None)
    limit_mb = int(os.environ.get("RGPU_WORKER_MEMORY_MB", "0"))
    if limit_mb > 0:
        limit = limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # Jobs must not write to the protocol stream: point fd 1 at stderr for everything else.
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    del stdout
    cache: dict[str, object] = {}
    tune_worker_gc()  # and gc.freeze() again after each job module's import, below
    while True:
        header = _read_exact(stdin, _HEADER.size)
        if header is None:
            return 0
        (length,) = _HEADER.unpack(header)
        body = _read_exact(stdin, length)
        if body is None:
            return 0
        target, payload = pickle.loads(body)
        try:
            fn = cache.get(target)
            if fn is None:
                module, _, name = target.partition(":")
                fn = cache[target] = getattr(importlib.import_module(module), name)
                gc.freeze()  # the modules just imported live as long as the worker
        except Exception:
            _send(proto, ("raised", traceback.format_exc()))
            continue
        _send(proto, ("ready", None))  # the parent starts the job's timeout now
        try:
            reply = ("ok", fn(payload))  # type: ignore[operator]
        except Exception:
            reply = ("raised", traceback.format_exc())
        _send(proto, reply)


if __name__ == "__main__":
    sys.exit(main())
