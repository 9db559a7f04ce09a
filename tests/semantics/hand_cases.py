"""The hand-written semantics kernels that are not tables: control flow, items, and (from
`launch_cases.py`, `trap_cases.py`) launches, shared memory with barriers, and traps.
`make_cases.py` saves them as case files."""

from __future__ import annotations

from launch_cases import launch_cases
from make_cases import bits, buf, case, out
from trap_cases import trap_cases

from rgpu_fuzz.model.case import BufferArg, Case, ScalarArg

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def vals(ty: str, xs: list[int | float]) -> list[int]:
    return [bits(ty, x) for x in xs]


def cf_if_else() -> Case:
    xs = [I32_MIN, -101, -100, -7, -1, 0, 1, 2, 9, 10, 11, 12, I32_MAX]
    n = len(xs)
    k = """
use rgpu::*;

#[kernel]
pub fn cf_if_else(
    a: &[i32],
    stmt: &mut [i32],
    expr: &mut [i32],
    nested: &mut [u8],
    no_else: &mut [u32],
) {
    let i: usize = thread_idx_x() as usize;
    let x: i32 = a[i];
    let mut r: i32 = 0;
    if x < -100 {
        r = 1;
    } else if x < 0 {
        r = 2;
    } else if x == 0 {
        r = 3;
    } else {
        r = 4;
    }
    stmt[i] = r;
    expr[i] = if x > 10 { x - 10 } else if x > 0 { x * 2 } else { -x };
    let v: u8 = if x % 2 == 0 {
        if x > 0 { 1u8 } else { 2u8 }
    } else {
        3u8
    };
    nested[i] = v;
    let mut c: u32 = 5;
    if x == 1 {
        c = c + 1;
    }
    if x != 1 {
    } else {
        c = c * 10;
    }
    no_else[i] = c;
}
"""
    return case("cf_if_else", k, [buf("a", "i32", vals("i32", xs)), out("stmt", "i32", n),
                                  out("expr", "i32", n), out("nested", "u8", n),
                                  out("no_else", "u32", n)], block=(n, 1, 1))


def cf_while() -> Case:
    xs = [0, 1, 2, 3, 7, 27, 97, 871, 1 << 31, 0xFFFFFFFF]
    n = len(xs)
    k = """
use rgpu::*;

#[kernel]
pub fn cf_while(a: &[u32], steps: &mut [u32], last: &mut [u32], cont: &mut [u32]) {
    let i: usize = thread_idx_x() as usize;
    let mut x: u32 = a[i];
    let mut n: u32 = 0;
    while x != 1 && n < 200 {
        if x % 2 == 0 {
            x = x / 2;
        } else {
            x = 3 * x + 1;
        }
        n += 1;
    }
    steps[i] = n;
    last[i] = x;
    let mut j: u32 = 0;
    let mut odd: u32 = 0;
    while j < a[i] % 50 {
        j += 1;
        if j % 2 == 0 {
            continue;
        }
        odd += j;
    }
    cont[i] = odd;
}
"""
    return case("cf_while", k, [buf("a", "u32", xs), out("steps", "u32", n),
                                out("last", "u32", n), out("cont", "u32", n)], block=(n, 1, 1))


def cf_loop_break() -> Case:
    xs = [0, 1, 2, 3, 5, 10, 100, 1000, 100000]
    n = len(xs)
    k = """
use rgpu::*;

#[kernel]
pub fn cf_loop_break(a: &[u32], acc_out: &mut [u64], k_out: &mut [u32], inner: &mut [u32]) {
    let i: usize = thread_idx_x() as usize;
    let mut acc: u64 = 0;
    let mut k: u32 = 0;
    loop {
        k += 1;
        if k > a[i] {
            break;
        }
        if k % 3 == 0 {
            continue;
        }
        acc = acc.wrapping_mul(31).wrapping_add(k as u64);
        if acc > 1_000_000u64 {
            break;
        }
    }
    acc_out[i] = acc;
    k_out[i] = k;
    let mut count: u32 = 0;
    let mut outer: u32 = 0;
    while outer < 4 {
        let mut m: u32 = 0;
        loop {
            if m >= a[i] % 7 {
                break;
            }
            m += 1;
            count += 1;
        }
        outer += 1;
    }
    inner[i] = count;
}
"""
    return case("cf_loop_break", k, [buf("a", "u32", xs), out("acc_out", "u64", n),
                                     out("k_out", "u32", n), out("inner", "u32", n)],
                block=(n, 1, 1))


