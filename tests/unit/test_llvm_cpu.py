"""`llvm-cpu` at O0 and O3 on small kernels with hand-calculated results."""

from __future__ import annotations

import math
import struct

import pytest

from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.outcome import Ok, Trap, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline, artefacts
from rgpu_fuzz.pipelines.ref import RefPipeline
from rgpu_fuzz.pipelines.registry import PipelineError, Registry

LEVELS = ["O0", "O3"]


def f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def b64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def make_case(body: str, *, out: Scalar = Scalar.U32, n: int = 8,
              inputs: tuple[int, ...] = (0,), items: str = "", block: int = 1,
              in_ty: Scalar = Scalar.U32) -> Case:
    kernel = (f"use rgpu::*;\n{items}\n#[kernel]\npub fn k(a: &[{in_ty}], out: &mut [{out}]) "
              f"{{\n{body}\n}}\n")
    return Case(entry="k", kernel=kernel, launch=Launch(block=(block, 1, 1)), args=(
        BufferArg(name="a", elem=in_ty, len=len(inputs), init=Values(inputs)),
        BufferArg(name="out", elem=out, len=n, init=Fill(0))))


def run(body: str, level: str, **kw):  # type: ignore[no-untyped-def]
    return LlvmCpuPipeline(PipelineSpec("llvm-cpu", (level,))).run(make_case(body, **kw))


def bits(outcome) -> list[int]:  # type: ignore[no-untyped-def]
    assert isinstance(outcome, Ok), outcome
    return outcome.outputs["out"].bits()


def test_registered_and_options() -> None:
    assert Registry().create("llvm-cpu:O3").opt_level == 3  # type: ignore[attr-defined]
    default = Registry().create("llvm-cpu")
    assert (default.opt_level, default.timeout) == (2, 60.0)  # type: ignore[attr-defined]
    both = Registry().create("llvm-cpu:O1:timeout=30")
    assert (both.opt_level, both.timeout) == (1, 30.0)  # type: ignore[attr-defined]
    for bad in ("llvm-cpu:O7", "llvm-cpu:timeout=soon", "llvm-cpu:timeout=0", "llvm-cpu:fast"):
        with pytest.raises(PipelineError, match="llvm-cpu"):
            Registry().create(bad)


def test_artefacts_ir_before_and_after_and_assembly() -> None:
    case = make_case("out[0] = a[0] * 8u32;")
    texts = artefacts(case, "llvm-cpu:O3")
    assert sorted(texts) == ["asm", "llvm-ir", "llvm-ir-opt"]
    assert 'define void @"rgpu_kernel_k"' in texts["llvm-ir"] and "mul i32" in texts["llvm-ir"]
    assert "shl i32" in texts["llvm-ir-opt"]  # O3 strength-reduces the multiply
    assert "rgpu_kernel_k:" in texts["asm"]
    shown = LlvmCpuPipeline(PipelineSpec("llvm-cpu", ("O3",))).artefact_text(case, "ir")
    assert shown is not None and "; ---- llvm-ir-opt" in shown
    bad = artefacts(make_case("out[0] = nope;"), "llvm-cpu")
    assert list(bad) == ["error"] and bad["error"].startswith("rejected: invalid-case")


