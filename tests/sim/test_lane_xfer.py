"""Lane moves with lane maps of their own (`rgpu_fuzz/sim/bound/lane_xfer.py`), `v_mbcnt_*`
and whole-wave mode's EXEC handling, on the bound steps.

Expected values are worked by hand from AMD's ISA pseudocode (the ISA XML, as quoted in
`bound/lane_xfer.py`'s docstring: V_PERMLANE16/X16_B32, DS_BPERMUTE_B32, DS_PERMUTE_B32,
DS_SWIZZLE_B32, V_MBCNT_LO/HI_U32_B32) and LLVM's `swizzle(...)` encodings, never from the
simulator. v1 holds 100 + lane, v0 holds 7. Instructions are encoded by llvm-mc-22."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import SimStop
from rgpu_fuzz.sim.state.halves import LOW
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, run_steps
from tests.sim.test_dpp import ENV32


def _wave(lanes: int = 64, exec_mask: int | None = None) -> Wave:
    w = Wave(lanes, 0, 0)
    w.V[:, 1] = 100 + np.arange(lanes)
    w.V[:, 0] = 7
    w.vdef[:, :4] = True
    if exec_mask is not None:
        w.set_exec(exec_mask)
    return w


def _run(lines: list[str], w: Wave, cpu: str = "gfx942") -> Wave:
    run_steps(assemble(lines, cpu), w, ENV32 if w.lanes == 32 else ENV)
    return w


def _sgprs(w: Wave, **values: int) -> None:
    for name, v in values.items():
        i = int(name[1:])
        w.S[i], w.sdef[i] = v, 0xFFFF_FFFF


def test_permlane16_reverses_each_row() -> None:
    """lanesel = {S2, S1} = {0x01234567, 0x89abcdef}: nibble i selects lane i's source, so
    lane i reads 15 - i of its own row (nibble 0 of S1 is 0xf, ..., nibble 7 of S2 is 0)."""
    w = _wave(32)
    _sgprs(w, s0=0x89AB_CDEF, s1=0x0123_4567)
    _run(["v_permlane16_b32 v0, v1, s0, s1"], w, "gfx1100")
    assert w.V[:, 0].tolist() == [100 + (ln & ~15) + 15 - (ln & 15) for ln in range(32)]


def test_permlanex16_reads_the_other_row() -> None:
    """permlanex16 with lanesel = identity ({0xfedcba98, 0x76543210}): lane i of row 0 reads
    lane i of row 1 and back (altrow = {row[1], ~row[0]})."""
    w = _wave(32)
    _sgprs(w, s0=0x7654_3210, s1=0xFEDC_BA98)
    _run(["v_permlanex16_b32 v0, v1, s0, s1"], w, "gfx1100")
    assert w.V[:, 0].tolist() == [100 + (ln ^ 16) for ln in range(32)]


def test_permlanex16_fi_and_bound_ctrl() -> None:
    """Lane 17 disabled; identity lanesel, so lane 1 reads lane 17. op_sel:[0,0] (FI = 0,
    BOUND_CTRL = 0): lane 1 is not written (7); op_sel:[0,1]: 0; op_sel:[1,0]: 117."""
    mask = 0xFFFF_FFFF & ~(1 << 17)
    got = []
    for sel in ("op_sel:[0,0]", "op_sel:[0,1]", "op_sel:[1,0]"):
        w = _wave(32, mask)
        _sgprs(w, s0=0x7654_3210, s1=0xFEDC_BA98)
        _run([f"v_permlanex16_b32 v0, v1, s0, s1 {sel}"], w, "gfx1100")
        got.append(int(w.V[1, 0]))
        assert w.V[17, 0] == 7 and w.V[0, 0] == 116
    assert got == [7, 0, 117]


def test_permlane_lane_select_undefined_is_uninit() -> None:
    w = _wave(32)
    _sgprs(w, s0=0)
    w.sdef[1] = 0
    with pytest.raises(SimStop) as stop:
        _run(["v_permlane16_b32 v0, v1, s0, s1"], w, "gfx1100")
    assert stop.value.fault.signature == "sim-uninit-read"


def test_ds_bpermute_pulls_and_waits_for_lgkmcnt() -> None:
    """v2 = 4·((l + 5) mod 64): lane l reads v1 of lane (l + 5) mod 64 (ADDR / 4 mod 64),
    written at `s_waitcnt lgkmcnt(0)`; reading v0 before it is a hazard."""
    w = _wave()
    w.V[:, 2] = 4 * ((np.arange(64) + 5) % 64)
    _run(["ds_bpermute_b32 v0, v2, v1"], w)
    assert w.V[0, 0] == 7                                    # not written yet
    with pytest.raises(SimStop) as stop:
        _run(["v_mov_b32_e32 v3, v0"], w)
    assert stop.value.fault.signature == "sim-waitcnt-hazard"
    _run(["s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:, 0].tolist() == [100 + (ln + 5) % 64 for ln in range(64)]


def test_ds_bpermute_offset_and_disabled_source() -> None:
    """offset:8 adds two lanes; lane 3 disabled: lane 0 (reading lane (0 + 8 + 4)/4 = 3)
    gets 0, lane 3 is not written."""
    w = _wave(64, ((1 << 64) - 1) & ~(1 << 3))
    w.V[:, 2] = 4
    _run(["ds_bpermute_b32 v0, v2, v1 offset:8", "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:5, 0].tolist() == [0, 0, 0, 7, 0]
    w = _wave()
    w.V[:, 2] = 4
    _run(["ds_bpermute_b32 v0, v2, v1 offset:8", "s_waitcnt lgkmcnt(0)"], w)
    assert (w.V[:, 0] == 103).all()


def test_lane_moves_keep_partial_definedness() -> None:
    """v1 of lane 5 has only its low half defined (a D16 load or a GFX10+ 16-bit result
    into an undefined register leaves it so: `Wave.vpart`). ds_bpermute (lane l reads lane
    l + 5) and v_permlanex16 (lane 21 reads lane 5 under the identity lanesel) move it with
    the same bits defined; lanes that read whole lanes stay whole."""
    w = _wave()
    w.vdef[5, 1] = False
    w.vpart[1] = {5: LOW}
    w.V[:, 2] = 4 * ((np.arange(64) + 5) % 64)
    _run(["ds_bpermute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    assert not w.vdef[0, 0] and w.vpart[0] == {0: LOW} and w.vdef[1:, 0].all()
    w = _wave(32)
    w.vdef[5, 1] = False
    w.vpart[1] = {5: LOW}
    _sgprs(w, s0=0x7654_3210, s1=0xFEDC_BA98)
    _run(["v_permlanex16_b32 v0, v1, s0, s1"], w, "gfx1100")
    assert not w.vdef[21, 0] and w.vpart[0] == {21: LOW}
    assert int(w.V[21, 0]) == 105 and w.vdef[:21, 0].all()


def test_ds_permute_pushes_highest_sender_wins() -> None:
    """v2 = 4·(63 - l): lane l sends v1 to lane 63 - l, so lane l gets 100 + 63 - l. With
    every address 0 lane 0 gets the highest enabled sender's value (163) and the other lanes
    0 (no sender: tmp stays 0)."""
    w = _wave()
    w.V[:, 2] = 4 * (63 - np.arange(64))
    _run(["ds_permute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:, 0].tolist() == [163 - ln for ln in range(64)]
    w = _wave()
    w.V[:, 2] = 0
    _run(["ds_permute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:, 0].tolist() == [163] + [0] * 63


def test_ds_permute_address_undefined_on_an_active_lane_is_uninit() -> None:
    w = _wave()
    w.vdef[9, 2] = False
    with pytest.raises(SimStop) as stop:
        _run(["ds_bpermute_b32 v0, v2, v1"], w)
    assert stop.value.fault.signature == "sim-uninit-read"


@pytest.mark.parametrize("cpu", ["gfx942", "gfx1100"])
@pytest.mark.parametrize(("swizzle", "rule"), [
    ("swizzle(QUAD_PERM,1,0,3,2)", lambda ln: ln ^ 1),       # offset 0x80b1: QDMode
    ("swizzle(SWAP,16)", lambda ln: ln ^ 16),                  # 0x401f: xor_mask 16
    ("swizzle(REVERSE,8)", lambda ln: ln ^ 7),                 # 0x1c1f: xor_mask 7
    ("swizzle(BROADCAST,8,3)", lambda ln: (ln & ~7) | 3),      # 0x0078: and 0x18, or 3
])
def test_ds_swizzle(cpu: str, swizzle: str, rule) -> None:  # type: ignore[no-untyped-def]
    lanes = 32 if cpu == "gfx1100" else 64
    w = _wave(lanes)
    _run([f"ds_swizzle_b32 v0, v1 offset:{swizzle}", "s_waitcnt lgkmcnt(0)"], w, cpu)
    assert w.V[:, 0].tolist() == [100 + rule(ln) for ln in range(lanes)]


def test_ds_swizzle_disabled_source_reads_zero() -> None:
    w = _wave(64, ((1 << 64) - 1) & ~(1 << 2))
    _run(["ds_swizzle_b32 v0, v1 offset:swizzle(QUAD_PERM,1,0,3,2)",
          "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:4, 0].tolist() == [101, 100, 7, 0]


def test_ds_swizzle_fft_is_unsupported() -> None:
    w = _wave()
    with pytest.raises(SimStop) as stop:
        _run(["ds_swizzle_b32 v0, v1 offset:swizzle(FFT,3)"], w)
    assert stop.value.fault.signature == "unsupported-instruction:ds_swizzle_b32"


def test_mbcnt_counts_lanes_below() -> None:
    """v_mbcnt_lo(0xF0F0F0F0, 0): lane l < 32 counts the mask's set bits below l (lane 10:
    bits 4-7 → 4; lane 31: 4·4 - 1 (bit 31 itself is not below) = 15; lane 40: all 16).
    v_mbcnt_hi(0x1, that): lanes above 32 add bit 32 → lane 40: 17; lane 32: 16 (bit 32 not
    below it)."""
    w = _wave()
    _sgprs(w, s4=0xF0F0_F0F0, s5=0x1)
    _run(["v_mbcnt_lo_u32_b32 v3, s4, 0", "v_mbcnt_hi_u32_b32 v3, s5, v3"], w)
    got = w.V[:, 3]
    assert [int(got[ln]) for ln in (0, 4, 5, 10, 31, 32, 33, 40, 63)] == \
        [0, 0, 1, 4, 15, 16, 17, 17, 17]


def test_whole_wave_mode_and_set_inactive() -> None:
    """`s_or_saveexec_b64 s[4:5], -1` (whole wave; s[4:5] = the old EXEC), LLVM's
    set_inactive `v_cndmask_b32_e64 v1, 0, v4, s[4:5]` (the identity 0 in lanes the old EXEC
    excludes), a DPP scan step over the whole wave, `s_mov_b64 exec, s[4:5]` back. EXEC =
    lanes 0-39 at the start; v4 = 1 in lanes 0-39 and undefined past them (no work-item).
    Lane 40..63 of v1 get 0 (defined), so the row_bcast:31 step's lane 63 is the wave's
    sum of the row sums computed by hand: after row_shr:1/2/4/8 (bound_ctrl zero) lane 16r+15
    holds row r's count, 16, 16, 8, 0; row_bcast:15 (row_mask 0xa) adds lane 15 to row 1 and
    lane 47 to row 3; row_bcast:31 (row_mask 0xc) adds lane 31 to rows 2-3: 8 + 0 + 32 = 40."""
    w = _wave(64, (1 << 40) - 1)
    w.V[:40, 4] = 1
    w.vdef[:, 4] = False
    w.vdef[:40, 4] = True
    _run(["s_or_saveexec_b64 s[4:5], -1",
          "v_cndmask_b32_e64 v1, 0, v4, s[4:5]",
          "v_add_u32_dpp v1, v1, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0",
          "v_add_u32_dpp v1, v1, v1 row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:0",
          "v_add_u32_dpp v1, v1, v1 row_shr:4 row_mask:0xf bank_mask:0xf bound_ctrl:0",
          "v_add_u32_dpp v1, v1, v1 row_shr:8 row_mask:0xf bank_mask:0xf bound_ctrl:0",
          "v_add_u32_dpp v1, v1, v1 row_bcast:15 row_mask:0xa bank_mask:0xf",
          "v_add_u32_dpp v1, v1, v1 row_bcast:31 row_mask:0xc bank_mask:0xf",
          "v_readlane_b32 s6, v1, 63",
          "s_mov_b64 exec, s[4:5]"], w)
    assert w.S[6] == 40 and w.sdef[6] == 0xFFFF_FFFF
    assert w.exec_bits == (1 << 40) - 1
    assert w.V[:16, 1].tolist() == list(range(1, 17))       # row 0: the inclusive scan
    assert w.vdef[:, 1].all()


def test_permlane64_swaps_halves_in_wave64_only() -> None:
    """V_PERMLANE64_B32 (RDNA3 pseudocode): wave64 lane l gets v1 of lane l ^ 32, also from a
    disabled lane (lane 40 disabled: lane 8 still reads 140; lane 40 keeps 7); wave32: a
    no-op."""
    w = _wave(64, ((1 << 64) - 1) & ~(1 << 40))
    run_steps(assemble(["v_permlane64_b32 v0, v1"], "gfx1100"), w, ENV)
    assert w.V[:, 0].tolist() == [7 if ln == 40 else 100 + (ln ^ 32) for ln in range(64)]
    w = _wave(32)
    _run(["v_permlane64_b32 v0, v1"], w, "gfx1100")
    assert (w.V[:, 0] == 7).all()
