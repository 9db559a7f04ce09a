"""The reference interpreter on atomics, and its schedule exploration
(docs/language.md "Atomics and schedules"). Expected values are worked out by hand from the
kernel text."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.interp.schedules import SCHEDULES, active, lane_order
from rgpu_fuzz.model.outcome import Rejected, RejectReason, Trap, TrapKind
from tests.unit.test_interp import check, outputs, u32s

HEAD = "use rgpu::*;\n\n"


def run(src: str, grid: int = 1, block: int = 64, **args: object) -> object:
    return run_kernel(check(HEAD + src), "k", grid=(grid, 1, 1), block=(block, 1, 1),
                      args=cast(dict[str, Any], args), step_budget=100_000)


def test_counter_old_values_sum_to_n_n_minus_1_over_2() -> None:
    """n threads each `fetch_add(1)`: the counter ends at n and the old values are 0..n-1
    in some order, whose sum n(n-1)/2 every schedule agrees on."""
    src = """#[kernel]
pub fn k(a: &[AtomicU32]) {
    let old = a[0].fetch_add(1, Ordering::Relaxed);
    a[1].fetch_add(old, Ordering::Relaxed);
    a[2].fetch_max(old, Ordering::SeqCst);
    a[3].fetch_sub(1, Ordering::AcqRel);
}
"""
    res = run(src, grid=3, block=40, a=u32s(4))
    n = 120
    assert outputs(res) == {"a": [n, n * (n - 1) // 2, n - 1, (-n) % 2**32]}


def test_every_method_and_type_by_hand() -> None:
    src = """#[kernel]
pub fn k(a: &[AtomicI32], b: &[AtomicU64], c: &[AtomicI64], out: &mut [i32]) {
    let t = thread_idx_x() as usize;
    out[t] = a[t].swap(-5, Ordering::Relaxed);
    b[t].fetch_and(0xff, Ordering::Acquire);
    b[t].fetch_or(0x100, Ordering::Release);
    b[t].fetch_xor(1, Ordering::AcqRel);
    c[t].fetch_min(-7, Ordering::SeqCst);
    if b[t].compare_exchange(0x1fe, 7, Ordering::SeqCst, Ordering::Relaxed).is_ok() {
        c[t].store(a[t].load(Ordering::SeqCst) as i64, Ordering::Release);
    }
}
"""
    a = np.array([3, -4], dtype=np.int32)
    b = np.array([0xabcd_00ff, 0x12], dtype=np.uint64)
    c = np.array([10, -9], dtype=np.int64)
    res = run(src, block=2, a=a, b=b, c=c, out=np.zeros(2, np.int32))
    # b[0]: 0xabcd00ff & 0xff = 0xff, | 0x100 = 0x1ff, ^ 1 = 0x1fe: the exchange succeeds
    # (b[0] = 7, c[0] = a[0] = -5); b[1]: 0x12 -> 0x112 -> 0x113: it fails, c[1] = min(-9, -7).
    assert outputs(res) == {"a": [-5, -5], "b": [7, 0x113], "c": [-5, -9], "out": [3, -4]}


def test_winner_writing_its_id_is_schedule_dependent() -> None:
    """Which thread wins `compare_exchange(0, 1)` depends on the schedule; the winner
    storing its own id makes the outputs depend on it."""
    src = """#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    if a[0].compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        out[0] = thread_idx_x();
    }
}
"""
    res = run(src, a=u32s(1), out=u32s(1))
    assert isinstance(res, Rejected) and res.reason is RejectReason.SCHEDULE_DEPENDENT, res
    assert "`out[0]` is 0 and 63 under `ascending` and `descending`" in res.detail


def test_one_winner_section_is_accepted() -> None:
    """The same section, with the winner writing a constant: one write, one result."""
    src = """#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    if a[0].compare_exchange(0, thread_idx_x() + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        out[0] = 42;
    }
}
"""
    res = run(src, grid=2, a=u32s(1), out=u32s(1))
    assert isinstance(res, Rejected) and res.reason is RejectReason.SCHEDULE_DEPENDENT
    src = src.replace("thread_idx_x() + 1", "1")
    assert outputs(run(src, grid=2, a=u32s(1), out=u32s(1))) == {"a": [1], "out": [42]}


def test_trap_only_under_some_schedules_is_schedule_dependent() -> None:
    """The first thread to arrive indexes `out[t]` with a 4-element `out`: in ascending order
    thread 0 (in bounds), in descending order thread 63 (out of bounds)."""
    src = """#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    let t = thread_idx_x() as usize;
    if a[0].fetch_add(1, Ordering::Relaxed) == 0 {
        out[t] = 1;
    }
}
"""
    res = run(src, a=u32s(1), out=u32s(4))
    assert isinstance(res, Rejected) and res.reason is RejectReason.SCHEDULE_DEPENDENT
    assert "a trap and a finished run" in res.detail


def test_same_trap_kind_under_every_schedule_is_a_trap() -> None:
    src = """#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    let t = thread_idx_x() as usize;
    out[t] = 100 / a[0].fetch_add(1, Ordering::Relaxed);
}
"""
    res = run(src, a=u32s(1), out=u32s(64))
    assert isinstance(res, Trap) and res.kind is TrapKind.DIV_BY_ZERO


def test_plain_accesses_are_not_ordered_by_atomics() -> None:
    """Message passing through a release/acquire flag: Rust orders the plain write before
    the plain read, but the reference's race detection does not see atomics, so the case is
    a race (rejected, never a false finding)."""
    src = """#[kernel]