def cf_for_ranges() -> Case:
    xs = [0, 1, 2, 5, 9, 250, 254, 255]
    n = len(xs)
    k = """
use rgpu::*;

#[kernel]
pub fn cf_for_ranges(
    a: &[u8],
    excl: &mut [u32],
    incl: &mut [u32],
    to_max: &mut [u32],
    i8_max: &mut [i32],
    u64_max: &mut [u64],
    empty: &mut [u32],
    neg: &mut [i64],
    once: &mut [u32],
    cont: &mut [u32],
) {
    let i: usize = thread_idx_x() as usize;
    let x: u8 = a[i];
    let mut s: u32 = 0;
    for j in 0u8..x {
        s += j as u32;
    }
    excl[i] = s;
    let mut t: u32 = 0;
    for j in 0u8..=x {
        t += j as u32 + 1;
    }
    incl[i] = t;
    let mut c: u32 = 0;
    for j in x..=u8::MAX {
        c = c * 3 + j as u32;
    }
    to_max[i] = c;
    let mut m: i32 = 0;
    for j in i8::MAX - 2..=i8::MAX {
        m = m * 1000 + j as i32;
    }
    i8_max[i] = m;
    let mut last: u64 = 0;
    let mut iters: u64 = 0;
    for v in u64::MAX - (x as u64 % 4)..=u64::MAX {
        last = v;
        iters += 1;
    }
    u64_max[i] = last ^ iters;
    let mut e: u32 = 0;
    for _j in 5u32..5u32 {
        e += 1;
    }
    for _j in 5u32..3u32 {
        e += 10;
    }
    for _j in 5u32..=4u32 {
        e += 100;
    }
    empty[i] = e;
    let mut p: i64 = 1;
    for v in -3i64..3i64 {
        p = p * 10 + v;
    }
    neg[i] = p;
    let mut end: u32 = x as u32 % 5;
    let mut runs: u32 = 0;
    for _j in 0u32..end {
        end = end + 1;
        runs += 1;
    }
    once[i] = runs * 100 + end;
    let mut odd: u32 = 0;
    for j in 0u32..=x as u32 % 20 {
        if j % 2 == 0 {
            continue;
        }
        odd += j;
    }
    cont[i] = odd;
}
"""
    outs = [out("excl", "u32", n), out("incl", "u32", n), out("to_max", "u32", n),
            out("i8_max", "i32", n), out("u64_max", "u64", n), out("empty", "u32", n),
            out("neg", "i64", n), out("once", "u32", n), out("cont", "u32", n)]
    return case("cf_for_ranges", k, [buf("a", "u8", xs), *outs], block=(n, 1, 1))


def cf_helpers() -> Case:
    xs = [I32_MIN, -100, -1, 0, 1, 7, 100, I32_MAX]
    ds = [-1, 0, 3, -7, 0, 2, -1, 1]
    n = len(xs)
    k = """
use rgpu::*;

#[inline(never)]
fn safe_div(x: i32, d: i32) -> i32 {
    if d == 0 {
        return 0;
    }
    if x == i32::MIN && d == -1 {
        return i32::MAX;
    }
    x / d
}

fn lowest_set(mut x: u32) -> u32 {
    let mut n: u32 = 0;
    while n < 32 {
        if (x & 1) == 1 {
            return n;
        }
        x = x >> 1;
        n += 1;
    }
    99
}

fn noop(x: u32) {
    if x == 0 {
        return;
    }
    let _y: u32 = x + 1;
}

#[inline(never)]
fn scale(v: f32, times: u32) -> f32 {
    let mut r: f32 = v;
    for _k in 0u32..times {
        r = r * 1.5;
    }
    r
}

fn twice(x: i32, d: i32) -> i64 {
    safe_div(x, d) as i64 * 2 + lowest_set(x as u32) as i64
}

#[kernel]
pub fn cf_helpers(
    a: &[i32],
    d: &[i32],
    q: &mut [i32],
    low: &mut [u32],
    sc: &mut [f32],
    nested: &mut [i64],
) {
    let i: usize = thread_idx_x() as usize;
    noop(i as u32);
    q[i] = safe_div(a[i], d[i]);
    low[i] = lowest_set(a[i] as u32);
    sc[i] = scale(a[i] as f32, i as u32);
    nested[i] = twice(a[i], d[i]);
}
"""
    return case("cf_helpers", k, [buf("a", "i32", vals("i32", xs)),
                                  buf("d", "i32", vals("i32", ds)), out("q", "i32", n),
                                  out("low", "u32", n), out("sc", "f32", n),
                                  out("nested", "i64", n)], block=(n, 1, 1))


