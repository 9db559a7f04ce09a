"""SMEM loads inside fused runs (`fused.scratch.emit_smem`) against the bound steps they replace
and against values worked out by hand.

Each run is executed on the bound steps one by one and as one fused run from copies of the
same wave; both must raise the same fault at the same instruction and leave the same
registers, definedness, loads in flight (`pend_s`, the lgkmcnt queue) and memory. Hand
rules: SMEM dwords are little-endian; a scalar load's destination is written at the
`s_waitcnt` that covers it, and only lgkmcnt(0) covers an SMEM load (CDNA3 ISA §4.4);
reading or writing a destination before is `sim-waitcnt-hazard`; S_ADD_U32 is modulo
2^32."""

from __future__ import annotations

import copy
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_program
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.fused.code import RUN_BASE, RunStop
from rgpu_fuzz.sim.fused.runs import compiled
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.memory import AddressSpace
from rgpu_fuzz.sim.state.wave import Pending, Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF
ARGS = bytes(range(0x10, 0x30))
"""The kernel-argument mapping: byte k holds 0x10 + k."""


def s(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.SGPR, i, n)


def inst(opcode: str, *ops: Opnd, **mods: int) -> Inst:
    return Inst(0, 8, opcode, "X", opcode.lower(), ops, mods=mods,
                share_key=("test-fuse-smem", opcode, ops, tuple(sorted(mods.items()))))


def s_load(dst: int, offset: int, n: int = 2, base: int = 4) -> Inst:
    opcode = "S_LOAD_DWORD" if n == 1 else f"S_LOAD_DWORDX{n}"
    return inst(opcode, s(dst, n), s(base, 2), Opnd(OpKind.INT, 0, 1, value=offset))


LGKM0 = inst("S_WAITCNT", lgkmcnt=0)
NOP = inst("S_NOP")


def s_add(dst: int, a: int, b: int) -> Inst:
    return inst("S_ADD_U32", s(dst), s(a), s(b))


def s_mov(dst: int, value: int) -> Inst:
    return inst("S_MOV_B32", s(dst), Opnd(OpKind.INT, 0, 1, value=value))


def wave(data: bytes = ARGS, pad_to: int = 0) -> Wave:
    w = Wave(LANES, 0, 0)
    w.set_exec(0b1111)
    glob = AddressSpace()
    m = glob.map("args", data, pad_to=pad_to)
    w.mem = SimpleNamespace(glob=glob)
    w.S[4], w.S[5] = m.base & M32, m.base >> 32
    w.sdef[4] = w.sdef[5] = M32
    w.S[8], w.sdef[8] = 3, M32
    return w


def state(w: Wave) -> tuple[Any, ...]:
    return (list(w.S), list(w.sdef), w.scc, w.V.tobytes(), w.vdef.tobytes(),
            sorted(w.pend_s), [(p.sregs, p.svalues, p.sdefs, p.done) for p in w.lgkm_queue],
            len(w.vm_queue), w.deferred)


def both(insts: list[Inst], w: Wave,
         state: Callable[[Wave], Any] = state) -> tuple[Wave, Any, list[int]]:
    """Run `insts` as bound steps and as a fused run from copies of `w`; returns the fused
    wave, what both raised (None or (kind, instruction, detail)) and the instructions whose
    bound step the fused run called. `state`: what must be equal after both (the memory
    tests compare memory too)."""
    stepped, fused = copy.deepcopy(w), copy.deepcopy(w)
    prog = bind_program(insts, ENV, None)
    raised_steps = raised_fused = None
    for i in range(len(insts)):
        try:
            prog.steps[i](stepped)
        except SimStop as stop:
            raised_steps = (stop.fault.kind, i, stop.fault.detail)
            break
    make = compiled(insts, ENV)
    assert make is not None, "the run was not fusible"
    called: list[int] = []

    def spy(i: int, step: Any) -> Any:
        def run(w: Wave) -> Any:
            called.append(i)
            return step(w)
        return run
    steps = [spy(i, st) for i, st in enumerate(bind_program(insts, ENV, None).steps)]
    try:
        assert make(steps, 0)(fused) == RUN_BASE - len(insts)
    except RunStop as stop:
        raised_fused = (stop.fault.kind, stop.offset, stop.fault.detail)
    assert raised_fused == raised_steps
    assert state(fused) == state(stepped)
    return fused, raised_fused, called


def test_kernel_arguments_are_read_inline_and_written_at_the_wait() -> None:
    run = [s_load(0, 8), s_load(2, 0x14, 1), s_mov(10, 5), LGKM0, s_add(11, 0, 1)]
    f, raised, called = both(run, wave())
    assert raised is None and called == []      # no bound step called from the run
    assert (f.S[0], f.S[1], f.S[2]) == (0x1B1A_1918, 0x1F1E_1D1C, 0x2726_2524)
    assert f.S[11] == (0x1B1A_1918 + 0x1F1E_1D1C) & M32
    assert f.sdef[0:3] == [M32] * 3 and not f.pend_s and not f.lgkm_queue


