"""The tier policy: when an instruction leaves the bound steps for a fused run.

The bound tier (`rgpu_fuzz.sim.bound`) binds every instruction to a step; the fused tier
(`rgpu_fuzz.sim.fused`) compiles straight-line runs of them. Neither knows the other's
policy: this module, above both, decides when the engine asks for a run
(docs/simulator.md §6.2, "Tier-up")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import Program, bind_program
from rgpu_fuzz.sim.fused.runs import compiled, compiled_at, heads, run_length
from rgpu_fuzz.sim.isa.inst import Inst

HOT = 1024
"""Executions of an instruction (per program, over launches) after which the run starting
there is fused; a run whose words were fused before in this process is used at its first
execution. Compiling a run costs ~1-2 ms (~70 us per instruction), and on campaign code a
fused run saves little over the bound steps: the bound tier's lane moves and copies
(`bound.lane_steps`, the copy binders of `bound.alu`) are what cold O0 code runs most, and on
the five O0 campaign cases with the most wave-instructions, everything fused (`HOT` 1, fifth
launch) ran 1.98-2.05 s against 1.94-1.95 s on the bound steps alone. First launches, one
process per set going through it in order as a campaign worker does (80 new and 40 earlier
O0 campaign cases, the bench's fixed set at gfx942 and gfx1100): `HOT` 1024 was as fast or
faster than 64 and 256 on every set (O0 campaign cases 75-78 ms against 100-107 ms at 64;
4096 was slower again). Loops still fuse, after 1024 executions; `bench sim --sim-hot`
sets it for the steady state."""
SETTLED = -(1 << 62)
"""`Program.heat` of an index whose tier is decided: it never reaches 1 or `HOT` again."""


def bind(insts: Sequence[Inst], env: Env, mem: Any) -> Program:
    """`bound.program.bind_program` with the fused tier's index of compiled runs for
    `env`, so that `tier_up` can install a run at an instruction's first execution."""
    return bind_program(insts, env, mem, heads(env))


def tier_up(prog: Program, i: int, heat: int) -> None:
    """Called by the engine when index `i` reaches 1 or `HOT` executions. At the first, it
    installs in `prog.fast` the longest run compiled before in this process whose words
    start there (`fused.runs.compiled_at`: no classification of the instructions that
    follow); at `HOT`, the longest fusible run from `i`, compiled now if new. Either settles
    the tier of `i`: the engine counts a run's instructions by `Program.run_len` at the end
    of a launch, so a run, once installed, is never replaced by one of another length."""
    if heat == 1:
        # the first execution (most calls): listed once, then one dict lookup decides
        # that no compiled run begins here, with nothing else read (unless `HOT` is 1)
        seen = prog.seen
        if not seen[i]:
            seen[i] = 1
            prog.executed.append(i)
        if heat < HOT and not prog.heads.get(prog.templates[i].share_key):
            return
    env = prog.env
    assert env is not None
    if heat >= HOT:
        k = run_length(prog.templates, i, env)
        make = compiled(prog.templates[i:i + k], env) if k >= 2 else None
        prog.heat[i] = SETTLED
    else:
        k, make = compiled_at(prog.templates, i, env, prog.heads)
    if make is not None:
        prog.fast[i] = make(prog.steps, i)
        prog.run_len[i] = k
        prog.heat[i] = SETTLED


__all__ = ["HOT", "SETTLED", "bind", "tier_up"]