def local_arrays() -> Case:
    xs = [0, 1, 3, 7, 8, 13, 0x80000000, 0xFFFFFFFF]
    n = len(xs)
    k = """
use rgpu::*;

const L: usize = 4;

#[kernel]
pub fn local_arrays(
    a: &[u32],
    pick: &mut [u32],
    bumped: &mut [u32],
    small: &mut [u8],
    lens: &mut [u32],
    fl: &mut [f32],
    sum: &mut [u64],
) {
    let i: usize = thread_idx_x() as usize;
    let mut t: [u32; 8] = [0u32; 8];
    for j in 0usize..8usize {
        t[j] = a[i].rotate_left(j as u32);
    }
    let idx: usize = (a[i] % 8) as usize;
    pick[i] = t[idx];
    t[idx] += 1;
    t[(idx + 1) % 8] = t[idx] * 2;
    bumped[i] = t[(idx + 1) % 8];
    let lit = [1u8, 2, 3, 250];
    small[i] = lit[(a[i] % 4) as usize].wrapping_add(10);
    let q: [i16; L] = [-1i16; L];
    lens[i] = t.len() as u32 * 100 + lit.len() as u32 * 10 + q.len() as u32;
    let mut f: [f32; L] = [0.5f32; L];
    f[idx % L] = f[idx % L] * 3.0;
    f[0] -= 0.25;
    fl[i] = f[0] + f[1] * 10.0 + f[2] * 100.0 + f[3] * 1000.0;
    let mut acc: u64 = 0;
    let mut w: usize = 0;
    while w < t.len() {
        acc = acc + t[w] as u64;
        w += 1;
    }
    sum[i] = acc;
}
"""
    return case("local_arrays", k, [buf("a", "u32", xs), out("pick", "u32", n),
                                    out("bumped", "u32", n), out("small", "u8", n),
                                    out("lens", "u32", n), out("fl", "f32", n),
                                    out("sum", "u64", n)], block=(n, 1, 1))


def items_and_scopes() -> Case:
    xs = [0, 1, 5, 100, 0x7FFFFFFF, 0xFFFFFFFF]
    n = len(xs)
    k = """
use rgpu::*;

const K: u32 = 7;
const MASK: u32 = (1u32 << K) - 1;
const BIG: i64 = i64::MAX - 5;
const NEG: i16 = -300;
const C8: u8 = 300u32 as u8;
const HALF: f32 = 1.0f32 / 2.0f32;
const L: usize = 3;

#[kernel]
pub fn items_and_scopes(
    a: &[u32],
    consts: &mut [i64],
    shadow: &mut [u64],
    blk: &mut [u32],
    inner: &mut [u32],
    unsf: &mut [u32],
    fc: &mut [f32],
    arr: &mut [u8],
) {
    let i: usize = thread_idx_x() as usize;
    consts[i] = BIG + (MASK as i64) + (NEG as i64) * 1000 + (C8 as i64) * 1000000
        + (HALF as i64);
    let x: u32 = a[i];
    let x: u64 = x as u64 * 3;
    let x: u64 = x + 1;
    shadow[i] = x;
    let y: u32 = {
        let t: u32 = a[i] ^ K;
        t.wrapping_mul(3)
    };
    blk[i] = y;
    let z: u32 = 1;
    {
        let z: u32 = 50;
        inner[i] = z + a[i] % 10;
    }
    inner[i] += z;
    unsf[i] = unsafe { a[i] & MASK };
    fc[i] = HALF * a[i] as f32;
    let s: [u8; L] = [C8; L];
    arr[i] = s[a[i] as usize % L] + s.len() as u8;
}
"""
    return case("items_and_scopes", k, [buf("a", "u32", xs), out("consts", "i64", n),
                                        out("shadow", "u64", n), out("blk", "u32", n),
                                        out("inner", "u32", n), out("unsf", "u32", n),
                                        out("fc", "f32", n), out("arr", "u8", n)],
                block=(n, 1, 1))


