"""RDNA (gfx1100) in wave64: the lane moves whose reach is a 32-lane half
(`rgpu_fuzz/sim/bound/lane_xfer.py`, docs/simulator.md "RDNA wave64").

Expected values are worked by hand from the RDNA3 ISA pseudocode (DS_BPERMUTE_B32,
DS_PERMUTE_B32: "destination lane is MOD 32 regardless of wave size", run once per 32-lane
half; V_PERMLANE64_B32: lane l reads lane l ^ 32; V_MBCNT_LO_U32_B32) and, for the
cross-half shuffle, from the instruction sequence `llc-22 -mcpu=gfx1100
-mattr=+wavefrontsize64` emits for `llvm.amdgcn.wave.shuffle`, never from the simulator.
v1 holds 100 + lane, v0 holds 7. Instructions are encoded by llvm-mc-22 (gfx1100; the
encodings do not depend on the wave size) and run on a 64-lane wave."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rgpu_fuzz.sim.common.fault import SimStop
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, run_steps
from tests.sim.test_dpp import ENV32

ALL = (1 << 64) - 1
ENV64 = dataclasses.replace(ENV32, lanes=64)
"""gfx1100's binding environment (s_waitcnt fields, true16) for a wave64 launch."""


def _wave(exec_mask: int = ALL) -> Wave:
    w = Wave(64, 0, 0)
    w.V[:, 1] = 100 + np.arange(64)
    w.V[:, 0] = 7
    w.vdef[:, :8] = True
    w.set_exec(exec_mask)
    return w


def _run(lines: list[str], w: Wave) -> Wave:
    run_steps(assemble(lines, "gfx1100"), w, ENV64)
    return w


