"""The grammar-based case generator: one grammar, three drivers.

`generate(source, profile)` builds a typed AST production by production, every decision
taken from `source` (a `ChoiceSource`), prints it with the canonical printer and wraps it in
a `Case` with its launch and arguments. The drivers differ only in the source:
`SeededChoices(seed)` for campaigns (`from_seed`), `HypothesisChoices` for property tests
(`cases()`, shrinking through the grammar), `AtherisChoices` for coverage-guided fuzzing.

Every case is well-defined by construction (see `kernel`, `stmt` and `expr` for the rules);
the property tests check it against the interpreter.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from generators.choice import ChoiceSource, HypothesisChoices, SeededChoices
from generators.context import Builder
from generators.kernel import build
from generators.profile import Profile, load_profile
from rgpu_fuzz.lang.ast import Module
from rgpu_fuzz.model.case import Case

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


@cache
def _named_profile(name: str | Path) -> Profile:
    return load_profile(name)


def _profile(profile: Profile | str | Path) -> Profile:
    """Profiles are immutable, so one load per name serves every case of a campaign."""
    return profile if isinstance(profile, Profile) else _named_profile(profile)


def generate(source: ChoiceSource, profile: Profile | str | Path = "default", *,
             seed: int | None = None) -> Case:
    """A well-defined case; `seed` is only recorded in the provenance."""
    return generate_module(source, profile, seed=seed)[1]


def generate_module(source: ChoiceSource, profile: Profile | str | Path = "default", *,
                    seed: int | None = None) -> tuple[Module, Case]:
    """The generated AST as well as its case (feature statistics walk the AST)."""
    return build(Builder(source, _profile(profile)), seed=seed)


def from_seed(seed: int, profile: Profile | str | Path = "default") -> Case:
    """The case a seed names: the same bytes on every machine and run."""
    return generate(SeededChoices(seed), profile, seed=seed)


def cases(profile: Profile | str | Path = "default") -> SearchStrategy[Case]:
    """A Hypothesis strategy of generated cases; shrinking goes through the grammar."""
    from hypothesis import strategies as st

    prof = _profile(profile)

    @st.composite
    def _cases(draw: st.DrawFn) -> Case:
        return generate(HypothesisChoices(draw), prof)

    return _cases()
