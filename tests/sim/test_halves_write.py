"""`halves.write_bits`, the one writer of part of a VGPR (GFX11 true16 `v0.l`/`v0.h`,
D16 loads completing), against values worked out by hand: the bits outside the mask keep
value and state, lanes outside `where` keep everything, and a lane's definedness is
whole (`vdef`) or listed bit by bit (`vpart`). The first two tests take the path for
defined bits into lanes defined as a whole; the others must leave it."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.state.halves import HIGH, LOW, write_bits
from rgpu_fuzz.sim.state.wave import Wave

U32 = np.uint32


def _wave() -> Wave:
    w = Wave(4, 0, 0)
    w.V[:, 3] = U32(0x1234_5678)
    w.vdef[:, 3] = True
    return w


def test_low_half_into_a_defined_register() -> None:
    w = _wave()
    write_bits(w, 3, np.full(4, 0xABCD, U32), np.ones(4, bool), LOW, None)
    assert w.V[:, 3].tolist() == [0x1234_ABCD] * 4
    assert w.vdef[:, 3].all() and not w.vpart


def test_high_half_for_the_lanes_in_exec_only() -> None:
    w = _wave()
    where = np.array([True, False, True, False])
    write_bits(w, 3, np.full(4, 0xBEEF_0000, U32), np.full(4, 0xFFFF_FFFF, U32), HIGH, where)
    assert w.V[:, 3].tolist() == [0xBEEF_5678, 0x1234_5678, 0xBEEF_5678, 0x1234_5678]
    assert w.vdef[:, 3].all() and not w.vpart


def test_defined_half_into_an_undefined_lane_is_listed_bit_by_bit() -> None:
    w = _wave()
    w.vdef[2, 3] = False                     # lane 2: nothing defined
    write_bits(w, 3, np.full(4, 0x0000_00AA, U32), np.ones(4, bool), LOW, None)
    assert w.V[:, 3].tolist() == [0x1234_00AA] * 4
    assert w.vdef[:, 3].tolist() == [True, True, False, True]
    assert w.vpart == {3: {2: LOW}}


def test_undefined_half_makes_defined_lanes_partly_defined() -> None:
    w = _wave()
    defined = np.array([True, False, True, True])  # lane 1's new half is undefined
    write_bits(w, 3, np.full(4, 0xCAFE_0000, U32), defined, HIGH, None)
    assert w.V[:, 3].tolist() == [0xCAFE_5678] * 4
    assert w.vdef[:, 3].tolist() == [True, False, True, True]
    assert w.vpart == {3: {1: LOW}}


def test_completing_the_other_half_of_a_listed_lane_makes_it_whole() -> None:
    w = _wave()
    w.vdef[0, 3] = False
    w.vpart[3] = {0: LOW}                    # lane 0: low half defined only
    write_bits(w, 3, np.full(4, 0x7777_0000, U32), np.ones(4, bool), HIGH, None)
    assert w.V[:, 3].tolist() == [0x7777_5678] * 4
    assert w.vdef[:, 3].all() and not w.vpart


def test_a_dword_load_then_a_d16_hi_load_in_flight_both_land() -> None:
    """`global_load_b32 v0` (1) then `scratch_load_d16_hi_u8 v0` (1 into bits 31:16) before
    one `s_waitcnt vmcnt(0)`: loads complete in issue order, so v0 = 0x00010001 (by hand:
    the dword, then its high half replaced). The dword load's low half used to be dropped
    as overwritten (gfx1100 O0 campaign bucket c232097e70: `1 as i8 - 1`
    gave -1)."""
    from rgpu_fuzz.sim.bound.inflight import issue_vector_load, wait

    w = Wave(4, 0, 0)
    ones = np.ones((4, 1), bool)
    issue_vector_load(w, 0, np.full((4, 1), 0x0000_0001, np.uint32), ones, vm=True,
                      lgkm=False)
    issue_vector_load(w, 0, np.full((4, 1), 0x0001_0000, np.uint32), ones, vm=True,
                      lgkm=False, wmask=HIGH)
    wait(w, 0, 0)
    assert w.V[:, 0].tolist() == [0x0001_0001] * 4
    assert w.vdef[:, 0].all() and not w.pend_v


def _load(w: Wave, exec_mask: int, col: int, values: list[int], wmask: int = 0xFFFF_FFFF
          ) -> None:
    """Issue a vector load of `values` (one dword column each, the same in every lane)
    under EXEC `exec_mask`, as a GLOBAL load step parks it."""
    from rgpu_fuzz.sim.bound.inflight import issue_vector_load

    w.set_exec(exec_mask)
    data = np.array([values] * w.lanes, np.uint32)
    issue_vector_load(w, col, data, np.ones(data.shape, bool), vm=True, lgkm=False,
                      wmask=wmask)


def test_a_load_for_other_lanes_keeps_an_older_load_in_flight() -> None:
    """gfx1100 O3 (bucket b08b6336a9, `rustc-amdgpu:gfx1100:O2` too): lane 1 runs
    `v_mov_b16 v10.h, 0` and `global_load_d16_u8 v10` (a byte, 1), then lane 0
    `global_load_b64 v[10:11]` (0), and one `s_waitcnt vmcnt(0)` covers both. Each load
    writes the lanes of its EXEC only (RDNA3 ISA, vector memory: inactive lanes are not
    written), so by hand lane 1 has v10 = 0x00000001 and lane 0 v[10:11] = 0. The byte
    used to be dropped as superseded by the newer load to the same VGPR, giving 0."""
    from rgpu_fuzz.sim.bound.inflight import wait

    w = Wave(4, 0, 0)
    w.V[:, 10], w.vdef[:, 10] = U32(0xDEAD_0000), True   # lane 1: v10.h = 0 below
    w.V[1, 10] = 0
    _load(w, 0b10, 10, [0x0000_0001], LOW)
    _load(w, 0b01, 10, [0, 0])
    wait(w, 0, 0)
    assert w.V[:2, 10].tolist() == [0, 0x0000_0001]
    assert w.V[0, 11] == 0 and w.vdef[:2, 10].all() and w.vdef[0, 11]
    assert not w.pend_v


def test_two_pair_loads_under_disjoint_exec_both_land_in_both_registers() -> None:
    """`global_load_b64 v[0:1]` for lane 0 (7, 8), then for lane 1 (5, 6), one wait: by
    hand lane 0 has (7, 8) and lane 1 (5, 6) in v0 and v1. The older load is kept for its
    lanes in both of its columns, not only the first."""
    from rgpu_fuzz.sim.bound.inflight import wait

    w = Wave(4, 0, 0)
    _load(w, 0b01, 0, [7, 8])
    _load(w, 0b10, 0, [5, 6])
    wait(w, 0, 0)
    assert w.V[:2, 0].tolist() == [7, 5] and w.V[:2, 1].tolist() == [8, 6]
    assert w.vdef[:2, :2].all() and not w.vdef[2:, :2].any()


def test_a_load_kept_in_flight_survives_a_third_load() -> None:
    """Lane 1 loads 1, lane 0 loads 2, lane 0 loads 3 into v0, one wait: the third covers
    the second, not the first, so by hand lane 0 = 3 and lane 1 = 1."""
    from rgpu_fuzz.sim.bound.inflight import wait

    w = Wave(4, 0, 0)
    _load(w, 0b10, 0, [1])
    _load(w, 0b01, 0, [2])
    _load(w, 0b01, 0, [3])
    wait(w, 0, 0)
    assert w.V[:2, 0].tolist() == [3, 1] and w.vdef[:2, 0].all()
