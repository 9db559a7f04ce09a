"""Uniform SCRATCH accesses and `s_waitcnt` inside fused runs (`fused.scratch`) against the
bound steps they replace and against values worked out by hand.

Each run is executed on the bound steps one by one and as one fused run from copies of
the same wave; both must raise the same fault at the same instruction and leave the same
registers, definedness, private memory and shadow, and loads in flight. Hand rules: a
load's destination is written at the `s_waitcnt` that covers it, and reading it before
is `sim-waitcnt-hazard` (CDNA3 ISA §4.4); V_ADD_U32 is modulo 2^32; SCRATCH_LOAD_SBYTE
sign-extends; the private layout swizzles dwords with a stride of the wave size
(AMDGPUUsage "Private Segment"); lanes outside EXEC neither load nor store."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_program
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.fused.code import RUN_BASE, RunStop
from rgpu_fuzz.sim.fused.runs import compiled
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.memory import Private
from rgpu_fuzz.sim.state.wave import Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF
OFF = Opnd(OpKind.OFF, 0, 0)
BASE = Opnd(OpKind.SGPR, 33, 1)


def v(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.VGPR, i, n)


def inst(opcode: str, *ops: Opnd, **mods: int) -> Inst:
    return Inst(0, 8, opcode, "X", opcode.lower(), ops, mods=mods,
                share_key=("test-fuse-mem", opcode, ops, tuple(sorted(mods.items()))))


def store(opcode: str, reg: int, offset: int, n: int = 1) -> Inst:
    return inst(opcode, OFF, v(reg, n), BASE, offset=offset)


def load(opcode: str, reg: int, offset: int, n: int = 1) -> Inst:
    return inst(opcode, v(reg, n), OFF, BASE, offset=offset)


WAIT = inst("S_WAITCNT", vmcnt=0)
NOP = inst("S_NOP")


def add(dst: int, a: int, b: int) -> Inst:
    return inst("V_ADD_U32", v(dst), v(a), v(b))


def wave(exec_mask: int = 0b1111) -> Wave:
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    w.private = Private(32, LANES)
    w.S[33], w.sdef[33] = 8, M32
    w.V[:, 3] = [0x8000_0001, 2, 0xFFFF_FF80, 0x7F]
    w.vdef[:, 3] = True
    return w


def state(w: Wave) -> tuple[Any, ...]:
    return (list(w.S), list(w.sdef), w.V.tobytes(), w.vdef.tobytes(), copy.deepcopy(w.vpart),
            w.private.data.tobytes(), w.private.defined.tobytes(), len(w.vm_queue),
            sorted(w.pend_v), sorted(w.pend_s))


def both(insts: list[Inst], w: Wave) -> tuple[Wave, Any, list[int]]:
    """Run `insts` as bound steps and as a fused run from copies of `w`; returns the fused
    wave, what both raised (None or (kind, instruction)) and the instructions whose bound
    step the fused run called."""
    w.scratch_views = None          # cached views would not follow a deep copy
    stepped, fused = copy.deepcopy(w), copy.deepcopy(w)
    prog = bind_program(insts, ENV, None)
    raised_steps = raised_fused = None
    for i in range(len(insts)):
        try:
            prog.steps[i](stepped)
        except SimStop as stop:
            raised_steps = (stop.fault.kind, i)
            break
    make = compiled(insts, ENV)
    assert make is not None, "the run was not fusible"
    called: list[int] = []

    def spy(i: int, step: Any) -> Any:
        return lambda w: (called.append(i), step(w))[1]
    steps = [spy(i, st) for i, st in enumerate(bind_program(insts, ENV, None).steps)]
    try:
        assert make(steps, 0)(fused) == RUN_BASE - len(insts)
    except RunStop as stop:
        raised_fused = (stop.fault.kind, stop.offset)
    assert raised_fused == raised_steps
    assert state(fused) == state(stepped)
    return fused, raised_fused, called


def test_a_spill_and_reload_in_a_run_is_inline_and_adds_modulo_2_32() -> None:
    run = [store("SCRATCH_STORE_DWORD", 3, 4), load("SCRATCH_LOAD_DWORD", 5, 4), WAIT,
           add(7, 5, 5)]
    f, raised, called = both(run, wave())
    assert raised is None and called == []      # no bound step called from the run
    assert f.V[:, 7].tolist() == [2, 4, 0xFFFF_FF00, 0xFE]
    assert f.vdef[:, 7].all() and not f.pend_v


def test_a_wait_turned_into_s_nop_inside_a_run_is_a_hazard_at_the_read() -> None:
    """The seeded `amdgpu-sim-nowait` bug: the reload's s_waitcnt became s_nop."""
    run = [store("SCRATCH_STORE_DWORD", 3, 4), load("SCRATCH_LOAD_DWORD", 5, 4), NOP,
           add(7, 5, 5)]
    _, raised, _ = both(run, wave())
    assert raised == (FaultKind.WAITCNT_HAZARD, 3)


