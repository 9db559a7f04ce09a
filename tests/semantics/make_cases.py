"""Writes the hand-written semantics cases, `tests/semantics/cases/<name>.toml`.

The case files are the source of truth (reviewed like code, canonical via `casefile.dumps`);
this script only saves typing for the tabular ones (every operator over a table of edge
pairs, for every type). Rerun it after editing a table, then `regen_expected.py`:

    python tests/semantics/make_cases.py && python tests/semantics/regen_expected.py

Conventions the tests rely on: the kernel's entry is the case name; a thread writes only
`out[its index]`; float buffers whose name starts with `min`/`max` hold `min`/`max` results,
where `+0.0` vs `-0.0` may be either (docs/language.md).
"""

from __future__ import annotations

import itertools
import struct
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rgpu_fuzz.casefile import dumps  # noqa: E402
from rgpu_fuzz.model.case import (  # noqa: E402
    BufferArg,
    Case,
    Dist,
    Fill,
    Launch,
    Provenance,
    Random,
    ScalarArg,
    Values,
)
from rgpu_fuzz.model.scalars import Scalar  # noqa: E402

CASES = Path(__file__).resolve().parent / "cases"
PROVENANCE = Provenance(generator="hand/semantics")

INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize")
FLOATS = ("f32", "f64")
NUMERIC = INTS + FLOATS

F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
F32_MIN_SUB = struct.unpack("<f", struct.pack("<I", 1))[0]
F32_MIN_NORMAL = struct.unpack("<f", struct.pack("<I", 0x00800000))[0]
NAN_BITS = {"f32": 0x7FC00000, "f64": 0x7FF8000000000000}
NEG_NAN_BITS = {"f32": 0xFFC00000, "f64": 0xFFF8000000000000}


# ---------------------------------------------------------------- values -> bits


def bits(ty: str, v: int | float | str) -> int:
    """Bit pattern of a value of `ty`; a str is a bit pattern already (NaN payloads)."""
    s = Scalar(ty)
    if isinstance(v, str):
        return int(v, 0)
    if s is Scalar.BOOL:
        return int(bool(v))
    if s.is_int:
        assert s.min_value <= v <= s.max_value, (ty, v)
        return int(v) & ((1 << s.bits) - 1)
    if ty == "f32":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def int_edges(ty: str) -> list[int]:
    s = Scalar(ty)
    vals = [0, 1, 2, 7, s.bits, s.bits + 1, s.max_value - 1, s.max_value]
    if s.is_signed:
        vals += [-1, -2, -7, s.min_value, s.min_value + 1]
    else:
        vals += [1 << (s.bits - 1), 0x55 % (s.max_value + 1)]
    return sorted(set(vals))


def float_edges(ty: str) -> list[int]:
    """Edge values as bit patterns."""
    big = F32_MAX if ty == "f32" else sys.float_info.max
    sub = F32_MIN_SUB if ty == "f32" else 5e-324
    normal = F32_MIN_NORMAL if ty == "f32" else sys.float_info.min
    vals: list[float | str] = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 0.1, 1e10, big,
                               -big, normal, sub, -sub, float("inf"), float("-inf"),
                               hex(NAN_BITS[ty])]
    return [bits(ty, v) for v in vals]


# ---------------------------------------------------------------- case building


def buf(name: str, ty: str, values: Sequence[int]) -> BufferArg:
    return BufferArg(name=name, elem=Scalar(ty), len=len(values), init=Values(tuple(values)))


def out(name: str, ty: str, n: int) -> BufferArg:
    return BufferArg(name=name, elem=Scalar(ty), len=n, init=Fill(0))


def case(name: str, kernel: str, args: Sequence[BufferArg | ScalarArg], *,
         grid: tuple[int, int, int] = (1, 1, 1),
         block: tuple[int, int, int] = (1, 1, 1)) -> Case:
    return Case(entry=name, kernel=kernel.strip("\n") + "\n",
                launch=Launch(grid=grid, block=block), args=tuple(args),
                provenance=PROVENANCE)


def signature(name: str, params: Sequence[tuple[str, str]]) -> str:
    """`pub fn name(...)` with one parameter per line (params: name, Rust type)."""
    body = "".join(f"    {p}: {t},\n" for p, t in params)
    return f"#[kernel]\npub fn {name}(\n{body}) {{\n"


def pairs(values: Sequence[int]) -> tuple[list[int], list[int]]:
    a, b = zip(*itertools.product(values, values), strict=True)
    return list(a), list(b)


def cycle(values: Sequence[int], n: int) -> list[int]:
    return [values[i % len(values)] for i in range(n)]


