"""The reference interpreter (rgpu_fuzz.interp.run_kernel).

Expected buffers are worked out by hand (or by a few lines of plain Python that follow the
Rust semantics lane by lane, written independently of the interpreter); expected trap and
rejection locations are found in the kernel text itself with `at()`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import CheckedModule, check_source
from rgpu_fuzz.model.outcome import Rejected, RejectReason, Trap, TrapKind


def check(src: str) -> CheckedModule:
    return check_source(src, "test.rs")


def at(src: str, needle: str) -> tuple[int, int]:
    """1-based (line, col) of the unique occurrence of `needle` in `src`."""
    assert src.count(needle) == 1, needle
    before = src[: src.index(needle)]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def run(src: str, grid: tuple[int, int, int] = (1, 1, 1),
        block: tuple[int, int, int] = (4, 1, 1), entry: str = "k", budget: int = 100_000,
        **args: object) -> object:
    return run_kernel(check(src), entry, grid=grid, block=block, args=args,  # type: ignore[arg-type]
                      step_budget=budget)


def outputs(result: object) -> dict[str, list]:
    assert isinstance(result, Finished), result
    return {k: v.tolist() for k, v in result.outputs.items()}


def u32s(n: int, fill: int = 0) -> np.ndarray:
    return np.full(n, fill, dtype=np.uint32)


# ---------------------------------------------------------------- hand-calculated kernels


def test_thread_ids_and_arithmetic_per_lane() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    out[t as usize] = t * t + 1u32;
}
"""
    # t*t + 1 for t = 0..3
    assert outputs(run(src, out=u32s(4)))["out"] == [1, 2, 5, 10]


def test_loop_with_break_and_continue() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let mut acc: u32 = 0u32;
    let mut i: u32 = 0u32;
    while i < 100u32 {
        i += 1u32;
        if i % 2u32 == 0u32 { continue; }
        if i > t + 4u32 { break; }
        acc += i;
    }
    out[t as usize] = acc;
}
"""
    # odd i up to t + 4: t=0: 1+3=4; t=1: 1+3+5=9; t=2: 9; t=3: 1+3+5+7=16
    assert outputs(run(src, out=u32s(4)))["out"] == [4, 9, 9, 16]


def test_for_ranges_and_loop() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let mut s: u32 = 0u32;
    for i in 0u32..t { s += i; }
    for j in 10u32..=10u32 + t { s += j; }
    let mut n: u32 = 0u32;
    loop {
        n += 1u32;
        if n >= t { break; }
    }
    out[t as usize] = s * 100u32 + n;
}
"""
    # sum 0..t-1 plus sum 10..=10+t, times 100, plus max(t, 1)
    # t=0: 0+10 -> 1001; t=1: 0+21 -> 2101; t=2: 1+33 -> 3402; t=3: 3+46 -> 4903
    assert outputs(run(src, out=u32s(4)))["out"] == [1001, 2101, 3402, 4903]


def test_inclusive_range_to_max_terminates() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let mut c: u32 = 0u32;
    for i in 250u8..=255u8 { c += i as u32; }
    out[thread_idx_x() as usize] = c;
}
"""
    # 250+251+...+255 = 1515; an overflowing `i + 1` would wrap to 0 and never stop
    assert outputs(run(src, out=u32s(2), block=(2, 1, 1)))["out"] == [1515, 1515]


def test_helper_with_early_return() -> None:
    src = """use rgpu::*;
fn clamp_div(x: u32, d: u32) -> u32 {
    if d == 0u32 { return 77u32; }
    let q: u32 = x / d;
    if q > 5u32 { return 5u32; }
    q + 100u32
}
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    out[t as usize] = clamp_div(12u32, t) + clamp_div(2u32, t + 1u32);
}
"""
    # t=0: 77 + (2/1=2 -> 102) = 179; t=1: 12 -> 5, 2/2=1 -> 101: 106;
    # t=2: 6 -> 5, 2/3=0 -> 100: 105; t=3: 4 -> 104, 2/4=0 -> 100: 204
    assert outputs(run(src, out=u32s(4)))["out"] == [179, 106, 105, 204]


def test_local_arrays_dynamic_indexing() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [i32]) {
    let t: usize = thread_idx_x() as usize;
    let mut a: [i32; 4] = [0i32; 4];
    for i in 0usize..4usize { a[i] = (i as i32) * 10i32; }
    a[t] += 1i32;
    let b = a;
    a[0] = -5i32;
    let c: [i32; 3] = [7i32, 8, 9];
    out[t] = b[(t + 1usize) % 4usize] + b[t] + a[0] + c[t % 3usize];
}
"""
    # b = [0,10,20,30] with b[t] += 1; b is a copy, so a[0] = -5 does not change it.
    # t=0: b[1]=10 + b[0]=1 - 5 + 7 = 13; t=1: 20 + 11 - 5 + 8 = 34;
    # t=2: 30 + 21 - 5 + 9 = 55; t=3: b[0]=0 + 31 - 5 + 7 = 33
    assert outputs(run(src, out=np.zeros(4, np.int32)))["out"] == [13, 34, 55, 33]