def test_a_load_whose_base_is_its_destination_reads_the_base_at_issue() -> None:
    """`s_load_dwordx2 s[4:5], s[4:5], 0`: the address comes from the old pair."""
    f, raised, called = both([s_load(4, 0), LGKM0], wave())
    assert raised is None and called == []
    assert (f.S[4], f.S[5]) == (0x1312_1110, 0x1716_1514)


def test_a_read_of_the_destination_before_the_wait_is_a_hazard() -> None:
    """The window is not taken: the bound step parks the load, the read faults."""
    _, raised, called = both([s_load(0, 0), s_add(9, 1, 8), LGKM0], wave())
    assert raised is not None and raised[:2] == (FaultKind.WAITCNT_HAZARD, 1)
    assert called == [0, 1]


def test_a_wait_turned_into_s_nop_leaves_the_load_in_flight() -> None:
    f, raised, called = both([s_load(0, 0), NOP, s_mov(9, 1)], wave())
    assert raised is None and called == [0]
    assert sorted(f.pend_s) == [0, 1] and f.S[0] == 0


def test_only_lgkmcnt_0_covers_a_scalar_load() -> None:
    run = [s_load(0, 0), inst("S_WAITCNT", lgkmcnt=1), s_add(9, 0, 8)]
    _, raised, called = both(run, wave())
    assert raised is not None and raised[:2] == (FaultKind.WAITCNT_HAZARD, 2)
    assert 0 in called


def test_a_bail_inside_the_window_parks_the_load_as_the_bound_step_would() -> None:
    """s9 undefined: the S_ADD_U32 guard hands the run to the bound steps after the load
    was read inline; the parked load completes at the wait as the bound step's would."""
    w = wave()
    w.sdef[9] = 0
    f, raised, called = both([s_load(0, 8), s_add(10, 9, 8), LGKM0, s_add(11, 0, 1)], w)
    assert raised is None and 1 in called and 0 not in called
    assert (f.S[0], f.S[1]) == (0x1B1A_1918, 0x1F1E_1D1C) and f.sdef[10] == 0


def test_a_fault_inside_the_window_leaves_the_load_in_flight() -> None:
    """The second load is out of bounds: the first is parked before the fault returns."""
    f, raised, called = both([s_load(0, 8), s_load(2, 0x1C), LGKM0], wave())
    assert raised is not None and raised[:2] == (FaultKind.OOB_ACCESS, 1)
    assert called == [1] and sorted(f.pend_s) == [0, 1]


@pytest.mark.parametrize(("setup", "kind"), [
    ("undefined", FaultKind.UNINIT_READ),
    ("pending", FaultKind.WAITCNT_HAZARD),
    ("bounds", FaultKind.OOB_ACCESS),
])
def test_faults_come_from_the_bound_step_with_its_detail(setup: str, kind: FaultKind) -> None:
    w = wave()
    if setup == "undefined":
        w.sdef[5] = 0xFFFF_FFFE
    if setup == "pending":
        w.pend_s[5] = Pending(vm=False, lgkm=True, smem=True)
    run = [s_load(0, 0x1C if setup == "bounds" else 0), LGKM0]   # bytes 0x1C..0x23 of 0x20
    _, raised, called = both(run, w)
    assert raised is not None and raised[:2] == (kind, 0) and called == [0]


def test_an_older_load_to_the_same_registers_takes_the_bound_step() -> None:
    """The newer load supersedes the older one at its registers, as the bound step does."""
    w = wave()
    older = Pending(vm=False, lgkm=True, smem=True, sregs=(0, 1), svalues=(7, 7))
    w.pend_s[0] = w.pend_s[1] = older
    w.lgkm_queue.append(older)
    f, raised, called = both([s_load(0, 8), LGKM0], w)
    assert raised is None and called == [0]
    assert (f.S[0], f.S[1]) == (0x1B1A_1918, 0x1F1E_1D1C)


def test_past_the_contents_of_a_padded_mapping_the_bound_step_marks_bits_undefined() -> None:
    f, raised, called = both([s_load(0, 8), LGKM0], wave(ARGS[:10], pad_to=16))
    assert raised is None and called == [0]
    assert (f.S[0], f.sdef[0], f.sdef[1]) == (0x0000_1918, 0x0000_FFFF, 0)


def test_a_load_into_exec_narrows_the_lanes_the_rest_of_the_run_writes() -> None:
    """`s_load_dwordx2 exec, s[4:5], 4`: EXEC's low byte becomes 0x14, lane 2 of four; the
    v_mov_b32 after the wait writes that lane only (CDNA3 ISA §3.3: VALU writes lanes in
    EXEC), whether the load completed at the wait inside the run or in a bound step."""
    w = wave()
    w.V[:, 0] = [1, 2, 3, 4]
    w.vdef[:, 0] = True
    mov = Inst(0, 4, "V_MOV_B32", "VOP1", "v_mov_b32",
               (Opnd(OpKind.VGPR, 1, 1), Opnd(OpKind.VGPR, 0, 1)),
               share_key=("test-fuse-smem", "V_MOV_B32"))
    f, raised, _ = both([s_load(126, 4), LGKM0, mov], w)
    assert raised is None
    assert f.exec.tolist() == [False, False, True, False]
    assert f.V[:, 1].tolist() == [0, 0, 3, 0]
    assert f.vdef[:, 1].tolist() == [False, False, True, False]
