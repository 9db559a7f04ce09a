"""The reference interpreter's wave functions, lane-exact at wave sizes 32 and 64
(docs/language.md "Wave operations"), and its rejection of their ill-defined uses.

Every expected value is worked by hand from the language reference's definitions, stated
next to it: the inputs are chosen so that the arithmetic is short (`x = t + 1` for thread
`t`, so a wave's sum is a triangular-number difference).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.model.outcome import Rejected, RejectReason

HEAD = "use rgpu::*;\n#[kernel]\npub fn k(a: &[u32], out: &mut [u32], w: &mut [u64]) {\n" \
       "    let t = (thread_idx_x() + thread_idx_y() * block_dim_x()) as usize;\n" \
       "    let x = a[t];\n"


def run(body: str, *, threads: int, wave: int, block: tuple[int, int, int] | None = None,
        grid: tuple[int, int, int] = (1, 1, 1), a: np.ndarray | None = None,
        waves: bool = True) -> Finished | Rejected:
    """Run `HEAD + body` with `a[t] = t + 1` (unless given) over one block of `threads`."""
    m = check_source(HEAD + body + "}\n", "w.rs")
    n = threads * grid[0]
    args: Mapping[str, np.ndarray] = {
        "a": np.arange(1, n + 1, dtype=np.uint32) if a is None else a,
        "out": np.zeros(n, np.uint32), "w": np.zeros(n, np.uint64)}
    r = run_kernel(m, "k", grid=grid, block=block or (threads, 1, 1), args=args,
                   wave_size=wave, waves=waves)
    assert isinstance(r, Finished | Rejected), r
    return r


def outs(body: str, **kw: object) -> np.ndarray:
    r = run(body, **kw)  # type: ignore[arg-type]
    assert isinstance(r, Finished), r
    return r.outputs["out"]


def rejected(body: str, reason: RejectReason, **kw: object) -> Rejected:
    r = run(body, **kw)  # type: ignore[arg-type]
    assert isinstance(r, Rejected), r
    assert r.reason is reason, r
    return r


STORE = "    let t2 = t;\n    out[t2] = v;\n"


def test_wave_size_and_lane_id_follow_the_linear_id() -> None:
    # Block 5×9 = 45 threads; thread (x, y) has linear id x + 5y. Wave 32: lane = id % 32.
    body = "    out[t] = lane_id() * 100u32 + wave_size();\n"
    got = outs(body, threads=45, wave=32, block=(5, 9, 1))
    assert list(got[[0, 31, 32, 44]]) == [32, 3132, 32, 1232]
    got = outs(body, threads=45, wave=64, block=(5, 9, 1))
    assert list(got[[0, 31, 32, 44]]) == [64, 3164, 3264, 4464]


@pytest.mark.parametrize(("wave", "expect"), [
    # 40 threads, x = t + 1. Wave 32: waves {1..32} and {33..40}. Wave 64: one wave {1..40}.
    (32, {0: 528, 31: 528, 32: 292, 39: 292}),   # 32·33/2 = 528; 33+…+40 = 820 − 528 = 292
    (64, {0: 820, 31: 820, 32: 820, 39: 820}),   # 40·41/2 = 820
])
def test_wave_sum_over_the_active_lanes_of_each_wave(wave: int, expect: dict[int, int]) -> None:
    got = outs("    let v = wave_sum(x);\n" + STORE, threads=40, wave=wave)
    assert {t: int(got[t]) for t in expect} == expect


def test_min_max_and_or_xor() -> None:
    # 40 threads, wave 32; wave 1 holds x = 33..40.
    got = outs("    let v = wave_min(x);\n    out[t] = v;\n", threads=40, wave=32)
    assert (got[0], got[39]) == (1, 33)
    body = ("    let mx = wave_max(x);\n    let an = wave_and(x);\n"
            "    let o = wave_or(x);\n    let xo = wave_xor(x);\n"
            "    out[t] = mx * 1000000u32 + an * 10000u32 + o * 100u32 + xo;\n")
    got = outs(body, threads=40, wave=32)
    # Wave 0, x = 1..32: max 32; and = 0 (1 & 2); or = 63 (32 | 31); xor of 1..32 = 32
    # (xor of 1..n is n when n % 4 == 0). Wave 1, x = 33..40: max 40; and = 32 (every one
    # has bit 5, 33 & 34 & 36 & 40 clear the rest); or = 47 (32 | 15); xor of 33..40 =
    # (xor 1..40) ^ (xor 1..32) = 40 ^ 32 = 8.
    assert got[0] == 32 * 1000000 + 0 + 63 * 100 + 32
    assert got[39] == 40 * 1000000 + 32 * 10000 + 47 * 100 + 8


def test_signed_min_max_and_wrapping_sum() -> None:
    # 4 threads, a = [100, 100, 100, -3] as i8: sum 297 wraps to 297 − 256 = 41;
    # min −3, max 100; prefix sums 100, 200 → −56, 300 → 44, 297 → 41.
    body = ("    let y = x as i8;\n    let s = wave_sum(y);\n    let mn = wave_min(y);\n"
            "    let mx = wave_max(y);\n    let p = wave_prefix_sum(y);\n"
            "    out[t] = ((s as u8) as u32) | ((mn as u8) as u32) << 8u32"
            " | ((mx as u8) as u32) << 16u32 | ((p as u8) as u32) << 24u32;\n")
    a = np.array([100, 100, 100, 253], np.uint32)  # 253 as i8 = −3
    got = outs(body, threads=4, wave=32, a=a)
    assert [int(g) for g in got] == [41 | 253 << 8 | 100 << 16 | p << 24
                                     for p in (100, 200, 44, 41)]


@pytest.mark.parametrize(("wave", "expect"), [
    (32, {0: 1, 5: 21, 31: 528, 32: 33, 39: 292}),  # inclusive: lane l holds Σ x up to l
    (64, {0: 1, 5: 21, 31: 528, 32: 561, 39: 820}),
])
def test_prefix_sum_is_inclusive_in_lane_order(wave: int, expect: dict[int, int]) -> None:
    got = outs("    let v = wave_prefix_sum(x);\n" + STORE, threads=40, wave=wave)
    assert {t: int(got[t]) for t in expect} == expect


@pytest.mark.parametrize(("wave", "bits"), [
    # x = t + 1 even ⇔ lane odd: bits 1, 3, 5, …; wave 32's second wave has lanes 0..7.
    (32, {0: 0xAAAA_AAAA, 39: 0xAA}),
    (64, {0: 0xAA_AAAA_AAAA, 39: 0xAA_AAAA_AAAA}),  # 40 lanes: bits up to 39
])
def test_ballot_sets_the_bits_of_active_lanes_where_the_condition_holds(
        wave: int, bits: dict[int, int]) -> None:
    r = run("    let b = ballot(x % 2u32 == 0u32);\n    w[t] = b;\n", threads=40, wave=wave)
    assert isinstance(r, Finished)
    assert {t: int(r.outputs["w"][t]) for t in bits} == bits


def test_read_first_lane_and_read_lane() -> None:
    got = outs("    let f = read_first_lane(x * 7u32);\n    let r = read_lane(x, 5u32);\n"
               "    out[t] = f * 1000u32 + r;\n", threads=40, wave=32)
    assert (got[0], got[39]) == (7 * 1000 + 6, 33 * 7 * 1000 + 38)  # lane 5: x = 6, 38


def test_shuffles() -> None:
    body = ("    let s = shuffle(x, lane_id() + 33u32);\n"   # (l + 33) % 32 = l + 1 (mod 32)
            "    let z = shuffle_xor(x, 3u32);\n"
            "    let d = shuffle_down(x, 30u32);\n"
            "    out[t] = s * 1000000u32 + z * 1000u32 + d;\n")
    got = outs(body, threads=32, wave=32)
    # lane 0: shuffle reads lane 1 (x 2); xor 3 → lane 3 (x 4); down 30 → lane 30 (x 31).
    # lane 31: shuffle reads lane 0 (x 1); xor 3 → lane 28 (x 29); 31 + 30 > 31: own x 32.
    assert got[0] == 2 * 1000000 + 4 * 1000 + 31
    assert got[31] == 1 * 1000000 + 29 * 1000 + 32


def test_shuffle_down_stops_at_the_last_active_lane_of_a_partial_wave() -> None:
    # 36 threads, wave 32: wave 1 has lanes 0..3 (x 33..36); down 2: lanes 0, 1 read
    # lanes 2, 3; lanes 2, 3 keep their own x.
    got = outs("    let v = shuffle_down(x, 2u32);\n" + STORE, threads=36, wave=32)
    assert list(got[32:]) == [35, 36, 35, 36]


def test_moves_keep_every_bit_of_a_float() -> None:
    # A signalling NaN with payload 1 (0x7f800001) moved by shuffle_xor and read_lane.
    a = np.array([0x7F800001, 0x3F800000], np.uint32)
    body = ("    let f = f32::from_bits(x);\n    let g = shuffle_xor(f, 1u32);\n"
            "    let h = read_lane(f, 0u32);\n    out[t] = g.to_bits() ^ h.to_bits();\n")
    got = outs(body, threads=2, wave=32, a=a)
    assert list(got) == [0x3F800000 ^ 0x7F800001, 0x7F800001 ^ 0x7F800001]


def test_wave_all_and_wave_any() -> None:
    # 40 threads, wave 32: x > 32 holds on none of wave 0, on all of wave 1.
    got = outs("    let al = wave_all(x > 32u32);\n    let an = wave_any(x > 32u32);\n"
               "    out[t] = (al as u32) * 10u32 + (an as u32);\n", threads=40, wave=32)
    assert (got[0], got[39]) == (0, 11)


def test_every_block_has_its_own_waves_as_a_set_and_one_by_one() -> None:
    # 3 blocks of 40 threads, a = 1..120: block 1's wave 0 holds x = 41..72, sum 1824.
    body = "    let g = (block_idx_x() * 40u32) as usize + t;\n    let y = a[g];\n" \
           "    let v = wave_sum(y);\n    out[g] = v;\n"
    for waves in (True, False):
        r = run(body, threads=40, wave=32, grid=(3, 1, 1), waves=waves)
        assert isinstance(r, Finished)
        assert int(r.outputs["out"][40]) == sum(range(41, 73))
        assert int(r.outputs["out"][119]) == sum(range(113, 121))


@pytest.mark.parametrize(("call", "wave", "lane"), [
    ("read_lane(x, 8u32)", 32, 32),      # wave 1 of 40 threads has lanes 0..7
    ("read_lane(x, 64u32)", 64, 0),      # past the wave
    ("shuffle(x, lane_id() + 1u32)", 32, 39),
    ("shuffle_xor(x, 32u32)", 32, 0),    # 0 ^ 32 = 32: past a 32-lane wave
    ("shuffle_xor(x, 8u32)", 32, 32),    # lane 0 of wave 1 reads lane 8: inactive
])
def test_reading_an_inactive_or_missing_lane_is_rejected(call: str, wave: int,
                                                        lane: int) -> None:
    r = rejected(f"    let v = {call};\n" + STORE, RejectReason.INACTIVE_LANE, threads=40,
                 wave=wave)
    assert r.where is not None and r.where.thread == (lane, 0, 0)
    assert (r.where.line, r.where.col) == (6, 13)


def test_a_wave_torn_by_a_two_dimensional_block_is_rejected() -> None:
    # Block 48×2, wave 32: wave 1 = linear ids 32..63 = (x 32..47, y 0) and (x 0..15, y 1);
    # `thread_idx_x() / wave_size()` is 1 on the first half, 0 on the second.
    body = ("    if thread_idx_x() / wave_size() == 0u32 {\n"
            "        let v = wave_sum(x);\n        out[t] = v;\n    }\n")
    r = rejected(body, RejectReason.WAVE_DIVERGENCE, threads=96, wave=32, block=(48, 2, 1))
    assert r.where is not None and (r.where.line, r.where.col) == (7, 17)
    assert "16 of the 32 lanes" in r.detail
    # With wave 64 every x is below 64, so every lane takes the branch: wave 0 = ids 0..63,
    # x = 1..64 summed is 64·65/2 = 2080.
    assert outs(body, threads=96, wave=64, block=(48, 2, 1))[0] == 2080
    # A one-dimensional block keeps every wave whole: wave 0 (x = 1..32) takes the branch,
    # 32·33/2 = 528; wave 1 does not.
    got = outs(body, threads=96, wave=32)
    assert (got[10], got[40]) == (528, 0)
