"""The oracle (docs/design.md §5) on hand-built outcomes: equality rules, arbiter, findings."""

from __future__ import annotations

import numpy as np

from oracles import FindingKind, KnownDifference, Policy, ZeroSign, judge
from oracles.compare import normalise_crash_line
from rgpu_fuzz.model.case import Case, Launch
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Ok,
    Rejected,
    RejectReason,
    Timeout,
    Trap,
    TrapKind,
    Unsupported,
)
from rgpu_fuzz.model.scalars import Scalar

CASE = Case(entry="k", kernel="", launch=Launch(), args=())
DEFAULT = Policy(name="t", zero_sign=ZeroSign.STRICT)


def f32(*bits: int) -> Ok:
    arr = np.array(bits, dtype=np.uint32).view(np.float32)
    return Ok(outputs={"out": Buffer(Scalar.F32, arr)})


def u32(*vals: int) -> Ok:
    return Ok(outputs={"out": Buffer(Scalar.U32, np.array(vals, dtype=np.uint32))})


def test_nan_payloads_are_equal() -> None:
    # 0x7fc00000 and 0xffc00001 are both NaN (exponent all ones, mantissa != 0; IEEE 754 §3.4)
    v = judge(CASE, {"ref": f32(0x7FC00000), "x": f32(0xFFC00001)}, DEFAULT)
    assert v.agree
    assert v.classes == (("ref", "x"),)


def test_nan_versus_infinity_differs() -> None:
    v = judge(CASE, {"ref": f32(0x7FC00000), "x": f32(0x7F800000)}, DEFAULT)
    (f,) = v.findings
    assert f.kind is FindingKind.WRONG_CODE and f.pipelines == ("ref", "x")
    assert f.diffs[0].expected_bits == 0x7FC00000 and f.diffs[0].actual_bits == 0x7F800000


def test_signed_zero_strict_and_loose() -> None:
    outcomes = {"ref": f32(0x00000000), "x": f32(0x80000000)}
    assert not judge(CASE, outcomes, DEFAULT).agree
    assert judge(CASE, outcomes, Policy(name="l", zero_sign=ZeroSign.LOOSE)).agree


def test_first_diffs_are_listed_in_order_and_counted() -> None:
    v = judge(CASE, {"ref": u32(1, 2, 3, 4), "x": u32(1, 9, 3, 8)}, DEFAULT)
    (f,) = v.findings
    assert [d.index for d in f.diffs] == [1, 3]
    assert f.differing_elements == 2
    assert (f.diffs[0].expected, f.diffs[0].actual) == ("2", "9")


def test_trap_must_match_the_arbiter() -> None:
    trap = Trap(kind=TrapKind.DIV_BY_ZERO)
    assert judge(CASE, {"ref": trap, "x": Trap(kind=TrapKind.DIV_BY_ZERO)}, DEFAULT).agree
    (f,) = judge(CASE, {"ref": trap, "x": u32(1)}, DEFAULT).findings
    assert f.kind is FindingKind.TRAP_MISMATCH and "no trap" in str(f.signature)
    (g,) = judge(CASE, {"ref": u32(1), "x": trap}, DEFAULT).findings
    assert g.kind is FindingKind.TRAP_MISMATCH and "unexpected div-by-zero" in str(g.signature)


def test_rejected_by_arbiter_compares_nothing() -> None:
    rej = Rejected(reason=RejectReason.GLOBAL_RACE)
    (f,) = judge(CASE, {"ref": rej, "x": u32(1), "y": u32(2)}, DEFAULT).findings
    assert f.kind is FindingKind.INVALID_CASE and f.pipelines == ("ref",)


def test_crashes_and_timeouts_are_findings_unsupported_is_not() -> None:
    outcomes = {"ref": u32(1), "c": CompileCrash(stage="codegen", signature="",
                                                 log="LLVM ERROR: Cannot select: t12: i32 = "
                                                     "foo 0x5581a2"),
                "t": Timeout(stage="run", seconds=5.0),
                "u": Unsupported(features=("shared",))}
    kinds = {f.kind: f for f in judge(CASE, outcomes, DEFAULT).findings}
    assert set(kinds) == {FindingKind.COMPILE_CRASH, FindingKind.TIMEOUT}
    assert str(kinds[FindingKind.COMPILE_CRASH].signature) == (
        "compile-crash|c|codegen|LLVM ERROR: Cannot select: tN: i32 = foo 0x_")


def test_same_crash_line_from_different_kernels_normalises_equal() -> None:
    a = normalise_crash_line("noise\nLLVM ERROR: Cannot select: t7: f32 = fma t1, t2, 0x1f")
    b = normalise_crash_line("LLVM ERROR: Cannot select: t93: f32 = fma t4, t8, 0xabc0")
    assert a == b


def test_known_difference_is_marked_not_new() -> None:
    policy = Policy(name="k", zero_sign=ZeroSign.STRICT,
                    known=(KnownDifference("rustc-*", "wrong-code", "rust#1"),))
    v = judge(CASE, {"ref": u32(1), "rustc-cpu": u32(2), "llvm-cpu": u32(3)}, policy)
    by = {f.pipelines[-1]: f for f in v.findings}
    assert by["rustc-cpu"].known_issue == "rust#1"
    assert by["llvm-cpu"].known_issue == ""
    assert [f.pipelines[-1] for f in v.new_findings] == ["llvm-cpu"]


def test_artefact_that_differs_on_a_second_compilation_is_a_finding() -> None:
    from dataclasses import replace

    from rgpu_fuzz.model.outcome import Stats

    same = replace(u32(1), stats=Stats(artefacts={"object": "ab" * 32}))
    twice = replace(u32(1), stats=Stats(artefacts={"object": "ab" * 32,
                                                   "object-again": "cd" * 32}))
    assert judge(CASE, {"ref": u32(1), "x": same}, DEFAULT).agree
    (f,) = judge(CASE, {"ref": u32(1), "x": twice}, DEFAULT).findings
    assert f.kind is FindingKind.NONDETERMINISM and str(f.signature) == "nondeterminism|x|object"


def test_arbiter_outvoted_by_independent_compilers_is_one_finding() -> None:
    outcomes = {"ref": u32(0), "llvm-cpu:O0": u32(2), "llvm-cpu:O3": u32(2), "rustc-cpu": u32(2)}
    (f,) = judge(CASE, outcomes, DEFAULT).findings
    assert f.kind is FindingKind.WRONG_CODE
    assert f.pipelines == ("ref", "llvm-cpu:O0", "llvm-cpu:O3", "rustc-cpu")
    assert str(f.signature).startswith("wrong-code|ref-outvoted|")
    assert "suspect ref" in f.detail


def test_one_compiler_at_two_levels_does_not_outvote_the_arbiter() -> None:
    outcomes = {"ref": u32(0), "llvm-cpu:O0": u32(2), "llvm-cpu:O3": u32(2)}
    findings = judge(CASE, outcomes, DEFAULT).findings
    assert sorted(f.pipelines[-1] for f in findings) == ["llvm-cpu:O0", "llvm-cpu:O3"]


def test_compilers_that_disagree_among_themselves_do_not_outvote() -> None:
    outcomes = {"ref": u32(0), "llvm-cpu:O0": u32(2), "rustc-cpu": u32(3)}
    assert len(judge(CASE, outcomes, DEFAULT).findings) == 2