def test_shared_memory_with_barrier_neighbour_read() -> None:
    src = """use rgpu::*;
#[shared]
static mut T: [u32; 4] = [0u32; 4];
#[kernel]
pub fn k(inp: &[u32], out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let g: u32 = block_idx_x() * block_dim_x() + t;
    unsafe { T[t as usize] = inp[g as usize] * 2u32; }
    sync_threads();
    out[g as usize] = unsafe { T[((t + 1u32) % 4u32) as usize] };
}
"""
    inp = np.arange(8, dtype=np.uint32) + 1
    # block 0 stores [2,4,6,8]; lane t reads T[(t+1)%4]; block 1 stores [10,12,14,16]
    res = run(src, grid=(2, 1, 1), inp=inp, out=u32s(8))
    assert outputs(res)["out"] == [4, 6, 8, 2, 12, 14, 16, 10]


def test_two_and_three_dimensional_launch_ids() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let x: u32 = block_idx_x() * block_dim_x() + thread_idx_x();
    let y: u32 = block_idx_y() * block_dim_y() + thread_idx_y();
    let z: u32 = block_idx_z() * block_dim_z() + thread_idx_z();
    let w: u32 = grid_dim_x() * block_dim_x();
    let h: u32 = grid_dim_y() * block_dim_y();
    out[(x + w * (y + h * z)) as usize] = x * 100u32 + y * 10u32 + z;
}
"""
    # grid (2,1,2) blocks of (1,2,1): global extent 2 x 2 x 2; element (x,y,z) gets xyz digits
    res = run(src, grid=(2, 1, 2), block=(1, 2, 1), out=u32s(8))
    expected = [0] * 8
    for z in range(2):
        for y in range(2):
            for x in range(2):
                expected[x + 2 * (y + 2 * z)] = x * 100 + y * 10 + z
    assert outputs(res)["out"] == expected


def test_short_circuit_skips_trapping_rhs() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let i: usize = (t * 10u32) as usize;
    let ok: bool = i < a.len() && a[i] > 0u32;
    let alt: bool = t == 0u32 || 100u32 / t > 40u32;
    out[t as usize] = (ok as u32) * 10u32 + (alt as u32);
}
"""
    # a has 12 elements: t=0 and 1 index in bounds (i = 0, 10); t=2,3 would trap without
    # short-circuiting. t=0 skips 100/0. 100/t > 40: t=1 (100), t=2 (50) yes, t=3 (33) no.
    a = np.arange(12, dtype=np.uint32)
    assert outputs(run(src, a=a, out=u32s(4)))["out"] == [1, 11, 1, 0]


def test_if_expressions_and_blocks_as_values() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [i32]) {
    let t: i32 = thread_idx_x() as i32;
    let v: i32 = if t < 2i32 { t - 10i32 } else if t == 2i32 { 50i32 } else { let q = t * 3i32; q };
    out[t as usize] = { let z: i32 = v; z + 1i32 };
}
"""
    assert outputs(run(src, out=np.zeros(4, np.int32)))["out"] == [-9, -8, 51, 10]


def test_design_example_kernel() -> None:
    src = DESIGN_KERNEL
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 100, dtype=np.uint32)
    b = rng.uniform(0.5, 4.0, 50).astype(np.float32)
    n = 200
    res = run(src, grid=(4, 1, 1), block=(64, 1, 1), a=a, b=b, out=u32s(256),
              fout=np.zeros(256, np.float32), n=np.uint32(n))
    out = outputs(res)

    def rotl5(x: int) -> int:
        return ((x << 5) | (x >> 27)) & 0xFFFF_FFFF

    exp_out, exp_f = [0] * 256, [0.0] * 256
    for blk in range(4):
        tile = [float(b[(blk * 64 + t) % len(b)]) for t in range(64)]
        for t in range(64):
            gid = blk * 64 + t
            acc = 0
            for i in range(4):
                acc = (acc + (rotl5(int(a[(gid + i) % len(a)])) ^ (i * 0x9E37_79B9 % 2**32)))
                acc &= 0xFFFF_FFFF
            if gid < n:
                exp_out[gid] = acc
                # x*2 - 0.5 is exact in binary64 for x in [0.5, 4) (at most 26 bits), so one
                # rounding to binary32 is the fused result
                exp_f[gid] = float(np.float32(tile[(t + 1) % 64] * 2.0 - 0.5))
    assert out["out"] == exp_out
    assert out["fout"] == exp_f


def test_inputs_are_not_mutated() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) { out[thread_idx_x() as usize] = 9u32; }
"""
    buf = u32s(4, 1)
    res = run(src, out=buf)
    assert outputs(res)["out"] == [9, 9, 9, 9]
    assert buf.tolist() == [1, 1, 1, 1]


