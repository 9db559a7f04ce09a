"""the oracle never says `agree` for different outputs.

Each test here failed on the oracle before this change: the arbiter was found by its full
label (so `ref:steps=100000` was not the arbiter and nothing was compared), pipelines were
compared only against an arbiter (so without `ref` every difference was `agree`), and a
crashed arbiter hit an assertion. Expected verdicts follow docs/design.md §5 by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracles import FindingKind, Policy, Signature, ZeroSign, arbiter_of, judge
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.outcome import CompileCrash, Ok, Timeout, Trap, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from tests.unit.test_oracle import u32

CASE = Case(entry="k", kernel="", launch=Launch(), args=())
STRICT = Policy(name="t", zero_sign=ZeroSign.STRICT)


def i32(*vals: int) -> Ok:
    from rgpu_fuzz.model.outcome import Buffer

    return Ok(outputs={"out": Buffer(Scalar.I32, np.array(vals, dtype=np.int32))})


def test_arbiter_is_found_by_name_not_label() -> None:
    outcomes = {"ref:steps=100000": i32(-10), "llvm-cpu-xor2or:O0": i32(-2)}
    assert arbiter_of(outcomes, STRICT) == "ref:steps=100000"
    (f,) = judge(CASE, outcomes, STRICT).findings
    assert f.kind is FindingKind.WRONG_CODE
    assert f.pipelines == ("ref:steps=100000", "llvm-cpu-xor2or:O0")
    assert str(f.signature) == "wrong-code|llvm-cpu-xor2or:O0|ops="
    assert f.diffs[0].expected == "-10" and f.diffs[0].actual == "-2"


def test_no_arbiter_two_that_disagree_are_a_finding_with_no_suspect() -> None:
    (f,) = judge(CASE, {"llvm-cpu:O0": i32(-10), "llvm-cpu-xor2or:O0": i32(-2)},
                 STRICT).findings
    assert f.kind is FindingKind.WRONG_CODE and f.suspects == ()
    assert "no arbiter ran" in f.detail and "suspect none" in f.detail
    assert f.differing_elements == 1


def test_no_arbiter_the_minority_is_suspect() -> None:
    v = judge(CASE, {"a": u32(1, 2), "b": u32(1, 2), "c": u32(1, 3)}, STRICT)
    (f,) = v.findings
    assert f.suspects == ("c",) and f.pipelines == ("a", "b", "c")
    assert str(f.signature) == "wrong-code|c|ops=" and "majority a,b" in f.detail


def test_no_arbiter_trap_against_finish_is_a_trap_mismatch() -> None:
    trap = Trap(kind=TrapKind.DIV_BY_ZERO)
    (f,) = judge(CASE, {"a": u32(1), "b": u32(1), "c": trap}, STRICT).findings
    assert f.kind is FindingKind.TRAP_MISMATCH and f.suspects == ("c",)


def test_crashed_arbiter_still_compares_the_others() -> None:
    outcomes = {"ref": Timeout(stage="run", seconds=1.0), "x": u32(1), "y": u32(2)}
    kinds = sorted(str(f.kind) for f in judge(CASE, outcomes, STRICT).findings)
    assert kinds == ["timeout", "wrong-code"]


def test_crash_without_arbiter_is_a_finding() -> None:
    crash = CompileCrash(stage="codegen", signature="LLVM ERROR: Cannot select")
    (f,) = judge(CASE, {"llvm-cpu-fatal": crash}, STRICT).findings
    assert f.kind is FindingKind.COMPILE_CRASH


def test_agreement_without_arbiter_is_still_agree() -> None:
    assert judge(CASE, {"a": u32(1, 2), "b": u32(1, 2)}, STRICT).agree


@pytest.mark.parametrize("text", [
    "wrong-code|llvm-cpu:O0|ops=add,or,xor",
    "wrong-code|ref-outvoted|ops=",
    "trap-mismatch|llvm-cpu|expected div-by-zero, got no trap",
    "compile-crash|llvm-cpu:O3|codegen|LLVM ERROR: a | b",
    "run-crash|rustc-cpu:O2|SIGSEGV",
    "timeout|llvm-cpu-hang|run",
    "nondeterminism|llvm-cpu:O3|object",
    "rejected|rustc-cpu|invalid-case",
    "invalid-case|step-budget",
])
def test_signature_text_form_round_trips(text: str) -> None:
    """The layouts are those of stores written before the value existed."""
    assert str(Signature.parse(text)) == text


def test_signature_fields() -> None:
    sig = Signature.parse("compile-crash|llvm-cpu:O3|codegen|LLVM ERROR: a | b")
    assert (sig.kind, sig.pipeline, sig.stage, sig.detail) == (
        "compile-crash", "llvm-cpu:O3", "codegen", "LLVM ERROR: a | b")
    wc = Signature.parse("wrong-code|p|ops=add,xor")
    assert wc.ops == frozenset({"add", "xor"}) and wc.coarse_text() == "wrong-code|p"
    with pytest.raises(ValueError):
        Signature(kind="wrong-code", pipeline="a|b", detail="ops=")


KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[i32], out: &mut [i32]) {
    let t: usize = thread_idx_x() as usize;
    out[t] = a[t] ^ 2i32;
}
"""
XOR_CASE = Case(entry="k", kernel=KERNEL, launch=Launch(block=(1, 1, 1)), args=(
    BufferArg(name="a", elem=Scalar.I32, len=1, init=Values((0xFFFFFFF6,))),
    BufferArg(name="out", elem=Scalar.I32, len=1, init=Fill(0))))


@pytest.mark.parametrize("pipelines", ["ref:steps=100000,llvm-cpu-xor2or:O0",
                                       "llvm-cpu:O0,llvm-cpu-xor2or:O0"])
def test_cli_reports_the_seeded_miscompile(tmp_path: Path, pipelines: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """-10 ^ 2 = -12 (xor), -10 | 2 = -10 (or): the issue's two commands said `agree`."""
    path = tmp_path / "case.toml"
    casefile.save(XOR_CASE, path)
    code = main(["run", str(path), "--pipelines", pipelines,
                 "--plugin", str(seeded_plugin("miscompile.py"))])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "verdict: agree" not in out and "wrong-code" in out


def test_a_pipeline_error_names_the_bug_not_the_case() -> None:
    """Two cases, one plugin bug (a buffer one element short): one bucket."""
    from rgpu_fuzz.model.outcome import PipelineFailure

    sigs = {str(judge(CASE, {"ref": u32(1), "p": PipelineFailure(error=(
        f"returned Ok with a buffer of the wrong type or length: {name} has {n} {ty}, "
        f"the case gives {n + 1} {ty}"))}, STRICT).findings[0].signature)
        for name, n, ty in [("out0", 59, "i32"), ("out1", 3, "u8")]}
    assert sigs == {"pipeline-error|p|returned Ok with a buffer of the wrong type or length"}
    (f,) = judge(CASE, {"ref": u32(1), "p": PipelineFailure(
        error="IndexError: index 17 is out of bounds")}, STRICT).findings
    assert str(f.signature) == "pipeline-error|p|IndexError: index N is out of bounds"
