"""The bits of an arithmetic NaN (docs/language.md "NaN bits"): the reference learns which
outputs depend on the unspecified sign and payload, and the oracle accepts exactly the NaNs
the rule allows there — no other value, and nothing but the exact bits elsewhere.

Expected sets are worked out by hand from the rule as Rust states it (RFC 3514; `f32` docs
"NaN bit patterns") and LLVM LangRef ("Behavior of Floating-Point NaN values", commit
d688816): either sign; quiet bit and payload either the preferred NaN (0x7fc00000 without
sign), or a NaN operand quieted, or a NaN operand unchanged; `-` and `abs` touch only the
sign; loads and stores keep every bit. The bits real compilers give come from the real rustc
1.95 and LLVM 22 (amdgcn at -O0 rewrites `fsub x, C` to `fadd x, -C`, flipping the NaN's
sign: bucket e8824e5eff)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from oracles import FindingKind, Policy, ZeroSign, judge
from rgpu_fuzz.lang.semantics import floats
from rgpu_fuzz.lang.semantics.nan import Explorer, NanChoice, exploring, preferred
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.outcome import Buffer, Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.registry import Registry

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
STRICT = Policy(name="t", zero_sign=ZeroSign.STRICT)

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(x: &[f32], out0: &mut [u32], out1: &mut [f32]) {
    let a = x[0];
    out0[0] = (a - f32::from_bits(0xffc00000u32)).to_bits();
    out0[1] = (a - f32::from_bits(0x7f800001u32)).to_bits();
    out0[2] = (a / a).to_bits();
    out0[3] = (x[1] * 2.0f32).to_bits();
    out0[4] = (a / a).to_bits() >> 31u32;
    out1[0] = x[1];
    out1[1] = -x[1];
    out1[2] = a / a;
}
"""
CASE = Case(entry="k", kernel=KERNEL, launch=Launch(), args=(
    BufferArg(name="x", elem=Scalar.F32, len=2, init=Values((0x00000000, 0x7FA00001))),
    BufferArg(name="out0", elem=Scalar.U32, len=5, init=Fill(0)),
    BufferArg(name="out1", elem=Scalar.F32, len=3, init=Fill(0))))

# What every element may hold, by hand. x[0] = +0.0, x[1] = sNaN 0x7fa00001.
SIGNS = (0, 0x80000000)
ALLOWED: list[set[int]] = [
    # 0.0 - qNaN(-, payload 0): preferred, or the operand (quiet already), either sign
    {s | 0x7FC00000 for s in SIGNS},
    # 0.0 - sNaN 0x7f800001: preferred, quieted 0x7fc00001, or unchanged 0x7f800001
    {s | p for s in SIGNS for p in (0x7FC00000, 0x7FC00001, 0x7F800001)},
    # 0.0 / 0.0: no NaN operand, so only the preferred NaN
    {s | 0x7FC00000 for s in SIGNS},
    # sNaN 0x7fa00001 * 2.0: preferred, quieted 0x7fe00001, unchanged 0x7fa00001
    {s | p for s in SIGNS for p in (0x7FC00000, 0x7FE00001, 0x7FA00001)},
    # the sign of 0.0 / 0.0, shifted down: either
    {0, 1},
]
ALLOWED_F = [{0x7FA00001}, {0xFFA00001}, {s | 0x7FC00000 for s in SIGNS}]
"""out1: the input sNaN copied exactly, negated exactly (sign only), and 0.0 / 0.0."""


def ok(out0: list[int], out1: list[int]) -> Ok:
    return Ok(outputs={
        "out0": Buffer(Scalar.U32, np.array(out0, dtype=np.uint32)),
        "out1": Buffer(Scalar.F32, np.array(out1, dtype=np.uint32).view(np.float32))})


@pytest.fixture(scope="module")
def ref() -> Ok:
    o = Registry().create("ref").run(CASE)
    assert isinstance(o, Ok), o
    return o


def _bits(o: Ok, name: str) -> list[int]:
    return [int(b) for b in o.outputs[name].bits()]


def test_reference_result_is_one_allowed_execution(ref: Ok) -> None:
    assert all(b in a for b, a in zip(_bits(ref, "out0"), ALLOWED, strict=True))
    assert all(b in a for b, a in zip(_bits(ref, "out1"), ALLOWED_F, strict=True))


