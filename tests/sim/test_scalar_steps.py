"""The specialised bound steps of `rgpu_fuzz.sim.bound.scalar_steps` and `lane_steps` against the
general binders' steps they stand in for: on the same random wave states (partly defined
registers, loads in flight, EXEC partial or undefined, SCC undefined) both must leave the
same state and raise the same fault. The semantics themselves are tested elsewhere against
the ISA manual (test_definedness, test_exec, test_llvm_bug_lane_vgpr); here, that the
shortcut changes nothing. A few hand-computed cases pin what the shortcuts rely on."""

from __future__ import annotations

import random
from typing import Any

import pytest

from rgpu_fuzz.sim.bound import alu as bind_alu
from rgpu_fuzz.sim.bound import lane_steps, scalar_steps
from rgpu_fuzz.sim.bound import salu as bound_salu
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.salu import SALU
from rgpu_fuzz.sim.semantics.valu import VALU
from rgpu_fuzz.sim.state.wave import EXEC, Pending, Wave

M32, M64 = (1 << 32) - 1, (1 << 64) - 1
SHARED_BASE = 235


def _env(lanes: int = 64) -> Env:
    return Env(lanes=lanes, ieee=True, flush32=False, flush64=False,
               constants=((125, 0), (SHARED_BASE, 0x1_0000 << 32)),
               waitcnt=lambda k: (0, 0))


def _inst(opcode: str, *ops: Opnd) -> Inst:
    return Inst(0, 8, opcode, "SOP2", opcode.lower(), tuple(ops), {}, opcode.lower())


def _sgpr(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.SGPR, i, n)


def _k(v: int, n: int = 1, literal: bool = False) -> Opnd:
    return Opnd(OpKind.BITS, 0, n, value=v, literal=literal)


def _general(inst: Inst, env: Env, monkeypatch: pytest.MonkeyPatch, valu: bool) -> Any:
    with monkeypatch.context() as m:
        for mod, names in ((scalar_steps, ("mov", "bitwise", "arith", "carry", "cselect",
                                           "compare", "saveexec")),
                           (lane_steps, ("writelane", "readlane", "readfirstlane"))):
            for name in names:
                m.setattr(mod, name, lambda *a, **k: None)
        return _bind(inst, env, valu)


def _bind(inst: Inst, env: Env, valu: bool) -> Any:
    return bind_alu.bind_valu(inst, env) if valu else bound_salu.bind_salu(inst, env)


_REGS = (0, 1, 2, 3, 4, 5, 106, 107, 124, EXEC, EXEC + 1)
_PENDING = Pending(vm=False, lgkm=True, smem=True)


def _random_wave(rng: random.Random, lanes: int) -> Wave:
    w = Wave(lanes, 0, 0)
    for k in range(256):
        w.S[k] = rng.getrandbits(32) if rng.random() < 0.7 else rng.choice((0, M32, 1))
        r = rng.random()
        w.sdef[k] = M32 if r < 0.75 else 0 if r < 0.85 else rng.getrandbits(32)
    e = rng.random()
    mask = M64 if e < 0.4 else 0 if e < 0.5 else rng.getrandbits(64)
    w.set_exec(mask)
    if rng.random() < 0.15:
        w.sdef[EXEC + rng.randrange(2)] = rng.getrandbits(32)
    w.scc, w.scc_def = rng.randrange(2), rng.random() < 0.85
    for c in (0, 1, 6, 7, 256):
        w.V[:, c] = [rng.getrandbits(32) for _ in range(lanes)]
        w.vdef[:, c] = [rng.random() < 0.8 for _ in range(lanes)]
        if rng.random() < 0.5:
            w.vpart[c] = {ln: rng.getrandbits(32) for ln in rng.sample(range(lanes), 3)}
    if rng.random() < 0.2:
        w.pend_s = {rng.choice(_REGS): _PENDING for _ in range(2)}
    if rng.random() < 0.2:
        w.pend_v = {rng.choice((0, 1, 6, 7)): _PENDING}
    return w


def _clone(w: Wave) -> Wave:
    c = Wave(w.lanes, 0, 0)
    c.S, c.sdef = list(w.S), list(w.sdef)
    c.V[:], c.vdef[:] = w.V, w.vdef
    c.vpart = {k: dict(v) for k, v in w.vpart.items()}
    c.scc, c.scc_def = w.scc, w.scc_def
    c.pend_s, c.pend_v = dict(w.pend_s), dict(w.pend_v)
    c.refresh_exec()
    return c


def _state(w: Wave, fault: Any) -> Any:
    return (w.S, w.sdef, w.V.tobytes(), w.vdef.tobytes(), w.vpart, w.scc, bool(w.scc_def),
            w.exec_full, w.exec.tobytes(), w.exec_bits, fault)


def _run(step: Any, w: Wave) -> Any:
    try:
        r = step(w)
    except SimStop as stop:
        return (stop.fault.kind, stop.fault.detail)
    return r


