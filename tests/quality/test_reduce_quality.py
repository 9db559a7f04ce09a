"""Quality: a seeded miscompilation, found on a generated case, reduces to a small kernel
with the same signature (docs/design.md §2; §8: the size of reduced cases and the time).
"""

from __future__ import annotations

import re
import time

import pytest

from generators import from_seed
from oracles import FindingKind, judge, load_policy
from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline
from rgpu_fuzz.pipelines.ref import RefPipeline
from triage.reduce import reduce_case, reduction_key, signature_predicate

_FIRST_XOR = re.compile(r"= xor ")


class XorAsOrPipeline(LlvmCpuPipeline):
    """llvm-cpu with a seeded bug: the first `xor` instruction of the lowered IR is an `or`.
    Top-level in an importable module: the worker re-creates it by `module:qualname`."""

    name = "llvm-cpu-xor-bug"

    def transform_ir(self, ir_text: str) -> str:
        return _FIRST_XOR.sub("= or ", ir_text, count=1)


class XorFlipsRefPipeline(RefPipeline):
    """A Python seeded bug (no LLVM needed): when the kernel has a `^` anywhere, the low bit
    of element 0 of the first integer output flips."""

    name = "ref-xor-bug"

    def _run(self, case: Case) -> Outcome:
        outcome = super()._run(case)
        if not isinstance(outcome, Ok) or "^" not in case.kernel:
            return outcome
        outputs = dict(outcome.outputs)
        for name, buf in outputs.items():
            if buf.ty.is_int and len(buf.values):
                values = buf.values.copy()
                values[0] ^= 1
                outputs[name] = Buffer(buf.ty, values)
                break
        return Ok(outputs=outputs, stats=outcome.stats)


POLICY = load_policy("default")


def _find(pipeline: Pipeline, seeds: range) -> tuple[Case, str] | None:
    """The first generated case on which `pipeline` is a wrong-code finding against ref."""
    ref = RefPipeline(PipelineSpec.parse("ref"))
    for seed in seeds:
        case = from_seed(seed)
        if "^" not in case.kernel:
            continue
        feats = case_features(case)
        outcomes = {"ref": ref.run(case, feats), pipeline.label: pipeline.run(case, feats)}
        verdict = judge(case, outcomes, POLICY, parse(case.kernel, "<case>"))
        for f in verdict.findings:
            if f.kind is FindingKind.WRONG_CODE:
                return case, f.signature
    return None


def _reduce_and_check(pipeline: Pipeline, seeds: range, budget_s: float) -> None:
    found = _find(pipeline, seeds)
    # a generator or oracle change that hides the seeded bug is a failure, never a skip
    assert found is not None, f"no wrong-code finding for {pipeline.label} in seeds {seeds}"
    case, signature = found
    interesting = signature_predicate(signature, [pipeline], POLICY)
    t0 = time.monotonic()
    r = reduce_case(case, interesting, budget_s=budget_s, jobs=2)
    print(f"\n{pipeline.label}: {r.lines_before} -> {r.lines_after} lines, "
          f"{r.tokens_before} -> {r.tokens_after} tokens in {time.monotonic() - t0:.1f}s "
          f"({r.tried} tried, {r.accepted} accepted, {r.cache_hits} cache hits)\n"
          f"{r.case.kernel}")
    assert r.interesting_at_start
    assert r.lines_after <= 10, r.case.kernel
    assert interesting(r.case)
    # the bucket signature of the reduced case: same kind and pipeline, its own ops
    ref = RefPipeline(PipelineSpec.parse("ref"))
    feats = case_features(r.case)
    outcomes = {"ref": ref.run(r.case, feats), pipeline.label: pipeline.run(r.case, feats)}
    verdict = judge(r.case, outcomes, POLICY, parse(r.case.kernel, "<case>"))
    keys = {reduction_key(f.signature) for f in verdict.findings}
    assert reduction_key(signature) in keys


@pytest.mark.slow
def test_seeded_python_bug_reduces_to_a_few_lines() -> None:
    pipeline = XorFlipsRefPipeline(PipelineSpec.parse("ref-xor-bug"))
    _reduce_and_check(pipeline, range(40), budget_s=120)


@pytest.mark.slow
def test_seeded_llvm_xor_bug_reduces_to_a_few_lines() -> None:
    pipeline = XorAsOrPipeline(PipelineSpec.parse("llvm-cpu-xor-bug:O0"))
    _reduce_and_check(pipeline, range(60), budget_s=240)
