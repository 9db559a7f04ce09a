"""Conformance kernels for the classes of bug that once escaped the suite, and for the
constructs of docs/language.md that no other case used (`generators/constructs.py` measures
it; docs/conformance.md lists them). `make_cases.py` saves them as case files; their expected
values come from the real rustc (`regen_expected.py`), like every case's.

* `shift_small`: `<<` and `>>` on i16/u16 (and i8/u8) with amounts of every integer type near
  and past the width (masked to `bits - 1`, docs/language.md "Run-time semantics").
* `bitcount_small`: `count_ones`, `leading_zeros`, `trailing_zeros` of u8/i8/u16/i16, also as
  values feeding conditions and shifts.
* `local_dynamic_index`: local arrays of every width, read and written at run-time indices
  (a promoted array indexed dynamically is `v_movrel*`/scratch code on AMDGPU).
* `local_dynamic_wide`: the same with arrays of 8 to 16 elements of u64, f64, u32 and i16.
* `cf_returns_calls`: `return` in a kernel and in its loop, `break` in `while`, a helper with a
  bool parameter and a local array, helper calls in `&&`/`||` and in an index, cast chains.
* `shared_barrier_control`: barriers in `if`/`else`, `while`, `loop` and nested loops,
  `break`/`continue`/`return` in loops with barriers, `return` after a barrier, a shared read
  in a condition.
* `float_special_literals`: infinity, `-0.0` and subnormals written as `from_bits` literals
  (the last three value features of `generators/stats.py` no case had).
"""

from __future__ import annotations

from make_cases import bits, buf, case, cycle, out

from rgpu_fuzz.model.case import Case, ScalarArg
from rgpu_fuzz.model.scalars import Scalar

N = 64


def vals(ty: str, xs: list[int] | list[float]) -> list[int]:
    return [bits(ty, x) for x in xs]


def shift_small() -> Case:
    i16s = [0, 1, -1, -2, 7, -32768, 32767, 0x5555, -0x5556, 0x4000, 0x100, -0x100, 3, -3]
    u16s = [0, 1, 0xFFFF, 0xFFFE, 0x8000, 0x7FFF, 0x5555, 0xAAAA, 0x100, 0xFF, 2, 0x4001]
    amounts_u32 = [0, 1, 7, 8, 14, 15, 16, 17, 23, 31, 32, 33, 255, 0xFFFF, 0xFFFFFFFF, 30]
    amounts_i32 = [-1, -16, -15, -17, 0, 1, 15, 16, 17, 31, 32, -(1 << 31), (1 << 31) - 1, 8]
    amounts_u8 = [0, 1, 7, 8, 15, 16, 17, 31, 32, 255, 128, 14]
    amounts_i16 = [-1, 0, 15, 16, 17, -32768, 32767, -16, 14, 1, 31]
    k = """
use rgpu::*;

#[kernel]
pub fn shift_small(
    a: &[i16],
    b: &[u16],
    k: &[u32],
    ks: &[i32],
    k8: &[u8],
    k16: &[i16],
    shl: &mut [i16],
    shr: &mut [i16],
    ushl: &mut [u16],
    ushr: &mut [u16],
    same: &mut [i16],
    narrow: &mut [u16],
    comp: &mut [i16],
    lit: &mut [i16],
    near: &mut [i16],
    bytes: &mut [u32],
) {
    let i: usize = thread_idx_x() as usize;
    let x: i16 = a[i];
    let y: u16 = b[i];
    shl[i] = x << k[i];
    shr[i] = x >> k[i];
    ushl[i] = y << ks[i];
    ushr[i] = y >> ks[i];
    same[i] = (x << k16[i]) ^ (x >> k16[i]);
    narrow[i] = (y >> k8[i]) | (y << k8[i]).rotate_left(3);
    let mut c: i16 = x;
    c <<= k8[i];
    c >>= 3u32;
    c ^= x >> 15u8;
    comp[i] = c;
    lit[i] = (x << 15u32) ^ (x >> 15i32) ^ ((y >> 15i64) as i16) ^ ((y << 14u8) as i16);
    let m: u32 = k[i] % 17u32;
    near[i] = (x >> (16u32 - m)) ^ (x << (m & 15u32)) ^ ((y >> m) as i16);
    let s: i8 = x as i8;
    let u: u8 = y as u8;
    bytes[i] = ((s >> k[i]) as u8 as u32) | (((s << ks[i]) as u8 as u32) << 8)
        | (((u >> k8[i]) as u32) << 16) | (((u << k16[i]) as u32) << 24);
}
"""
    return case("shift_small", k, [
        buf("a", "i16", vals("i16", cycle(i16s, N))),
        buf("b", "u16", vals("u16", cycle(u16s, N))),
        buf("k", "u32", vals("u32", cycle(amounts_u32, N))),
        buf("ks", "i32", vals("i32", cycle(amounts_i32, N))),
        buf("k8", "u8", vals("u8", cycle(amounts_u8, N))),
        buf("k16", "i16", vals("i16", cycle(amounts_i16, N))),
        *(out(o, "i16", N) for o in ("shl", "shr")),
        *(out(o, "u16", N) for o in ("ushl", "ushr")),
        out("same", "i16", N), out("narrow", "u16", N),
        *(out(o, "i16", N) for o in ("comp", "lit", "near")), out("bytes", "u32", N),
    ], block=(N, 1, 1))