def test_ds_bpermute_reaches_the_lanes_own_half() -> None:
    """v2 = 4·((l + 5) mod 64). The index is (l + 5) mod 64 mod 32 = (l + 5) mod 32, read in
    lane l's own half: lane 0 reads lane 5 (105), lane 27 lane 0 (100), lane 30 lane 3 (103,
    where GFX9's whole-wave reach gives lane 35), lane 32 lane 37 (137), lane 59 lane 32
    (132), lane 63 lane 36 (136)."""
    w = _wave()
    w.V[:, 2] = 4 * ((np.arange(64) + 5) % 64)
    _run(["ds_bpermute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    got = w.V[:, 0]
    assert [int(got[ln]) for ln in (0, 27, 30, 32, 59, 63)] == [105, 100, 103, 137, 132, 136]
    assert got.tolist() == [100 + (ln & 32) + (ln + 5) % 32 for ln in range(64)]


def test_ds_bpermute_disabled_source_in_the_upper_half() -> None:
    """Every address 32 (lane index 8); lane 40 disabled. Lower lanes read lane 8 (108); the
    upper lanes read lane 32 + 8 = 40, disabled, so 0; lane 40 itself is not written (7)."""
    w = _wave(ALL & ~(1 << 40))
    w.V[:, 2] = 32
    _run(["ds_bpermute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:32, 0].tolist() == [108] * 32
    assert w.V[32:, 0].tolist() == [0] * 8 + [7] + [0] * 23


def test_ds_permute_sends_within_the_senders_half() -> None:
    """v2 = 4·(63 - l): lane l sends to index (63 - l) mod 32 = 31 - (l mod 32) of its own
    half, so lane l gets 100 + 32·h + 31 - (l mod 32) (lane 0: 131, lane 32: 163). With every
    address 0, lane 0 gets the highest sender of the lower half (lane 31: 131), lane 32 that
    of the upper half (lane 63: 163), every other lane 0."""
    w = _wave()
    w.V[:, 2] = 4 * (63 - np.arange(64))
    _run(["ds_permute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:, 0].tolist() == [100 + (ln & 32) + 31 - (ln & 31) for ln in range(64)]
    w = _wave()
    w.V[:, 2] = 0
    _run(["ds_permute_b32 v0, v2, v1", "s_waitcnt lgkmcnt(0)"], w)
    assert w.V[:, 0].tolist() == [131] + [0] * 31 + [163] + [0] * 31


# `llc-22 -mcpu=gfx1100 -mattr=+wavefrontsize64` for `llvm.amdgcn.wave.shuffle(v1, v2)`,
# registers renamed: the own-half read, the other half's through v_permlane64 in whole-wave
# mode, and the select on bit 5 of (mbcnt_lo ^ index) (mbcnt_lo(-1, 0) is 32 in the upper
# half, so bit 5 says which half a lane is in).
SHUFFLE = [
    "v_lshlrev_b32_e32 v3, 2, v2",
    "s_or_saveexec_b64 s[4:5], -1",
    "v_permlane64_b32 v4, v1",
    "ds_bpermute_b32 v5, v3, v4",
    "s_mov_b64 exec, s[4:5]",
    "ds_bpermute_b32 v6, v3, v1",
    "v_mbcnt_lo_u32_b32 v7, -1, 0",
    "v_xor_b32_e32 v7, v7, v2",
    "v_and_b32_e32 v7, 32, v7",
    "s_waitcnt lgkmcnt(0)",
    "v_cmp_eq_u32_e32 vcc_lo, 0, v7",
    "v_cndmask_b32_e32 v0, v5, v6, vcc_lo",
]


def test_the_cross_half_shuffle_reverses_the_wave() -> None:
    """Index 63 - l. Lane 0: own read v1[31] = 131, other read v4[31] = v1[63] = 163;
    (0 ^ 63) & 32 = 32, so the other read: 163. Lane 40: own v1[32 + 23] = 155, other
    v4[55] = v1[23] = 123; (32 ^ 23) & 32 = 32: 123. Every lane: 100 + 63 - l."""
    w = _wave()
    w.V[:, 2] = 63 - np.arange(64)
    _run(SHUFFLE, w)
    assert int(w.V[40, 0]) == 123
    assert w.V[:, 0].tolist() == [163 - ln for ln in range(64)]


def test_the_cross_half_shuffle_in_a_partial_wave() -> None:
    """40 lanes (EXEC = lanes 0-39), index l - 16 mod 64 (a scan step). Lane 39 reads lane
    23: its own-half read would be lane 32 + 23 = 55, disabled; the other read, in whole-wave
    mode, v4[55] = v1[23] = 123, and (32 ^ 23) & 32 = 32 picks it. Lane 20 reads lane 4, in
    its own half: 104. Lanes 40-63 are not written (7)."""
    w = _wave((1 << 40) - 1)
    w.V[:, 2] = (np.arange(64) - 16) % 64
    _run(SHUFFLE, w)
    assert w.V[:, 0].tolist() == [100 + (ln - 16) % 64 for ln in range(40)] + [7] * 24
    assert int(w.V[39, 0]) == 123
    assert w.exec_bits == (1 << 40) - 1


# RDNA3 ISA §7.2.3.2 "Wave64 Destination Restrictions": the first pass (lanes 0-31) of a
# wave64 VALU instruction may not overwrite a scalar value the second pass (lanes 32-63)
# reads. Written in wave32 syntax (llvm-mc accepts SGPR pairs as lane masks only in wave64;
# the encodings are the same): `s2` as SDST is the mask pair s[2:3] in wave64.

def _overlap_stop(lines: list[str], w: Wave) -> str:
    with pytest.raises(SimStop) as stop:
        _run(lines, w)
    return stop.value.fault.signature


def test_a_compare_over_its_own_source_stops_when_lanes_32_up_run() -> None:
    """`v_cmp_lt_u64_e64 s[2:3], v[1:2], s[2:3]` (LLVM 22's -O0 bounds check): the first pass
    writes s2, which the second pass reads as the low dword of the 64-bit source."""
    w = _wave()
    w.S[2], w.S[3] = 40, 0
    w.sdef[2] = w.sdef[3] = 0xFFFF_FFFF
    w.V[:, 2] = 0
    assert _overlap_stop(["v_cmp_lt_u64_e64 s2, v[1:2], s[2:3]"], w) == \
        "sim-wave64-sgpr-overlap"


def test_the_same_compare_with_lanes_32_up_disabled_runs() -> None:
    """EXEC = lanes 0-31: no lane of the second pass runs, so nothing it reads matters. v1 =
    100 + l, v2 = 0 (the u64 lane value 100 + l), s[2:3] = 120: lanes 0-19 (100..119) are
    below 120, lanes 20-31 not, lanes 32-63 are disabled (mask bit 0): s2 = 0x000fffff,
    s3 = 0."""
    w = _wave((1 << 32) - 1)
    w.S[2], w.S[3] = 120, 0
    w.sdef[2] = w.sdef[3] = 0xFFFF_FFFF
    w.V[:, 2] = 0
    _run(["v_cmp_lt_u64_e64 s2, v[1:2], s[2:3]"], w)
    assert (int(w.S[2]), int(w.S[3])) == (0x000F_FFFF, 0)


def test_a_carry_in_each_pass_reads_its_own_dword_of() -> None:
    """`v_add_co_ci_u32_e64 v0, s[2:3], v1, v1, s[2:3]`: the carry-in s[2:3] is read one
    dword per pass (RDNA3 ISA §7.2.6), the dword that pass then writes, so no overlap.
    v1 = 100 + l, carry-in all ones: v0 = 2·(100 + l) + 1, no carry out (s[2:3] = 0)."""
    w = _wave()
    w.S[2], w.S[3] = 0xFFFF_FFFF, 0xFFFF_FFFF
    w.sdef[2] = w.sdef[3] = 0xFFFF_FFFF
    _run(["v_add_co_ci_u32_e64 v0, s2, v1, v1, s2"], w)
    assert w.V[:, 0].tolist() == [2 * (100 + ln) + 1 for ln in range(64)]
    assert (int(w.S[2]), int(w.S[3])) == (0, 0)


def test_a_carry_out_over_a_plain_source_stops() -> None:
    """`v_add_co_u32 v0, s[2:3], s2, v1`: s2 is an addend both passes read; the first pass
    writes it."""
    w = _wave()
    w.S[2] = 5
    w.sdef[2] = 0xFFFF_FFFF
    assert _overlap_stop(["v_add_co_u32 v0, s2, s2, v1"], w) == "sim-wave64-sgpr-overlap"


def test_gfx9_and_wave32_have_no_second_pass() -> None:
    """The same compare on gfx942 (wave64 in one issue) and on gfx1100 in wave32 (one pass):
    computed from the values before the instruction. s[2:3] = 120: lanes 0-19 below."""
    w = _wave()
    w.S[2], w.S[3] = 120, 0
    w.sdef[2] = w.sdef[3] = 0xFFFF_FFFF
    w.V[:, 2], w.V[:, 3] = 100 + np.arange(64), 0     # gfx942: aligned pairs, v[2:3]
    run_steps(assemble(["v_cmp_lt_u64_e64 s[2:3], v[2:3], s[2:3]"], "gfx942"), w, ENV)
    assert (int(w.S[2]), int(w.S[3])) == (0x000F_FFFF, 0)
    w = Wave(32, 0, 0)
    w.V[:, 1] = 100 + np.arange(32)
    w.vdef[:, :4] = True
    w.S[2], w.S[3] = 120, 0
    w.sdef[2] = w.sdef[3] = 0xFFFF_FFFF
    run_steps(assemble(["v_cmp_lt_u64_e64 s2, v[1:2], s[2:3]"], "gfx1100"), w, ENV32)
    assert int(w.S[2]) == 0x000F_FFFF
