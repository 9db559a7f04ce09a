"""Straight-line runs of ALU instructions fused into one generated Python function (the
second execution tier).

The bound steps (`bound.alu`, `operands`) execute an instruction as a few layers of
closures that track definedness per lane and check for pending loads at every operand.
Most of that work decides nothing when every register a run reads is defined and no load
is in flight to any of them: then every result is defined, whatever the operation
(definedness is monotone: a value computed from defined values is defined). A fused run
checks exactly that, once at its entry for the vectors and at each read for scalars and
single lanes, and then executes each instruction as straight-line code: scalar state as
Python ints in `Wave.S`, vectors as numpy columns of `Wave.V`, EXEC's select skipped when
EXEC is full, the destination's definedness set to "defined" on the lanes written.

Where a check fails, the run continues from that instruction on the bound steps, which
then compute definedness and raise the faults exactly as they would have. The semantics of
every operation stay in the tables (`valu.VALU`, `salu.SALU`): the generated code calls the
table's function; what is generated is only operand access and the bookkeeping the checks
made unnecessary (`rgpu_fuzz.sim.fused.emit`; operand access `fused.code`, emitters
`fused.valu`, `fused.salu`). Fused code is cached by the instructions' words
(`Inst.share_key`) across code objects, as the bound steps are."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.fused.code import RUN_BASE, NotFusible, RunStop, Step, finish
from rgpu_fuzz.sim.fused.emit import Emitter, fusible_kind
from rgpu_fuzz.sim.isa.inst import Inst

MAX_RUN = 48
"""Instructions per fused run at most (the engine leaves this much of the step budget to
the bound steps, so that `sim-step-limit` stops at the same instruction)."""
_COMPILED: dict[tuple[Env, bool, tuple[Any, ...]], Callable[..., Step] | None] = {}
_COMPILED_LIMIT = 20_000


def run_length(templates: Sequence[Inst], i: int, env: Env) -> int:
    """How many instructions from `i` a fused run covers (0 or 1: no run)."""
    n = 0
    end = min(len(templates), i + MAX_RUN)
    j = i
    while j < end and fusible_kind(templates[j], env) is not None:
        j += 1
        n += 1
    return n


def compiled(insts: Sequence[Inst], env: Env) -> Callable[..., Step] | None:
    """The factory `make(steps, i) -> step` of the fused run `insts` (None when the run
    cannot be fused), compiled once per process for these instruction words."""
    key = (env, env.true16, tuple(inst.share_key for inst in insts))
    if key in _COMPILED:
        return _COMPILED[key]
    try:
        make = Emitter(insts, env).compile()
    except NotFusible:
        make = None
    if len(_COMPILED) > _COMPILED_LIMIT:
        _COMPILED.clear()
        for lengths_of in _HEADS.values():
            lengths_of.clear()
    _COMPILED[key] = make
    if make is not None:
        lengths_of = heads(env)
        head = insts[0].share_key
        lengths = lengths_of.get(head, ())
        if len(insts) not in lengths:
            lengths_of[head] = tuple(sorted((*lengths, len(insts)), reverse=True))
    return make


_HEADS: dict[Env, dict[tuple[Any, ...], tuple[int, ...]]] = {}
"""Per env: the words of the first instruction of every run compiled in this process → the
lengths of those runs, longest first. At its first execution an instruction is looked up
here, and only these lengths are tested against `_COMPILED`: classifying the instructions
that follow (`run_length`, up to `MAX_RUN` of them) at every first execution cost cold O0
code 4-6 ms per case, more as a long worker compiled more heads, and found a compiled run
rarely. One dict per env, held by each program (`Program.heads`): hashing an `Env` at
every first execution cost more than the lookup."""


def heads(env: Env) -> dict[tuple[Any, ...], tuple[int, ...]]:
    """The heads of runs compiled for `env` (the same dict for the process's life)."""
    got = _HEADS.get(env)
    if got is None:
        got = _HEADS[env] = {}
    return got


def compiled_at(templates: Sequence[Inst], i: int, env: Env,
                lengths_of: dict[tuple[Any, ...], tuple[int, ...]]) -> tuple[int, Step | None]:
    """The longest run compiled before in this process that starts at `templates[i]`, as
    (length, factory `make(steps, i)`); (0, None) when there is none (cheap when `templates[i]`
    begins no compiled run: one dict lookup in `lengths_of`, `heads(env)`)."""
    lengths = lengths_of.get(templates[i].share_key)
    if not lengths:
        return 0, None
    n = len(templates)
    # the words of the longest candidate, sliced for the shorter ones (`lengths` is longest
    # first): building a tuple per candidate length cost cold O0 code ~0.3 s per 40 cases
    words: tuple[Any, ...] | None = None
    for k in lengths:
        if i + k <= n:
            if words is None:
                words = tuple(inst.share_key for inst in templates[i:i + k])
            key = (env, env.true16, words[:k])
            make = _COMPILED.get(key)
            if make is not None:
                return k, make
    return 0, None


__all__ = ["MAX_RUN", "RUN_BASE", "RunStop", "compiled", "compiled_at", "finish", "heads", "np",
           "run_length"]