def bitcount_small() -> Case:
    u8s = [0, 1, 0x80, 0xFF, 0x7F, 0x10, 0x55, 0xAA, 0xF0, 0x0F, 2, 0x81, 0x40]
    i8s = [0, 1, -1, -128, 127, -2, 0x10, -0x10, 0x55, -0x56, 64, -64, 3]
    u16s = [0, 1, 0x8000, 0xFFFF, 0x7FFF, 0x100, 0x5555, 0xAAAA, 0xFF00, 0x00FF, 0x8001, 4, 0x400]
    i16s = [0, 1, -1, -32768, 32767, -2, 0x100, -0x100, 0x5555, -0x5556, 0x4000, -0x4000, 12]
    k = """
use rgpu::*;

#[kernel]
pub fn bitcount_small(
    a8: &[u8],
    s8: &[i8],
    a16: &[u16],
    s16: &[i16],
    ones: &mut [u32],
    lz: &mut [u32],
    tz: &mut [u32],
    mixed: &mut [u32],
    used: &mut [u16],
) {
    let i: usize = thread_idx_x() as usize;
    let u: u8 = a8[i];
    let s: i8 = s8[i];
    let w: u16 = a16[i];
    let v: i16 = s16[i];
    ones[i] = u.count_ones() | (s.count_ones() << 8) | (w.count_ones() << 16)
        | (v.count_ones() << 24);
    lz[i] = u.leading_zeros() | (s.leading_zeros() << 8) | (w.leading_zeros() << 16)
        | (v.leading_zeros() << 24);
    tz[i] = u.trailing_zeros() | (s.trailing_zeros() << 8) | (w.trailing_zeros() << 16)
        | (v.trailing_zeros() << 24);
    mixed[i] = (u ^ 0xFFu8).leading_zeros() + (s >> 1u32).trailing_zeros() * 3
        + (v as u16).count_ones() * 7 + (!w).trailing_zeros() * 11
        + (s as i16).leading_zeros() * 13 + (w as u8).count_ones() * 17;
    let mut r: u16 = w >> v.trailing_zeros();
    if u.leading_zeros() > 3u32 {
        r = r.wrapping_add(v.leading_zeros() as u16);
    }
    if s.count_ones() == 8u32 || w.leading_zeros() == 16u32 {
        r ^= 0x8000u16;
    }
    used[i] = r << (u.count_ones() % 16u32);
}
"""
    return case("bitcount_small", k, [
        buf("a8", "u8", vals("u8", cycle(u8s, N))),
        buf("s8", "i8", vals("i8", cycle(i8s, N))),
        buf("a16", "u16", vals("u16", cycle(u16s, N))),
        buf("s16", "i16", vals("i16", cycle(i16s, N))),
        *(out(o, "u32", N) for o in ("ones", "lz", "tz", "mixed")), out("used", "u16", N),
    ], block=(N, 1, 1))


