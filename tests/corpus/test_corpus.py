"""The regression corpus (docs/design.md §2): one test per case file, named by its id.

`agree` cases must agree on every available pipeline; `known-divergence` cases are strict
expected failures naming their pipelines and upstream issue, so a fix is noticed: the
failure expected is `KnownDivergence` alone (a divergence on those pipelines and no other),
so a harness error or a new divergence elsewhere is not taken for the known one. A known
divergence on a pipeline that is not registered here (a `--plugin` file, an uninstalled
package) is skipped with the reason, never counted as fixed. Pipelines:
`RGPU_CORPUS_PIPELINES` (comma-separated specs) or the default list below, keeping those
that are registered.

`pytest tests/corpus` runs this file; `pytest corpus` (or `pytest corpus/<id>.toml`) runs the
same check through `corpus/conftest.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.case import Case, ExpectStatus
from rgpu_fuzz.model.outcome import Ok, Trap, Unavailable
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.registry import Registry

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
DEFAULT_PIPELINES = "ref,llvm-cpu:O0,llvm-cpu:O3,rustc-cpu:O2"


def _pipelines(reg: Registry) -> list[str]:
    specs = os.environ.get("RGPU_CORPUS_PIPELINES", DEFAULT_PIPELINES).split(",")
    return [s for s in specs if PipelineSpec.parse(s).name in reg.names()]


class KnownDivergence(AssertionError):
    """The case diverges, and only on the pipelines its `known-divergence` names: the one
    failure its strict xfail accepts (`raises=`). Any other failure of the test (a harness
    exception, a divergence on another pipeline, `ref` not running) stays a failure."""


def expectation_marks(case: Case) -> list[pytest.MarkDecorator]:
    """A known divergence is a strict expected failure of exactly `KnownDivergence` (a fix
    turns it into XPASS(strict))."""
    if case.expect is not None and case.expect.status is ExpectStatus.KNOWN_DIVERGENCE:
        return [pytest.mark.xfail(strict=True, raises=KnownDivergence, reason=(
            f"known divergence on {', '.join(case.expect.pipelines)}: {case.expect.issue}"))]
    return []


def check_case(path: Path) -> None:
    """Run one corpus case on the corpus pipelines and the ones its expectation names;
    fails when the verdict is not `agree`."""
    case = casefile.load(path)
    reg = Registry()
    specs = _pipelines(reg)
    if case.expect is not None and case.expect.pipelines:
        missing = [p for p in case.expect.pipelines if PipelineSpec.parse(p).name
                   not in reg.names()]
        if missing and case.expect.status is ExpectStatus.KNOWN_DIVERGENCE:
            pytest.skip(f"the divergence is on {', '.join(missing)}, not registered here "
                        "(install its package, or it cannot be checked)")
        specs += [p for p in case.expect.pipelines if p not in specs and p not in missing]
    feats = case_features(case)
    outcomes = {s: reg.create(s).run(case, feats) for s in specs}
    ran = [s for s, o in outcomes.items() if not isinstance(o, Unavailable)]
    assert "ref" in ran
    assert isinstance(outcomes["ref"], Ok | Trap), outcomes["ref"]
    policy = load_policy("default")
    verdict = judge(case, outcomes, policy, parse(case.kernel))
    said = [f"{f.signature}: {f.detail} {f.diffs[:3]}" for f in verdict.findings]
    if case.expect is not None and case.expect.status is ExpectStatus.KNOWN_DIVERGENCE:
        # a wrong-code finding names the arbiter beside the pipeline that is wrong
        known = set(case.expect.pipelines) | {policy.arbiter}
        elsewhere = [f.signature for f in verdict.findings if not set(f.pipelines) <= known]
        assert not elsewhere, f"diverges beyond {sorted(known)}: {elsewhere}"
        if verdict.findings:
            raise KnownDivergence(said)
    assert verdict.agree, said


def _params() -> list[object]:
    return [pytest.param(path, id=casefile.load(path).id,
                         marks=expectation_marks(casefile.load(path)))
            for path in sorted(CORPUS.glob("*.toml"))]


def test_corpus_is_not_empty() -> None:
    assert list(CORPUS.glob("*.toml")), f"no cases in {CORPUS}"


@pytest.mark.parametrize("path", _params())
def test_case(path: Path) -> None:
    check_case(path)
