"""VOP3P packed 16-bit integer operations (`rgpu_fuzz.sim.bound.packed`) on values worked out by
hand: each 16-bit result from the source halves op_sel (low result) and op_sel_hi (high
result) pick, wrapping (CDNA3 ISA VOP3P; V_PK_LSHLREV_B16 pseudocode
`tmp[31:16] = S1[31:16] << S0[19:16]`); a constant is its 32-bit value, halves picked the
same way (`4 op_sel_hi:[1,0]` is 4 in both halves, as LLVM's O3 code uses it). llvm-mc-22
encodes each line; second campaign met `v_pk_add_u16` and `v_pk_sub_i16`."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.state.halves import defined_bits
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

V1 = [0x0001_FFFF, 0x8000_7FFF, 0x1234_0005, 0xFFFF_0001]
V2 = [0x0002_0001, 0x0001_0001, 0x0003_0002, 0x0001_FFFF]
V3 = [0x0010_0100, 0x0000_0000, 0x0005_0007, 0xFFFF_FFFF]


def _wave() -> Wave:
    w = Wave(64, 0, 0)
    w.vdef[:, :] = True
    for col, vals in ((1, V1), (2, V2), (3, V3)):
        w.V[:, col] = np.tile(np.array(vals, np.uint32), 16)
    w.S[40], w.sdef[40] = 0x0003_0007, 0xFFFF_FFFF
    return w


def _pack(lo: list[int], hi: list[int]) -> list[int]:
    return [((h & 0xFFFF) << 16) | (lo_ & 0xFFFF) for lo_, h in zip(lo, hi, strict=True)]


@pytest.mark.parametrize(("line", "want"), [
    # lo: 0xffff + 1, 0x7fff + 1, 5 + 2, 1 + 0xffff; hi: 1 + 2, 0x8000 + 1, 0x1234 + 3, ...
    ("v_pk_add_u16 v0, v1, v2", _pack([0x0000, 0x8000, 0x0007, 0x0000],
                                      [0x0003, 0x8001, 0x1237, 0x0000])),
    ("v_pk_sub_i16 v0, v1, v2", _pack([0xFFFE, 0x7FFE, 0x0003, 0x0002],
                                      [0xFFFF, 0x7FFF, 0x1231, 0xFFFE])),
    # op_sel:[1,0]: the low result takes v1's high half; op_sel_hi:[0,1]: the high result
    # takes v1's low half
    ("v_pk_add_u16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]",
     _pack([0x0002, 0x8001, 0x1236, 0xFFFE], [0x0001, 0x8000, 0x0008, 0x0002])),
    ("v_pk_add_u16 v0, s40, 4 op_sel_hi:[1,0]", [0x0007_000B] * 4),
    ("v_pk_mul_lo_u16 v0, v1, v2", _pack([0xFFFF, 0x7FFF, 0x000A, 0xFFFF],
                                         [0x0002, 0x8000, 0x369C, 0xFFFF])),
    # shifts take S0's low 4 bits per half: v2 lo 1,1,2,0xf; hi 2,1,3,1
    ("v_pk_lshlrev_b16 v0, v2, v1", _pack([0xFFFE, 0xFFFE, 0x0014, 0x8000],
                                          [0x0004, 0x0000, 0x91A0, 0xFFFE])),
    ("v_pk_lshrrev_b16 v0, v2, v1", _pack([0x7FFF, 0x3FFF, 0x0001, 0x0000],
                                          [0x0000, 0x4000, 0x0246, 0x7FFF])),
    ("v_pk_ashrrev_i16 v0, v2, v1", _pack([0xFFFF, 0x3FFF, 0x0001, 0x0000],
                                          [0x0000, 0xC000, 0x0246, 0xFFFF])),
    ("v_pk_max_i16 v0, v1, v2", _pack([0x0001, 0x7FFF, 0x0005, 0x0001],
                                      [0x0002, 0x0001, 0x1234, 0x0001])),
    ("v_pk_min_u16 v0, v1, v2", _pack([0x0001, 0x0001, 0x0002, 0x0001],
                                      [0x0001, 0x0001, 0x0003, 0x0001])),
    # lo: 0xffff * 1 + 0x100, 0x7fff * 1 + 0, 5 * 2 + 7, 1 * 0xffff + 0xffff
    ("v_pk_mad_u16 v0, v1, v2, v3", _pack([0x00FF, 0x7FFF, 0x0011, 0xFFFE],
                                          [0x0012, 0x8000, 0x36A1, 0xFFFE])),
])
def test_packed_results_by_hand(line: str, want: list[int]) -> None:
    w = _wave()
    run_steps(assemble([line]), w)
    assert w.V[:4, 0].tolist() == want
    assert w.vdef[:, 0].all()


def test_a_half_read_from_an_undefined_half_is_undefined_alone() -> None:
    """v1's high half undefined: the low result (v1.lo + v2.lo) stays defined, the high
    one not (defined bits 0x0000ffff)."""
    w = _wave()
    w.vdef[:, 1] = False
    w.vpart[1] = {lane: 0x0000_FFFF for lane in range(64)}
    run_steps(assemble(["v_pk_add_u16 v0, v1, v2"]), w)
    assert defined_bits(w, 0).tolist() == [0x0000_FFFF] * 64


@pytest.mark.parametrize("line", [
    "v_pk_mul_lo_u16 v0, v1, v2 clamp",  # saturation of a product: not modelled
    "v_pk_add_u16 v0, v1, v2 neg_lo:[1,0]",  # NEG bits on integers
    # the high dword of a constant other than 0 in a packed f32 operation
    "v_pk_add_f32 v[0:1], v[2:3], 2.0",
])
def test_what_is_not_modelled_is_unsupported(line: str) -> None:
    with pytest.raises(SimStop) as stop:
        run_steps(assemble([line]), _wave())
    assert stop.value.fault.kind is FaultKind.UNSUPPORTED