def test_every_allowed_nan_agrees_with_the_reference(ref: Ok) -> None:
    for i, allowed in enumerate(ALLOWED):
        for b in sorted(allowed):
            out0 = _bits(ref, "out0")
            out0[i] = b
            v = judge(CASE, {"ref": ref, "p": ok(out0, _bits(ref, "out1"))}, STRICT)
            assert v.findings == (), (i, hex(b), v.findings)
    for b in sorted(ALLOWED_F[2]):
        out1 = _bits(ref, "out1")
        out1[2] = b
        assert judge(CASE, {"ref": ref, "p": ok(_bits(ref, "out0"), out1)}, STRICT).findings == ()


# Values the rule forbids: not a NaN; a signalling NaN no operand was; a payload no operand
# had; a quiet NaN whose payload is the other operand's; a sign bit for `>> 31` beyond 0/1.
FORBIDDEN = [
    (0, 0), (0, 0x7F800000), (0, 0x7FC00001), (0, 0x7F800001),
    (1, 0x7FC00002), (1, 0x7F800002), (1, 0x3F800000),
    (2, 0x7FC00001), (2, 0x7F800001), (2, 0),
    (3, 0x7FC00001), (3, 0x7FA00002),
    (4, 2),
]


@pytest.mark.parametrize(("index", "bits"), FORBIDDEN)
def test_a_value_outside_the_allowed_set_is_wrong_code(ref: Ok, index: int, bits: int) -> None:
    assert bits not in ALLOWED[index]
    out0 = _bits(ref, "out0")
    out0[index] = bits
    (f,) = judge(CASE, {"ref": ref, "p": ok(out0, _bits(ref, "out1"))}, STRICT).findings
    assert f.kind is FindingKind.WRONG_CODE and f.differing_elements == 1
    assert f.diffs[0].buffer == "out0" and f.diffs[0].index == index


@pytest.mark.parametrize(("index", "bits"), [
    (0, 0x7FE00001),   # the copied sNaN quieted: a copy is not arithmetic
    (0, 0xFFA00001),   # the copied sNaN with its sign flipped
    (1, 0x7FA00001),   # `-x` that did not flip the sign
    (1, 0xFFC00000),   # `-x` as an arithmetic NaN
    (2, 0x7FC00001),   # 0.0 / 0.0 with a payload no operand had
    (2, 0x3F800000),   # not a NaN
])
def test_float_nans_are_compared_by_their_bits_now(ref: Ok, index: int, bits: int) -> None:
    """Before this change every NaN equalled every NaN in a float output: all of these were
    `agree`."""
    out1 = _bits(ref, "out1")
    out1[index] = bits
    (f,) = judge(CASE, {"ref": ref, "p": ok(_bits(ref, "out0"), out1)}, STRICT).findings
    assert f.kind is FindingKind.WRONG_CODE and f.diffs[0].buffer == "out1"


def test_a_pipeline_listed_before_the_reference_is_judged_the_same(ref: Ok) -> None:
    """Classes are built in outcome order: the reference's latitude must judge whichever
    side it is on, or two pipelines with the other NaN sign would outvote it."""
    out0 = _bits(ref, "out0")
    out0[0] ^= 0x80000000
    other = ok(out0, _bits(ref, "out1"))
    v = judge(CASE, {"a:O0": other, "b": other, "ref": ref}, STRICT)
    assert v.findings == () and len(v.classes) == 1


def test_preferred_nan() -> None:
    """IEEE 754 §6.2.1 / LangRef: quiet bit set, payload zero, sign cleared."""
    assert preferred(32) == 0x7FC00000 and preferred(64) == 0x7FF8000000000000


