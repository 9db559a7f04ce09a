"""Opcode counts of a launch: wave-instructions per opcode, from the per-index execution
counts the bound and fused tiers keep (`SimResult.opcodes`, the coverage report's simulator
opcode table). Cheap on a kernel launched again: its indices are grouped by opcode once."""

from __future__ import annotations

from itertools import compress
from operator import itemgetter
from typing import Any

from rgpu_fuzz.sim.bound.program import Program

CACHED_PLANS = 256
"""Programs whose count plans are kept (twice this many, then all dropped), as many as the
engine keeps bound programs."""


def opcode_counts(prog: Program, counts: list[int], runs: list[int], *,
                   exact: bool) -> dict[str, int]:
    """Wave-instructions per opcode of one launch: `counts` per index (a fused run counted at
    its first index), `runs` the executions of the run installed at an index. `exact`: every
    index the launch executed is in `Program.executed` (it ran on the fused tier only);
    otherwise every index is looked at (at C speed). Ordered by opcode name.

    Once a program's executed indices and runs are the same at the end of two launches (a
    kernel launched again), the indices are grouped by opcode (`_count_plan`) and each
    opcode's count is summed at C speed: walking the indices cost ~70 us per warm O3
    launch."""
    if exact:
        plan = _count_plan(prog)
        if plan is not None:
            both = [*counts, *runs, 0]
            out: dict[str, int] = {}
            for op, get in plan:
                n = sum(get(both))
                if n:
                    out[op] = n
            return out
    indices = prog.executed if exact else compress(range(len(counts)), counts)
    templates, run_len = prog.templates, prog.run_len
    opcodes: dict[str, int] = {}
    get = opcodes.get
    for i in indices:
        c = counts[i]
        if not c:
            continue
        op = templates[i].opcode
        opcodes[op] = get(op, 0) + c
        r = runs[i]
        if r:
            for m in range(i + 1, i + run_len[i]):
                op = templates[m].opcode
                opcodes[op] = get(op, 0) + r
    return dict(sorted(opcodes.items()))


_CountPlan = tuple[tuple[str, Any], ...]
"""(opcode, `operator.itemgetter` over `counts + runs + [0]`), see `_count_plan`."""
_COUNT_PLANS: dict[int, tuple[Program, int, int, _CountPlan | None]] = {}
"""By program (its id; the program held): the lengths of `executed` and `run_len` at the
end of its last launch, and the plan made once they were the same twice."""


def _count_plan(prog: Program) -> _CountPlan | None:
    """Per opcode, in name order: an `itemgetter` of what counts for it in `counts + runs +
    [0]` — the indices whose own executions count for it, and (after `counts`) the first
    indices of the runs that hold it, once per instruction of the run it is; the final 0
    pads a single index (`itemgetter` of one index returns no tuple). Made from
    `Program.executed` and `run_len`, not before a launch ends with the same executed
    indices and runs as the one before: a first launch (most of a campaign's) would pay for
    a plan it never uses. Both only grow (`tier_up`), so their lengths say whether anything
    changed."""
    state = (len(prog.executed), len(prog.run_len))
    held = _COUNT_PLANS.get(id(prog))
    if held is not None and held[0] is prog and held[1:3] == state:
        if held[3] is not None:
            return held[3]
        templates, run_len = prog.templates, prog.run_len
        n = len(prog.steps)
        at: dict[str, list[int]] = {}
        for i in prog.executed:
            at.setdefault(templates[i].opcode, []).append(i)
            for m in range(i + 1, i + run_len.get(i, 1)):
                at.setdefault(templates[m].opcode, []).append(n + i)
        plan = tuple((op, itemgetter(*at[op], 2 * n)) for op in sorted(at))
        _COUNT_PLANS[id(prog)] = (prog, *state, plan)
        return plan
    if len(_COUNT_PLANS) >= 2 * CACHED_PLANS:
        _COUNT_PLANS.clear()
    _COUNT_PLANS[id(prog)] = (prog, *state, None)
    return None
