"""Lane-mask arithmetic in fused runs (`rgpu_fuzz.sim.fused.salu`'s expressions, SAVEEXEC,
what a segment knows of the scalar state: `fused.code.Scalars`) against the bound steps, on a
64-lane wave. Expected values by hand from the CDNA3 ISA (S_AND_B64: D = S0 & S1, SCC =
D != 0; S_ANDN2_B64: S0 & ~S1; S_OR_SAVEEXEC_B64: D = EXEC, EXEC = S0 | EXEC, SCC = EXEC
!= 0; S_XOR_B64: S0 ^ S1) and memcheck's definedness rules (an AND with a defined 0 is
defined whatever the other bit)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind
from rgpu_fuzz.sim.fused.runs import compiled
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.salu import SALU
from rgpu_fuzz.sim.state.wave import EXEC, Wave
from tests.sim import test_fuse

ENV = Env(lanes=64, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1


def s(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.SGPR, i, n)


def k(value: int) -> Opnd:
    return Opnd(OpKind.INT, 0, 1, value=value)


def inst(opcode: str, *ops: Opnd) -> Inst:
    return Inst(0, 8, opcode, "SOP2", opcode.lower(), ops, share_key=("salurun", opcode, ops))


def wave(exec_mask: int = M64) -> Wave:
    w = Wave(64, 0, 0)
    w.set_exec(exec_mask)
    return w


def put(w: Wave, i: int, value: int, defined: int = M64) -> None:
    w.S[i], w.S[i + 1] = value & M32, value >> 32
    w.sdef[i], w.sdef[i + 1] = defined & M32, defined >> 32


def both(insts: list[Inst], w: Wave) -> tuple[Wave, Wave, object, object]:
    old = test_fuse.ENV
    test_fuse.ENV = ENV
    try:
        return test_fuse.both(insts, w)
    finally:
        test_fuse.ENV = old


def pair(w: Wave, i: int) -> tuple[int, int]:
    return w.S[i] | w.S[i + 1] << 32, w.sdef[i] | w.sdef[i + 1] << 32


@pytest.mark.parametrize("opcode", sorted(op for op, x in SALU.items() if x.expr is not None))
def test_expr_is_the_result_of_fn(opcode: str) -> None:
    spec = SALU[opcode]
    assert spec.expr is not None
    rng = random.Random(opcode)
    edges = [0, 1, M32, M64, 1 << 31, 1 << 63, 63, 64, 31, 32]
    widths = (spec.dst_bits, *spec.src_bits) if spec.shape == "saveexec" else spec.src_bits
    for n in range(400):
        srcs = [rng.choice(edges) if n % 3 == 0 else rng.getrandbits(bits) for bits in widths]
        srcs = [x & ((1 << bits) - 1) for x, bits in zip(srcs, widths, strict=True)]
        names = [f"x{j}" for j in range(len(srcs))]
        got = eval(spec.expr.format(*names, m=(1 << spec.dst_bits) - 1),
                   dict(zip(names, srcs, strict=True)))
        assert got == spec.fn(*srcs)[0]


def test_the_loop_mask_idiom_with_partly_defined_and_known_sources() -> None:
    """s_or_b64 exec, exec, s[8:9] (s9 undefined: EXEC's high half would be undefined, a
    fault, so s9 is defined here), then masks from EXEC: s_andn2_b64 s[2:3], s[10:11],
    exec with s11 undefined (bits where EXEC is 1 are defined zeros), s_and_b64 s[4:5],
    s[12:13], exec, s_or_b64 s[10:11], s[2:3], s[4:5], and s_mov_b64 s[12:13], s[10:11]
    (a copy keeps the defined bits)."""
    w = wave(0x0000_0000_0000_00F0)
    put(w, 8, 0x0000_0001_0000_000F)
    put(w, 10, 0xFFFF_FFFF_0000_0F0F, 0x0000_0000_FFFF_FFFF)
    put(w, 12, 0x1234_5678_9ABC_DEF0)
    run = [inst("S_OR_B64", s(EXEC, 2), s(EXEC, 2), s(8, 2)),
           inst("S_ANDN2_B64", s(2, 2), s(10, 2), s(EXEC, 2)),
           inst("S_AND_B64", s(4, 2), s(12, 2), s(EXEC, 2)),
           inst("S_OR_B64", s(10, 2), s(2, 2), s(4, 2)),
           inst("S_MOV_B64", s(12, 2), s(10, 2))]
    _, f, raised, _ = both(run, w)
    assert raised is None
    assert pair(f, EXEC) == (0x0000_0001_0000_00FF, M64)
    assert f.exec_bits == 0x0000_0001_0000_00FF and f.exec[32] and not f.exec[33]
    # s[2:3]: low half 0x0F0F & ~0xFF = 0x0F00, defined; high half undefined but bit 32
    # (EXEC 1) is a defined 0
    assert pair(f, 2) == (0xFFFF_FFFE_0000_0F00, 0x0000_0001_FFFF_FFFF)
    assert pair(f, 4) == (0x0000_0000_0000_00F0, M64)
    assert pair(f, 10) == (0xFFFF_FFFE_0000_0FF0, 0x0000_0001_FFFF_FFFF)
    assert pair(f, 12) == pair(f, 10)
    assert (f.scc, f.scc_def) == (1, True)


def test_saveexec_then_xor_restores_the_mask() -> None:
    """s_or_saveexec_b64 s[22:23], s[6:7]; s_mov_b64 s[6:7], 0; s_xor_b64 exec, exec,
    s[22:23]: EXEC grows by s[6:7]'s lanes, then goes back to them alone."""
    w = wave(0x0000_0000_FFFF_0000)
    put(w, 6, 0x0000_0000_0000_FFFF)
    run = [inst("S_OR_SAVEEXEC_B64", s(22, 2), s(6, 2)),
           inst("S_MOV_B64", s(6, 2), k(0)),
           inst("S_XOR_B64", s(EXEC, 2), s(EXEC, 2), s(22, 2))]
    _, f, raised, _ = both(run, w)
    assert raised is None
    assert pair(f, 22) == (0x0000_0000_FFFF_0000, M64)
    assert pair(f, 6) == (0, M64)
    assert pair(f, EXEC) == (0x0000_0000_0000_FFFF, M64)
    assert f.exec_bits == 0xFFFF and f.exec[:16].all() and not f.exec[16:].any()
    assert (f.scc, f.scc_def) == (1, True)


