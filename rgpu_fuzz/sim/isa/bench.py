"""The decoder's throughput, for `rgpu-fuzz bench sim`: instructions decoded (and rendered)
per second over a set of code objects.

Three figures, each the median of `repeat` passes over the whole set: `cold` forgets the
memo before every code object (a code object's first decoding in a fresh worker), `memo`
forgets it once per pass (a campaign worker: later code objects reuse earlier ones'
instructions), `warm` never forgets it (an upper bound). `render` is LLVM-syntax rendering
of every decoded instruction.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from rgpu_fuzz.codeobj import CodeObject
from rgpu_fuzz.sim.isa.decode import clear_memo, decode_code_object
from rgpu_fuzz.sim.isa.render import render

__all__ = ["decode_throughput"]


def _pass(code_objects: Sequence[CodeObject], clear_each: bool) -> tuple[int, float]:
    n, t0 = 0, time.perf_counter()
    for co in code_objects:
        if clear_each:
            clear_memo()
        n += len(decode_code_object(co))
    return n, time.perf_counter() - t0


def decode_throughput(code_objects: Sequence[CodeObject], repeat: int = 3) -> dict[str, Any]:
    """Instructions per second decoding `code_objects` (see the module docstring)."""
    if not code_objects:
        return {"code_objects": 0}
    decode_code_object(code_objects[0])          # import the tables outside the timing
    figures: dict[str, list[float]] = {"cold": [], "memo": [], "warm": [], "render": []}
    n = 0
    for _ in range(max(1, repeat)):
        n, s = _pass(code_objects, clear_each=True)
        figures["cold"].append(n / s)
        clear_memo()
        _, s = _pass(code_objects, clear_each=False)
        figures["memo"].append(n / s)
        _, s = _pass(code_objects, clear_each=False)
        figures["warm"].append(n / s)
        insts = [i for co in code_objects for i in decode_code_object(co)]
        t0 = time.perf_counter()
        for inst in insts:
            render(inst)
        figures["render"].append(len(insts) / (time.perf_counter() - t0))
    return {"code_objects": len(code_objects), "instructions": n, "repeat": repeat,
            **{f"{k}_instructions_per_second": round(statistics.median(v))
               for k, v in figures.items()}}