def test_exploring_flips_the_sign_and_picks_another_payload() -> None:
    a = np.array([0.0, 1.0], dtype=np.float32)
    b = np.array([0x7FA00001, 0x3F800000], dtype=np.uint32).view(np.float32)
    natural = floats.sub(a, b).view(np.uint32)
    chosen = {}
    for choice in NanChoice:
        with exploring(Explorer(choice)) as ex:
            got = floats.sub(a, b).view(np.uint32)
        assert int(got[1]) == int(natural[1])  # 1.0 - 1.0 is exact: no choice to make
        assert np.isnan(got[[0]].view(np.float32)).all()
        assert (int(got[0]) & 0x7FFFFFFF) in (0x7FC00000, 0x7FE00001, 0x7FA00001)
        assert ex.produced and ex.signalling[32] == {0x7FA00001}
        chosen[choice] = int(got[0])
    # by hand: +preferred, the (only) NaN operand quieted with the sign set, and with it clear
    assert chosen == {NanChoice.POSITIVE_PREFERRED: 0x7FC00000,
                      NanChoice.NEGATIVE_PROPAGATED: 0xFFE00001,
                      NanChoice.POSITIVE_PROPAGATED_LAST: 0x7FE00001}


def test_reproducer_of_bucket_e8824e5eff_no_longer_fires() -> None:
    """The reduced case of bucket e8824e5eff (store key 1e7f57af58, seed 7005): amdgcn -O0
    computes 0x7fc00000, x86 0xffc00000; both are the preferred NaN with some sign."""
    case = Case(entry="k", kernel="""use rgpu::*;

#[kernel]
pub fn k(out0: &mut [u32]) {
    let a = 0u64;
    out0[0usize] = (a as f32 - f32::from_bits(0xffc00000u32)).to_bits();
}
""", launch=Launch(), args=(BufferArg(name="out0", elem=Scalar.U32, len=1, init=Fill(0)),))
    registry = Registry()
    outcomes = {p: registry.create(p).run(case) for p in ("ref", "amdgpu-sim:gfx942:O0")}
    bits = {p: _bits(o, "out0")[0] for p, o in outcomes.items() if isinstance(o, Ok)}
    assert bits == {"ref": 0xFFC00000, "amdgpu-sim:gfx942:O0": 0x7FC00000}
    assert judge(case, outcomes, Policy(name="default")).findings == ()


@pytest.mark.parametrize("plugin", ["llvm-cpu-nanbits-zero", "llvm-cpu-nanbits-snan"])
def test_a_seeded_nan_bits_bug_is_still_caught(plugin: str) -> None:
    registry = Registry()
    registry.load_plugin(PLUGINS / "nan_bits.py")
    outcomes = {p: registry.create(p).run(CASE) for p in ("ref", plugin)}
    findings = judge(CASE, outcomes, STRICT).findings
    assert [f.kind for f in findings] == [FindingKind.WRONG_CODE]
    # Every to_bits of a NaN is wrong but two: 0 >> 31 is an allowed sign (0), and
    # 0.0 - sNaN 0x7f800001 may return that sNaN unchanged, the snan plugin's value.
    assert {d.index for d in findings[0].diffs} == (
        {0, 1, 2, 3} if plugin.endswith("zero") else {0, 2, 3})


def test_real_rustc_for_amdgcn_and_the_host_differ_and_both_agree() -> None:
    """rustc 1.95 for amdgcn-amd-amdhsa at -O0 gives the other sign than rustc for the host
    (x86 `subss`/`divss` give the default NaN 0xffc00000; gfx942 `v_div`/`v_add` 0x7fc00000)."""
    if shutil.which("rustc") is None:
        pytest.skip("rustc not found")
    registry = Registry()
    outcomes = {p: registry.create(p).run(CASE)
                for p in ("ref", "rustc-cpu:O0", "rustc-amdgpu:gfx942:O0")}
    assert all(isinstance(o, Ok) for o in outcomes.values()), outcomes
    host, gpu = (_bits(outcomes[p], "out0") for p in ("rustc-cpu:O0", "rustc-amdgpu:gfx942:O0"))
    assert host[2] == 0xFFC00000 and gpu[2] == 0x7FC00000
    assert all(b in a for b, a in zip(gpu, ALLOWED, strict=True))
    assert judge(CASE, outcomes, STRICT).findings == ()


CHAIN = Case(entry="k", kernel="""use rgpu::*;

const Z: f32 = 0.0f32 / 0.0f32;
const W: f64 = Z as f64;

#[kernel]
pub fn k(x: &[f32], out0: &mut [u32], out1: &mut [u64]) {
    let a = x[0];
    out0[0] = Z.to_bits();
    out0[1] = ((a / a) * 2.0f32).to_bits();
    out1[0] = W.to_bits();
}
""", launch=Launch(), args=(
    BufferArg(name="x", elem=Scalar.F32, len=1, init=Values((0,))),
    BufferArg(name="out0", elem=Scalar.U32, len=2, init=Fill(0)),
    BufferArg(name="out1", elem=Scalar.U64, len=1, init=Fill(0))))


