"""Feature coverage of generated kernels (`rgpu-fuzz gen --stats`)."""

from __future__ import annotations

from generators import from_seed
from generators.stats import (
    DEFAULT_FEATURES,
    HALF_FEATURES,
    case_coverage,
    coverage,
)
from rgpu_fuzz.lang.checker import check_source

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], out: &mut [f32]) {
    let tid: usize = thread_idx_x() as usize;
    let mut x: u32 = a[tid % a.len()].wrapping_add(1u32);
    for i in 0u32..=3u32 {
        if x > 3u32 {
            break;
        }
        x += i;
    }
    out[tid] = x as f32;
}
"""


def test_counts_the_features_of_a_known_kernel() -> None:
    cov = coverage([check_source(KERNEL, "k.rs").module])
    assert cov.modules == 1
    for f in ("method:wrapping_add", "method:len", "cast:u32->f32", "cast:u32->usize",
              "stmt:for-inclusive", "stmt:break", "assign:+=", "gpu:output-store",
              "expr:index-input", "prelude:thread_idx_x", "type:f32"):
        assert cov.counts.get(f, 0) >= 1, f
    missing = cov.missing()
    assert "item:shared" in missing and "method:wrapping_add" not in missing


def test_render_is_a_table_with_the_missing_features() -> None:
    cov = coverage([check_source(KERNEL, "k.rs").module])
    text = cov.render()
    assert text.splitlines()[0].split() == ["feature", "count", "kernels"]
    assert "never generated:" in text


def test_default_profile_reaches_most_features() -> None:
    cov = case_coverage(from_seed(s) for s in range(60))
    missing = cov.missing(DEFAULT_FEATURES)
    assert len(missing) <= len(DEFAULT_FEATURES) // 10, missing
    assert set(cov.missing(HALF_FEATURES)) == HALF_FEATURES, \
        "the default profile writes no f16 and none of the methods it leaves to `half`"
    for f in ("gpu:barrier", "gpu:barrier-in-loop", "item:helper", "stmt:while", "stmt:loop",
              "expr:if", "expr:block", "stmt:let-array", "launch:2d", "expr:from_bits-f32"):
        assert f not in missing, f


BARRIER_KERNEL = """use rgpu::*;

#[shared]
static mut S: [u32; 64] = [0u32; 64];

#[kernel]
pub fn k(a: &[u32], out: &mut [u32], n: u32) {
    let tid: usize = thread_idx_x() as usize;
    unsafe { S[tid] = a[tid % a.len()]; }
    sync_threads();
    let mut c: u32 = 0u32;
    while c < n % 3u32 {
        c += 1u32;
        for r in 0u32..2u32 {
            if r == 1u32 {
                continue;
            }
            sync_threads();
        }
        if block_idx_x() % 2u32 == 0u32 {
            sync_threads();
        } else {
            sync_threads();
            break;
        }
    }
    if out[tid] > 3u32 {
        return;
    }
    out[tid] = unsafe { S[(tid + 1usize) % 64usize] };
}
"""


def test_counts_where_barriers_stand() -> None:
    cov = coverage([check_source(BARRIER_KERNEL, "k.rs").module])
    expect = {"gpu:barrier-in-if": 1, "gpu:barrier-in-else": 1, "gpu:barrier-in-while": 1,
              "gpu:barrier-in-nested-loop": 1, "gpu:break-in-barrier-loop": 1,
              "gpu:continue-in-barrier-loop": 1, "gpu:return-after-barrier": 1}
    for f, n in expect.items():
        assert cov.counts.get(f, 0) == n, (f, cov.counts.get(f))
    assert "gpu:return-in-barrier-loop" not in cov.counts


def test_barriers_profile_reaches_the_barrier_structures() -> None:
    cov = case_coverage(from_seed(s, "barriers") for s in range(40))
    for f in ("gpu:barrier-in-if", "gpu:barrier-in-else", "gpu:barrier-in-while",
              "gpu:barrier-in-nested-loop", "gpu:break-in-barrier-loop",
              "gpu:continue-in-barrier-loop", "gpu:return-after-barrier"):
        assert cov.counts.get(f, 0) > 0, f