def test_bad_arguments_are_an_invalid_case() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], n: u8) { out[0] = n as u32; }
"""
    for args in ({"out": u32s(1)}, {"out": np.zeros(1, np.int32), "n": 1},
                 {"out": u32s(1), "n": 256}, {"out": u32s(1), "n": 1, "zz": 2}):
        res = run(src, block=(1, 1, 1), **args)
        assert isinstance(res, Rejected) and res.reason is RejectReason.INVALID_CASE, args


# ---------------------------------------------------------------- traps


def test_trap_div_by_zero_location_and_thread() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    out[t as usize] = 10u32 / (t - 2u32 + t * 0u32);
}
"""
    res = run(src, out=u32s(4))
    assert isinstance(res, Trap) and res.kind is TrapKind.DIV_BY_ZERO
    assert res.where is not None
    assert (res.where.line, res.where.col) == at(src, "10u32 / (")
    assert res.where.thread == (2, 0, 0) and res.where.block == (0, 0, 0)


def test_trap_div_overflow_min_by_minus_one() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [i32]) {
    let t: i32 = thread_idx_x() as i32;
    let d: i32 = if t == 3i32 { -1i32 } else { 1i32 };
    out[t as usize] = i32::MIN % d;
}
"""
    res = run(src, out=np.zeros(4, np.int32))
    assert isinstance(res, Trap) and res.kind is TrapKind.DIV_OVERFLOW
    assert res.where is not None and res.where.thread == (3, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "i32::MIN % d")


def test_wrapping_div_traps_only_on_zero() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [i32], d: i32) {
    out[0] = i32::MIN.wrapping_div(d);
}
"""
    assert outputs(run(src, block=(1, 1, 1), out=np.zeros(1, np.int32), d=-1))["out"] == [
        -(2**31)
    ]
    res = run(src, block=(1, 1, 1), out=np.zeros(1, np.int32), d=0)
    assert isinstance(res, Trap) and res.kind is TrapKind.DIV_BY_ZERO


def test_trap_out_of_bounds_read_and_write() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    out[t] = a[t + 2usize];
}
"""
    # a has 4 elements: lanes 2 and 3 read a[4], a[5]; the first trapping lane is 2
    res = run(src, a=u32s(4), out=u32s(4))
    assert isinstance(res, Trap) and res.kind is TrapKind.OUT_OF_BOUNDS
    assert res.where is not None and res.where.thread == (2, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "a[t + 2usize]")
    # the store: out has 3 elements, lane 3 writes out[3]
    res = run(src, a=u32s(8), out=u32s(3))
    assert isinstance(res, Trap) and res.kind is TrapKind.OUT_OF_BOUNDS
    assert res.where is not None and res.where.thread == (3, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "out[t]")


def test_trap_only_on_active_lanes() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let mut a: [u32; 2] = [5u32; 2];
    if t < 2u32 { out[t as usize] = a[t as usize] / (t + 1u32); }
}
"""
    # lanes 2, 3 would index a[2], a[3] out of bounds, but they are masked off
    assert outputs(run(src, out=u32s(4)))["out"] == [5, 2, 0, 0]


def rename_uniform(checked: CheckedModule, kernel: str, old: str, new: str) -> CheckedModule:
    """`checked` with every use of the uniform local `old` in `kernel` replaced by the local
    `new`: builds a kernel with a thread-dependent barrier that the checker's static
    uniformity analysis would refuse, so the interpreter's dynamic check can be tested."""
    fn = checked.fns[kernel]
    target = next(n for n in _walk(fn) if isinstance(n, ast.Name) and n.ident == new)

    def rewrite(node: object) -> object:
        if isinstance(node, ast.Name) and node.ident == old:
            return dataclasses.replace(target, span=node.span)
        if isinstance(node, tuple):
            return tuple(rewrite(x) for x in node)
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            changes = {f.name: rewrite(getattr(node, f.name)) for f in dataclasses.fields(node)
                       if f.name not in ("span", "ty", "kind", "binding")}
            return dataclasses.replace(node, **changes)
        return node

    fns = dict(checked.fns)
    fns[kernel] = rewrite(fn)  # type: ignore[assignment]
    return dataclasses.replace(checked, fns=fns)


