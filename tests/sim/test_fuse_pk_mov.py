"""V_PK_MOV_B32 in a fused run (`fused.valu._v_pk_mov`) against its bound step, with values
worked out by hand from the CDNA3 ISA's definition: D.lo = op_sel[0] ? S0[63:32] : S0[31:0],
D.hi = op_sel[1] ? S1[63:32] : S1[31:0], lanes in EXEC only; each half of the result is
defined where the half it came from is."""

from __future__ import annotations

from rgpu_fuzz.sim.isa.inst import Inst, OperandX, OpKind, Opnd
from tests.sim.test_fuse import both, wave


def pair(i: int, hi: bool = False) -> Opnd | OperandX:
    base = Opnd(OpKind.VGPR, i, 2)
    return OperandX(base, "", False, True) if hi else base


def pk_mov(dst: int, s0: Opnd | OperandX, s1: Opnd | OperandX) -> Inst:
    ops = (Opnd(OpKind.VGPR, dst, 2), s0, s1)
    return Inst(0, 8, "V_PK_MOV_B32", "VOP3P", "v_pk_mov_b32", ops,
                share_key=("test", "V_PK_MOV_B32", ops))


def test_op_sel_halves_under_partial_exec() -> None:
    """`v_pk_mov_b32 v[4:5], v[0:1], v[2:3] op_sel:[1,0]`: lo from S0's high dword v1, hi
    from S1's low dword v2; lanes 1 and 3 are outside EXEC and keep v4, v5 as they were."""
    w = wave(0b0101)
    w.V[:, 0] = [1, 2, 3, 4]
    w.V[:, 1] = [10, 20, 30, 40]
    w.V[:, 2] = [100, 200, 300, 400]
    w.V[:, 3] = [7, 7, 7, 7]
    w.V[:, 4] = [5, 5, 5, 5]
    w.vdef[:, 0:4] = True
    w.vdef[:, 4] = True
    w.vdef[2, 2] = False
    _, f, _, _ = both([pk_mov(4, pair(0, hi=True), pair(2))], w)
    assert f.V[:, 4].tolist() == [10, 5, 30, 5]
    assert f.V[:, 5].tolist() == [100, 0, 300, 0]
    assert f.vdef[:, 4].tolist() == [True, True, True, True]
    assert f.vdef[:, 5].tolist() == [True, False, False, False]


def test_destination_overlapping_its_sources_reads_them_first() -> None:
    """v[1:2] = (v0.lo, v1.lo): the new v1 is the old v0, the new v2 the OLD v1."""
    w = wave()
    w.V[:, 0] = [1, 2, 3, 4]
    w.V[:, 1] = [10, 20, 30, 40]
    w.vdef[:, 0:2] = True
    _, f, _, _ = both([pk_mov(1, pair(0), pair(1))], w)
    assert f.V[:, 1].tolist() == [1, 2, 3, 4]
    assert f.V[:, 2].tolist() == [10, 20, 30, 40]
