"""The regression corpus (DESIGN.md §7): one test per case file, named by its id.

`agree` cases must agree on every available pipeline; `known-divergence` cases are strict
expected failures naming their pipelines and upstream issue, so a fix is noticed.
Pipelines: `RGPU_CORPUS_PIPELINES` (comma-separated specs) or the default list below,
keeping those that are registered.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_features
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.case import ExpectStatus
from rgpu_fuzz.model.outcome import Ok, Trap, Unavailable
from rgpu_fuzz.oracles import judge, load_policy
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.registry import Registry

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
DEFAULT_PIPELINES = "ref,llvm-cpu:O0,llvm-cpu:O3,rustc-cpu:O2"


def _pipelines() -> list[str]:
    reg = Registry()
    specs = os.environ.get("RGPU_CORPUS_PIPELINES", DEFAULT_PIPELINES).split(",")
    return [s for s in specs if PipelineSpec.parse(s).name in reg.names()]


def _params() -> list[object]:
    params = []
    for path in sorted(CORPUS.glob("*.toml")):
        case = casefile.load(path)
        marks = []
        if case.expect is not None and case.expect.status is ExpectStatus.KNOWN_DIVERGENCE:
            marks.append(pytest.mark.xfail(strict=True, reason=(
                f"known divergence on {', '.join(case.expect.pipelines)}: {case.expect.issue}")))
        params.append(pytest.param(path, id=case.id, marks=marks))
    return params


def test_corpus_is_not_empty() -> None:
    assert list(CORPUS.glob("*.toml")), f"no cases in {CORPUS}"


@pytest.mark.parametrize("path", _params())
def test_case(path: Path) -> None:
    case = casefile.load(path)
    reg = Registry()
    specs = _pipelines()
    if case.expect is not None and case.expect.pipelines:
        specs += [p for p in case.expect.pipelines if p not in specs
                  and PipelineSpec.parse(p).name in reg.names()]
    feats = case_features(case)
    outcomes = {s: reg.create(s).run(case, feats) for s in specs}
    ran = [s for s, o in outcomes.items() if not isinstance(o, Unavailable)]
    assert "ref" in ran
    assert isinstance(outcomes["ref"], Ok | Trap), outcomes["ref"]
    verdict = judge(case, outcomes, load_policy("default"), parse(case.kernel))
    assert verdict.agree, [f"{f.signature}: {f.detail} {f.diffs[:3]}" for f in verdict.findings]