pub fn k(flag: &[AtomicU32], out: &mut [u32]) {
    let t = thread_idx_x();
    if t == 0 {
        out[0] = 5;
        flag[0].store(1, Ordering::Release);
    } else if flag[0].load(Ordering::Acquire) == 1 {
        out[t as usize] = out[0];
    }
}
"""
    res = run(src, block=2, flag=u32s(1), out=u32s(2))
    assert isinstance(res, Rejected) and res.reason is RejectReason.GLOBAL_RACE, res


def test_shared_atomics_per_block_and_uninitialised() -> None:
    src = """#[shared]
static S: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];

#[kernel]
pub fn k(out: &mut [u32]) {
    let t = thread_idx_x();
    if t == 0 {
        S[0].store(10, Ordering::Relaxed);
    }
    sync_threads();
    S[0].fetch_add(t, Ordering::Relaxed);
    sync_threads();
    if t == 0 {
        out[block_idx_x() as usize] = S[0].load(Ordering::Relaxed);
    }
}
"""
    # each block: 10 + (0 + 1 + ... + 31) = 506, whatever the schedule
    assert outputs(run(src, grid=3, block=32, out=u32s(3))) == {"out": [506, 506, 506]}
    uninit = src.replace("S[0].fetch_add(t", "S[1].fetch_add(t")
    res = run(uninit, grid=3, block=32, out=u32s(3))
    assert isinstance(res, Rejected) and res.reason is RejectReason.UNINIT_SHARED_READ


def test_atomic_buffers_are_outputs_and_inputs_are_not_modified() -> None:
    a = u32s(1, 5)
    res = run("#[kernel]\npub fn k(a: &[AtomicU32]) { a[0].fetch_add(1, Ordering::SeqCst); }\n",
              a=a)
    assert isinstance(res, Finished) and res.outputs["a"].tolist() == [69] and a[0] == 5


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: s.name)
def test_lane_orders(schedule: object) -> None:
    lanes = np.arange(8)
    with active(schedule):  # type: ignore[arg-type]
        order = lane_order(lanes)
    assert sorted(order.tolist()) == lanes.tolist()
    want = {"ascending": lanes.tolist(), "descending": lanes[::-1].tolist()}
    if schedule.lanes in want:  # type: ignore[attr-defined]
        assert order.tolist() == want[schedule.lanes]  # type: ignore[attr-defined]
    else:
        assert order.tolist() not in want.values()


def test_helper_updating_shared_atomics() -> None:
    """A helper's atomics on a shared static and fences in a helper: per block S[0] ends at
    1 + 3·(0 + … + 15) = 361 and S[1] at max(3t) = 45, and 361 ^ 45 = 324 (by hand)."""
    src = """#[shared]
static S: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

#[inline(never)]
fn bump(v: u64) -> u64 {
    S[1].fetch_max(v, Ordering::AcqRel);
    S[0].fetch_add(v, Ordering::Relaxed)
}