@pytest.mark.parametrize("level", LEVELS)
def test_wrapping_add_and_masked_shifts(level: str) -> None:
    body = """
    let m: u32 = a[0];
    out[0] = m + 1u32;
    out[1] = 1u32 << (a[1] + 33u32);
    out[2] = ((-8i32) >> -1i32) as u32;
    out[3] = (1u8 << 9u64) as u32;
    out[4] = (0x80u8 as i8 >> 7u32) as u32;
    out[5] = (127i8 + 1i8) as u8 as u32;
    """
    got = bits(run(body, level, inputs=(0xFFFF_FFFF, 0)))
    assert got[:6] == [0, 2, 0xFFFF_FFFF, 2, 0xFFFF_FFFF, 0x80]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("expr", "kind"), [
    ("a[1] / a[0]", TrapKind.DIV_BY_ZERO),
    ("(a[1] as i32 / (a[2] as i32)) as u32", TrapKind.DIV_OVERFLOW),
    ("a[(a[1] as usize) + 3usize]", TrapKind.OUT_OF_BOUNDS),
])
def test_traps(level: str, expr: str, kind: TrapKind) -> None:
    outcome = run(f"out[0] = {expr};", level, inputs=(0, 0x8000_0000, 0xFFFF_FFFF))
    assert isinstance(outcome, Trap), outcome
    assert outcome.kind is kind
    assert outcome.where is not None and outcome.where.line == 5


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("stmt", "kind", "at"), [
    # both trap: the value (a[99], a has 1 element) before the place's index (1 / 0)
    ("out[(1u32 / z) as usize] = a[99usize];", TrapKind.OUT_OF_BOUNDS, "a[99"),
    ("out[(1u32 / z) as usize] += a[99usize];", TrapKind.OUT_OF_BOUNDS, "a[99"),
    # value fine: the index traps before the place's bounds check
    ("out[(1u32 / z) as usize + 99usize] = a[0usize];", TrapKind.DIV_BY_ZERO, "1u32 /"),
    # value and index fine: the place's bounds check comes last
    ("out[99usize] = 1u32 / (z + 1u32);", TrapKind.OUT_OF_BOUNDS, "out["),
])
def test_assignment_evaluates_value_before_place(level: str, stmt: str, kind: TrapKind,
                                                 at: str) -> None:
    """Rust Reference, "Assignment expressions": the assigned value is evaluated before the
    place, so when both would trap the value's trap is the one reported. The expected kind
    and column (1-based, the start of the trapping expression `at`) are worked out by hand;
    the interpreter must agree."""
    case = make_case(f"let z: u32 = a[0];\n{stmt}", inputs=(0,))
    want = (6, stmt.index(at) + 1)  # line 6 of the kernel `make_case` writes
    for outcome in (LlvmCpuPipeline(PipelineSpec("llvm-cpu", (level,))).run(case),
                    RefPipeline(PipelineSpec("ref")).run(case)):
        assert isinstance(outcome, Trap), outcome
        assert outcome.kind is kind
        assert outcome.where is not None and (outcome.where.line, outcome.where.col) == want


@pytest.mark.parametrize("level", LEVELS)
def test_saturating_casts(level: str) -> None:
    nan, big = 0x7FF8_0000_0000_0001, b64(1e10)
    body = """
    out[0] = f64::from_bits(a[0]) as i32 as u64;
    out[1] = f64::from_bits(a[1]) as i32 as u64;
    out[2] = (-1.5f64 * f64::from_bits(a[1])) as u8 as u64;
    out[3] = (-f64::from_bits(a[1])) as i64 as u64;
    """
    got = bits(run(body, level, out=Scalar.U64, in_ty=Scalar.U64, inputs=(nan, big)))
    assert got[:4] == [0, 0x7FFF_FFFF, 0, (-10_000_000_000) & (2**64 - 1)]


@pytest.mark.parametrize("level", LEVELS)
def test_mul_add_is_fused_and_minmax_ignore_nan(level: str) -> None:
    body = """
    let x: f64 = f64::from_bits(a[0]);
    let nan: f64 = f64::from_bits(a[1]);
    out[0] = x.mul_add(10.0f64, -1.0f64);
    out[1] = x * 10.0f64 - 1.0f64;
    out[2] = nan.min(1.0f64);
    out[3] = 2.0f64.max(nan);
    out[4] = nan.max(nan);
    """
    got = bits(run(body, level, out=Scalar.F64, in_ty=Scalar.U64,
                   inputs=(b64(0.1), 0x7FF8_0000_0000_0000)))
    assert f64(got[0]) == 5.551115123125783e-17  # 0.1 * 10 - 1, exactly, one rounding
    assert f64(got[1]) == 0.0
    assert f64(got[2]) == 1.0 and f64(got[3]) == 2.0 and math.isnan(f64(got[4]))


@pytest.mark.parametrize("level", LEVELS)
def test_shared_memory_barrier_neighbour(level: str) -> None:
    items = "#[shared]\nstatic mut TILE: [u32; 64] = [0u32; 64];"
    body = """
    let t: u32 = thread_idx_x();
    let mut v: u32 = t * 3u32;
    unsafe { TILE[t as usize] = v; }
    sync_threads();
    v = unsafe { TILE[((t + 1u32) % 64u32) as usize] } + v;
    sync_threads();
    unsafe { TILE[t as usize] = v; }
    sync_threads();
    out[t as usize] = unsafe { TILE[((t + 63u32) % 64u32) as usize] };
    """
    got = bits(run(body, level, n=64, block=64, items=items))
    first = [((t + 1) % 64) * 3 + t * 3 for t in range(64)]
    assert got == [first[(t + 63) % 64] for t in range(64)]


