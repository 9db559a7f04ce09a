"""`llvm-cpu:...:det:detsample=N`: the determinism check (DESIGN.md §4) on one case in N,
chosen by the case's id, so that a campaign pays for the second compilation on a sample and a
finding still reproduces from its single case."""

from __future__ import annotations

from rgpu_fuzz.generators import SeededChoices, generate, load_profile
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry

CASES = [generate(SeededChoices(s), load_profile("default"), seed=s) for s in range(200)]


def test_detsample_is_an_execution_setting() -> None:
    reg = Registry()
    assert reg.create("llvm-cpu:O3:det:detsample=4").label == "llvm-cpu:O3"
    assert reg.create("llvm-cpu:O3:det").label == "llvm-cpu:O3"


def test_one_case_in_n_by_case_and_only_by_case() -> None:
    reg = Registry()
    every = reg.create("llvm-cpu:O3:det")
    assert all(every.job(c).check_determinism for c in CASES)
    a, b = reg.create("llvm-cpu:O3:det:detsample=4"), reg.create("llvm-cpu:O3:det:detsample=4")
    chosen = [a.job(c).check_determinism for c in CASES]
    assert chosen == [b.job(c).check_determinism for c in CASES]   # reproducible per case
    # Binomial(200, 1/4): mean 50, standard deviation 6.1; 30..70 is more than 3 sigma
    assert 30 <= sum(chosen) <= 70
    assert not any(reg.create("llvm-cpu:O3:detsample=4").job(c).check_determinism
                   for c in CASES), "detsample without det checks nothing"


def test_a_chosen_case_is_compiled_twice_and_another_is_not() -> None:
    p = Registry().create("llvm-cpu:O3:det:detsample=4")
    chosen = next(c for c in CASES if p.job(c).check_determinism)
    skipped = next(c for c in CASES if not p.job(c).check_determinism)
    on_chosen, on_skipped = p.run(chosen), p.run(skipped)
    assert isinstance(on_chosen, Ok) and isinstance(on_skipped, Ok)
    # the object's hash is recorded by the determinism stage only (pipelines/toolchain.py)
    assert len(on_chosen.stats.artefacts["object"]) == 64
    assert "object" not in on_skipped.stats.artefacts
    assert not any(k.endswith("-again") for k in on_chosen.stats.artefacts)