SHIFT_AMOUNTS_I32 = [-1, -8, 0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127,
                     -(1 << 31), (1 << 31) - 1]
SHIFT_AMOUNTS_U32 = [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 0xFFFFFFFF]


def int_ops(ty: str) -> Case:
    s = Scalar(ty)
    a, b = pairs([bits(ty, v) for v in int_edges(ty)])
    n = len(a)
    sh = cycle([bits("i32", v) for v in SHIFT_AMOUNTS_I32], n)
    name = f"int_ops_{ty}"
    outs = ["add", "sub", "mul", "div", "rem", "bit_and", "bit_or", "bit_xor", "shl", "shr",
            "shl_i32", "shr_i32", "shl_lit", "shr_u8", "not"] + (["neg"] if s.is_signed else [])
    cmps = ["eq", "ne", "lt", "le", "gt", "ge"]
    params = [("a", f"&[{ty}]"), ("b", f"&[{ty}]"), ("s", "&[i32]")]
    params += [(o, f"&mut [{ty}]") for o in outs] + [(c, "&mut [bool]") for c in cmps]
    safe = "b[i] != 0 && !(a[i] == {t}::MIN && b[i] == -1)" if s.is_signed else "b[i] != 0"
    safe = safe.format(t=ty)
    body = f"""\
    let i: usize = thread_idx_x() as usize;
    add[i] = a[i] + b[i];
    sub[i] = a[i] - b[i];
    mul[i] = a[i] * b[i];
    div[i] = if {safe} {{ a[i] / b[i] }} else {{ 0 }};
    rem[i] = if {safe} {{ a[i] % b[i] }} else {{ 0 }};
    bit_and[i] = a[i] & b[i];
    bit_or[i] = a[i] | b[i];
    bit_xor[i] = a[i] ^ b[i];
    shl[i] = a[i] << b[i];
    shr[i] = a[i] >> b[i];
    shl_i32[i] = a[i] << s[i];
    shr_i32[i] = a[i] >> s[i];
    shl_lit[i] = a[i] << 3;
    shr_u8[i] = a[i] >> (s[i] as u8);
    not[i] = !a[i];
"""
    if s.is_signed:
        body += "    neg[i] = -a[i];\n"
    body += """\
    eq[i] = a[i] == b[i];
    ne[i] = a[i] != b[i];
    lt[i] = a[i] < b[i];
    le[i] = a[i] <= b[i];
    gt[i] = a[i] > b[i];
    ge[i] = a[i] >= b[i];
}
"""
    kernel = "use rgpu::*;\n\n" + signature(name, params) + body
    args = [buf("a", ty, a), buf("b", ty, b), buf("s", "i32", sh)]
    args += [out(o, ty, n) for o in outs] + [out(c, "bool", n) for c in cmps]
    return case(name, kernel, args, block=(n, 1, 1))


def int_methods(ty: str) -> Case:
    s = Scalar(ty)
    a, b = pairs([bits(ty, v) for v in int_edges(ty)])
    n = len(a)
    sh = cycle(SHIFT_AMOUNTS_U32, n)
    name = f"int_methods_{ty}"
    outs = ["wadd", "wsub", "wmul", "wdiv", "wrem", "wneg", "wshl", "wshr", "rotl", "rotr",
            "min", "max"] + (["abs", "wabs"] if s.is_signed else [])
    counts = ["ones", "lz", "tz"]
    params = [("a", f"&[{ty}]"), ("b", f"&[{ty}]"), ("s", "&[u32]")]
    params += [(o, f"&mut [{ty}]") for o in outs] + [(c, "&mut [u32]") for c in counts]
    body = """\
    let i: usize = thread_idx_x() as usize;
    let x = a[i];
    let y = b[i];
    wadd[i] = x.wrapping_add(y);
    wsub[i] = x.wrapping_sub(y);
    wmul[i] = x.wrapping_mul(y);
    wdiv[i] = if y != 0 { x.wrapping_div(y) } else { 0 };
    wrem[i] = if y != 0 { x.wrapping_rem(y) } else { 0 };
    wneg[i] = x.wrapping_neg();
    wshl[i] = x.wrapping_shl(s[i]);
    wshr[i] = x.wrapping_shr(s[i]);
    rotl[i] = x.rotate_left(s[i]);
    rotr[i] = x.rotate_right(s[i]);
    min[i] = x.min(y);
    max[i] = x.max(y);
"""
    if s.is_signed:
        body += "    abs[i] = x.abs();\n    wabs[i] = x.wrapping_abs();\n"
    body += """\
    ones[i] = x.count_ones();
    lz[i] = x.leading_zeros();
    tz[i] = x.trailing_zeros();
}
"""
    kernel = "use rgpu::*;\n\n" + signature(name, params) + body
    args = [buf("a", ty, a), buf("b", ty, b), buf("s", "u32", sh)]
    args += [out(o, ty, n) for o in outs] + [out(c, "u32", n) for c in counts]
    return case(name, kernel, args, block=(n, 1, 1))


