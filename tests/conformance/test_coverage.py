"""The conformance cases reach every construct of docs/language.md that the catalogues know:
each entry of `generators/constructs.py` `CONSTRUCTS` (but the ones left out by design,
`EXCLUDED`) and each feature of `generators/stats.py` `ALL_FEATURES` (types, operators,
methods, casts, prelude functions, special float literals) occurs in at least one case of
`tests/semantics/cases`, so every one is checked against rustc's values on every pipeline.
A construct added to a catalogue without a conformance case fails here.

The wave constructs (`wave:*`) are the exception: rustc-cpu cannot run wave functions, so
their conformance cases are `tests/conformance/waves/`, with values worked by hand, and
`test_waves.py` checks that those reach every one of them."""

from __future__ import annotations

from functools import cache

from generators.constructs import CONSTRUCTS, EXCLUDED, construct_coverage
from generators.stats import ALL_FEATURES, case_coverage
from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.case import Case
from tests.semantics.expected_values import CASES, case_names


@cache
def _cases() -> tuple[Case, ...]:
    return tuple(load(CASES / f"{n}.toml") for n in case_names())


def test_every_construct_has_a_conformance_case() -> None:
    missing = [c for c in construct_coverage(_cases()).missing()
               if c not in EXCLUDED and not c.startswith("wave:")]
    assert missing == [], {c: CONSTRUCTS[c] for c in missing}


def test_every_feature_has_a_conformance_case() -> None:
    assert case_coverage(_cases()).missing(ALL_FEATURES) == []
