"""RDNA3 relative VGPR moves (`rgpu_fuzz.sim.bound.movrel`).

Expected values are worked out by hand from the RDNA3 ISA's pseudocode ("VOP1
Instructions", the same text as AMD's ISA XML):
- V_MOVRELD_B32:  addr = DST + M0.u32;  VGPR[lane][addr] = S0.b32
- V_MOVRELS_B32:  addr = SRC0 + M0.u32; D0.b32 = VGPR[lane][addr]
- V_MOVRELSD_B32: VGPR[lane][DST + M0.u32] = VGPR[lane][SRC0 + M0.u32]
- V_MOVRELSD_2_B32: VGPR[lane][DST + M0[25:16]] = VGPR[lane][SRC0 + M0[9:0]]
and, for the kernel, from what the IR computes (`data/gpr_idx.ll`). The wave starts with
v<c> = c * 1000 + lane in every lane, so a value names the register it came from.
Before this module a gfx1100 kernel indexing a local array at a uniform run-time index
(O1..O3: `tests/semantics/cases/local_array_uniform_index.toml`) was
`unsupported-instruction:v_movrels_b32_e32`.

llvm-mc-22 (`-mcpu=gfx1100 --show-encoding`) encodes the hand-written sequences.
"""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.state.wave import M0, Wave
from tests.sim.asm_steps import assemble, run_steps

FULL = 0xFFFF_FFFF
LANES = 32
ENV32 = Env(lanes=LANES, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
            waitcnt=lambda simm: ((simm >> 10) & 0x3F, (simm >> 4) & 0x3F), true16=True,
            stores_in_vmcnt=False)
LANE = np.arange(LANES, dtype=np.uint32)


def _wave(m0: int, m0_def: int = FULL) -> Wave:
    w = Wave(LANES, 0, 0)
    w.vdef[:, :] = True
    for col in range(256):
        w.V[:, col] = col * 1000 + LANE
    w.S[M0], w.sdef[M0] = m0, m0_def
    w.S[3], w.sdef[3] = 0xDEAD_BEEF, FULL
    return w


def _run(lines: list[str], w: Wave) -> None:
    run_steps(assemble(lines, "gfx1100"), w, ENV32)


def test_movrels_reads_the_source_plus_m0() -> None:
    w = _wave(m0=5)
    _run(["v_movrels_b32_e32 v2, v9"], w)
    # v2 = v[9 + 5] = v14 = 14000 + lane; v9 and v14 unchanged
    assert w.V[:, 2].tolist() == (14000 + LANE).tolist()
    assert w.V[:, 9].tolist() == (9000 + LANE).tolist()


def test_movreld_writes_the_destination_plus_m0_from_any_source() -> None:
    w = _wave(m0=3)
    _run(["v_movreld_b32_e32 v9, 7", "v_movreld_b32_e64 v20, s3"], w)
    # v[9 + 3] = v12 = 7; v[20 + 3] = v23 = s3; v9, v20 keep their values
    assert w.V[:, 12].tolist() == [7] * LANES
    assert w.V[:, 23].tolist() == [0xDEAD_BEEF] * LANES
    assert w.V[:, 9].tolist() == (9000 + LANE).tolist()
    assert w.V[:, 20].tolist() == (20000 + LANE).tolist()


def test_movrelsd_moves_both_by_m0_and_movrelsd_2_by_its_two_fields() -> None:
    w = _wave(m0=2)
    _run(["v_movrelsd_b32 v1, v10"], w)
    # v[1 + 2] = v3 = v[10 + 2] = v12
    assert w.V[:, 3].tolist() == (12000 + LANE).tolist()
    # M0 = 0x0004_0006: source offset M0[9:0] = 6, destination offset M0[25:16] = 4;
    # bits 15:10 and 31:26 (here 0xFC00_FC00 set too) are not part of either
    w = _wave(m0=0xFC04_FC06)
    _run(["v_movrelsd_2_b32 v1, v10"], w)
    assert w.V[:, 5].tolist() == (16000 + LANE).tolist()  # v[1 + 4] = v[10 + 6]
    assert w.V[:, 3].tolist() == (3000 + LANE).tolist()


def test_lanes_outside_exec_keep_their_value() -> None:
    w = _wave(m0=1)
    w.set_exec(0x0000_00FF)  # lanes 0..7
    _run(["v_movrels_b32_e32 v2, v9"], w)
    assert w.V[:8, 2].tolist() == (10000 + LANE[:8]).tolist()
    assert w.V[8:, 2].tolist() == (2000 + LANE[8:]).tolist()


def test_definedness_moves_with_the_value() -> None:
    w = _wave(m0=4)
    w.vdef[5:9, 13] = False  # v[9 + 4] undefined in lanes 5..8: a copy, not an observation
    _run(["v_movrels_b32_e32 v2, v9"], w)
    assert w.vdef[:, 2].tolist() == [not 5 <= lane <= 8 for lane in range(LANES)]


@pytest.mark.parametrize(("line", "m0_def"), [
    ("v_movrels_b32_e32 v2, v9", FULL & ~(1 << 31)),  # every M0 bit is part of the index
    ("v_movreld_b32_e32 v9, 7", 0),
    ("v_movrelsd_2_b32 v1, v2", FULL & ~(1 << 20)),  # M0[20] is in the destination field
])
def test_an_undefined_index_bit_is_an_uninit_read(line: str, m0_def: int) -> None:
    w = _wave(m0=1, m0_def=m0_def)
    with pytest.raises(SimStop) as e:
        _run([line], w)
    assert e.value.fault.kind is FaultKind.UNINIT_READ
    assert "m0" in e.value.fault.detail


def test_undefined_bits_outside_movrelsd_2_fields_are_not_read() -> None:
    w = _wave(m0=0x0001_0002, m0_def=0x03FF_03FF)  # only M0[25:16] and [9:0] defined
    _run(["v_movrelsd_2_b32 v1, v2"], w)
    assert w.V[:, 2].tolist() == (4000 + LANE).tolist()  # v[1 + 1] = v[2 + 2]


@pytest.mark.parametrize(("line", "m0"), [
    ("v_movrels_b32_e32 v2, v9", 247),  # v[9 + 247] = v256
    ("v_movreld_b32_e32 v200, 7", 0x1_0000_0000 - 200),  # 200 + M0 = 2^32: not wrapped to v0
])
def test_an_index_past_v255_is_an_oob_access(line: str, m0: int) -> None:
    """No well-defined kernel indexes past its vector; what hardware does there (the
    pseudocode's 32-bit `addr` would wrap) is not documented, so the simulator reports it
    (docs/simulator.md §12, as for GFX9 indexing)."""
    w = _wave(m0=m0 & FULL)
    with pytest.raises(SimStop) as e:
        _run([line], w)
    assert e.value.fault.kind is FaultKind.OOB_ACCESS


def test_v255_is_the_last_register_reached() -> None:
    w = _wave(m0=246)
    _run(["v_movrels_b32_e32 v2, v9"], w)  # v[9 + 246] = v255
    assert w.V[:, 2].tolist() == (255000 + LANE).tolist()


# The IR kernel (`data/gpr_idx.ll`) on gfx1100, where LLVM indexes with v_movreld/v_movrels,
# runs in tests/sim/test_gpr_idx.py beside the GFX9 form of the same kernel.