def local_dynamic_index() -> Case:
    sel = [0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 255, 1000, 4095,
           0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 12, 9, 6]
    vs = [0, 1, 0xFF, 0x1234, 0x8000, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 42, 0xDEAD_BEEF]
    k = """
use rgpu::*;

#[kernel]
pub fn local_dynamic_index(
    sel: &[u32],
    v: &[u32],
    ob: &mut [u8],
    oh: &mut [i16],
    ow: &mut [u32],
    oq: &mut [u64],
    of: &mut [f32],
    od: &mut [f64],
    sums: &mut [u64],
) {
    let i: usize = thread_idx_x() as usize;
    let r: usize = sel[i] as usize;
    let x: u32 = v[i];
    let mut b: [u8; 16] = [0u8; 16];
    for j in 0usize..16usize {
        b[j] = (j as u8).wrapping_mul(17u8) ^ x as u8;
    }
    b[r % 16] = 200u8;
    b[(r * 7) % 16] += 3u8;
    ob[i] = b[r % 16] ^ b[(r + 5) % 16] ^ b[b[r % 16] as usize % 16];
    let mut h: [i16; 8] = [-3i16; 8];
    h[r % 8] = x as i16;
    h[(r + 3) % 8] -= 1000i16;
    let mut acc: i16 = 0;
    for j in 0usize..8usize {
        acc = acc.wrapping_mul(3i16) ^ h[(r + j) % 8];
    }
    oh[i] = acc;
    let mut w: [u32; 33] = [0u32; 33];
    w[r % 33] = x;
    w[(r + 1) % 33] = w[r % 33].wrapping_add(1u32);
    let mut k: usize = r % 33;
    let mut hops: u32 = 0;
    while w[k] != 0u32 && hops < 40u32 {
        k = (k + 1) % 33;
        hops += 1;
    }
    ow[i] = w[(r + 1) % 33] ^ hops ^ w[32 - r % 33];
    let mut q: [u64; 4] = [1u64, 2, 3, 4];
    q[r % 4] <<= 33u32;
    q[(r / 4) % 4] ^= x as u64;
    oq[i] = q[0] + q[1] * 3 + q[2] * 5 + q[3] * 7 + q[r % 4];
    let mut f: [f32; 6] = [0.5f32; 6];
    f[r % 6] = 2.5f32;
    f[(r + 2) % 6] *= x as f32;
    of[i] = f[(r + 2) % 6] + f[r % 6] - f[5 - r % 6];
    let mut d: [f64; 3] = [1.0f64, -2.0, 4.0];
    d[r % 3] = x as f64;
    od[i] = d[0] * 9.0 + d[1] * 3.0 + d[2] + d[(r + 1) % 3];
    let mut total: u64 = 0;
    for j in 0usize..16usize {
        total += b[j] as u64;
    }
    for j in 0usize..33usize {
        total += w[j] as u64;
    }
    sums[i] = total;
}
"""
    return case("local_dynamic_index", k, [
        buf("sel", "u32", vals("u32", cycle(sel, N))),
        buf("v", "u32", vals("u32", cycle(vs, N))),
        out("ob", "u8", N), out("oh", "i16", N), out("ow", "u32", N), out("oq", "u64", N),
        out("of", "f32", N), out("od", "f64", N), out("sums", "u64", N),
    ], block=(N, 1, 1))


def local_dynamic_wide() -> Case:
    """Arrays of 8 to 16 elements, 16- to 64-bit, read and written at run-time indices: what
    LLVM may keep in registers and index with selects (`v_cndmask` chains) or `v_movrel*`."""
    sel = [0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 100, 255]
    vs = [0, 1, 0xFF, 0x1234, 0x8000, 0xFFFF_FFFF, 42]
    k = """
use rgpu::*;

#[kernel]
pub fn local_dynamic_wide(
    sel: &[u32],
    v: &[u32],
    o1: &mut [u64],
    o2: &mut [f64],
    o3: &mut [u32],
    o4: &mut [i16],
) {
    let i: usize = thread_idx_x() as usize;
    let r: usize = sel[i] as usize;
    let x: u32 = v[i];
    let mut q: [u64; 8] = [0u64; 8];
    for j in 0usize..8usize {
        q[j] = (x as u64) << (j as u32);
    }
    q[r % 8] = q[(r + 3) % 8] + 1;
    o1[i] = q[(r * 5) % 8] ^ q[r % 8];
    let mut d: [f64; 12] = [0.5f64; 12];
    d[r % 12] = x as f64;
    d[(r + 7) % 12] *= 3.0;
    o2[i] = d[(r + 7) % 12] + d[r % 12] + d[11 - r % 12];
    let mut w: [u32; 16] = [0u32; 16];
    for j in 0usize..16usize {
        w[j] = x.rotate_left(j as u32);
    }
    w[r % 16] = 7;
    let mut acc: u32 = 0;
    for j in 0usize..16usize {
        acc = acc.wrapping_mul(31) ^ w[(r + j) % 16];
    }
    o3[i] = acc ^ w[x as usize % 16];
    let mut h: [i16; 16] = [1i16; 16];
    h[r % 16] = x as i16;
    h[(x as usize) % 16] -= 5;
    o4[i] = h[r % 16] ^ h[(r + 9) % 16];
}
"""
    return case("local_dynamic_wide", k, [
        buf("sel", "u32", vals("u32", cycle(sel, N))),
        buf("v", "u32", vals("u32", cycle(vs, N))),
        out("o1", "u64", N), out("o2", "f64", N), out("o3", "u32", N), out("o4", "i16", N),
    ], block=(N, 1, 1))


