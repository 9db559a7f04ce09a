"""Every generated case is in the language and well-defined: it parses, prints back to the
same text, checks, and the reference interpreter runs it to completion (no trap, no
rejection) — docs/language.md "the generator must produce only well-defined programs"."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from generators import cases, from_seed
from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.targets import DEFAULT_WAVE_SIZE, WAVE_SIZES

STEP_BUDGET = 1_000_000


def assert_well_defined(case: Case, wave_size: int = DEFAULT_WAVE_SIZE) -> None:
    name = f"<case {case.id}>"
    assert print_module(parse(case.kernel, name)) == case.kernel
    checked = check_source(case.kernel, name)
    result = run_kernel(checked, case.entry, grid=case.launch.grid, block=case.launch.block,
                        args=argument_values(case.args), step_budget=STEP_BUDGET,
                        wave_size=wave_size)
    assert isinstance(result, Finished), f"{result}\n{case.kernel}"


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_hypothesis_cases_are_well_defined(case: Case) -> None:
    assert_well_defined(case)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(profile="barriers"))
def test_hypothesis_barrier_cases_are_well_defined(case: Case) -> None:
    """Barriers in uniform `if`/`while`/nested loops, uniform exits, returns after the last
    barrier (generators/barriers.py): the checker's uniformity analysis accepts them and the
    interpreter finds no barrier divergence, race or uninitialised shared read."""
    assert_well_defined(case)


@pytest.mark.parametrize("profile", ["default", "integers", "floats", "control", "memory",
                                     "calls", "barriers"])
def test_seeded_cases_are_well_defined(profile: str) -> None:
    for seed in range(8):
        assert_well_defined(from_seed(seed, profile))


@pytest.mark.parametrize("wave_size", WAVE_SIZES)
def test_wave_cases_are_well_defined_at_every_wave_size(wave_size: int) -> None:
    """Wave sections (generators/waves.py): the checker's wave-uniformity analysis accepts
    them, and no lane reads an inactive lane and no wave is torn, at wave 32 and 64 alike."""
    for seed in range(40):
        assert_well_defined(from_seed(seed, "waves"), wave_size)


@pytest.mark.slow
def test_a_thousand_seeds_are_well_defined() -> None:
    for seed in range(1000):
        assert_well_defined(from_seed(seed))
