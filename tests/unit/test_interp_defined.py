"""The reference interpreter (rgpu_fuzz.interp.run_kernel), continued: well-definedness (races
on shared and global memory, uninitialised shared reads, barrier divergence) and the step
budget. Expected buffers are worked out by hand; rejection locations are found in the kernel
text itself with `at()`."""

from __future__ import annotations

import numpy as np

from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.model.outcome import Rejected, RejectReason
from tests.unit.test_interp import at, check, outputs, rename_uniform, run, u32s

# ---------------------------------------------------------------- well-definedness

SHARED_PRELUDE = """use rgpu::*;
#[shared]
static mut S: [u32; 4] = [0u32; 4];
"""


def test_shared_race_two_writers_in_one_store() -> None:
    src = SHARED_PRELUDE + """#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    unsafe { S[(t / 2u32) as usize] = t; }
}
"""
    res = run(src, out=u32s(1))
    assert isinstance(res, Rejected) and res.reason is RejectReason.SHARED_RACE
    assert res.where is not None and (res.where.line, res.where.col) == at(src, "S[(t / 2u32)")
    assert res.where.thread == (1, 0, 0)     # lanes 0 and 1 both hit S[0]; lane 1 is second


def test_shared_race_read_of_other_threads_write_without_barrier() -> None:
    src = SHARED_PRELUDE + """#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    unsafe { S[t as usize] = t; }
    out[t as usize] = unsafe { S[((t + 1u32) % 4u32) as usize] };
}
"""
    res = run(src, out=u32s(4))
    assert isinstance(res, Rejected) and res.reason is RejectReason.SHARED_RACE
    assert res.where is not None and res.where.thread == (0, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "S[((t + 1u32)")


def test_shared_own_element_and_read_only_sharing_are_fine() -> None:
    src = SHARED_PRELUDE + """#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    if t == 0u32 { unsafe { S[0] = 3u32; S[1] = 4u32; } }
    unsafe { S[(t + 2u32) as usize % 4usize] = 0u32; }
    sync_threads();
    out[t as usize] = unsafe { S[0] + S[1] };
}
"""
    res = run(src, block=(2, 1, 1), out=u32s(2))
    # t=0 writes S[0], S[1], S[2]; t=1 writes S[3]; after the barrier both read S[0], S[1]
    assert outputs(res)["out"] == [7, 7]


def test_uninitialised_shared_read() -> None:
    src = SHARED_PRELUDE + """#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    if t < 3u32 { unsafe { S[t as usize] = t; } }
    sync_threads();
    out[t as usize] = unsafe { S[(3u32 - t) as usize] };
}
"""
    # S[3] is never written; lane 0 reads it
    res = run(src, out=u32s(4))
    assert isinstance(res, Rejected) and res.reason is RejectReason.UNINIT_SHARED_READ
    assert res.where is not None and res.where.thread == (0, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "S[(3u32 - t)")


def test_shared_memory_is_fresh_per_block() -> None:
    src = SHARED_PRELUDE + """#[kernel]
pub fn k(out: &mut [u32]) {
    let b: u32 = block_idx_x();
    if b == 0u32 { unsafe { S[thread_idx_x() as usize] = 1u32; } }
    sync_threads();
    out[(b * 4u32 + thread_idx_x()) as usize] = unsafe { S[thread_idx_x() as usize] };
}
"""
    res = run(src, grid=(2, 1, 1), out=u32s(8))
    assert isinstance(res, Rejected) and res.reason is RejectReason.UNINIT_SHARED_READ
    assert res.where is not None and res.where.block == (1, 0, 0)