def cf_returns_calls() -> Case:
    xs = [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 15, 24, 30, 35, 47, 48, 60, 99, 100, 255,
          256, 1000, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FF80, 65535, 65536, 77, 23]
    k = """
use rgpu::*;

fn gate(on: bool, x: u32) -> bool {
    if on { x % 3 == 0 } else { x > 10 }
}

#[inline(never)]
fn slot(x: u32) -> usize {
    (x % 4) as usize
}

#[inline(never)]
fn big(x: u32) -> bool {
    100u32 / x > 3
}

#[inline(never)]
fn mix(sel: usize, x: u32) -> u32 {
    let mut h: [u32; 5] = [x, x ^ 1, x ^ 2, x ^ 3, x ^ 4];
    h[sel % 5] = h[(sel + 2) % 5] + 7;
    h[sel % 5] ^ h[4 - sel % 5]
}

#[kernel]
pub fn cf_returns_calls(
    a: &[u32],
    flags: &mut [u32],
    walk: &mut [u32],
    casts: &mut [i64],
    early: &mut [u32],
    tail: &mut [u32],
) {
    let i: usize = thread_idx_x() as usize;
    let x: u32 = a[i];
    let mut f: u32 = 0;
    if x == 0 || big(x) {
        f |= 1;
    }
    if x != 0 && big(x) {
        f |= 2;
    }
    if gate(x % 2 == 0, x) {
        f |= 4;
    }
    if gate(true, x) & !gate(false, x) {
        f |= 8;
    }
    flags[i] = f;
    let tbl = [10u32, 20, 30, 40];
    walk[i] = tbl[slot(x)] + mix(slot(x >> 2), x);
    casts[i] = (x as i8 as i64) + (x as u16 as i16 as i64) * 3 + (x as f32 as u8 as i64)
        + (x as i32 as f64 as i16 as i64);
    let mut k: u32 = 0;
    let mut s: u32 = 0;
    while k < 100u32 {
        if s > x % 50u32 {
            break;
        }
        s += k;
        k += 1;
    }
    early[i] = s * 1000 + k;
    for j in 0u32..10u32 {
        if j == x % 12u32 {
            tail[i] = j + 100;
            return;
        }
    }
    if x % 5 == 0 {
        return;
    }
    tail[i] = 7;
}
"""
    return case("cf_returns_calls", k, [
        buf("a", "u32", vals("u32", xs)),
        out("flags", "u32", len(xs)), out("walk", "u32", len(xs)), out("casts", "i64", len(xs)),
        out("early", "u32", len(xs)), out("tail", "u32", len(xs)),
    ], block=(len(xs), 1, 1))


