"""A fused V_MOV_B32 of a column with partly defined lanes (`Wave.vpart`, SGPR spills)
carries those lanes' defined bits to the destination for the lanes in EXEC only, as the
bound step does (`bound.alu.bind_valu`'s copy): a VALU write changes only lanes in EXEC
(CDNA3 ISA §3.3 "EXEC mask"), and a copy keeps its source's defined bits (memcheck's rule,
`operands` docstring). Expected maps by hand."""

from __future__ import annotations

import pytest

from tests.sim.test_fuse import LANES, both, inst, v, wave

LOW = 0x0000_FFFF
HIGH = 0xFFFF_0000


@pytest.mark.parametrize(("exec_mask", "moved"), [
    (0b1111, {0: LOW, 2: HIGH}),   # full EXEC: every partly defined lane moves
    (0b0011, {0: LOW}),
    (0b0100, {2: HIGH}),
    (0b1010, {}),                  # neither partly defined lane is active
])
def test_move_copies_partly_defined_lanes_in_exec(exec_mask: int,
                                                   moved: dict[int, int]) -> None:
    w = wave(exec_mask)
    w.V[:, 0] = [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]
    w.vdef[:, 0] = [False, True, False, True]
    w.vpart[0] = {0: LOW, 2: HIGH}
    w.vpart[1] = {3: 0x1}          # v1 lane 3: kept where lane 3 is inactive
    _, f, _, _ = both([inst("V_MOV_B32", v(1), v(0))], w)
    expected = dict(moved)
    if not exec_mask & 0b1000:
        expected[3] = 0x1
    assert f.vpart.get(1, {}) == expected
    assert f.vpart[0] == {0: LOW, 2: HIGH}
    active = [bool(exec_mask >> ln & 1) for ln in range(LANES)]
    assert f.vdef[:, 1].tolist() == [a and d for a, d in
                                     zip(active, [False, True, False, True], strict=True)]