def float_ops(ty: str) -> Case:
    a, b = pairs(float_edges(ty))
    n = len(a)
    name = f"float_ops_{ty}"
    outs = ["add", "sub", "mul", "div", "rem", "neg"]
    cmps = ["eq", "ne", "lt", "le", "gt", "ge"]
    params = [("a", f"&[{ty}]"), ("b", f"&[{ty}]")]
    params += [(o, f"&mut [{ty}]") for o in outs] + [(c, "&mut [bool]") for c in cmps]
    body = """\
    let i: usize = thread_idx_x() as usize;
    add[i] = a[i] + b[i];
    sub[i] = a[i] - b[i];
    mul[i] = a[i] * b[i];
    div[i] = a[i] / b[i];
    rem[i] = a[i] % b[i];
    neg[i] = -a[i];
    eq[i] = a[i] == b[i];
    ne[i] = a[i] != b[i];
    lt[i] = a[i] < b[i];
    le[i] = a[i] <= b[i];
    gt[i] = a[i] > b[i];
    ge[i] = a[i] >= b[i];
}
"""
    kernel = "use rgpu::*;\n\n" + signature(name, params) + body
    args = [buf("a", ty, a), buf("b", ty, b)]
    args += [out(o, ty, n) for o in outs] + [out(c, "bool", n) for c in cmps]
    return case(name, kernel, args, block=(n, 1, 1))


def float_methods(ty: str) -> Case:
    a, b = pairs(float_edges(ty))
    n = len(a)
    ut = "u32" if ty == "f32" else "u64"
    c = cycle([bits(ty, v) for v in (0.0, -0.0, 1.0, -1.0, float("inf"), 1e-5)], n)
    raw = cycle([0, 1, NAN_BITS[ty], NEG_NAN_BITS[ty], NAN_BITS[ty] | 1, (1 << 63) >> (
        0 if ty == "f64" else 32), bits(ty, 1.0), bits(ty, -float("inf"))], n)
    name = f"float_methods_{ty}"
    outs = ["abs", "sqrt", "min", "max", "fma", "from_bits"]
    params = [("a", f"&[{ty}]"), ("b", f"&[{ty}]"), ("c", f"&[{ty}]"), ("u", f"&[{ut}]")]
    params += [(o, f"&mut [{ty}]") for o in outs] + [("to_bits", f"&mut [{ut}]")]
    body = f"""\
    let i: usize = thread_idx_x() as usize;
    let x: {ty} = a[i];
    abs[i] = x.abs();
    sqrt[i] = x.sqrt();
    min[i] = x.min(b[i]);
    max[i] = x.max(b[i]);
    fma[i] = x.mul_add(b[i], c[i]);
    from_bits[i] = {ty}::from_bits(u[i]);
    to_bits[i] = x.to_bits();
}}
"""
    kernel = "use rgpu::*;\n\n" + signature(name, params) + body
    args = [buf("a", ty, a), buf("b", ty, b), buf("c", ty, c), buf("u", ut, raw)]
    args += [out(o, ty, n) for o in outs] + [out("to_bits", ut, n)]
    return case(name, kernel, args, block=(n, 1, 1))


