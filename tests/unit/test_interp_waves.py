"""Waves of blocks in the reference interpreter, and its step and time budgets.

A wave runs several blocks as one set of lanes (rgpu_fuzz/interp/machine.py); the
specification runs them one by one (`waves=False`). Expected values below are worked out by
hand from the kernel text, in the specification's block order; the differential test checks
the two ways against each other on generated kernels of every profile.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import numpy as np
import pytest

from generators import SeededChoices, generate, load_profile
from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Rejected, RejectReason, Trap, TrapKind
from rgpu_fuzz.pipelines.frontend import prepare
from tests.unit.test_interp import at, check, outputs, rename_uniform, u32s


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail (rather than hang the run) when a launch does not stop within 60 s."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("the launch did not stop within 60 s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def both(src: str, grid: tuple[int, int, int], block: tuple[int, int, int],
         checked: object = None, **args: object) -> object:
    """The launch run as waves and block by block; asserts both give the same result."""
    ch = checked if checked is not None else check(src)
    kw = {"grid": grid, "block": block, "args": args, "step_budget": 100_000}
    wide = run_kernel(ch, "k", **kw)  # type: ignore[arg-type]
    serial = run_kernel(ch, "k", waves=False, **kw)  # type: ignore[arg-type]
    if isinstance(wide, Finished):
        assert isinstance(serial, Finished) and wide.steps == serial.steps
        assert {k: v.tobytes() for k, v in wide.outputs.items()} == \
            {k: v.tobytes() for k, v in serial.outputs.items()}
    else:
        assert wide == serial
    return wide


def test_shared_memory_is_per_block_in_a_wave() -> None:
    src = """use rgpu::*;
#[shared]
static mut TILE: [u32; 4] = [0u32; 4];
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let b: u32 = block_idx_x();
    unsafe { TILE[t as usize] = b * 100u32 + t; }
    sync_threads();
    out[(b * 4u32 + t) as usize] = unsafe { TILE[((t + 1u32) % 4u32) as usize] };
}
"""
    # thread t of block b reads its block's TILE[(t+1)%4] = b*100 + (t+1)%4
    expected = [b * 100 + (t + 1) % 4 for b in range(3) for t in range(4)]
    assert outputs(both(src, (3, 1, 1), (4, 1, 1), out=u32s(12)))["out"] == expected


def test_barrier_reached_by_some_blocks_only() -> None:
    src = """use rgpu::*;
#[shared]
static mut S: [u32; 2] = [0u32; 2];
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let b: u32 = block_idx_x();
    if b == 1u32 {
        unsafe { S[t as usize] = t + 7u32; }
        sync_threads();
        out[(b * 2u32 + t) as usize] = unsafe { S[(1u32 - t) as usize] };
    } else {
        out[(b * 2u32 + t) as usize] = b;
    }
}
"""
    # blocks 0 and 2 skip the barrier (block_idx is uniform within a block); block 1 swaps
    assert outputs(both(src, (3, 1, 1), (2, 1, 1), out=u32s(6)))["out"] == [0, 0, 8, 7, 2, 2]


def test_barrier_divergence_in_a_later_block_is_reported_there() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], u: u32) {
    let t: u32 = thread_idx_x();
    if block_idx_x() == 1u32 {
        if u < 2u32 { sync_threads(); }
    }
    out[(block_idx_x() * 4u32 + t) as usize] = t;
}
"""
    checked = rename_uniform(check(src), "k", "u", "t")   # block 1: threads 0 and 1 arrive
    res = both(src, (3, 1, 1), (4, 1, 1), checked=checked, out=u32s(12), u=np.uint32(0))
    assert isinstance(res, Rejected) and res.reason is RejectReason.BARRIER_DIVERGENCE
    assert res.where is not None and res.where.block == (1, 0, 0)
    assert res.where.thread == (2, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "sync_threads();")