@pytest.mark.parametrize(("out0", "out1"), [
    ((0x7FC00000, 0x7FC00000), 0x7FF8000000000000),
    ((0xFFC00000, 0xFFC00000), 0xFFF8000000000000),
    ((0x7FC00000, 0xFFC00000), 0xFFF8000000000000),
])
def test_nans_from_consts_and_from_other_nans_are_free_too(out0: tuple[int, int],
                                                          out1: int) -> None:
    """A NaN computed from another NaN has its own sign (exploring runs that flipped every
    NaN would flip it twice and miss it); a `const`'s arithmetic NaN is as free as a run-time
    one (rustc's const evaluation gives +, x86 at run time -)."""
    ref = Registry().create("ref").run(CHAIN)
    assert isinstance(ref, Ok)
    other = Ok(outputs={"out0": Buffer(Scalar.U32, np.array(out0, dtype=np.uint32)),
                        "out1": Buffer(Scalar.U64, np.array([out1], dtype=np.uint64))})
    assert judge(CHAIN, {"ref": ref, "p": other}, STRICT).findings == ()
    wrong = Ok(outputs={"out0": Buffer(Scalar.U32, np.array(out0, dtype=np.uint32)),
                        "out1": Buffer(Scalar.U64, np.array([0x7FF8000000000001],
                                                            dtype=np.uint64))})
    (f,) = judge(CHAIN, {"ref": ref, "p": wrong}, STRICT).findings
    assert f.diffs[0].buffer == "out1"


def test_only_a_launch_that_can_observe_nan_bits_runs_again() -> None:
    """`to_bits` of numbers and float outputs without a NaN cannot depend on a NaN's bits:
    no exploring run, no latitude (the reference's cost stays one run)."""
    from rgpu_fuzz.interp import Finished, run_kernel
    from rgpu_fuzz.lang.checker import check_source

    checked = check_source("""use rgpu::*;

#[kernel]
pub fn k(x: &[f32], out0: &mut [u32], out1: &mut [f32]) {
    out0[0] = (x[0] / x[1]).to_bits();
    out1[0] = x[1] * 2.0f32;
}
""")
    numbers = {"x": np.array([1.0, 2.0], dtype=np.float32),
               "out0": np.zeros(1, dtype=np.uint32), "out1": np.zeros(1, dtype=np.float32)}
    got = run_kernel(checked, "k", grid=(1, 1, 1), block=(1, 1, 1), args=numbers)
    assert isinstance(got, Finished) and got.latitude == {}
    zero = dict(numbers, x=np.array([0.0, 0.0], dtype=np.float32))  # 0.0 / 0.0 is NaN
    got = run_kernel(checked, "k", grid=(1, 1, 1), block=(1, 1, 1), args=zero)
    assert isinstance(got, Finished) and set(got.latitude) == {"out0", "out1"}
    assert got.latitude["out0"].nan.tolist() == [True]


def _allows(case: Case, bits: int) -> bool:
    """Whether the oracle accepts `bits` in `case`'s one-element `out` beside `ref`'s run."""
    ref = Registry().create("ref").run(case)
    assert isinstance(ref, Ok), ref
    p = Ok(outputs={"out": Buffer(Scalar.U32, np.array([bits], dtype=np.uint32))})
    return judge(case, {"ref": ref, "p": p}, STRICT).findings == ()


MAX_KERNEL = """use rgpu::*;

#[kernel]
pub fn k(x: &[f32], out: &mut [u32]) {
    out[0] = f32::from_bits(0x7fc00000u32).max(x[0]).to_bits();
}
"""
MAX_CASE = Case(entry="k", kernel=MAX_KERNEL, launch=Launch(), args=(
    BufferArg(name="x", elem=Scalar.F32, len=1, init=Values((0x7F800001,))),
    BufferArg(name="out", elem=Scalar.U32, len=1, init=Fill(0))))


