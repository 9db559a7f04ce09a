"""What a campaign case pays the first time its code runs: the tier decision at
an instruction's first execution, binding, the per-launch opcode counts, the loaded image.

Expected values by hand: opcode counts of a hand-made execution (a run of three executed
five times, counted at its first index, plus direct executions); Python's reference
counting (a closure no cycle holds is freed when the last reference goes, without the
collector: Python docs "gc", "Data model: objects"); the loader's relocated words from
`test_loader` (llvm-readelf's records)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_program
from rgpu_fuzz.sim.fused import runs as fuse
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.launch import counts as launch_counts
from rgpu_fuzz.sim.launch import tiers
from rgpu_fuzz.sim.launch.image import load_code_object
from rgpu_fuzz.sim.launch.tiers import tier_up
from rgpu_fuzz.sim.state.memory import AddressSpace
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.kernels import build

ENV = Env(lanes=4, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))


def _v(i: int) -> Opnd:
    return Opnd(OpKind.VGPR, i, 1)


def _add(dst: int, a: int, b: int, tag: str) -> Inst:
    # share_key: a key unique to this test stands for the instruction's words
    return Inst(0, 8, "V_ADD_U32", "VOP3", "v_add_u32", (_v(dst), _v(a), _v(b)),
                share_key=("test-cold", tag, dst, a, b))


def _wave() -> Wave:
    w = Wave(4, 0, 0)
    w.set_exec(0b1111)
    for col in range(8):
        w.V[:, col] = col
        w.vdef[:, col] = True
    return w


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_a_bound_step_frees_its_lazy_binder_without_the_collector(no_collector: None) -> None:
    prog = bind_program([_add(2, 0, 1, "lazy"), _add(3, 2, 1, "lazy")], ENV, None)
    lazy = weakref.ref(prog.steps[0])
    w = _wave()
    prog.fast[0](w)
    assert prog.steps[0] is prog.fast[0] and prog.steps[0] is not lazy()
    assert lazy() is None, "the replaced binder is cyclic garbage"
    assert w.V[:, 2].tolist() == [1, 1, 1, 1]            # v0 + v1 = 0 + 1


def test_a_released_program_frees_its_unbound_steps(no_collector: None) -> None:
    prog = bind_program([_add(2, 0, 1, "released")], ENV, None)
    lazy = weakref.ref(prog.steps[0])
    prog.release()
    del prog
    assert lazy() is None


def test_a_launchs_opcode_counts_from_the_indices_it_executed() -> None:
    insts = [Inst(0, 4, op, "SOP1", op.lower(), ()) for op in
             ("S_MOV_B32", "V_ADD_U32", "S_NOP", "V_MOV_B32", "S_ENDPGM")]
    prog = bind_program(insts, ENV, None)
    prog.run_len[0] = 3
    counts, runs = [5, 1, 0, 2, 0], [5, 0, 0, 0, 0]
    # the run 0..2 ran five times (counted at index 0), index 1 once on its own, index 3
    # twice; index 4 was executed in an earlier launch only
    prog.executed[:] = [0, 4, 3, 1]
    want = {"S_MOV_B32": 5, "S_NOP": 5, "V_ADD_U32": 6, "V_MOV_B32": 2}
    for exact in (True, False):
        got = launch_counts.opcode_counts(prog, counts, runs, exact=exact)
        assert got == want and list(got) == sorted(want)


def test_a_program_launched_again_counts_its_opcodes_as_the_first_launch() -> None:
    """Launches of one program whose executed indices and runs have not changed count from
    a plan grouped by opcode (made at the second such launch); a launch after the program
    executed a new index counts it too."""
    insts = [Inst(0, 4, op, "SOP1", op.lower(), ()) for op in
             ("S_MOV_B32", "V_ADD_U32", "S_NOP", "V_MOV_B32", "S_ENDPGM", "S_BRANCH")]
    prog = bind_program(insts, ENV, None)
    prog.run_len[0] = 3
    prog.executed[:] = [0, 4, 3, 1]
    first = {"S_MOV_B32": 5, "S_NOP": 5, "V_ADD_U32": 6, "V_MOV_B32": 2}
    for _ in range(3):
        got = launch_counts.opcode_counts(prog, [5, 1, 0, 2, 0, 0], [5, 0, 0, 0, 0, 0], exact=True)
        assert got == first and list(got) == sorted(first)
    assert launch_counts._count_plan(prog) is not None
    # the run twice, index 4 once: each opcode of the run twice, S_ENDPGM once
    again = {"S_ENDPGM": 1, "S_MOV_B32": 2, "S_NOP": 2, "V_ADD_U32": 2}
    got = launch_counts.opcode_counts(prog, [2, 0, 0, 0, 1, 0], [2, 0, 0, 0, 0, 0], exact=True)
    assert got == again and list(got) == sorted(again)
    prog.executed.append(5)                               # a new index ran: S_BRANCH
    got = launch_counts.opcode_counts(prog, [2, 0, 0, 0, 1, 3], [2, 0, 0, 0, 0, 0], exact=True)
    assert got == {**again, "S_BRANCH": 3} and list(got) == sorted(got)


def test_first_execution_installs_the_longest_run_compiled_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = [_add(2, 0, 1, "head"), _add(3, 2, 1, "head"), _add(4, 3, 2, "head"),
           _add(5, 4, 3, "head")]
    assert fuse.compiled(run[:2], ENV) is not None
    assert fuse.compiled(run[:3], ENV) is not None
    assert fuse.heads(ENV)[run[0].share_key] == (3, 2)

    def no_classifying(*args: object) -> int:
        raise AssertionError("run_length at a first execution")

    prog = tiers.bind([*run, _add(6, 0, 0, "other")], ENV, None)
    monkeypatch.setattr(tiers, "run_length", no_classifying)
    tier_up(prog, 0, 1)
    assert prog.run_len == {0: 3} and prog.heat[0] == tiers.SETTLED
    assert prog.executed == [0]
    tier_up(prog, 0, 1)                     # heat set back to 0 by `bench sim`, run again
    assert prog.executed == [0], "listed twice: its opcodes would count twice"
    tier_up(prog, 4, 1)                                   # no run starts with it
    assert 4 not in prog.run_len and prog.heat[4] == 0
    w = _wave()
    assert prog.fast[0](w) == fuse.RUN_BASE - 3
    assert w.V[0, 2:5].tolist() == [1, 2, 3]              # 0+1, 1+1, 2+1


def test_a_code_objects_image_is_relocated_once_and_copied_per_launch() -> None:
    code = build("rodata.ll", opt=0)
    co = read_code_object(code)
    first, second = AddressSpace(), AddressSpace()
    a = load_code_object(first, co)
    b = load_code_object(second, co)
    fresh = load_code_object(AddressSpace(), read_code_object(code))
    assert any(m.writable for m in a.segments) and not all(m.writable for m in a.segments)
    for m in a.segments:
        if m.writable:
            m.data[:] = 0xAB                             # a launch writing its copy
        else:
            assert not m.data.flags.writeable            # shared by every launch, never written
    for mb, mf in zip(b.segments, fresh.segments, strict=True):
        assert (mb.base, mb.writable) == (mf.base, mf.writable)
        assert np.array_equal(mb.data, mf.data)
    assert all(np.any(m.data != 0xAB) for m in b.segments if m.writable)


def test_a_spill_copy_binds_without_the_plain_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-register VGPR/AGPR copy is bound to its copy step without binding the plain
    step first (it was bound and thrown away): with the plain binder made to fail, the
    copies still bind, and run as copies (by hand: lanes in EXEC take the source's value
    and definedness, a partly defined source lane's bits go with it, lanes outside EXEC
    keep theirs); a move from an SGPR still binds through the plain binder."""
    from rgpu_fuzz.sim.bound import alu
    from tests.sim.asm_steps import assemble, run_steps

    def no_plain(*args: object) -> object:
        raise AssertionError("the plain binder ran")

    monkeypatch.setitem(alu._VALU_SHAPES, "plain", no_plain)
    code = assemble(["v_mov_b32 v1, v2", "v_accvgpr_write_b32 a0, v1",
                     "v_accvgpr_read_b32 v3, a0"])
    w = Wave(64, 0, 0)
    w.set_exec((1 << 32) - 1)                             # lanes 0-31
    w.V[:, 2] = np.arange(64) * 7 + 1
    w.vdef[:, 2] = np.arange(64) % 3 != 0                 # lanes 0, 3, 6, ... undefined
    w.vpart[2] = {3: 0xFF, 40: 0xF0}                      # lane 3 partly, 40 outside EXEC
    w.V[:, 3] = 5
    w.vdef[:, 3] = True
    run_steps(code, w)
    lanes = np.arange(64)
    assert w.V[:32, 3].tolist() == (lanes[:32] * 7 + 1).tolist()
    assert w.vdef[:32, 3].tolist() == (lanes[:32] % 3 != 0).tolist()
    assert w.V[32:, 3].tolist() == [5] * 32 and bool(w.vdef[32:, 3].all())
    assert w.vpart.get(3) == {3: 0xFF}
    with pytest.raises(AssertionError, match="plain binder"):
        run_steps(assemble(["v_mov_b32 v1, s0"]), w)