_SHARED_BARRIER_CONTROL = """
use rgpu::*;

#[shared]
static mut S: [u32; 64] = [0u32; 64];

#[shared]
static mut T: [i32; 64] = [0i32; 64];

#[kernel]
pub fn shared_barrier_control(
    a: &[u32],
    mode: u32,
    rounds: u32,
    stop: u32,
    o1: &mut [u32],
    o2: &mut [u32],
    o3: &mut [u32],
    o4: &mut [u32],
    o5: &mut [u32],
    o6: &mut [u32],
) {
    let t: usize = thread_idx_x() as usize;
    let g: usize = (block_idx_x() * block_dim_x()) as usize + t;
    unsafe {
        S[t] = a[g];
    }
    sync_threads();
    if mode > 1u32 {
        unsafe {
            T[t] = S[63 - t] as i32;
        }
        sync_threads();
    } else {
        unsafe {
            T[t] = S[t] as i32 - 1;
        }
        sync_threads();
    }
    o1[g] = unsafe { T[(t + 1) % 64] } as u32;
    let mut r: u32 = 0;
    while r < rounds {
        unsafe {
            S[t] = S[t].wrapping_add(T[(t + r as usize) % 64] as u32);
        }
        sync_threads();
        if r == 1u32 {
            r += 1;
            continue;
        }
        o2[g] ^= unsafe { S[(t + 1) % 64] };
        sync_threads();
        r += 1;
    }
    let mut m: u32 = 0;
    loop {
        unsafe {
            S[t] = S[t].rotate_left(1) ^ m;
        }
        sync_threads();
        o3[g] = o3[g].wrapping_add(unsafe { S[(t + 3) % 64] });
        sync_threads();
        m += 1;
        if m >= rounds {
            break;
        }
    }
    for p in 0u32..2u32 {
        for q in 0u32..2u32 {
            unsafe {
                S[t] += p * 2 + q;
            }
            sync_threads();
            o4[g] ^= unsafe { S[63 - t] } << q;
            sync_threads();
        }
        sync_threads();
    }
    if unsafe { S[t] } % 2u32 == 0u32 {
        o5[g] = 1;
    } else {
        o5[g] = 2;
    }
    for z in 0u32..8u32 {
        unsafe {
            T[t] = z as i32 + t as i32;
        }
        sync_threads();
        if z == stop {
            o6[g] = unsafe { T[(t + 5) % 64] } as u32;
            return;
        }
        sync_threads();
    }
    o6[g] = 9;
}
"""
"""`shared_barrier_control`'s kernel: barriers under every kind of control flow."""


def shared_barrier_control() -> Case:
    n = 128
    a = [(i * 2654435761 + 12345) % (1 << 32) for i in range(n)]
    k = _SHARED_BARRIER_CONTROL
    return case("shared_barrier_control", k, [
        buf("a", "u32", a),
        ScalarArg(name="mode", ty=Scalar.U32, bits=2),
        ScalarArg(name="rounds", ty=Scalar.U32, bits=4),
        ScalarArg(name="stop", ty=Scalar.U32, bits=5),
        *(out(f"o{j}", "u32", n) for j in range(1, 7)),
    ], grid=(2, 1, 1), block=(64, 1, 1))


def float_special_literals() -> Case:
    xs = [0.0, -0.0, 1.0, -1.0, 1e-40, -1e-40, 1e38, 3.5, -2.25, float("inf")]
    k = """
use rgpu::*;

const NEG_ZERO: f32 = f32::from_bits(0x8000_0000u32);

#[kernel]
pub fn float_special_literals(
    a: &[f32],
    d: &[f64],
    sums: &mut [f32],
    prods: &mut [f32],
    wide: &mut [f64],
    picks: &mut [u32],
) {
    let i: usize = thread_idx_x() as usize;
    let x: f32 = a[i];
    let inf: f32 = f32::from_bits(0x7f80_0000u32);
    let sub: f32 = f32::from_bits(0x0000_0003u32);
    sums[i] = (x + NEG_ZERO) + (x * sub) - sub;
    prods[i] = x * inf + f32::from_bits(0x8000_0000u32) * x;
    wide[i] = d[i] * f64::from_bits(0xfff0_0000_0000_0000u64)
        + d[i] / f64::from_bits(0x0000_0000_0000_0001u64)
        + f64::from_bits(0x8000_0000_0000_0000u64);
    let mut p: u32 = 0;
    if x < inf { p |= 1; }
    if x == NEG_ZERO { p |= 2; }
    if x.abs() < sub * 1e30f32 { p |= 4; }
    if (x - inf).to_bits() == 0xff80_0000u32 { p |= 8; }
    picks[i] = p;
}
"""
    n = len(xs)
    return case("float_special_literals", k, [
        buf("a", "f32", vals("f32", xs)), buf("d", "f64", vals("f64", xs)),
        out("sums", "f32", n), out("prods", "f32", n), out("wide", "f64", n),
        out("picks", "u32", n)], block=(n, 1, 1))


def escape_cases() -> list[Case]:
    return [shift_small(), bitcount_small(), local_dynamic_index(), local_dynamic_wide(),
            cf_returns_calls(), shared_barrier_control(), float_special_literals()]
