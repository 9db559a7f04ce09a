"""Fused runs (`rgpu_fuzz.sim.fused.runs`) against the bound steps they replace, on hand-built
instructions: partial EXEC, undefined and partly defined inputs, a pending load. Each case
states its expected values by hand from the ISA's definitions (CDNA3 ISA: V_ADD_U32 is
modulo 2^32 and writes only lanes in EXEC; VOPC writes 0 for inactive lanes; S_AND_B64's
SCC is result != 0; V_WRITELANE/V_READLANE move one lane whatever EXEC is) and the
simulator's definedness rules (memcheck's, `operands` docstring), and checks that the
fused run leaves exactly the state the steps leave."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_program
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.fused.code import RUN_BASE, RunStop
from rgpu_fuzz.sim.fused.runs import compiled
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.wave import EXEC, VCC, Pending, Wave

LANES = 4
ENV = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF


def v(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.VGPR, i, n)


def s(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.SGPR, i, n)


def k(value: int) -> Opnd:
    return Opnd(OpKind.INT, 0, 1, value=value)


def inst(opcode: str, *ops: Opnd, tag: int = 0) -> Inst:
    # share_key: any key unique to the instruction stands for its words
    return Inst(0, 8, opcode, "VOP3", opcode.lower(), ops,
                share_key=("test", opcode, ops, tag))


def wave(exec_mask: int = 0b1111) -> Wave:
    w = Wave(LANES, 0, 0)
    w.set_exec(exec_mask)
    return w


def state(w: Wave) -> tuple[Any, ...]:
    return (list(w.S), list(w.sdef), w.V.tobytes(), w.vdef.tobytes(), copy.deepcopy(w.vpart),
            w.exec.tolist(), w.exec_full, w.scc, w.scc_def)


def both(insts: list[Inst], w: Wave) -> tuple[Wave, Wave, Any, Any]:
    """Run `insts` on copies of `w`: on the bound steps one by one, and as a fused run.
    Returns both waves and what each raised (None, or the fault and its instruction)."""
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
    prog2 = bind_program(insts, ENV, None)
    try:
        assert make(prog2.steps, 0)(fused) == RUN_BASE - len(insts)
    except RunStop as stop:
        raised_fused = (stop.fault.kind, stop.offset)
    assert raised_fused == raised_steps
    assert state(fused) == state(stepped)
    return stepped, fused, raised_steps, raised_fused


def test_partial_exec_keeps_inactive_lanes_and_wraps_modulo_2_32() -> None:
    w = wave(0b1001)
    w.V[:, 0] = [1, 2, 3, 4]
    w.V[:, 1] = [10, 20, 30, M32]
    w.V[:, 2] = 7
    w.vdef[:, 0:2] = True
    w.vdef[1, 2] = True   # inactive lane 1 of v2 defined, lanes 2 (inactive) and 0, 3 not
    _, f, _, _ = both([inst("V_ADD_U32", v(2), v(0), v(1)),
                       inst("V_MOV_B32", v(3), v(2))], w)
    assert f.V[:, 2].tolist() == [11, 7, 7, 3]          # 4 + 0xffffffff = 3 (mod 2^32)
    assert f.vdef[:, 2].tolist() == [True, True, False, True]
    assert f.V[:, 3].tolist() == [11, 0, 0, 3]           # v3 never written elsewhere
    assert f.vdef[:, 3].tolist() == [True, False, False, True]


def test_an_undefined_lane_flows_into_vcc_and_faults_at_the_exec_write() -> None:
    """v1 lane 2 undefined: v2 lane 2 undefined, VCC bit 2 undefined (inactive lane 3: a
    defined 0), and s_and_saveexec_b64 with it sets EXEC from an undefined bit:
    sim-uninit-read at that instruction, the third of the run."""
    w = wave(0b0111)
    w.V[:, 0] = [5, 6, 7, 8]
    w.V[:, 1] = [5, 0, 0, 8]
    w.vdef[:, 0] = True
    w.vdef[:, 1] = [True, True, False, True]
    run = [inst("V_ADD_U32", v(2), v(0), v(1)),
           inst("V_CMP_EQ_U32", s(VCC, 2), v(2), v(0)),
           inst("S_AND_SAVEEXEC_B64", s(4, 2), s(VCC, 2))]
    st, _, raised, _ = both(run, w)
    assert raised == (FaultKind.UNINIT_READ, 2)
    assert st.V[:3, 2].tolist() == [10, 6, 7]
    vcc = st.S[VCC] | st.S[VCC + 1] << 32
    assert vcc == 0b0110            # lane 1: 6 + 0 == 6; lane 2: 7 + 0 == 7 (undefined)
    defined = st.sdef[VCC] | st.sdef[VCC + 1] << 32
    assert defined & 0b1111 == 0b1011


def test_writelane_and_readlane_carry_partly_defined_bits() -> None:
    """An SGPR whose high half was never defined (an O0 loop mask) spilled to lane 3 of
    v40 and read back keeps exactly its defined bits, whatever EXEC is."""
    w = wave(0b0001)
    w.S[4], w.sdef[4] = 0x1234_ABCD, 0x0000_FFFF
    w.S[6], w.sdef[6] = 0xCAFE_F00D, M32
    run = [inst("V_WRITELANE_B32", v(40), s(4), k(3)),
           inst("V_WRITELANE_B32", v(40), s(6), k(2)),
           inst("V_READLANE_B32", s(5), v(40), k(3)),
           inst("V_READLANE_B32", s(7), v(40), k(2))]
    _, f, _, _ = both(run, w)
    assert (f.S[5], f.sdef[5]) == (0x1234_ABCD, 0x0000_FFFF)
    assert (f.S[7], f.sdef[7]) == (0xCAFE_F00D, M32)
    assert f.vpart == {40: {3: 0x0000_FFFF}}
    assert f.vdef[:, 40].tolist() == [False, False, True, False]


def test_scalar_bitwise_definedness_per_bit() -> None:
    """s_and_b64 s[0:1], s[2:3], exec with s3 undefined: result bits where EXEC (defined)
    is 0 are defined zeros; where EXEC is 1 they take s[2:3]'s state. SCC = result != 0
    is defined because a defined bit of the result is 1."""
    w = wave(0b1010)
    w.S[2], w.sdef[2] = 0b1110, M32
    w.S[3], w.sdef[3] = 0, 0
    _, f, _, _ = both([inst("S_AND_B64", s(0, 2), s(2, 2), s(EXEC, 2))], w)
    assert f.S[0] == 0b1010 and f.S[1] == 0
    assert f.sdef[0] == M32            # low half: s2 defined, EXEC defined
    assert f.sdef[1] == M32            # high half: EXEC's high bits are defined zeros
    assert (f.scc, f.scc_def) == (1, True)


def test_a_pending_load_is_a_hazard_at_the_instruction_that_reads_it() -> None:
    w = wave()
    w.vdef[:, 0:2] = True
    p = Pending(vm=True, lgkm=False, smem=False, vcol=1, vdata=np.zeros((LANES, 1), np.uint32),
                vdef=np.ones((LANES, 1), bool))
    w.vm_queue.append(p)
    w.pend_v[1] = p
    run = [inst("S_MOV_B32", s(8), k(3)),
           inst("V_ADD_U32", v(2), v(0), v(1))]
    st, _, raised, _ = both(run, w)
    assert raised == (FaultKind.WAITCNT_HAZARD, 1)
    assert st.S[8] == 3


def test_a_wait_inside_a_run_completes_the_load_before_its_use() -> None:
    w = wave(0b0011)
    w.V[:, 0] = 1
    w.vdef[:, 0] = True
    p = Pending(vm=True, lgkm=False, smem=False, vcol=1,
                vdata=np.array([[40], [50], [60], [70]], np.uint32),
                vdef=np.array([[True], [False], [True], [True]]))
    w.vm_queue.append(p)
    w.pend_v[1] = p
    waitcnt = Inst(0, 4, "S_WAITCNT", "SOPP", "s_waitcnt", (k(0),),
                   share_key=("test", "waitcnt0"))
    _, f, raised, _ = both([inst("V_MOV_B32", v(3), v(0)), waitcnt,
                            inst("V_ADD_U32", v(2), v(0), v(1))], w)
    assert raised is None
    assert f.V[:2, 2].tolist() == [41, 51]
    assert f.vdef[:2, 2].tolist() == [True, False]     # lane 1 loaded an undefined value


@pytest.mark.parametrize("exec_mask", [0b1111, 0b0110, 0])
def test_cndmask_and_carry_chain(exec_mask: int) -> None:
    """v_add_co_u32 v[4], vcc, v0, v1 then v_addc_co_u32 v5, vcc, v2, v3, vcc: a 64-bit
    add of (v2:v0) + (v3:v1); v_cndmask_b32 v6, v0, v1, vcc picks v1 where the carry out is
    set."""
    w = wave(exec_mask)
    lo_a, lo_b = [M32, 1, 0x8000_0000, 5], [1, 2, 0x8000_0000, 6]
    w.V[:, 0], w.V[:, 1] = lo_a, lo_b
    w.V[:, 2], w.V[:, 3] = [0, 1, 2, 3], [10, 20, 30, 40]
    w.vdef[:, 0:4] = True
    run = [inst("V_ADD_CO_U32", v(4), s(VCC, 2), v(0), v(1)),
           inst("V_ADDC_CO_U32", v(5), s(VCC, 2), v(2), v(3), s(VCC, 2)),
           inst("V_CNDMASK_B32", v(6), v(0), v(1), s(VCC, 2))]
    _, f, _, _ = both(run, w)
    for lane in range(LANES):
        if not exec_mask >> lane & 1:
            assert not f.vdef[lane, 4:7].any()
            continue
        total = ((w.V[lane, 2].item() << 32) | lo_a[lane]) + \
            ((w.V[lane, 3].item() << 32) | lo_b[lane])
        assert f.V[lane, 4] == total & M32
        assert f.V[lane, 5] == (total >> 32) & M32
        carry_hi = total >> 64
        assert (f.S[VCC] >> lane) & 1 == carry_hi
        assert f.V[lane, 6] == (lo_b[lane] if carry_hi else lo_a[lane])


@pytest.fixture
def fuse_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run is fused at its first execution (the tiers' threshold at 1), in fresh
    programs, so a kernel executes on the fused tier wherever it can."""
    from rgpu_fuzz.sim.launch import engine, tiers

    monkeypatch.setattr(tiers, "HOT", 1)
    engine._PROGRAMS.clear()
    yield
    engine._PROGRAMS.clear()