@pytest.mark.parametrize(("bits", "allowed"), [
    (0x7FC00001, True),    # the signalling operand's payload, quieted (amdgcn -O0's v_max_f32)
    (0xFFC00001, True),    # the same with the other sign
    (0x7F800001, True),    # the signalling operand unchanged
    (0x7FC00000, True),    # the quiet operand, which is also the preferred NaN
    (0x7FC00002, False),   # a payload neither operand had
    (0x7F800002, False),   # a signalling NaN that was no operand
])
def test_max_of_two_nans_allows_either_operand_quieted(bits: int, allowed: bool) -> None:
    """`qNaN.max(sNaN 0x7f800001)`: both operands are NaNs, so the result's bits are a set
    (docs/language.md "NaN bits"): either sign with the preferred NaN, either operand's
    payload quieted, or a signalling operand unchanged. Bucket 7393028d97 (a
    30-minute campaign) was amdgcn -O0 returning 0x7fc00001, which the oracle refused."""
    assert _allows(MAX_CASE, bits) is allowed, hex(bits)


CAST_KERNEL = """use rgpu::*;

#[kernel]
pub fn k(x: &[f32], out: &mut [u32]) {
    out[0] = (x[0] as f64 as f32).to_bits();
}
"""
CAST_CASE = Case(entry="k", kernel=CAST_KERNEL, launch=Launch(), args=(
    BufferArg(name="x", elem=Scalar.F32, len=1, init=Values((0xFF800001,))),
    BufferArg(name="out", elem=Scalar.U32, len=1, init=Fill(0))))


@pytest.mark.parametrize(("bits", "allowed"), [
    (0xFF800001, True),    # both casts return their signalling operand unchanged (LLVM folds
    (0x7F800001, True),    # fptrunc(fpext x) to x: buckets 1d8255727b, 680ac55e4c), any sign
    (0xFFC00001, True),    # the payload quieted (what x86 and the reference compute)
    (0x7FC00000, True),    # the preferred NaN
    (0xFF800002, False),   # a signalling NaN that was no operand
    (0x7FC00002, False),   # a payload the operand did not have
    (0xFF800000, False),   # -infinity: not a NaN
])
def test_a_signalling_nan_through_two_float_casts(bits: int, allowed: bool) -> None:
    """`sNaN as f64 as f32`: each `as` between floats may return its NaN operand's payload
    (extended with zeros, then cut to its high bits) quieted or unchanged, or the preferred
    NaN, with either sign (docs/language.md "NaN bits"); so -0x7f800001 (0xff800001) may come
    back as it went in. campaign: LLVM folded the pair away at -O0 and -O3, the
    simulator stored 0xff800001, and the oracle, which recorded no cast operands, refused it."""
    assert _allows(CAST_CASE, bits) is allowed, hex(bits)


FMA_KERNEL = """use rgpu::*;

#[kernel]
pub fn k(x: &[f32], out: &mut [u32]) {
    out[0] = f32::from_bits(0xffc00000u32).sqrt().mul_add(1.0f32, x[0]).to_bits();
}
"""
FMA_CASE = Case(entry="k", kernel=FMA_KERNEL, launch=Launch(), args=(
    BufferArg(name="x", elem=Scalar.F32, len=1, init=Values((0x7F800001,))),
    BufferArg(name="out", elem=Scalar.U32, len=1, init=Fill(0))))


@pytest.mark.parametrize(("bits", "allowed"), [
    (0x7FC00001, True),    # the third operand's payload, quieted (LLVM 22's constant fold)
    (0xFFC00001, True),    # the same with the other sign
    (0x7F800001, True),    # the signalling third operand unchanged
    (0xFFC00000, True),    # the first operand (sqrt's NaN, the preferred one), either sign
    (0x7FC00002, False),   # a payload no operand had
    (0x7F800002, False),   # a signalling NaN that was no operand
])
def test_fma_allows_any_nan_operands_payload_quieted(bits: int, allowed: bool) -> None:
    """`sqrt(NaN).mul_add(1.0, sNaN 0x7f800001)`: the rule allows a NaN operand's payload,
    quieted, for any operand (docs/language.md "NaN bits"). The reference's runs propagate
    only the first NaN operand's (sqrt's), so the third's quieted, 0x7fc00001, which LLVM 22
    folds the expression to at -O3, was refused: campaign bucket 655b0d0dc3."""
    assert _allows(FMA_CASE, bits) is allowed, hex(bits)