def _same(inst: Inst, monkeypatch: pytest.MonkeyPatch, rng: random.Random, lanes: int = 64,
          valu: bool = False, states: int = 40) -> bool:
    """Whether the bound step of `inst` is specialised; asserts it agrees with the general
    one on `states` random states."""
    env = _env(lanes)
    fast = _bind(inst, env, valu)
    slow = _general(inst, env, monkeypatch, valu)
    specialised = fast.__code__ is not slow.__code__
    for _ in range(states):
        w = _random_wave(rng, lanes)
        a, b = _clone(w), _clone(w)
        ra, rb = _run(fast, a), _run(slow, b)
        assert _state(a, ra) == _state(b, rb), inst
    return specialised


def _operand(rng: random.Random, bits: int, dst: bool) -> Opnd:
    n = 2 if bits == 64 else 1
    r = rng.random()
    if dst or r < 0.6:
        return _sgpr(rng.choice((0, 1, 2, 4, 106, EXEC) if n == 2 else _REGS), n)
    if r < 0.85:
        return _k(rng.choice((0, 1, 5, 31, 32, 0x3F, 0x8_0010, M32, -1 & M64)) & (
            M64 if n == 2 else M32), n, literal=rng.random() < 0.3)
    if r < 0.92:
        return Opnd(OpKind.INT, 0, n, value=rng.choice((-1, 7, 0x8000)))
    # a 32-bit read of an aperture constant does not bind (operands.narrow_aperture_read)
    return _sgpr(rng.choice((SHARED_BASE, 253, 125) if n == 2 else (253, 125)), n)


@pytest.mark.parametrize("opcode", sorted(op for op, s in SALU.items() if s.shape in (
    "plain", "cmp", "cmpk", "saveexec", "cselect", "addc")))