def test_a_wait_with_loads_still_counted_leaves_the_newest_in_flight() -> None:
    """vmcnt(1) after two loads completes only the older: reading the newer is a hazard."""
    run = [load("SCRATCH_LOAD_DWORD", 5, 0), load("SCRATCH_LOAD_DWORD", 6, 4),
           inst("S_WAITCNT", vmcnt=1), add(7, 5, 5), add(8, 6, 6)]
    w = wave()
    w.private.defined[:] = 0xFF
    _, raised, _ = both(run, w)
    assert raised == (FaultKind.WAITCNT_HAZARD, 4)


def test_bytes_in_a_window_are_extended_and_inactive_lanes_keep_their_values() -> None:
    run = [store("SCRATCH_STORE_BYTE", 3, 1), load("SCRATCH_LOAD_UBYTE", 5, 1),
           load("SCRATCH_LOAD_SBYTE", 6, 1), WAIT, add(7, 5, 6)]
    w = wave(0b1011)
    w.V[:, 5] = 9
    f, raised, _ = both(run, w)
    assert raised is None
    assert f.V[:, 5].tolist() == [0x01, 0x02, 9, 0x7F]
    assert f.V[:, 6].tolist() == [0x01, 0x02, 0, 0x7F]
    assert f.V[:, 7].tolist() == [0x02, 0x04, 0, 0xFE]
    w.set_exec(0b0100)                      # lane 2 alone: its byte 0x80 sign-extends
    f, raised, _ = both(run, w)
    assert f.V[2, 5:7].tolist() == [0x80, 0xFFFF_FF80]
    assert f.V[2, 7] == 0x0000_0000          # 0x80 + 0xFFFFFF80 = 2^32


def test_a_partly_defined_slot_hands_the_second_load_to_the_bound_steps() -> None:
    """The first load of the window is parked as the bound steps would have parked it,
    the second takes the general path (partly defined bytes: bits kept in `vpart`)."""
    run = [load("SCRATCH_LOAD_DWORD", 5, 0), load("SCRATCH_LOAD_DWORD", 6, 4), WAIT]
    w = wave()
    w.private.defined[:] = 0xFF
    w.private.defined[3 * 4 * LANES + 0] = 0x0F   # dword 3 (offset 12), lane 0, byte 0
    f, raised, called = both(run, w)
    assert raised is None and called == [1]
    assert f.vdef[:, 5].all() and f.vdef[:, 6].tolist() == [False, True, True, True]
    assert f.vpart == {6: {0: 0xFFFF_FF0F}}


@pytest.mark.parametrize(("setup", "kind", "at"), [
    ("base-undefined", FaultKind.UNINIT_READ, 1),
    ("out-of-range", FaultKind.OOB_ACCESS, 1),
    ("store-data-pending", FaultKind.WAITCNT_HAZARD, 3),
])
def test_faults_come_from_the_bound_step_at_the_access(setup: str, kind: FaultKind,
                                                      at: int) -> None:
    run = [load("SCRATCH_LOAD_DWORD", 5, 0), load("SCRATCH_LOAD_DWORD", 6, 20), NOP,
           store("SCRATCH_STORE_DWORD", 6, 0), WAIT]
    w = wave()
    if setup == "base-undefined":
        run[1] = inst("SCRATCH_LOAD_DWORD", v(6), OFF, Opnd(OpKind.SGPR, 40, 1), offset=0)
    if setup == "out-of-range":
        run[1] = load("SCRATCH_LOAD_DWORD", 6, 24)          # 8 + 24 = 32: past 32 bytes
    _, raised, _ = both(run, w)
    assert raised == (kind, at)