EXEC_CASES = ["test_initial_state_follows_the_launch", "test_lds_and_barrier_across_waves",
              "test_private_array_with_dynamic_index", "test_call_with_a_stack_frame",
              "test_division_and_sqrt_are_ieee"]
EXEC_FAULTS = ["test_trap_ends_the_launch_with_the_record",
               "test_store_past_a_buffer_is_an_oob_finding",
               "test_storing_an_unwritten_private_value_is_an_uninit_finding",
               "test_removing_the_first_waitcnt_is_a_hazard",
               "test_an_unimplemented_instruction_is_reported_not_raised"]


@pytest.mark.parametrize("opt", (0, 3))
@pytest.mark.parametrize("name", EXEC_CASES)
def test_executor_cases_on_the_fused_tier(name: str, opt: int, fuse_at_once: None) -> None:
    """The executor's kernels (`test_exec`: expected values from the launch, numpy's IEEE
    arithmetic, plain Python) with every run fused."""
    from tests.sim import test_exec

    getattr(test_exec, name)(opt)


@pytest.mark.parametrize("name", EXEC_FAULTS)
def test_executor_findings_on_the_fused_tier(name: str, fuse_at_once: None) -> None:
    """Trap, sim-oob-access, sim-uninit-read, sim-waitcnt-hazard and
    unsupported-instruction, each at its instruction, with every run fused."""
    from tests.sim import test_exec

    getattr(test_exec, name)()