def mul_add_fused() -> Case:
    """Triples where one rounding (mul_add) and two (a * b + c) differ, plus specials."""
    e23, e52 = 2.0**-23, 2.0**-52
    t32 = [(1 + e23, 1 + e23, -(1 + 2 * e23)), (1 + e23, 1 - e23, -1.0), (0.1, 10.0, -1.0),
           (3.0, 1 / 3, -1.0), (F32_MAX, 2.0, -F32_MAX), (1e-30, 1e-30, 0.0),
           (float("inf"), 0.0, 1.0), (-0.0, 0.0, -0.0), (1.5, 1.5, float("nan")),
           (16777217.0, 1.0, 1.0)]
    t64 = [(1 + e52, 1 + e52, -(1 + 2 * e52)), (1 + e52, 1 - e52, -1.0), (0.1, 10.0, -1.0),
           (3.0, 1 / 3, -1.0), (sys.float_info.max, 2.0, -sys.float_info.max),
           (1e-200, 1e-200, 0.0), (float("inf"), 0.0, 1.0), (-0.0, 0.0, -0.0),
           (1.5, 1.5, float("nan")), (2.0**53 + 2, 1.0, 1.0)]
    n = len(t32)
    params = [(p, f"&[{t}]") for t in FLOATS for p in (f"a{t[1:]}", f"b{t[1:]}", f"c{t[1:]}")]
    params += [(f"{k}{t[1:]}", f"&mut [{t}]") for t in FLOATS for k in ("fused", "unfused")]
    body = """\
    let i: usize = thread_idx_x() as usize;
    fused32[i] = a32[i].mul_add(b32[i], c32[i]);
    unfused32[i] = a32[i] * b32[i] + c32[i];
    fused64[i] = a64[i].mul_add(b64[i], c64[i]);
    unfused64[i] = a64[i] * b64[i] + c64[i];
}
"""
    kernel = "use rgpu::*;\n\n" + signature("mul_add_fused", params) + body
    args: list[BufferArg | ScalarArg] = []
    for t, table in (("f32", t32), ("f64", t64)):
        for j, p in enumerate(("a", "b", "c")):
            args.append(buf(f"{p}{t[1:]}", t, [bits(t, row[j]) for row in table]))
    args += [out(f"{k}{t[1:]}", t, n) for t in FLOATS for k in ("fused", "unfused")]
    return case("mul_add_fused", kernel, args, block=(n, 1, 1))


def cast_from(src: str) -> Case:
    s = Scalar(src)
    if s.is_int:
        extra = {"u32": [16777217, 16777219, 0xFFFFFF80, 0xFFFFFFFF],
                 "i32": [16777217, -16777217, 0x7FFFFFC0],
                 "u64": [2**53 + 1, 2**53 + 3, 2**64 - 1, 2**64 - 2**39, 2**64 - 2**39 - 1,
                         2**63 + 2**39 + 1, 0x8000_0080_0000_0000],
                 "i64": [2**53 + 1, -(2**53) - 1, 2**63 - 2**10, -(2**63) + 1, 2**31],
                 "usize": [2**53 + 1, 2**64 - 1, 2**32 + 5]}.get(src, [])
        vals = [bits(src, v) for v in sorted(set(int_edges(src) + extra))]
    else:
        ub = 2.0**-24 if src == "f64" else 0.0
        table: list[float | str] = [
            0.0, -0.0, 0.5, -0.5, 0.9999, -0.9999, 1.5, -1.5, 2.5, 127.5, 128.0, -128.5,
            -129.0, 255.5, 256.0, 32767.9, 65535.5, -32768.9, 2.0**31, -(2.0**31),
            2.0**31 - 1, 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e30, float("inf"),
            float("-inf"), hex(NAN_BITS[src]), hex(NEG_NAN_BITS[src]), 1.0 + ub,
            1.0 + 3 * ub, 1.0 + ub + 2.0**-50 if src == "f64" else 3.0,
            F32_MAX, -F32_MAX, F32_MIN_SUB, F32_MIN_NORMAL]
        if src == "f64":
            table += [F32_MAX * (1 + 2.0**-25), F32_MAX * (1 + 2.0**-23), F32_MIN_SUB / 2,
                      F32_MIN_SUB * 0.75, 1e-50, 5e-324, sys.float_info.max, 0.1]
        vals = [bits(src, v) for v in table]
    n = len(vals)
    name = f"cast_from_{src}"
    params = [("a", f"&[{src}]")] + [(f"to_{t}", f"&mut [{t}]") for t in NUMERIC]
    lines = "".join(f"    to_{t}[i] = x as {t};\n" for t in NUMERIC)
    body = f"    let i: usize = thread_idx_x() as usize;\n    let x: {src} = a[i];\n{lines}}}\n"
    kernel = "use rgpu::*;\n\n" + signature(name, params) + body
    args = [buf("a", src, vals)] + [out(f"to_{t}", t, n) for t in NUMERIC]
    return case(name, kernel, args, block=(n, 1, 1))


