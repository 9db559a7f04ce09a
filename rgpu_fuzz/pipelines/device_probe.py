"""Asking a GPU runtime what it offers, without letting it take this process down.

`hip` and `nvptx-gpu` both need to know, before any case runs, whether their runtime and a
device exist here. A broken ROCm or CUDA install can crash or hang the process that loads it,
so the question is asked by a short script in a child process (`run_bounded`), which prints
one JSON object as its last line: either the runtime's answer or `{"reason": ...}`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

from rgpu_fuzz.process import run_bounded

__all__ = ["PROBE_TIMEOUT_S", "ask_runtime"]

PROBE_TIMEOUT_S = 60.0


def ask_runtime(*, module: str, missing: str, script: str, runtime: str) -> dict[str, Any] | str:
    """The JSON answer of `script`, or one line saying why there is none: `missing` when the
    Python package `module` is not installed, else how the child ended or what it said."""
    if importlib.util.find_spec(module) is None:
        return missing
    proc = run_bounded([sys.executable, "-c", script], timeout=PROBE_TIMEOUT_S)
    if proc.returncode != 0:
        return (f"probing {runtime} ended by {proc.ended_by}: "
                f"{(proc.stderr.strip().splitlines() or [''])[-1][:160]}")
    try:
        got = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"probing {runtime} printed no answer: {proc.stdout[-160:]!r}"
    if not isinstance(got, dict):
        return f"probing {runtime} printed no answer: {proc.stdout[-160:]!r}"
    if got.get("reason"):
        return str(got["reason"])[:200]
    return got
