"""The fused runs' definedness shortcut (`fused.code.RunCode`: `_fd`, `known`, `active`) and
the pooled register files (`rgpu_fuzz.sim.state.regfile`). Where a segment's VGPR inputs are
defined in every lane, a run computes no definedness: each case here sits on an edge of
that shortcut (a destination never written, a partial EXEC widened later in the run, an
input undefined in one lane) and checks that the run leaves exactly the bound steps' state
(`test_fuse.both`) and the values and defined lanes worked out by hand: V_ADD_U32 writes
lanes in EXEC only (CDNA3 ISA §7), a result is defined where all its inputs are
(memcheck's rule, `operands` docstring)."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.sim.state import regfile
from rgpu_fuzz.sim.state.wave import EXEC, VCC, Wave
from tests.sim.test_fuse import LANES, both, inst, k, s, v, wave


def _defined_inputs(w: Wave) -> None:
    w.V[:, 0] = [1, 2, 3, 4]
    w.V[:, 1] = [10, 20, 30, 40]
    w.vdef[:, 0:2] = True


def test_a_destination_never_written_is_defined_in_active_lanes_only() -> None:
    w = wave(0b0101)
    _defined_inputs(w)
    _, f, _, _ = both([inst("V_ADD_U32", v(5), v(0), v(1)),
                       inst("V_MOV_B32", v(6), v(5))], w)
    assert f.V[:, 5].tolist() == [11, 0, 33, 0]
    assert f.vdef[:, 5].tolist() == [True, False, True, False]
    assert f.vdef[:, 6].tolist() == [True, False, True, False]


def test_a_destination_defined_everywhere_stays_so_under_partial_exec() -> None:
    w = wave(0b0110)
    _defined_inputs(w)
    w.V[:, 2] = 7
    w.vdef[:, 2] = True
    _, f, _, _ = both([inst("V_ADD_U32", v(2), v(0), v(1))], w)
    assert f.V[:, 2].tolist() == [7, 22, 33, 7]
    assert f.vdef[:, 2].tolist() == [True] * LANES


def test_exec_widened_inside_the_run_exposes_lanes_written_under_the_old_exec() -> None:
    """v5 is written under EXEC 0b0011; after `s_mov_b64 exec, -1` lanes 2 and 3 of v5 were
    never written: v6 = v5 + v0 is undefined there, and so are VCC bits 2 and 3."""
    w = wave(0b0011)
    _defined_inputs(w)
    run = [inst("V_MOV_B32", v(5), v(0)),
           inst("S_MOV_B64", s(EXEC, 2), k(-1)),
           inst("V_ADD_U32", v(6), v(5), v(0)),
           inst("V_CMP_EQ_U32", s(VCC, 2), v(6), v(1))]
    _, f, _, _ = both(run, w)
    assert f.V[:, 6].tolist() == [2, 4, 3, 4]
    assert f.vdef[:, 6].tolist() == [True, True, False, False]
    defined = f.sdef[VCC] | f.sdef[VCC + 1] << 32
    assert defined & 0b1111 == 0b0011


def test_an_input_undefined_in_one_lane_takes_the_per_lane_rule() -> None:
    w = wave()
    _defined_inputs(w)
    w.vdef[2, 1] = False
    _, f, _, _ = both([inst("V_ADD_U32", v(2), v(0), v(1)),
                       inst("V_ADD_U32", v(3), v(2), v(0))], w)
    assert f.V[:, 3].tolist() == [12, 24, 36, 48]
    assert f.vdef[:, 3].tolist() == [True, True, False, True]


def test_a_pooled_register_file_comes_back_zeroed_with_its_views_aliased() -> None:
    V, D, views = regfile.take(LANES)
    col = views[regfile.key(regfile.KIND[np.float64], 4)]
    col[...] = 1.5
    views[regfile.key(regfile.DEFINED, 4)][...] = True
    assert V[:, 4:6].view(np.float64)[:, 0].tolist() == [1.5] * LANES
    regfile.give((V, D, views))
    V2, D2, views2 = regfile.take(LANES)
    assert V2 is V and views2 is views
    assert not V2.any() and not D2.any()
    views2[regfile.key(regfile.KIND[np.uint32], 7)][...] = 9
    assert V2[:, 7].tolist() == [9] * LANES
    regfile.give((V2, D2, views2))
