"""Semantics kernels that trap; the expected value is the trap kind. Threads run in order
(x fastest), so the first trapping thread, and so the trap, is well-defined."""

from __future__ import annotations

from make_cases import bits, buf, case, out

from rgpu_fuzz.model.case import Case, ScalarArg
from rgpu_fuzz.model.scalars import Scalar


def vals(ty: str, xs: list[int]) -> list[int]:
    return [bits(ty, x) for x in xs]


def trap_cases() -> list[Case]:
    """Kernels that trap: the expected value is the trap kind (threads run in order, x
    fastest, so the first trapping thread is well-defined)."""
    return _division_traps() + _index_and_call_traps()


def _division_traps() -> list[Case]:
    """Division and remainder by zero, and the overflowing MIN / -1."""
    k_div = """
use rgpu::*;

#[kernel]
pub fn trap_div_by_zero(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] / b[i];
}
"""
    k_rem = """
use rgpu::*;

#[kernel]
pub fn trap_rem_by_zero(a: &[u8], b: &[u8], out: &mut [u8]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] % b[i];
}
"""
    k_ovf = """
use rgpu::*;

#[kernel]
pub fn trap_div_overflow(a: &[i64], b: &[i64], out: &mut [i64]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] / b[i];
}
"""
    k_rem_ovf = """
use rgpu::*;

#[kernel]
pub fn trap_rem_overflow(a: &[i16], b: &[i16], out: &mut [i16]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] % b[i];
}
"""
    return [
        case("trap_div_by_zero", k_div, [buf("a", "i32", vals("i32", [7, 8, 9, 10])),
                                         buf("b", "i32", vals("i32", [1, 2, 0, 3])),
                                         out("out", "i32", 4)], block=(4, 1, 1)),
        case("trap_rem_by_zero", k_rem, [buf("a", "u8", [7, 8, 9]), buf("b", "u8", [3, 0, 1]),
                                         out("out", "u8", 3)], block=(3, 1, 1)),
        case("trap_div_overflow", k_ovf,
             [buf("a", "i64", vals("i64", [10, -(1 << 63), 5])),
              buf("b", "i64", vals("i64", [-1, -1, 0])), out("out", "i64", 3)], block=(3, 1, 1)),
        case("trap_rem_overflow", k_rem_ovf,
             [buf("a", "i16", vals("i16", [-32768, -32768])),
              buf("b", "i16", vals("i16", [1, -1])), out("out", "i16", 2)], block=(2, 1, 1)),
    ]


def _index_and_call_traps() -> list[Case]:
    """Out-of-bounds reads and writes (slices, a local array) and a trap inside a called
    function."""
    k_oob = """
use rgpu::*;

#[kernel]
pub fn trap_oob_read(a: &[u32], out: &mut [u32]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i + 1];
}
"""
    k_oob_w = """
use rgpu::*;

#[kernel]
pub fn trap_oob_write(out: &mut [u32], n: usize) {
    let i: usize = thread_idx_x() as usize;
    out[i + n] = 1;
}
"""
    k_oob_local = """
use rgpu::*;

#[kernel]
pub fn trap_oob_local(a: &[u32], out: &mut [u32]) {
    let i: usize = thread_idx_x() as usize;
    let mut t: [u32; 8] = [0u32; 8];
    t[a[i] as usize] = 5;
    out[i] = t[0];
}
"""
    k_compound = """
use rgpu::*;

#[inline(never)]
fn divide(x: u64, d: u64) -> u64 {
    let mut q: u64 = x;
    q /= d;
    q
}

#[kernel]
pub fn trap_in_helper(a: &[u64], out: &mut [u64]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = divide(100, a[i]);
}
"""
    return [
        case("trap_oob_read", k_oob, [buf("a", "u32", [1, 2, 3, 4]), out("out", "u32", 4)],
             block=(4, 1, 1)),
        case("trap_oob_write", k_oob_w, [out("out", "u32", 4),
                                         ScalarArg(name="n", ty=Scalar.USIZE, bits=2)],
             block=(4, 1, 1)),
        case("trap_oob_local", k_oob_local, [buf("a", "u32", [0, 7, 8, 1]), out("out", "u32", 4)],
             block=(4, 1, 1)),
        case("trap_in_helper", k_compound, [buf("a", "u64", [5, 0]), out("out", "u64", 2)],
             block=(2, 1, 1)),
    ]
