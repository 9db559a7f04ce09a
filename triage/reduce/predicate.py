"""The interestingness test triage reduces with: "this candidate still shows the same bug".

A candidate is interesting iff, in this order (cheapest and most important first):
1. its kernel checks and its arguments fit the entry kernel;
2. `ref` finishes with `Ok` — the candidate is still well-defined — or, when the original
   finding is a trap mismatch in which `ref` trapped, `ref` traps with the same kind. This
   runs before any compiler pipeline sees the candidate, so reduction never hands a compiler
   a kernel with undefined behaviour and never "finds" the bug in a race or an overflow;
3. the listed pipelines run and `judge` reports a finding whose signature equals the
   original one, compared with `reduction_key` (below), so reduction never drifts to
   another bug.

Wrong-code signatures end with `ops=...`, the operations left in the kernel (docs/design.md §5).
Reduction removes operations by design, so while reducing the `ops=` part is ignored and
signatures compare as `kind|pipeline`. The reduced case's own full signature (with the ops
that are left) is what the finding is bucketed under afterwards.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

from oracles import Policy, judge
from oracles.signature import Signature, coarse_key
from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.lang.features import case_features, case_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Ok, Outcome, Trap, TrapKind
from rgpu_fuzz.pipelines.base import Pipeline, spec_name
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.ref import DEFAULT_STEP_BUDGET, DEFAULT_TIME_BUDGET
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import wave_references


def reduction_key(signature: str) -> str:
    """A signature with its `ops=...` field removed: what must stay equal while reducing
    (`Signature.coarse_text`)."""
    return coarse_key(signature)


def expected_ref_trap(signature: str) -> TrapKind | None:
    """The trap `ref` must keep taking: set for `trap-mismatch|P|expected KIND, got ...`
    (ref trapped, the pipeline did not trap the same way); None when ref must finish."""
    sig = Signature.parse(signature)
    if sig.kind == "trap-mismatch" and sig.detail.startswith("expected "):
        kind = sig.detail[len("expected "):].split(",")[0].strip()
        try:
            return TrapKind(kind)
        except ValueError:
            return None
    return None


STEP_FACTOR = 4
MIN_STEP_BUDGET = 100_000


def interpreter_steps(case: Case) -> int | None:
    """How many interpreter steps `case` takes (None when it does not finish)."""
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return None
    result = run_kernel(prepared[0], case.entry, grid=case.launch.grid,
                        block=case.launch.block, args=argument_values(case.args),
                        step_budget=DEFAULT_STEP_BUDGET, time_budget=DEFAULT_TIME_BUDGET)
    return result.steps if isinstance(result, Finished) else None


TIMEOUT_FACTOR = 4.0
TIMEOUT_MARGIN_S = 5.0


def reduction_timeout(original_s: float, limit: float, *, factor: float = TIMEOUT_FACTOR,
                      margin_s: float = TIMEOUT_MARGIN_S) -> float:
    """The timeout a pipeline gets for reduction candidates: `factor` times what the
    original case took in it plus `margin_s`, never more than its own `limit`. A candidate
    is a smaller kernel than the original, so only a hang (a deleted loop counter) runs into
    it, and costs seconds instead of the pipeline's whole timeout; a finding that is itself
    a timeout took about `limit`, so it keeps `limit`."""
    return min(limit, factor * original_s + margin_s)


def signature_predicate(signature: str, pipelines: Sequence[str | Pipeline], policy: Policy,
                        *, registry: Registry | None = None,
                        step_budget: int | None = None,
                        timeout_factor: float = TIMEOUT_FACTOR,
                        timeout_margin_s: float = TIMEOUT_MARGIN_S) -> Callable[[Case], bool]:
    """The test `reduce_case` needs to keep the finding named `signature` (see module doc).

    `pipelines` are spec strings (created through `registry`, default: the built-ins and
    entry points) or ready `Pipeline` objects (a seeded-bug variant in a test). The arbiter
    named by the policy is run first whether or not it is listed.

    Candidates that loop (a deleted loop counter) would spend the interpreter's whole default
    budget, minutes each, before `Rejected(step-budget)`. So `ref` runs with `step_budget`
    steps; when None, the first case the test sees (the original: `reduce_case` always asks
    about it first) calibrates it to `STEP_FACTOR` times its own steps (at least
    `MIN_STEP_BUDGET`). Likewise a candidate that hangs in a compiler pipeline would cost
    that pipeline's whole timeout (60 s by default): the first case all pipelines run on
    sets each one's timeout for later candidates to `reduction_timeout` of its own time
    there (`timeout_factor` × seconds + `timeout_margin_s`). The pipelines are copies, so
    the caller's objects keep their timeouts."""
    reg = registry or Registry()
    arbiters: dict[int, Pipeline] = {}
    budget = step_budget

    def arbiter_for(case: Case) -> Pipeline:
        nonlocal budget
        if spec_name(policy.arbiter) != "ref":
            return reg.create(policy.arbiter)
        if budget is None:
            steps = interpreter_steps(case)
            budget = DEFAULT_STEP_BUDGET if steps is None else \
                max(MIN_STEP_BUDGET, STEP_FACTOR * steps)
        if budget not in arbiters:
            arbiters[budget] = reg.create(f"ref:steps={budget}")
        return arbiters[budget]

    others = [copy.copy(p) if isinstance(p, Pipeline) else reg.create(p) for p in pipelines]
    others = [p for p in others if p.spec.name != spec_name(policy.arbiter)]
    calibrated = False
    want = reduction_key(signature)
    ref_trap = expected_ref_trap(signature)

    def ref_ok(outcome: Outcome) -> bool:
        if ref_trap is not None:
            return isinstance(outcome, Trap) and outcome.kind is ref_trap
        return isinstance(outcome, Ok)

    def interesting(case: Case) -> bool:
        nonlocal calibrated
        if not isinstance(prepare(case), tuple):
            return False
        features = case_features(case)
        outcomes: dict[str, Outcome] = {policy.arbiter: arbiter_for(case).run(case, features)}
        if not ref_ok(outcomes[policy.arbiter]):
            return False
        for p in others:
            outcomes[p.label] = p.run(case, features)
        if "wave" in features:  # the arbiter at every other wave size (`oracles.waves`)
            for extra in wave_references([arbiter_for(case), *others]):
                outcomes[extra.label] = extra.run(case, features)
        if not calibrated:
            calibrated = True
            for p in others:
                took = outcomes[p.label].stats.seconds.get("total", p.timeout)
                p.timeout = reduction_timeout(took, p.timeout, factor=timeout_factor,
                                              margin_s=timeout_margin_s)
        module = case_module(case)
        if module is None:
            return False
        verdict = judge(case, outcomes, policy, module)
        return any(reduction_key(f.signature) == want for f in verdict.findings)

    return interesting
