"""The uniform-address scratch path (`bound.scratch.uniform_scratch`: O0 spills and reloads as
row copies) keeps definedness per dword, as every other store does (`_store_bytes`: each
byte of a register carries its own register's state). Expected shadow bytes by hand: a
defined VGPR stores 0xFF per byte, a never-written one 0x00."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rgpu_fuzz.sim.bound.mem import drain
from rgpu_fuzz.sim.bound.scratch import uniform_scratch
from rgpu_fuzz.sim.semantics.memops import MemOp
from rgpu_fuzz.sim.state.memory import Private
from rgpu_fuzz.sim.state.wave import Wave


def _general(w: Wave) -> None:
    raise AssertionError("the fast path handed a plain aligned access to the general path")


def _step(op: MemOp, col: int) -> Any:
    inst = SimpleNamespace(mnemonic="scratch_" + ("store" if op.store else "load"))
    return uniform_scratch(inst, op, _general,  # type: ignore[arg-type]
                           lambda w: 0, lambda w: True, 0, col)


def test_a_spilled_pair_with_one_undefined_dword_keeps_the_defined_one() -> None:
    w = Wave(4, 0, 0)
    w.private = Private(16, 4)
    w.V[:, 0], w.V[:, 1] = 0x1234_5678, 0xDEAD_BEEF
    w.vdef[:, 0] = True          # v0 written, v1 never written
    _step(MemOp("scratch", True, 8), col=0)(w)            # scratch_store_dwordx2 off, v[0:1]
    shadow = w.private.defined.reshape(-1, 4, 4)           # dword row, lane, byte
    assert (shadow[0] == 0xFF).all()
    assert (shadow[1] == 0x00).all()
    _step(MemOp("scratch", False, 4), col=7)(w)           # scratch_load_dword v7, off
    drain(w)                                               # s_waitcnt vmcnt(0)
    assert w.vdef[:, 7].all()
    assert (w.V[:, 7] == 0x1234_5678).all()