def test_no_vector_alu_opcode_is_bound_as_control_flow() -> None:
    """`bind_one` asks the VALU table before the control-flow binder (`_flow`): the same
    steps only while `_flow` binds none of the table's opcodes."""
    from rgpu_fuzz.sim.bound.program import _flow
    from rgpu_fuzz.sim.semantics.valu import VALU

    bound = [name for name in VALU
             if _flow(Inst(0, 4, name, "VOP1", name.lower(), ()), ENV, lambda a: 0)]
    assert bound == []


def test_a_first_execution_with_no_compiled_head_looks_no_further(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An instruction that begins no compiled run is listed as executed and left on the
    bound tier without a look at the runs compiled so far; where `HOT` is 1 (`bench sim`),
    the first execution still classifies and compiles the run (three additions)."""
    run = [_add(2, 0, 1, "nohead"), _add(3, 2, 1, "nohead"), _add(4, 3, 2, "nohead")]
    prog = tiers.bind(run, ENV, None)

    def no_look(*args: object) -> object:
        raise AssertionError("looked for a compiled run")

    with monkeypatch.context() as m:
        m.setattr(tiers, "compiled_at", no_look)
        m.setattr(tiers, "run_length", no_look)
        tier_up(prog, 1, 1)
    assert prog.executed == [1] and prog.run_len == {} and prog.heat[1] == 0
    monkeypatch.setattr(tiers, "HOT", 1)
    tier_up(prog, 0, 1)
    assert prog.executed == [1, 0] and prog.run_len == {0: 3}
    assert prog.heat[0] == tiers.SETTLED


def test_code_iterates_as_it_indexes() -> None:
    """`Code` walked as a sequence: each instruction at its own address, as indexing gives
    it (a branch among shared instructions; the addresses are llvm-mc's encodings laid
    out from 0x1000: 4, 8 and 4 bytes)."""
    from tests.sim.asm_steps import assemble

    code = assemble(["s_mov_b32 s0, 1", "v_add_u32_e64 v0, v1, v2", "s_branch 0"])
    assert list(code) == [code[i] for i in range(len(code))]
    assert [inst.address for inst in code] == [0x1000, 0x1004, 0x100C]