def test_salu_steps_match_the_general_step(opcode: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    spec = SALU[opcode]
    rng = random.Random(opcode)
    shapes = 12
    for _ in range(shapes):
        if spec.shape in ("cmp", "cmpk"):
            ops = [_operand(rng, b if b != 16 else 32, False) for b in spec.src_bits]
            if spec.shape == "cmpk":
                ops[1] = Opnd(OpKind.INT, 0, 1, value=rng.choice((0, 5, 0xFFFF, 0x8000)))
        else:
            ops = [_operand(rng, spec.dst_bits, True),
                   *(_operand(rng, b, False) for b in spec.src_bits)]
        _same(_inst(opcode, *ops), monkeypatch, rng, states=25)


def test_the_spill_shapes_are_specialised(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    vcol, acol = Opnd(OpKind.VGPR, 6, 1), Opnd(OpKind.AGPR, 0, 1)
    cases = [
        (_inst("S_MOV_B64", _sgpr(EXEC, 2), _sgpr(0, 2)), False),
        (_inst("S_MOV_B64", _sgpr(EXEC, 2), _k(M64, 2)), False),
        (_inst("S_MOV_B64", _sgpr(4, 2), _sgpr(0, 2)), False),
        (_inst("S_MOV_B32", _sgpr(1), _sgpr(4)), False),
        (_inst("S_OR_SAVEEXEC_B64", _sgpr(6, 2), _k(M64, 2)), False),
        (_inst("S_OR_SAVEEXEC_B64", _sgpr(0, 2), _sgpr(0, 2)), False),
        (_inst("S_AND_SAVEEXEC_B64", _sgpr(0, 2), _sgpr(2, 2)), False),
        (_inst("S_ANDN2_B64", _sgpr(EXEC, 2), _sgpr(EXEC, 2), _sgpr(0, 2)), False),
        (_inst("S_LSHR_B64", _sgpr(2, 2), _sgpr(0, 2), _sgpr(2)), False),
        (_inst("S_ADDC_U32", _sgpr(2), _sgpr(2), _sgpr(3)), False),
        (_inst("S_CSELECT_B64", _sgpr(16, 2), _k(M64, 2), _k(0, 2)), False),
        (_inst("V_WRITELANE_B32", vcol, _sgpr(4), _k(3)), True),
        (_inst("V_WRITELANE_B32", acol, _sgpr(4), _k(63)), True),
        (_inst("V_WRITELANE_B32", vcol, _k(7), _k(2)), True),
        (_inst("V_READLANE_B32", _sgpr(4), vcol, _k(3)), True),
        (_inst("V_READLANE_B32", _sgpr(4), Opnd(OpKind.VGPR, 7, 1), _k(67)), True),
        (_inst("V_READFIRSTLANE_B32", _sgpr(4), vcol), True),
    ]
    for inst, valu in cases:
        assert _same(inst, monkeypatch, rng, valu=valu, states=300), inst
    # wave32 (gfx1100): the B32 forms, and the 64-bit moves
    for inst, valu in [(_inst("S_MOV_B32", _sgpr(EXEC), _sgpr(0)), False),
                       (_inst("S_MOV_B64", _sgpr(EXEC, 2), _sgpr(0, 2)), False),
                       (_inst("S_OR_SAVEEXEC_B32", _sgpr(6), _k(M32)), False),
                       (_inst("V_READFIRSTLANE_B32", _sgpr(4), vcol), True),
                       (_inst("V_WRITELANE_B32", vcol, _sgpr(4), _k(40)), True)]:
        _same(inst, monkeypatch, rng, lanes=32, valu=valu, states=200)


def test_lane_select_from_an_sgpr_keeps_the_general_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(6)
    vcol = Opnd(OpKind.VGPR, 6, 1)
    for inst in (_inst("V_WRITELANE_B32", vcol, _sgpr(4), _sgpr(5)),
                 _inst("V_READLANE_B32", _sgpr(4), vcol, _sgpr(5))):
        assert not _same(inst, monkeypatch, rng, valu=True, states=100)


@pytest.mark.parametrize("opcode", sorted(op for op, s in SALU.items() if s.raw is not None))
def test_raw_is_the_result_of_fn_and_scc_is_result_nonzero(opcode: str) -> None:
    spec = SALU[opcode]
    assert spec.raw is not None
    rng = random.Random(opcode)
    for _ in range(300):
        a, b = (rng.getrandbits(bits) for bits in spec.src_bits)
        r = spec.raw(a, b)
        assert spec.fn(a, b) == (r, int(r != 0))


@pytest.mark.parametrize("opcode", sorted(op for op, s in SALU.items() if s.bitdef is not None))
def test_defined_sources_give_a_defined_result(opcode: str) -> None:
    """What the steps' shortcut assumes: with every source bit defined, each per-bit rule
    defines every result bit (saveexec rules take EXEC as defined)."""
    spec = SALU[opcode]
    assert spec.bitdef is not None
    rng = random.Random(opcode)
    full = (1 << spec.dst_bits) - 1
    for _ in range(300):
        vals = [rng.getrandbits(bits) for bits in spec.src_bits]
        fulls = [(1 << bits) - 1 for bits in spec.src_bits]
        if spec.shape == "saveexec":
            got = spec.bitdef(rng.getrandbits(spec.dst_bits), vals[0], fulls[0])
        elif len(vals) == 1:
            got = spec.bitdef(vals[0], fulls[0])
        else:
            got = spec.bitdef(vals[0], fulls[0], vals[1], fulls[1])
        assert got & full == full


def test_restoring_exec_from_a_partly_defined_pair_faults() -> None:
    """`s_mov_b64 exec, s[0:1]` with s1 bit 5 never written: hardware would run lanes
    nobody can name; the EXEC write is an uninit read (after the registers are written)."""
    step = bound_salu.bind_salu(_inst("S_MOV_B64", _sgpr(EXEC, 2), _sgpr(0, 2)), _env())
    w = Wave(64, 0, 0)
    w.S[0], w.S[1] = 0xF, 0x20
    w.sdef[0], w.sdef[1] = M32, M32 & ~0x20
    with pytest.raises(SimStop) as got:
        step(w)
    assert got.value.fault.detail == "EXEC set from an undefined value"
    w.sdef[1] = M32
    step(w)
    assert w.exec_bits == 0x20_0000_000F and not w.exec_full
    assert [int(x) for x in w.exec.nonzero()[0]] == [0, 1, 2, 3, 37]


def test_spilled_partly_defined_sgpr_comes_back_as_it_went() -> None:
    """v_writelane of an SGPR whose high 16 bits were never written, then v_readlane: the
    SGPR's defined bits are 0x0000FFFF again (the lane's vdef says undefined)."""
    env = _env()
    v6 = Opnd(OpKind.VGPR, 6, 1)
    write = bind_alu.bind_valu(_inst("V_WRITELANE_B32", v6, _sgpr(4), _k(9)), env)
    read = bind_alu.bind_valu(_inst("V_READLANE_B32", _sgpr(5), v6, _k(9)), env)
    w = Wave(64, 0, 0)
    w.S[4], w.sdef[4] = 0x1234_5678, 0xFFFF
    write(w)
    assert int(w.V[9, 6]) == 0x1234_5678 and not w.vdef[9, 6]
    assert w.vpart == {6: {9: 0xFFFF}}
    read(w)
    assert (w.S[5], w.sdef[5]) == (0x1234_5678, 0xFFFF)


def test_or_saveexec_with_all_ones_enables_every_lane() -> None:
    """CDNA3 ISA S_OR_SAVEEXEC_B64: D = EXEC; EXEC = S0 | EXEC; SCC = EXEC != 0."""
    step = bound_salu.bind_salu(_inst("S_OR_SAVEEXEC_B64", _sgpr(6, 2), _k(M64, 2)), _env())
    w = Wave(64, 0, 0)
    w.set_exec(0x5)
    step(w)
    assert (w.S[6], w.S[7], w.sdef[6], w.sdef[7]) == (5, 0, M32, M32)
    assert w.exec_full and w.exec_bits == M64 and (w.S[EXEC], w.S[EXEC + 1]) == (M32, M32)
    assert (w.scc, w.scc_def) == (1, True)


def test_valu_tables_still_have_lane_moves() -> None:
    assert {"V_WRITELANE_B32", "V_READLANE_B32", "V_READFIRSTLANE_B32"} <= set(VALU)