def _walk(node: object) -> list[object]:
    out = [node]
    if isinstance(node, tuple):
        for x in node:
            out += _walk(x)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.name not in ("span", "ty", "kind", "binding"):
                out += _walk(getattr(node, f.name))
    return out


# ---------------------------------------------------------------- speed


DESIGN_KERNEL = (Path(__file__).parents[2] / "examples" / "kernel.rs").read_text()
"""docs/language.md's example (one line broken after `}` to fit the line length)."""


def test_nested_loops_helper_loops_and_returns() -> None:
    src = """use rgpu::*;
fn first_multiple(x: u32, limit: u32) -> u32 {
    let mut i: u32 = 1u32;
    while i < limit {
        if (i * x) % 6u32 == 0u32 { return i; }
        i += 1u32;
    }
    0u32
}
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    let mut total: u32 = 0u32;
    for a in 0u32..3u32 {
        for b in 0u32..10u32 {
            if b > a + t { break; }
            if b == 1u32 { continue; }
            total += 1u32;
        }
    }
    out[t as usize] = total * 100u32 + first_multiple(t + 1u32, 4u32);
}
"""
    # inner loop counts b in 0..=min(a+t, 9) except b == 1: count(a+t) = a+t (for a+t >= 1),
    # 1 for a+t == 0. t=0: 1+1+2 = 4; t=1: 1+2+3 = 6; t=2: 2+3+4 = 9; t=3: 3+4+5 = 12.
    # first i in 1..4 with i*x % 6 == 0: x=1: none -> 0; x=2: 3; x=3: 2; x=4: 3
    assert outputs(run(src, out=u32s(4)))["out"] == [400, 603, 902, 1203]


def test_trap_inside_helper_reports_helper_location() -> None:
    src = """use rgpu::*;
fn inv(x: i32) -> i32 { 100i32 / x }
#[kernel]
pub fn k(out: &mut [i32]) {
    let t: i32 = thread_idx_x() as i32;
    if t != 0i32 { out[t as usize] = inv(t - 3i32); }
}
"""
    res = run(src, out=np.zeros(4, np.int32))
    assert isinstance(res, Trap) and res.kind is TrapKind.DIV_BY_ZERO
    assert res.where is not None and res.where.thread == (3, 0, 0)
    assert (res.where.line, res.where.col) == at(src, "100i32 / x")


def test_float_literals_and_operations_in_their_type() -> None:
    src = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32], wide: &mut [u64]) {
    let x: f32 = 0.1f32;
    out[0] = x.to_bits();
    out[1] = (x + 0.2f32).to_bits();
    out[2] = (16777217i32 as f32).to_bits();
    out[3] = (f32::from_bits(1u32) * 0.5f32).to_bits();
    wide[0] = (0.1f64 + 0.2f64).to_bits();
}
"""
    res = outputs(run(src, block=(1, 1, 1), out=u32s(4), wide=np.zeros(1, np.uint64)))
    # 0.1 rounded to binary32 is 0x3DCCCCCD; 0.1f32 + 0.2f32 (0x3E4CCCCD) = 0x3E99999A
    # (not the f64 result rounded); 2**24 + 1 ties to even 2**24 = 0x4B800000;
    # half the smallest subnormal ties to even 0; 0.1 + 0.2 in binary64 = 0x3FD3333333333334
    assert res["out"] == [0x3DCC_CCCD, 0x3E99_999A, 0x4B80_0000, 0]
    assert res["wide"] == [0x3FD3_3333_3333_3334]


def test_compound_assignment_on_shared_and_global() -> None:
    src = """use rgpu::*;
#[shared]
static mut S: [i32; 2] = [0i32; 2];
#[kernel]
pub fn k(out: &mut [i32]) {
    let t: usize = thread_idx_x() as usize;
    unsafe { S[t] = 7i32; S[t] *= -3i32; S[t] >>= 1u32; }
    sync_threads();
    out[t] = 1i32;
    out[t] <<= 4u8;
    out[t] -= unsafe { S[1 - t] };
}
"""
    # S = 7 * -3 = -21, arithmetic >> 1 = -11 (floor); out = (1 << 4) - (-11) = 27
    res = run(src, block=(2, 1, 1), out=np.zeros(2, np.int32))
    assert outputs(res)["out"] == [27, 27]