def bool_ops() -> Case:
    a, b = pairs([0, 1])
    n = len(a)
    outs = ["and", "or", "band", "bor", "bxor", "not", "eq", "ne"]
    params = [("a", "&[bool]"), ("b", "&[bool]")] + [(o, "&mut [bool]") for o in outs]
    params += [(f"to_{t}", f"&mut [{t}]") for t in INTS]
    casts = "".join(f"    to_{t}[i] = a[i] as {t};\n" for t in INTS)
    body = f"""\
    let i: usize = thread_idx_x() as usize;
    and[i] = a[i] && b[i];
    or[i] = a[i] || b[i];
    band[i] = a[i] & b[i];
    bor[i] = a[i] | b[i];
    bxor[i] = a[i] ^ b[i];
    not[i] = !a[i];
    eq[i] = a[i] == b[i];
    ne[i] = a[i] != b[i];
{casts}}}
"""
    kernel = "use rgpu::*;\n\n" + signature("bool_ops", params) + body
    args = [buf("a", "bool", a), buf("b", "bool", b)] + [out(o, "bool", n) for o in outs]
    args += [out(f"to_{t}", t, n) for t in INTS]
    return case("bool_ops", kernel, args, block=(n, 1, 1))


def random_edges() -> list[Case]:
    """Seeded `edges` inputs: many more combinations than the hand tables."""
    n = 256
    k_int = """\
use rgpu::*;

#[kernel]
pub fn random_edges_u64(a: &[u64], b: &[u64], s: &[u32], sum: &mut [u64], prod: &mut [u64], \
q: &mut [u64], mix: &mut [u64], narrow: &mut [f32]) {
    let i: usize = thread_idx_x() as usize + (block_idx_x() * block_dim_x()) as usize;
    sum[i] = a[i] + b[i];
    prod[i] = a[i] * b[i];
    q[i] = if b[i] != 0 { a[i] / b[i] } else { a[i] };
    mix[i] = a[i].rotate_left(s[i]) ^ (b[i] >> s[i]);
    narrow[i] = a[i] as f32;
}
"""
    k_float = """\
use rgpu::*;

#[kernel]
pub fn random_edges_f64(a: &[f64], b: &[f64], c: &[f32], sum: &mut [f64], fma: &mut [f64], \
rem: &mut [f64], narrow: &mut [f32], to_int: &mut [i32], widen: &mut [f64]) {
    let i: usize = thread_idx_x() as usize + (block_idx_x() * block_dim_x()) as usize;
    sum[i] = a[i] + b[i];
    fma[i] = a[i].mul_add(b[i], 0.5);
    rem[i] = a[i] % b[i];
    narrow[i] = a[i] as f32;
    to_int[i] = a[i] as i32;
    widen[i] = c[i] as f64;
}
"""

    def rnd(name: str, ty: str, seed: int, dist: Dist = Dist.EDGES) -> BufferArg:
        return BufferArg(name=name, elem=Scalar(ty), len=n, init=Random(seed, dist))

    c_int = case("random_edges_u64", k_int,
                 [rnd("a", "u64", 11), rnd("b", "u64", 12), rnd("s", "u32", 13, Dist.UNIFORM),
                  *(out(o, "u64", n) for o in ("sum", "prod", "q", "mix")),
                  out("narrow", "f32", n)], grid=(4, 1, 1), block=(64, 1, 1))
    c_float = case("random_edges_f64", k_float,
                   [rnd("a", "f64", 21), rnd("b", "f64", 22), rnd("c", "f32", 23),
                    *(out(o, "f64", n) for o in ("sum", "fma", "rem")), out("narrow", "f32", n),
                    out("to_int", "i32", n), out("widen", "f64", n)],
                   grid=(4, 1, 1), block=(64, 1, 1))
    return [c_int, c_float]


def tabular_cases() -> list[Case]:
    cases = [int_ops(t) for t in INTS] + [int_methods(t) for t in INTS]
    cases += [float_ops(t) for t in FLOATS] + [float_methods(t) for t in FLOATS]
    cases += [mul_add_fused(), bool_ops()] + [cast_from(t) for t in NUMERIC]
    return cases + random_edges()


def main() -> int:
    from bits_cases import bits_cases  # float bit patterns that must survive exactly
    from escape_cases import escape_cases  # the classes that escaped, uncovered constructs
    from hand_cases import hand_cases  # the control-flow, launch, shared and trap kernels

    CASES.mkdir(parents=True, exist_ok=True)
    cases = tabular_cases() + hand_cases() + bits_cases() + escape_cases()
    names = [c.entry for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    # Case files written by hand (shared_helpers, float_minmax_snan, ...) are kept: delete a
    # retired case's file yourself.
    kept = sorted(p.stem for p in CASES.glob("*.toml") if p.stem not in names)
    for c in cases:
        (CASES / f"{c.entry}.toml").write_text(dumps(c), encoding="utf-8")
    print(f"wrote {len(cases)} cases to {CASES}; kept {len(kept)} not written here: "
          f"{', '.join(kept)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