def test_an_undefined_exec_bit_faults_at_the_write() -> None:
    """s_mov_b64 s[4:5], s[8:9] then s_and_b64 exec, s[4:5], s[6:7] with s[8:9] partly
    undefined where s[6:7] is 1: EXEC set from an undefined value, at the second."""
    w = wave()
    put(w, 8, 0xFF, 0xF0)
    put(w, 6, 0x0F)
    run = [inst("S_MOV_B64", s(4, 2), s(8, 2)),
           inst("S_AND_B64", s(EXEC, 2), s(4, 2), s(6, 2))]
    st, _, raised, _ = both(run, w)
    assert raised == (FaultKind.UNINIT_READ, 1)
    assert pair(st, 4) == (0xFF, 0xF0)


def test_a_32_bit_write_into_a_pair_read_before() -> None:
    """A pair read once (s[4:5]) and then half rewritten by s_mov_b32 s5 is read again
    with the new half; s_cmov_b64 under SCC = 0 writes nothing, under SCC = 1 copies."""
    w = wave()
    put(w, 4, 0x0000_0001_0000_0002)
    run = [inst("S_OR_B64", s(6, 2), s(4, 2), k(0)),
           inst("S_MOV_B32", s(5), k(7)),
           inst("S_AND_B64", s(8, 2), s(4, 2), k(-1 & M64)),
           inst("S_CMOV_B64", s(4, 2), s(EXEC, 2)),
           inst("S_XOR_B64", s(10, 2), s(4, 2), s(6, 2))]
    _, f, _, _ = both(run, w)
    assert pair(f, 6) == (0x0000_0001_0000_0002, M64)
    assert pair(f, 8) == (0x0000_0007_0000_0002, M64)
    assert pair(f, 4) == (M64, M64)          # the AND's result is not 0: s_cmov copies
    assert pair(f, 10) == (M64 ^ 0x0000_0001_0000_0002, M64)
    w.S[4], w.S[5] = 0, 0
    run[2] = inst("S_AND_B64", s(8, 2), s(4, 2), k(0))   # SCC = 0: s_cmov writes nothing
    _, f, _, _ = both(run, w)
    assert pair(f, 8) == (0, M64)
    assert pair(f, 4) == (0x0000_0007_0000_0000, M64)
    assert pair(f, 10) == (0x0000_0007_0000_0000, M64)


@pytest.mark.parametrize("scc", [0, 1])
@pytest.mark.parametrize("cmov", [inst("S_CMOV_B64", s(4, 2), s(8, 2)),
                                  inst("S_CMOV_B32", s(4), s(8)),
                                  inst("S_CMOVK_I32", s(4), k(0x1234))])
def test_a_conditional_move_on_an_undefined_scc_is_an_uninit_read(cmov: Inst,
                                                                  scc: int) -> None:
    """S_CMOV/S_CMOVK move when SCC is 1 (CDNA3 ISA: `if SCC then D = S0`): an undefined
    SCC decides whether the destination changes, so it is reported as s_cselect's is, by
    the bound step and the fused run alike, whatever SCC's value bit says."""
    w = wave()
    put(w, 4, 1)
    put(w, 8, 2)
    w.scc, w.scc_def = scc, False
    st, _, raised, _ = both([inst("S_MOV_B32", s(2), k(3)), cmov], w)
    assert raised == (FaultKind.UNINIT_READ, 1)
    assert pair(st, 4) == (1, M64)
    w.scc_def = True
    st, _, raised, _ = both([inst("S_MOV_B32", s(2), k(3)), cmov], w)
    assert raised is None
    moved = {"S_CMOV_B64": (2, M64), "S_CMOV_B32": (2, M64), "S_CMOVK_I32": (0x1234, M64)}
    assert pair(st, 4) == (moved[cmov.opcode] if scc else (1, M64))


