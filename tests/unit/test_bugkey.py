"""Bug keys (`triage/bugkey.py`): one seeded bug → one key, two bugs → two keys.

The kernels in tests/data/bugkey/<bug>/ are the best reproducers of the buckets a 60-second
campaign of `main` before bug keys (d74bc16, `--jobs 1`, seeds from 0) made for each seeded
bug: several `ops=` buckets per bug. Expected keys name the operation each plugin breaks,
read from the plugin's transformation (e.g. fptosi_plain.py rewrites float→int casts, so
`as:float->int`), not from the code under test. Expected values of the plugins' wrong code
come from Rust's semantics (The Rust Reference, "Numeric cast": float→int saturates, NaN → 0;
`<<` masks the amount) and from IEEE 754 / LangRef for `minnum` and `minimum`.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from oracles import Finding, FindingKind, judge, load_policy
from oracles.signature import Signature
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.case import BufferArg, Case, Launch, Values
from rgpu_fuzz.model.outcome import CompileCrash, Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from triage.bugkey import BugKeys, TypedOp, probe_case, typed_ops
from triage.classify import place, reduction_slot

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
DATA = Path(__file__).resolve().parents[1] / "data" / "bugkey"
SEEDED = {  # bug folder -> (plugin file, pipeline spec, the key its transformation implies)
    "fptosi": ("fptosi_plain.py", "llvm-cpu-fptosi:O0", "as:float->int"),
    "shl": ("shl_nomask.py", "llvm-cpu-shlmask:O0", "shl:int"),
    "xor2or": ("miscompile.py", "llvm-cpu-xor2or:O0", "xor:int"),
    "minnan": ("minnum_nan.py", "llvm-cpu-minnan:O0", "min:float"),
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry()
    for plugin in ("fptosi_plain.py", "shl_nomask.py", "miscompile.py", "minnum_nan.py",
                   "srem_crash.py", "fptosi_and_shl.py"):
        reg.load_plugin(seeded_plugin(plugin))
    reg.load_plugin(PLUGINS / "neg_off_by_one.py")
    return reg


def _case(kernel_body: str, params: str, args: list[BufferArg]) -> Case:
    kernel = (f"use rgpu::*;\n\n#[kernel]\npub fn k({params}) {{\n"
              f"    let i: usize = thread_idx_x() as usize;\n    {kernel_body}\n}}\n")
    n = args[0].len
    return Case(entry="k", kernel=kernel, launch=Launch(block=(n, 1, 1)), args=tuple(args))


def _f32(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def _outputs(reg: Registry, spec: str, case: Case) -> tuple[np.ndarray, np.ndarray]:
    ref, p = reg.create("ref"), reg.create(spec)
    outcomes = run_case(case, [ref, p])
    got_ref, got = outcomes[ref.label], outcomes[p.label]
    assert isinstance(got_ref, Ok) and isinstance(got, Ok), (got_ref, got)
    return got_ref.outputs["out"].values, got.outputs["out"].values


# ------------------------------------------------------------------ the seeded bugs are real

def test_fptosi_plugin_casts_without_saturating(registry: Registry) -> None:
    values = [float("nan"), 3e9, -3e9, 1.5]
    case = _case("out[i] = a[i] as i32;", "a: &[f32], out: &mut [i32]",
                 [BufferArg(name="a", elem=Scalar.F32, len=4,
                            init=Values(tuple(_f32(v) for v in values))),
                  BufferArg(name="out", elem=Scalar.I32, len=4, init=Values((0,) * 4))])
    ref, bad = _outputs(registry, "llvm-cpu-fptosi:O0", case)
    assert ref.tolist() == [0, 2**31 - 1, -2**31, 1]   # Rust: saturate, NaN -> 0
    assert bad[0] != 0 and bad[1] != 2**31 - 1 and bad[3] == 1


def test_shl_plugin_shifts_by_the_unmasked_amount(registry: Registry) -> None:
    case = _case("out[i] = a[i] << b[i];", "a: &[u8], b: &[u8], out: &mut [u8]",
                 [BufferArg(name="a", elem=Scalar.U8, len=3, init=Values((1, 1, 1))),
                  BufferArg(name="b", elem=Scalar.U8, len=3, init=Values((3, 9, 15))),
                  BufferArg(name="out", elem=Scalar.U8, len=3, init=Values((0,) * 3))])
    ref, bad = _outputs(registry, "llvm-cpu-shlmask:O0", case)
    assert ref.tolist() == [8, 2, 128]                 # 1 << (n & 7)
    assert bad[0] == 8 and bad[1] != 2 and bad[2] != 128


def test_min_plugin_propagates_nan(registry: Registry) -> None:
    nan = _f32(float("nan"))
    case = _case("out[i] = a[i].min(b[i]);", "a: &[f32], b: &[f32], out: &mut [f32]",
                 [BufferArg(name="a", elem=Scalar.F32, len=2, init=Values((nan, _f32(2.0)))),
                  BufferArg(name="b", elem=Scalar.F32, len=2,
                            init=Values((_f32(1.0), _f32(1.0)))),
                  BufferArg(name="out", elem=Scalar.F32, len=2, init=Values((0, 0)))])
    ref, bad = _outputs(registry, "llvm-cpu-minnan:O0", case)
    assert ref.tolist() == [1.0, 1.0]                  # minNum ignores a NaN operand
    assert np.isnan(bad[0]) and bad[1] == 1.0          # minimum propagates it


def test_neg_plugin_computes_one_minus_x_and_is_keyed_by_sub(registry: Registry) -> None:
    """neg_off_by_one.py rewrites `sub 0, x` to `sub 1, x`: `-x` becomes `1 - x`, by hand
    [5, 0, -7] → [-4, 1, 8] where Rust's `-x` gives [-5, 0, 7]. The finding's bug key is the
    family of the instruction the plugin breaks (LangRef has no `neg`: `-x` is `sub 0, x`)."""
    case = _case("out[i] = -a[i];", "a: &[i32], out: &mut [i32]",
                 [BufferArg(name="a", elem=Scalar.I32, len=3,
                            init=Values(tuple(v & 0xFFFFFFFF for v in (5, 0, -7)))),
                  BufferArg(name="out", elem=Scalar.I32, len=3, init=Values((0,) * 3))])
    spec = "llvm-cpu-neg1:O0"
    ref, bad = _outputs(registry, spec, case)
    assert ref.tolist() == [-5, 0, 7]
    assert bad.tolist() == [-4, 1, 8]
    keys = BugKeys([registry.create("ref"), registry.create(spec)], load_policy("default"))
    assert str(keys.key(_ops_signature(registry, spec, case), case)) == \
        f"wrong-code|{spec}|probe=sub:int"


def test_the_min_nan_reproducer_is_keyed_by_min(registry: Registry) -> None:
    """tests/data/bugkey/minnan's campaign reproducer: `1.0f64.min(NaN) as u8 != 0`. By hand:
    minNum ignores the NaN (IEEE 754-2008 5.3.1; Rust `f64::min`) → 1.0 → 1u8 → true; the
    plugin's `llvm.minimum` returns the NaN (IEEE 754-2019 9.6), NaN as u8 is 0 (The Rust
    Reference, "Numeric cast") → false. Its key is the family the plugin breaks."""
    (path,) = sorted((DATA / "minnan").glob("*.toml"))
    case = casefile.load(path)
    spec = SEEDED["minnan"][1]
    ref, p = registry.create("ref"), registry.create(spec)
    outcomes = run_case(case, [ref, p])
    got_ref, got = outcomes[ref.label], outcomes[p.label]
    assert isinstance(got_ref, Ok) and isinstance(got, Ok), (got_ref, got)
    assert got_ref.outputs["out1"].values.tolist() == [True]
    assert got.outputs["out1"].values.tolist() == [False]
    keys = BugKeys([ref, p], load_policy("default"))
    assert str(keys.key(_ops_signature(registry, spec, case), case)) == \
        f"wrong-code|{spec}|probe={SEEDED['minnan'][2]}"


@pytest.mark.parametrize("ty,crashes", [("i32", True), ("u32", False)])
def test_srem_plugin_crashes_only_on_signed_rem(registry: Registry, ty: str,
                                                crashes: bool) -> None:
    elem = Scalar(ty)
    case = _case("out[i] = a[i] % 3;", f"a: &[{ty}], out: &mut [{ty}]",
                 [BufferArg(name="a", elem=elem, len=2, init=Values((7, 8))),
                  BufferArg(name="out", elem=elem, len=2, init=Values((0, 0)))])
    got = run_case(case, [registry.create("llvm-cpu-sremcrash:O0")])["llvm-cpu-sremcrash:O0"]
    if crashes:
        assert isinstance(got, CompileCrash) and "Cannot select" in got.signature
    else:
        assert isinstance(got, Ok) and got.outputs["out"].values.tolist() == [1, 2]


# ------------------------------------------------------------------ typed operations

def test_typed_ops_read_operators_casts_and_methods_with_types() -> None:
    kernel = ("use rgpu::*;\n\n#[kernel]\npub fn k(a: &[u8], f: &[f32], out: &mut [u8],"
              " o: &mut [i32]) {\n"
              "    let i: usize = thread_idx_x() as usize;\n"
              "    let mut x: u8 = a[i] << 3u32;\n"
              "    x = x.wrapping_shl(2u32);\n"
              "    x ^= !x;\n"
              "    out[i] = x;\n"
              "    o[i] = f[i].min(1.0f32) as i32;\n}\n")
    case = Case(entry="k", kernel=kernel, launch=Launch(block=(1, 1, 1)), args=(
        BufferArg(name="a", elem=Scalar.U8, len=1, init=Values((0,))),
        BufferArg(name="f", elem=Scalar.F32, len=1, init=Values((0,))),
        BufferArg(name="out", elem=Scalar.U8, len=1, init=Values((0,))),
        BufferArg(name="o", elem=Scalar.I32, len=1, init=Values((0,)))))
    prepared = prepare(case)
    assert isinstance(prepared, tuple)
    ops = typed_ops(tuple(prepared[0].fns.values()))
    u8, u32, f32 = Scalar.U8, Scalar.U32, Scalar.F32
    assert sorted((o.template, o.family, o.operands, o.result) for o in ops) == sorted([
        ("{0} << {1}", "shl:int", (u8, u32), u8),          # a[i] << 3u32
        ("{0} ^ {1}", "xor:int", (u8, u8), u8),            # x ^= ...
        ("{0} as i32", "as:float->int", (f32,), Scalar.I32),
        ("{0} as usize", "as:int->int", (u32,), Scalar.USIZE),  # thread_idx_x() as usize
        ("{0}.min({1})", "min:float", (f32, f32), f32),
        ("{0}.wrapping_shl({1})", "shl:int", (u8, u32), u8),   # `<<` by Rust's semantics
        ("!{0}", "xor:int", (u8,), u8),                    # `xor x, -1` in LLVM IR
    ])


def test_a_probe_case_is_well_defined_for_divisions() -> None:
    op = TypedOp(family="div:int", template="{0} / {1}", operands=(Scalar.I8, Scalar.I8),
                 result=Scalar.I8)
    case = probe_case(op)
    a, b = (np.array(arg.init.bits) for arg in case.args[:2])  # type: ignore[union-attr]
    assert 0 not in b                                  # no zero divisor
    assert not np.any((a == 0x80) & (b == 0xFF))       # no i8::MIN / -1
    out = run_case(case, [Registry().create("ref")])["ref"]
    assert isinstance(out, Ok)


# ------------------------------------------------------------------ one bug -> one key

def _ops_signature(reg: Registry, spec: str, case: Case) -> Signature:
    ref, p = reg.create("ref"), reg.create(spec)
    verdict = judge(case, run_case(case, [ref, p]), load_policy("default"), case_module(case))
    wrong = [f.signature for f in verdict.findings if f.kind is FindingKind.WRONG_CODE]
    assert len(wrong) == 1, verdict
    return wrong[0]


@pytest.mark.parametrize("bug", ["fptosi", "shl", "xor2or"])
def test_each_seeded_bug_has_one_key_where_ops_gave_several(registry: Registry,
                                                            bug: str) -> None:
    _, spec, family = SEEDED[bug]
    cases = [casefile.load(p) for p in sorted((DATA / bug).glob("*.toml"))]
    found = [(_ops_signature(registry, spec, c), c) for c in cases]
    assert len({sig for sig, _ in found}) == len(cases) > 1   # the surface: a bucket each
    keys = BugKeys([registry.create("ref"), registry.create(spec)], load_policy("default"))
    assert {str(keys.key(sig, c)) for sig, c in found} == {f"wrong-code|{spec}|probe={family}"}


def test_two_bugs_in_one_pipeline_get_two_keys(registry: Registry) -> None:
    spec = "llvm-cpu-fptosi-shl:O0"
    keys = BugKeys([registry.create("ref"), registry.create(spec)], load_policy("default"))
    got = {}
    for bug in ("fptosi", "shl"):
        case = casefile.load(sorted((DATA / bug).glob("*.toml"))[0])
        got[bug] = str(keys.key(_ops_signature(registry, spec, case), case))
    assert got == {"fptosi": f"wrong-code|{spec}|probe=as:float->int",
                   "shl": f"wrong-code|{spec}|probe=shl:int"}


def test_a_kernel_without_a_broken_operation_has_no_key(registry: Registry) -> None:
    case = casefile.load(next((DATA / "shl").glob("*.toml")))
    keys = BugKeys([registry.create("ref"), registry.create("llvm-cpu-minnan:O0")],
                   load_policy("default"))
    assert keys.key(Signature.parse("wrong-code|llvm-cpu-minnan:O0|ops=shl"), case) is None
    assert keys.key(Signature.parse("timeout|llvm-cpu-minnan:O0|run"), case) is None


# ------------------------------------------------------------------ signatures and placement

PIPE = "llvm-cpu:O0"


def _finding(detail: str) -> Finding:
    return Finding(kind=FindingKind.WRONG_CODE, pipelines=(PIPE,),
                   signature=Signature.parse(f"wrong-code|{PIPE}|{detail}"))


def test_probe_signatures_parse_and_reduce_like_ops() -> None:
    sig = Signature.parse(f"wrong-code|{PIPE}|probe=shl:int+as:float->int")
    assert sig.probe == {"shl:int", "as:float->int"} and sig.ops is None
    assert str(sig) == f"wrong-code|{PIPE}|probe=shl:int+as:float->int"
    assert sig.coarse_text() == f"wrong-code|{PIPE}"
    assert sig.coarse == Signature.parse(f"wrong-code|{PIPE}|ops=xor").coarse
    assert reduction_slot(sig) == sig
    assert reduction_slot(Signature.parse(f"wrong-code|{PIPE}|ops=xor")) == sig.coarse


def test_place_takes_a_one_family_key_and_narrows_a_wider_one() -> None:
    one = Signature.parse(f"wrong-code|{PIPE}|probe=xor:int")
    two = Signature.parse(f"wrong-code|{PIPE}|probe=shl:int+xor:int")
    old = Signature.parse(f"wrong-code|{PIPE}|ops=xor")  # a bucket of a store before bug keys
    assert place(_finding("ops=shl,xor"), ("shl", "xor"), [old], bug_key=one) == one
    # several families, unreduced: a reduction decides (even with a bucket of one of them)
    assert place(_finding("ops=shl,xor"), ("shl", "xor"), [old, one], bug_key=two) is None
    assert place(_finding("ops=shl,xor"), ("shl", "xor"), [old], bug_key=two,
                 reduced=True) == two
    # without a key: the old placement into `ops=` buckets, unchanged
    assert place(_finding("ops=shl,xor"), ("shl", "xor"), [old, one]) == old
