"""Single reduction passes and the triage interestingness test, on small kernels."""

from __future__ import annotations

from oracles import Policy, Signature
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.ref import RefPipeline
from triage.reduce import State, expected_ref_trap, reduction_key, signature_predicate
from triage.reduce.passes.exprs import inline_helpers, inline_lets, replace_exprs
from triage.reduce.passes.names import canonical_names
from triage.reduce.passes.stmts import if_branches, loops

KERNEL = """\
use rgpu::*;

fn twice(v: u32) -> u32 {
    v * 2u32
}

#[kernel]
pub fn k(out: &mut [u32]) {
    let mut total: u32 = 0u32;
    for step in 0u32..3u32 {
        total += twice(step);
    }
    if total > 4u32 {
        total = total ^ 1u32;
    } else {
        total = 0u32;
    }
    out[0usize] = total;
}
"""


def _case(kernel: str = KERNEL) -> Case:
    return Case(entry="k", kernel=kernel, launch=Launch(),
                args=(BufferArg(name="out", elem=Scalar.U32, len=1, init=Fill(0)),))


def _state(kernel: str = KERNEL) -> State:
    state = State.of(_case(kernel))
    assert state is not None
    return state


def _checks(case: Case) -> bool:
    try:
        check_source(case.kernel)
    except Exception:
        return False
    return True


def test_for_loop_unrolls_into_let_bound_iterations() -> None:
    cands = list(loops(_state()))
    one, unrolled = cands[0], cands[1]
    assert "for" not in one.kernel and "let step: u32 = 0u32;" in one.kernel
    assert unrolled.kernel.count("twice(step)") == 3
    assert "let step: u32 = 2u32;" in unrolled.kernel
    assert _checks(one) and _checks(unrolled)


def test_helper_inlines_and_disappears() -> None:
    first = next(inline_helpers(_state()))
    assert "fn twice" not in first.kernel and "let v: u32 = step;" in first.kernel
    assert _checks(first)


def test_if_becomes_either_branch() -> None:
    texts = [c.kernel for c in if_branches(_state())]
    assert any("total = total ^ 1u32;" in t and "else" not in t and "if" not in t.split("}")[2]
               for t in texts)
    assert all(_checks(_case(t)) for t in texts[:2])


def test_expressions_become_literals_or_same_typed_children() -> None:
    texts = {c.kernel for c in replace_exprs(_state())}
    assert any("out[0usize] = 0u32;" in t for t in texts)
    assert any("total = total;" in t for t in texts)       # `total ^ 1u32` → `total`
    assert any("v\n}" in t for t in texts)                   # `v * 2u32` → `v`


def test_an_else_if_replaced_by_a_value_is_an_else_block() -> None:
    # found by a campaign: `put` left an IntLit in `If.else_`, and printing the candidate
    # raised in the reducer (a harness error); every candidate must print and check
    kernel = KERNEL.replace(
        "out[0usize] = total;",
        "let t: u32 = if total > 3u32 { 1u32 } else if total > 1u32 { 2u32 } else { 3u32 };\n"
        "    out[0usize] = t;")
    assert _checks(_case(kernel))
    texts = [c.kernel for c in replace_exprs(_state(kernel))]
    assert any("} else {\n        0u32\n    }" in t or "else { 0u32 }" in t for t in texts)
    assert all(_checks(_case(t)) for t in texts if "else" in t)


def test_inline_lets_substitutes_every_use() -> None:
    kernel = KERNEL.replace("out[0usize] = total;", "let t: u32 = total;\n    out[0usize] = t + t;")
    texts = [c.kernel for c in inline_lets(_state(kernel))]
    assert any("out[0usize] = total + total;" in t for t in texts)


def test_canonical_names() -> None:
    renamed = next(canonical_names(_state()))
    assert "fn f(a: u32)" in renamed.kernel and "let mut a: u32" in renamed.kernel
    assert "for b in" in renamed.kernel and _checks(renamed)


def test_reduction_key_ignores_the_operations_even_when_they_contain_a_bar() -> None:
    S = Signature.parse
    assert S("wrong-code|llvm-cpu:O2|ops=>,^,|").coarse_text() == "wrong-code|llvm-cpu:O2"
    assert reduction_key(S("wrong-code|llvm-cpu:O2|ops=>,^,|")) == \
        reduction_key(S("wrong-code|llvm-cpu:O2|ops=+"))
    assert str(reduction_key(S("compile-crash|x|lower|LLVM ERROR: a|b"))) == \
        "compile-crash|x|lower|LLVM ERROR: a|b"


def test_expected_ref_trap() -> None:
    S = Signature.parse
    assert expected_ref_trap(S("trap-mismatch|p|expected div-by-zero, got no trap")) is \
        TrapKind.DIV_BY_ZERO
    assert expected_ref_trap(S("trap-mismatch|p|unexpected out-of-bounds")) is None
    assert expected_ref_trap(S("wrong-code|p|ops=+")) is None


class FlipsOnXor(RefPipeline):
    """A seeded bug: out[0]'s low bit flips in kernels with a `^`."""

    name = "flips-on-xor"

    def _run(self, case: Case) -> Outcome:
        o = super()._run(case)
        if isinstance(o, Ok) and "^" in case.kernel:
            values = o.outputs["out"].values.copy()
            values[0] ^= 1
            return Ok(outputs={"out": Buffer(Scalar.U32, values)})
        return o


def test_signature_predicate_keeps_the_bug_and_the_definedness() -> None:
    policy = Policy(name="t")
    pipe = FlipsOnXor(PipelineSpec.parse("flips-on-xor"))
    pred = signature_predicate(Signature.parse("wrong-code|flips-on-xor|ops=+,^"), [pipe], policy)
    assert pred(_case())
    assert not pred(_case(KERNEL.replace("^", "|")))                      # no bug left
    assert not pred(_case(KERNEL.replace("v * 2u32", "v / (v - v)")))     # ref traps
    assert not pred(_case(KERNEL.replace("= total;", "= nope;")))   # does not check
    other = signature_predicate(Signature.parse("wrong-code|llvm-cpu:O2|ops=^"), [pipe], policy)
    assert not other(_case())                                             # another bug