fn fence_twice() {
    fence(Ordering::Release);
    fence(Ordering::Acquire);
}

#[kernel]
pub fn k(out: &mut [u64]) {
    let t = thread_idx_x();
    if t == 0 {
        S[0].store(1, Ordering::Relaxed);
        S[1].store(0, Ordering::Relaxed);
    }
    sync_threads();
    bump(t as u64 * 3);
    fence_twice();
    sync_threads();
    let g = (block_idx_x() * block_dim_x() + t) as usize;
    out[g] = S[0].load(Ordering::Acquire) ^ S[1].load(Ordering::Relaxed);
}
"""
    res = run(src, grid=2, block=16, out=np.zeros(32, np.uint64))
    assert outputs(res) == {"out": [324] * 32}


@pytest.mark.parametrize(("what", "src", "kw"), [
    ("the last swap wins", """#[kernel]
pub fn k(a: &[AtomicU32]) {
    a[0].swap(thread_idx_x(), Ordering::SeqCst);
}
""", {"a": 1}),
    ("each thread's ticket (fetch_add's old value) kept per thread", """#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    out[thread_idx_x() as usize] = a[0].fetch_add(1, Ordering::Relaxed);
}
""", {"a": 1, "out": 64}),
    ("a counter read while others still add (no barrier between)", """#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    a[0].fetch_add(1, Ordering::Release);
    out[thread_idx_x() as usize] = a[0].load(Ordering::Acquire);
}
""", {"a": 1, "out": 64}),
    ("a shared fetch_sub's old value kept per thread", """#[shared]
static S: [AtomicI32; 1] = [const { AtomicI32::new(0) }; 1];

#[kernel]
pub fn k(out: &mut [u32]) {
    let t = thread_idx_x();
    if t == 0 {
        S[0].store(100, Ordering::Relaxed);
    }
    sync_threads();
    out[t as usize] = S[0].fetch_sub(t as i32, Ordering::AcqRel) as u32;
}
""", {"out": 64}),
    ("fetch_max's old value summed (not commutative: the old values depend on the order)",
     """#[kernel]
pub fn k(a: &[AtomicU32]) {
    let old = a[0].fetch_max(thread_idx_x(), Ordering::Relaxed);
    a[1].fetch_add(old, Ordering::Relaxed);
}
""", {"a": 2}),
])
def test_order_dependent_outputs_are_rejected(what: str, src: str, kw: dict[str, int]) -> None:
    """Kernels whose outputs depend on the order the atomics run in (by hand: under
    `ascending` thread 63 runs last and under `descending` thread 0 does, so the swapped
    value, the tickets, the counter a thread reads, the old values differ): rejected as
    schedule-dependent, never compared."""
    buffers: dict[str, Any] = {k: u32s(n) for k, n in kw.items()}
    res = run(src, 1, 64, **buffers)
    assert isinstance(res, Rejected) and res.reason is RejectReason.SCHEDULE_DEPENDENT, \
        (what, res)


def test_plain_shared_data_published_by_an_atomic_flag_is_a_race() -> None:
    """A mixed plain/atomic pattern in LDS: thread 0 writes a plain shared word and
    releases a shared atomic flag; another thread acquires the flag and reads the word with
    no barrier between. Rust's model orders it, but the reference's race detection does not
    see atomics (docs/language.md "Atomics and schedules"): rejected as a shared race, not
    a finding."""
    src = """#[shared]
static FLAG: [AtomicU32; 1] = [const { AtomicU32::new(0) }; 1];

#[shared]
static mut DATA: [u32; 1] = [0; 1];

#[kernel]
pub fn k(out: &mut [u32]) {
    let t = thread_idx_x();
    if t == 0 {
        FLAG[0].store(0, Ordering::Relaxed);
        unsafe { DATA[0] = 7; }
    }
    sync_threads();
    if t == 0 {
        unsafe { DATA[0] = 9; }
        FLAG[0].store(1, Ordering::Release);
    } else if FLAG[0].load(Ordering::Acquire) == 1 {
        out[t as usize] = unsafe { DATA[0] };
    }
}
"""
    res = run(src, block=2, out=u32s(2))
    assert isinstance(res, Rejected) and res.reason is RejectReason.SHARED_RACE, res