@pytest.mark.parametrize("level", LEVELS)
def test_barrier_in_uniform_loop_with_break_and_return(level: str) -> None:
    items = "#[shared]\nstatic mut S: [u32; 8] = [0u32; 8];"
    body = """
    let t: usize = thread_idx_x() as usize;
    let mut acc: u32 = 0u32;
    for i in 0u32..5u32 {
        unsafe { S[t] = i + t as u32; }
        sync_threads();
        acc = acc + unsafe { S[(t + 1usize) % 8usize] };
        sync_threads();
        if i == 3u32 { break; }
    }
    out[t] = acc;
    if t > 3usize { return; }
    out[t] = acc + 100u32;
    """
    got = bits(run(body, level, n=8, block=8, items=items))
    want = [sum(i + (t + 1) % 8 for i in range(4)) for t in range(8)]
    assert got == [w + 100 if t <= 3 else w for t, w in enumerate(want)]


@pytest.mark.parametrize("level", LEVELS)
def test_helper_with_early_return(level: str) -> None:
    items = """
#[inline(never)]
fn clamp_or(x: u32, lim: u32) -> u32 {
    if x > lim { return lim; }
    x * 2u32
}
fn plain(x: u32) -> u32 { clamp_or(x, 5u32) + 1u32 }
"""
    body = "for i in 0u32..8u32 { out[i as usize] = plain(i); }"
    assert bits(run(body, level, items=items)) == [(5 if i > 5 else 2 * i) + 1 for i in range(8)]


@pytest.mark.parametrize("level", LEVELS)
def test_loops_with_break_and_continue(level: str) -> None:
    body = """
    let mut i: u32 = 0u32;
    let mut n: usize = 0usize;
    loop {
        i += 1u32;
        if i % 3u32 == 0u32 { continue; }
        if i > 10u32 { break; }
        out[n] = i;
        n += 1usize;
    }
    let mut j: u8 = 250u8;
    for k in 250u8..=255u8 { j = k; }
    out[7] = j as u32;
    """
    assert bits(run(body, level)) == [1, 2, 4, 5, 7, 8, 10, 255]


def test_det_option_compiles_twice_and_records_the_object_hash() -> None:
    """`det` (docs/design.md §3: compilation is deterministic) hashes the object file of two
    independent compilations; LLVM is deterministic, so no `-again` artefact appears, and the
    option does not change the pipeline's label (it checks, it does not compute)."""
    pipeline = Registry().create("llvm-cpu:O3:det")
    assert pipeline.label == "llvm-cpu:O3"
    outcome = pipeline.run(make_case("out[0usize] = a[0usize] ^ 5u32;", inputs=(3,)))
    assert bits(outcome)[0] == 6  # 3 ^ 5 by hand
    arts = outcome.stats.artefacts
    assert len(arts["object"]) == 64 and not any(k.endswith("-again") for k in arts)
    assert "determinism" in outcome.stats.seconds


BREAK_THEN_INNER_BARRIER_LOOP = {
    # `break` out of a barrier loop, then (same iteration) an inner barrier loop: the inner
    # loop's exit used to make the broken threads run again. Found by the `barriers`
    # generator profile (seed 25 and 20 more of 1,000); expected values by hand.
    "for": ("""
    let t: usize = thread_idx_x() as usize;
    for r in 0u32..3u32 {
        if r == 1u32 {
            break;
        }
        for s in 0u32..1u32 {
            sync_threads();
        }
        out[t] += 1u32;
    }""", 1),  # r = 0 adds 1, r = 1 breaks: 1 (the bug gave 3)
    "loop-while": ("""
    let t: usize = thread_idx_x() as usize;
    let mut c0: u32 = 0u32;
    loop {
        c0 += 1u32;
        if c0 > 1u32 {
            break;
        }
        let mut c1: i16 = 0i16;
        while c1 < 0i16 {
            c1 += 1i16;
            sync_threads();
        }
    }
    out[t] = 5u32;""", 5),  # one pass, then break: 5 (the bug looped forever)
}


@pytest.mark.parametrize("level", ["O0", "O3"])
@pytest.mark.parametrize("name", list(BREAK_THEN_INNER_BARRIER_LOOP))
def test_break_out_of_barrier_loop_survives_an_inner_barrier_loop(name: str, level: str) -> None:
    body, want = BREAK_THEN_INNER_BARRIER_LOOP[name]
    case = make_case(body, n=4, block=4)
    pipeline = LlvmCpuPipeline(PipelineSpec("llvm-cpu", (level, "timeout=20")))
    assert bits(pipeline.run(case)) == [want] * 4
    assert bits(RefPipeline(PipelineSpec("ref")).run(case)) == [want] * 4