def test_an_empty_exec_accesses_nothing() -> None:
    run = [store("SCRATCH_STORE_DWORD", 3, 4), load("SCRATCH_LOAD_DWORD", 5, 400), WAIT]
    f, raised, _ = both(run, wave(0))
    assert raised is None and not f.private.defined.any() and not f.vdef[:, 5].any()


def test_a_partly_defined_lane_is_spilled_and_reloaded_bit_for_bit() -> None:
    """v3 lane 1 holds an SGPR lane mask with only its low 16 bits defined (`vpart`): the
    store and the reload take the bound steps' per-bit path and bring the bits back."""
    run = [store("SCRATCH_STORE_DWORD", 3, 4), load("SCRATCH_LOAD_DWORD", 5, 4), WAIT]
    w = wave()
    w.vdef[1, 3] = False
    w.vpart = {3: {1: 0x0000_FFFF}}
    f, raised, called = both(run, w)
    assert raised is None and called == [0, 1]
    assert f.vpart[5] == {1: 0x0000_FFFF}
    assert f.vdef[:, 5].tolist() == [True, False, True, True]


def s(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.SGPR, i, n)


EXEC_PAIR = Opnd(OpKind.SGPR, 126, 2)
MINUS_ONE = Opnd(OpKind.INT, 0, 1, value=-1)


def test_a_reload_with_exec_switched_around_it_loads_every_lane() -> None:
    """An O0 reload of an SGPR spill (gfx1100's shape): s_or_saveexec -1, the load, EXEC
    restored, the wait, then v_readlane of a lane outside the restored EXEC: the load
    wrote all lanes (its EXEC was all ones) and readlane reads any lane."""
    run = [inst("S_OR_SAVEEXEC_B64", s(4, 2), MINUS_ONE), load("SCRATCH_LOAD_DWORD", 6, 4),
           inst("S_MOV_B64", EXEC_PAIR, s(4, 2)), WAIT,
           inst("V_READLANE_B32", s(0), v(6), Opnd(OpKind.INT, 0, 1, value=2))]
    w = wave(0b0101)
    w.private.data[3 * 4 * LANES:4 * 4 * LANES] = range(16)    # offset 12: lane l bytes 4l..
    w.private.defined[:] = 0xFF
    f, raised, called = both(run, w)
    assert raised is None and called == []
    assert f.V[:, 6].tolist() == [0x0302_0100, 0x0706_0504, 0x0B0A_0908, 0x0F0E_0D0C]
    assert (f.S[0], f.sdef[0]) == (0x0B0A_0908, M32)
    assert f.exec_mask == 0b0101 and not f.deferred
    # the other way round: loaded under EXEC 0b0101, EXEC all ones at the wait
    run = [load("SCRATCH_LOAD_DWORD", 6, 4), inst("S_MOV_B64", EXEC_PAIR, MINUS_ONE), WAIT]
    w.V[:, 6] = 7
    f, raised, called = both(run, w)
    assert raised is None and called == []
    assert f.V[:, 6].tolist() == [0x0302_0100, 7, 0x0B0A_0908, 7]
    assert f.vdef[:, 6].tolist() == [True, False, True, False]


def test_a_fault_or_a_hand_over_inside_a_window_parks_its_loads() -> None:
    """EXEC written from an undefined SGPR inside a window is sim-uninit-read at that
    instruction; an undefined scalar source hands the run to the bound steps there. Either
    way the load issued before is in flight exactly as on the bound steps."""
    run = [load("SCRATCH_LOAD_DWORD", 6, 4), inst("S_MOV_B64", EXEC_PAIR, s(8, 2)), WAIT]
    w = wave()
    w.private.defined[:] = 0xFF
    f, raised, _ = both(run, w)
    assert raised == (FaultKind.UNINIT_READ, 1)
    assert sorted(f.pend_v) == [6] and len(f.vm_queue) == 1 and not f.deferred
    run = [load("SCRATCH_LOAD_DWORD", 6, 4), inst("S_ADD_U32", s(0), s(8), s(9)), WAIT,
           add(7, 6, 6)]
    w.S[9], w.sdef[9] = 1, M32
    f, raised, called = both(run, w)
    assert called[:1] == [1] and not f.deferred and not f.pend_v
