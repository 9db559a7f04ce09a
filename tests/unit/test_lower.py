"""The lowering's IR: valid, and free of anything that would change Rust's semantics."""

from __future__ import annotations

import re

import llvmlite.binding as llvm

from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lower import HostTarget, lower_module

KERNEL = """use rgpu::*;
#[inline(never)]
fn h(x: i32, s: u8) -> i32 { (x << s) + x.wrapping_div(x | 1i32) - x * x }
#[shared]
static mut T: [f32; 16] = [0.0f32; 16];
#[kernel]
pub fn k(a: &[f32], out: &mut [f32], n: i32) {
    let t: usize = thread_idx_x() as usize;
    unsafe { T[t] = a[t] * a[t] + 1.0f32; }
    sync_threads();
    let v: f32 = unsafe { T[(t + 1usize) % 16usize] };
    out[t] = v.mul_add(2.0f32, v.min(v.sqrt())) + (h(n, 3u8) / 7i32) as f32;
}
"""


def _lowered():  # type: ignore[no-untyped-def]
    return lower_module(check_source(KERNEL, "k.rs"), "k", HostTarget())


def test_ir_verifies_and_reparses() -> None:
    lowered = _lowered()
    module = llvm.parse_assembly(lowered.ir)
    module.verify()
    assert module.get_function(lowered.symbol) is not None
    assert lowered.uses_barrier and lowered.shared_bytes >= 64 and lowered.frame_bytes > 8


def test_no_wrap_flags_no_fast_math() -> None:
    text = _lowered().ir
    for flag in ("nsw", "nuw", "fast", "contract", "reassoc", "nnan", "ninf", "afn", "arcp"):
        assert not re.search(rf"\b{flag}\b", text), flag


def test_semantic_intrinsics_and_noinline() -> None:
    text = _lowered().ir
    assert "llvm.fma.f32" in text and "llvm.minnum.f32" in text and "llvm.sqrt.f32" in text
    assert re.search(r'define internal i32 @"h"\(.*\) noinline', text)
    assert re.search(r"and i32 .*, 31", text)  # shift amount masked to the width


def test_deterministic() -> None:
    assert _lowered().ir == _lowered().ir