def test_global_race_across_blocks() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    out[t as usize] = block_idx_x();
}
"""
    res = run(src, grid=(2, 1, 1), out=u32s(4))
    assert isinstance(res, Rejected) and res.reason is RejectReason.GLOBAL_RACE
    assert res.where is not None and res.where.block == (1, 0, 0)
    assert res.where.thread == (0, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "out[t as usize]")


def test_global_race_read_after_other_threads_write() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    out[t] = 1u32;
    sync_threads();
    let v: u32 = out[(t + 1usize) % 4usize];
    out[t] = v + 1u32;
}
"""
    # the barrier orders the accesses, but the language still forbids another thread's
    # access to a global location written by one thread (no grid-wide barrier exists)
    res = run(src, out=u32s(4))
    assert isinstance(res, Rejected) and res.reason is RejectReason.GLOBAL_RACE
    assert res.where is not None and (res.where.line, res.where.col) == at(src, "out[(t + 1usize)")


def test_reads_of_shared_inputs_and_own_global_writes_are_fine() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    out[t] = a[0];
    out[t] += out[t] + a[0];
}
"""
    # read-only `a` is read by every thread; each thread re-reads its own out[t]: 5 + 5 + 5
    assert outputs(run(src, a=u32s(1, 5), out=u32s(4)))["out"] == [15, 15, 15, 15]


def test_barrier_divergence_in_branch() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], u: u32) {
    let t: u32 = thread_idx_x();
    if u < 2u32 {
        sync_threads();
    }
    out[t as usize] = t;
}
"""
    checked = rename_uniform(check(src), "k", "u", "t")   # now: if t < 2 { sync_threads(); }
    res = run_kernel(checked, "k", grid=(1, 1, 1), block=(4, 1, 1),
                     args={"out": u32s(4), "u": np.uint32(0)})
    assert isinstance(res, Rejected) and res.reason is RejectReason.BARRIER_DIVERGENCE
    assert res.where is not None and res.where.thread == (2, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "sync_threads();")


def test_barrier_divergence_after_early_return() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], n: u32, u: u32) {
    let t: u32 = thread_idx_x();
    if u >= n { return; }
    sync_threads();
    out[t as usize] = t;
}
"""
    checked = rename_uniform(check(src), "k", "u", "t")   # now: if t >= n { return; }
    args = {"out": u32s(4), "n": np.uint32(3), "u": np.uint32(0)}
    res = run_kernel(checked, "k", grid=(1, 1, 1), block=(4, 1, 1), args=args)
    assert isinstance(res, Rejected) and res.reason is RejectReason.BARRIER_DIVERGENCE
    assert res.where is not None and res.where.thread == (3, 0, 0)
    # every thread present: fine
    args = {"out": u32s(4), "n": np.uint32(4), "u": np.uint32(0)}
    res = run_kernel(checked, "k", grid=(1, 1, 1), block=(4, 1, 1), args=args)
    assert outputs(res)["out"] == [0, 1, 2, 3]


def test_barrier_divergence_in_loop_with_thread_dependent_trip_count() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], u: u32) {
    let t: u32 = thread_idx_x();
    for i in 0u32..u {
        sync_threads();
        out[t as usize] = i;
    }
}
"""
    checked = rename_uniform(check(src), "k", "u", "t")   # thread t loops t times
    res = run_kernel(checked, "k", grid=(1, 1, 1), block=(4, 1, 1),
                     args={"out": u32s(4), "u": np.uint32(0)})
    # first iteration: thread 0 has already left the loop
    assert isinstance(res, Rejected) and res.reason is RejectReason.BARRIER_DIVERGENCE
    assert res.where is not None and res.where.thread == (0, 0, 0)


def test_step_budget() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let mut i: u32 = 0u32;
    loop { i = i + 1u32; }
}
"""
    res = run(src, out=u32s(1), budget=1000)
    assert isinstance(res, Rejected) and res.reason is RejectReason.STEP_BUDGET
    assert res.where is not None and (res.where.line, res.where.col) == at(src, "loop {")


def test_step_count_is_recorded() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    for i in 0u32..3u32 { out[0] = i; }
}
"""
    res = run(src, block=(1, 1, 1), out=u32s(1))
    assert isinstance(res, Finished) and res.outputs["out"].tolist() == [2]
    # 1 statement (the for) + 3 iterations + 3 body statements = 7
    assert res.steps == 7