def test_first_stop_in_block_order_wins() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], d: &[u32]) {
    let b: u32 = block_idx_x();
    let early: u32 = 10u32 / d[b as usize];
    out[(b * 2u32 + thread_idx_x()) as usize] = early;
    let late: u32 = 10u32 % d[(b + 2u32) as usize];
    out[(b * 2u32 + thread_idx_x()) as usize] = late;
}
"""
    # d = [1, 0, 0, 1]: block 0 traps late (10 % d[2]); block 1 would trap early (10 / d[1]),
    # but block 0 runs first, so block 0's `%` is the trap.
    d = np.array([1, 0, 0, 1], dtype=np.uint32)
    res = both(src, (2, 1, 1), (2, 1, 1), out=u32s(4), d=d)
    assert isinstance(res, Trap) and res.kind is TrapKind.DIV_BY_ZERO
    assert res.where.block == (0, 0, 0) and res.where.thread == (0, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "10u32 % d")


def test_race_between_blocks_is_reported_at_the_later_block() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    out[thread_idx_x() as usize] = block_idx_x();
}
"""
    # block 1 thread 0 writes out[0] after block 0 thread 0 wrote it
    res = both(src, (2, 1, 1), (2, 1, 1), out=u32s(2))
    assert isinstance(res, Rejected) and res.reason is RejectReason.GLOBAL_RACE
    assert res.where is not None and res.where.block == (1, 0, 0)
    assert res.where.thread == (0, 0, 0)


def test_steps_count_per_block_in_a_wave() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    for i in 0u32..block_idx_x() { out[(block_idx_x() * 2u32 + t) as usize] = i; }
}
"""
    # block b: `let` and `for` (2) + b iterations + b body statements = 2 + 2b;
    # blocks 0, 1, 2: 2 + 4 + 6 = 12
    res = both(src, (3, 1, 1), (2, 1, 1), out=u32s(6))
    assert isinstance(res, Finished) and res.steps == 12
    assert res.outputs["out"].tolist() == [0, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("profile", ["default", "barriers", "calls", "control", "floats",
                                     "integers", "memory", "waves"])
def test_waves_compute_what_blocks_one_by_one_compute(profile: str) -> None:
    """Generated kernels (seeds 0..24 of each profile): same outputs, bit for bit, same steps,
    same stops, whichever way the blocks run."""
    prof = load_profile(profile)
    multi = 0
    for seed in range(25):
        case = generate(SeededChoices(seed), prof, seed=seed)
        prepared = prepare(case)
        assert isinstance(prepared, tuple), prepared
        args = argument_values(case.args)
        kw = {"grid": case.launch.grid, "block": case.launch.block, "args": args}
        wide = run_kernel(prepared[0], case.entry, **kw)
        serial = run_kernel(prepared[0], case.entry, waves=False, **kw)
        multi += case.launch.blocks > 1
        if isinstance(serial, Finished):
            assert isinstance(wide, Finished) and wide.steps == serial.steps, seed
            assert {k: v.tobytes() for k, v in wide.outputs.items()} == \
                {k: v.tobytes() for k, v in serial.outputs.items()}, seed
        else:
            assert wide == serial, seed
    assert multi > 0


def test_budget_is_checked_outside_loops(alarm: None) -> None:
    """A loop-free kernel over a huge grid stops at the step budget (it ran for ever when the
    budget was checked only in loops)."""
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    if t == 1000u32 { out[0] = t; }
}
"""
    for waves in (True, False):
        res = run_kernel(check(src), "k", grid=(1_000_000_000, 1, 1), block=(32, 1, 1),
                         args={"out": u32s(1)}, step_budget=10_000, waves=waves)
        assert isinstance(res, Rejected) and res.reason is RejectReason.STEP_BUDGET, res
        assert res.detail == "more than 10000 steps"


def test_time_budget_stops_an_endless_loop(alarm: None) -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let mut i: u32 = 0u32;
    loop { i = i + 1u32; }
}
"""
    res = run_kernel(check(src), "k", grid=(2, 1, 1), block=(4, 1, 1), args={"out": u32s(1)},
                     step_budget=10**15, time_budget=0.2)
    assert isinstance(res, Rejected) and res.reason is RejectReason.STEP_BUDGET
    assert res.detail is not None and "ran out of time" in res.detail
    assert res.where is not None and (res.where.line, res.where.col) == at(src, "loop {")