OPS = ["S_AND_B64", "S_OR_B64", "S_XOR_B64", "S_ANDN2_B64", "S_ORN2_B64", "S_NAND_B64",
       "S_MOV_B64", "S_NOT_B64", "S_LSHL_B64", "S_LSHR_B64", "S_AND_B32", "S_MOV_B32",
       "S_OR_SAVEEXEC_B64", "S_AND_SAVEEXEC_B64", "S_ANDN2_SAVEEXEC_B64", "S_CSELECT_B64",
       "S_ADD_U32", "S_CMP_EQ_U32"]


@pytest.mark.parametrize("seed", range(40))
def test_random_runs_match_the_steps(seed: int) -> None:
    """Random runs of mask arithmetic over a few registers with random, often partly
    defined, values: the fused run leaves what the steps leave, faults included."""
    rng = random.Random(seed)
    w = wave(rng.choice([M64, rng.getrandbits(64)]))
    regs = [2, 4, 6, 8]
    for i in regs:
        put(w, i, rng.getrandbits(64), rng.choice([M64, M64, rng.getrandbits(64)]))
    w.scc, w.scc_def = rng.getrandbits(1), rng.random() < 0.8

    def src(bits: int) -> Opnd:
        r = rng.random()
        if r < 0.15:
            return k(rng.choice([0, 1, 5, 63]))
        if r < 0.35:
            return s(EXEC, 2) if bits == 64 else s(EXEC)
        return s(rng.choice(regs) + (rng.getrandbits(1) if bits == 32 else 0), bits // 32)

    run = []
    for _ in range(rng.randint(2, 12)):
        op = rng.choice(OPS)
        spec = SALU[op]
        if spec.shape == "saveexec":
            run.append(inst(op, s(rng.choice(regs), 2), src(64)))
            continue
        if spec.shape == "cmp":
            run.append(inst(op, src(32), src(32)))
            continue
        d = rng.choice(regs) + (rng.getrandbits(1) if spec.dst_bits == 32 else 0)
        if spec.dst_bits == 64 and rng.random() < 0.15:
            d = EXEC
        dst = s(d, spec.dst_bits // 32)
        run.append(inst(op, dst, *(src(b) for b in spec.src_bits)))
    assert compiled(run, ENV) is not None
    both(run, w)


def v(i: int) -> Opnd:
    return Opnd(OpKind.VGPR, i, 1)


def _compare_and_carry(exec_mask: int, undefined: tuple[int, ...]) -> tuple[Any, ...]:
    """V_CMP_EQ_U32 vcc, v0, v1 and V_ADD_CO_U32 v2, s[8:9], s4, s5 under `exec_mask`, on
    both tiers: v0 = lane, v1 = lane where lane % 3 == 0 else 0 (its `undefined` lanes
    undefined), s4 = 0xFFFFFFFF, s5 = 1."""
    w = wave(exec_mask)
    w.V[:, 0] = range(64)
    w.V[:, 1] = [n if n % 3 == 0 else 0 for n in range(64)]
    w.vdef[:, 0:2] = True
    for lane in undefined:
        w.vdef[lane, 1] = False
    w.S[4], w.S[5] = M32, 1
    w.sdef[4] = w.sdef[5] = M32
    return both([inst("V_CMP_EQ_U32", s(106, 2), v(0), v(1)),
                 inst("V_ADD_CO_U32", v(2), s(8, 2), s(4), s(5))], w)


def test_lane_masks_under_a_full_exec() -> None:
    """V_CMP_EQ_U32 vcc, v0, v1 under a full EXEC: bit n = (v0 == v1) in lane n, defined
    where both sources are (lane 5 of v1 undefined); V_ADD_CO_U32 v2, s[8:9], s4, s5 with
    scalar sources carries out in every lane (0xFFFFFFFF + 1), all bits defined."""
    _, f, raised, _ = _compare_and_carry(M64, (5,))
    assert raised is None
    expect = sum(1 << n for n in range(64) if n % 3 == 0)
    assert pair(f, 106) == (expect, M64 ^ (1 << 5))
    assert pair(f, 8) == (M64, M64)
    assert f.V[:, 2].tolist() == [0] * 64


def test_lane_masks_under_a_partial_exec() -> None:
    """As above with EXEC = lanes 0-31 and 40: inactive lanes give defined 0 bits whatever
    their inputs (lane 33 of v1 undefined, inactive); active lane 5 stays undefined."""
    _, f, raised, _ = _compare_and_carry((1 << 32) - 1 | 1 << 40, (5, 33))
    assert raised is None
    active = (1 << 32) - 1 | 1 << 40
    expect = sum(1 << n for n in range(64) if n % 3 == 0) & active
    assert pair(f, 106) == (expect, M64 ^ (1 << 5))
    assert pair(f, 8) == (active, M64)