def compound_assign() -> Case:
    xs = [I32_MIN, -9, -1, 0, 1, 9, 1000, I32_MAX]
    ys = [-1, 4, 0, 3, -1, 2, 33, 1]
    n = len(xs)
    ops = [("add", "+="), ("sub", "-="), ("mul", "*="), ("bit_and", "&="), ("bit_or", "|="),
           ("bit_xor", "^="), ("shl", "<<="), ("shr", ">>=")]
    lines = "".join(f"    let mut t{j}: i32 = a[i];\n    t{j} {op} b[i];\n    {name}[i] = t{j};\n"
                    for j, (name, op) in enumerate(ops))
    names = [name for name, _ in ops]
    sig = ", ".join(f"{nm}: &mut [i32]" for nm in names)
    k = f"""
use rgpu::*;

#[kernel]
pub fn compound_assign(
    a: &[i32],
    b: &[i32],
    f: &[f64],
    {sig},
    div: &mut [i32],
    rem: &mut [i32],
    shl_lit: &mut [u8],
    slot: &mut [i32],
    fops: &mut [f64],
) {{
    let i: usize = thread_idx_x() as usize;
{lines}    let mut q: i32 = a[i];
    if b[i] != 0 && !(a[i] == i32::MIN && b[i] == -1) {{
        q /= b[i];
    }}
    div[i] = q;
    let mut r: i32 = a[i];
    if b[i] != 0 && !(a[i] == i32::MIN && b[i] == -1) {{
        r %= b[i];
    }}
    rem[i] = r;
    let mut u: u8 = a[i] as u8;
    u <<= 3;
    u += 200;
    shl_lit[i] = u;
    slot[i] = a[i];
    slot[i] *= 3;
    slot[i] -= b[i];
    let mut g: f64 = f[i];
    g += 0.5;
    g *= 3.0;
    g /= 7.0;
    g %= 2.0;
    g -= 1.0;
    fops[i] = g;
}}
"""
    fs = vals("f64", [0.0, -0.0, 1.0, -3.25, 1e300, float("inf"), float("nan"), 0.1])
    args: list[BufferArg | ScalarArg] = [buf("a", "i32", vals("i32", xs)),
                                         buf("b", "i32", vals("i32", ys)), buf("f", "f64", fs)]
    args += [out(nm, "i32", n) for nm in names]
    args += [out("div", "i32", n), out("rem", "i32", n), out("shl_lit", "u8", n),
             out("slot", "i32", n), out("fops", "f64", n)]
    return case("compound_assign", k, args, block=(n, 1, 1))


def short_circuit() -> Case:
    xs = [0, 5, 6, 100, 7, 0xFFFFFFFF]
    ds = [0, 0, 2, 3, 7, 0]
    n = len(xs)
    k = """
use rgpu::*;

#[kernel]
pub fn short_circuit(
    a: &[u32],
    d: &[u32],
    sc_and: &mut [bool],
    sc_or: &mut [bool],
    both: &mut [bool],
    idx: &mut [u32],
) {
    let i: usize = thread_idx_x() as usize;
    sc_and[i] = d[i] != 0 && a[i] / d[i] > 2;
    sc_or[i] = d[i] == 0 || a[i] % d[i] == 0;
    both[i] = (d[i] != 0) & (a[i] > 3) | (a[i] == 0) ^ true;
    let k: usize = a[i] as usize;
    idx[i] = if k < a.len() && a[k] > 1 { a[k] } else { 42 };
}
"""
    return case("short_circuit", k, [buf("a", "u32", xs), buf("d", "u32", ds),
                                     out("sc_and", "bool", n), out("sc_or", "bool", n),
                                     out("both", "bool", n), out("idx", "u32", n)],
                block=(n, 1, 1))


def hand_cases() -> list[Case]:
    return [cf_if_else(), cf_while(), cf_loop_break(), cf_for_ranges(), cf_helpers(),
            local_arrays(), items_and_scopes(), compound_assign(), short_circuit(),
            *launch_cases(), *trap_cases()]
