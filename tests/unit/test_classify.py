"""`triage.classify`: which bucket an unreduced finding joins (`place`) and the key a
reduction keeps (`Signature.coarse`)."""

from __future__ import annotations

import pytest

from oracles import Finding, FindingKind, Signature
from triage.classify import place, signature_ops, slot_text

S = Signature.parse

PIPE = "llvm-cpu:O3"


def wrong_code(ops: str, pipeline: str = PIPE) -> Finding:
    return Finding(kind=FindingKind.WRONG_CODE, pipelines=(pipeline,),
                   signature=S(f"wrong-code|{pipeline}|ops={ops}"))


def test_coarse_key_drops_ops() -> None:
    assert S(f"wrong-code|{PIPE}|ops=add,shl,xor").coarse_text() == f"wrong-code|{PIPE}"
    assert S(f"wrong-code|{PIPE}|ops=").coarse_text() == f"wrong-code|{PIPE}"
    assert S(f"wrong-code|{PIPE}|ops=add").coarse == S(f"wrong-code|{PIPE}|ops=shl").coarse
    # signatures without `ops=` are their own key
    crash = S("compile-crash|llvm-cpu:O0|LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.if")
    assert crash.coarse == crash


def test_reduction_slot_text_is_the_text_older_campaigns_named_markers_by() -> None:
    """A stopped campaign's `reducing/` markers are named by the bucket id of the slot's
    text as rgpu-fuzz wrote it when signatures were text: `wrong-code|P` for a wrong-code
    finding, the key itself for a bug key, the signature for other kinds (the texts are
    written out here, as the older code formed them)."""
    from triage.classify import reduction_slot

    assert slot_text(reduction_slot(S(f"wrong-code|{PIPE}|ops=add,xor"))) == f"wrong-code|{PIPE}"
    key = f"wrong-code|{PIPE}|probe=shl:int"
    assert slot_text(reduction_slot(S(key))) == key
    crash = "compile-crash|llvm-cpu:O0|isel|LLVM ERROR: x"
    assert slot_text(reduction_slot(S(crash))) == crash


def test_signature_ops() -> None:
    assert signature_ops(S(f"wrong-code|{PIPE}|ops=add,as:u8,xor")) == {"add", "as:u8", "xor"}
    assert signature_ops(S(f"wrong-code|{PIPE}|ops=")) == frozenset()
    assert signature_ops(S("timeout|llvm-cpu:O0|run")) is None


def test_joins_the_most_specific_bucket_whose_ops_are_in_the_case() -> None:
    known = [S(f"wrong-code|{PIPE}|ops=xor"),
             S(f"wrong-code|{PIPE}|ops=shl,xor"),
             S(f"wrong-code|{PIPE}|ops=add,shl,xor"),       # add is not in the case
             S(f"wrong-code|{PIPE}|ops=mul")]               # mul is not in the case
    case_ops = ("as:u32", "shl", "sub", "xor")
    got = place(wrong_code("as:u32,shl,sub,xor"), case_ops, known)
    assert got == S(f"wrong-code|{PIPE}|ops=shl,xor")
    # the order of `known` does not matter
    assert place(wrong_code("as:u32,shl,sub,xor"), case_ops, reversed(known)) == got


def test_exact_bucket_and_empty_ops_bucket() -> None:
    exact = S(f"wrong-code|{PIPE}|ops=shl,xor")
    assert place(wrong_code("shl,xor"), ("shl", "xor"), [exact]) == exact
    no_ops = S(f"wrong-code|{PIPE}|ops=")
    assert place(wrong_code("shl,xor"), ("shl", "xor"), [no_ops]) == no_ops
    assert place(wrong_code("shl,xor"), ("shl", "xor"), [no_ops, exact]) == exact


def test_no_fitting_bucket_needs_a_reduction() -> None:
    case_ops = ("add", "xor")
    assert place(wrong_code("add,xor"), case_ops, []) is None
    # every bucket of the same pipeline needs an operation the case lacks
    assert place(wrong_code("add,xor"), case_ops,
                 [S(f"wrong-code|{PIPE}|ops=shl"), S(f"wrong-code|{PIPE}|ops=add,mul")]) is None


def test_buckets_of_other_pipelines_or_kinds_do_not_count() -> None:
    case_ops = ("add", "xor")
    known = [S("wrong-code|llvm-cpu:O0|ops=xor"),               # other pipeline
             S(f"compile-crash|{PIPE}|isel|LLVM ERROR: something"),  # other kind
             S(f"wrong-code|{PIPE}x|ops=xor")]                  # a label with the same prefix
    assert place(wrong_code("add,xor"), case_ops, known) is None


@pytest.mark.parametrize(("kind", "signature"), [
    (FindingKind.COMPILE_CRASH, "compile-crash|llvm-cpu:O0|isel|LLVM ERROR: Cannot select: %N"),
    (FindingKind.TIMEOUT, "timeout|llvm-cpu:O3|run"),
    (FindingKind.TRAP_MISMATCH, "trap-mismatch|llvm-cpu:O0|expected div-by-zero, got ok"),
    (FindingKind.RUN_CRASH, "run-crash|llvm-cpu:O0|signal 11"),
    (FindingKind.INVALID_CASE, "invalid-case|ref|rejected"),
])
def test_other_kinds_keep_their_signature(kind: FindingKind, signature: str) -> None:
    finding = Finding(kind=kind, pipelines=("llvm-cpu:O0",), signature=S(signature))
    # even when a wrong-code bucket of the same pipeline would fit, and with no buckets
    known = [S("wrong-code|llvm-cpu:O0|ops=")]
    assert place(finding, ("add",), known) == S(signature)
    assert place(finding, (), []) == S(signature)


def test_signatures_sort_as_their_text_and_list_without_their_kind() -> None:
    """`triage list` shows the text after the kind; listings sort by the text, byte order
    (the order before signatures were values)."""
    texts = ["wrong-code|b|ops=xor", "compile-crash|a|isel|LLVM ERROR: x | y",
             "wrong-code|a|probe=shl:int", "timeout|a|run", "invalid-case|ref rejected"]
    assert [str(s) for s in sorted(S(t) for t in texts)] == sorted(texts)
    assert S("compile-crash|a|isel|LLVM ERROR: x | y").after_kind == "a|isel|LLVM ERROR: x | y"
    assert S("invalid-case|ref rejected").after_kind == "ref rejected"
