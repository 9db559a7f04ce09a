"""`halves.write_bits` under EXEC-shaped lane vectors (one run of lanes, read as a slice,
and scattered lanes) and with the whole dword written (`FULL`: the defined bits are the
new data's alone, nothing of the old state kept), against values worked out by hand: the
bits outside the mask keep value and state, lanes outside `where` keep everything, and a
lane's definedness is whole (`vdef`) or listed bit by bit (`vpart`)."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.state.halves import FULL, HIGH, LOW, write_bits
from rgpu_fuzz.sim.state.wave import Wave, lanes_of

U32 = np.uint32
RUN = lanes_of(0b0011_1100, 8)       # lanes 2-5, as EXEC's cached read-only vector
SCATTERED = lanes_of(0b1010_0101, 8)  # lanes 0, 2, 5, 7


def _wave() -> Wave:
    w = Wave(8, 0, 0)
    w.V[:, 3] = U32(0x1234_5678)
    w.vdef[:, 3] = True
    return w


def test_an_undefined_lane_outside_the_run_leaves_the_write_whole() -> None:
    w = _wave()
    w.vdef[0, 3] = w.vdef[7, 3] = False        # outside lanes 2-5
    write_bits(w, 3, np.full(8, 0xABCD, U32), np.ones(8, bool), LOW, RUN)
    assert w.V[:, 3].tolist() == [0x1234_5678] * 2 + [0x1234_ABCD] * 4 + [0x1234_5678] * 2
    assert w.vdef[:, 3].tolist() == [False] + [True] * 6 + [False]
    assert not w.vpart


def test_an_undefined_lane_inside_the_run_gets_the_written_half_listed() -> None:
    for where in (RUN, SCATTERED):
        w = _wave()
        w.vdef[5, 3] = False                   # lane 5 is in both (the run's last)
        write_bits(w, 3, np.full(8, 0xBEEF_0000, U32), np.ones(8, bool), HIGH, where)
        assert w.vpart == {3: {5: HIGH}}
        assert not w.vdef[5, 3]
        assert [int(x) for x in w.V[:, 3]] == \
            [0xBEEF_5678 if where[ln] else 0x1234_5678 for ln in range(8)]


def test_a_whole_dword_write_takes_the_new_bits_alone() -> None:
    # lane 3 was listed with its low half; written with bits 0x00FF_FF00 it has exactly
    # those; lane 4 written all defined leaves the list; lane 6 (outside) keeps its entry
    w = _wave()
    w.vdef[[3, 6], 3] = False
    w.vpart[3] = {3: LOW, 6: LOW}
    bits = np.full(8, FULL, U32)
    bits[3] = 0x00FF_FF00
    write_bits(w, 3, np.arange(8, dtype=U32), bits, FULL, RUN)
    assert w.vpart == {3: {3: 0x00FF_FF00, 6: LOW}}
    assert w.vdef[:, 3].tolist() == [True] * 3 + [False] + [True] * 2 + [False, True]
    assert w.V[:, 3].tolist() == [0x1234_5678] * 2 + [2, 3, 4, 5] + [0x1234_5678] * 2


def test_a_whole_dword_write_of_one_value_reaches_every_lane_in_where() -> None:
    w = _wave()
    w.vdef[5, 3] = False
    write_bits(w, 3, U32(0xFEED_F00D), np.ones(8, bool), FULL, SCATTERED)
    assert [int(x) for x in w.V[:, 3]] == \
        [0xFEED_F00D if SCATTERED[ln] else 0x1234_5678 for ln in range(8)]
    assert w.vdef[:, 3].all() and not w.vpart
    write_bits(w, 3, U32(7), np.zeros(8, bool), FULL, None)
    assert w.V[:, 3].tolist() == [7] * 8 and not w.vdef[:, 3].any() and not w.vpart
