"""`llvm-cpu:...:det[:detsample=N]`: the determinism check (docs/design.md §3). In a batch (a
campaign's chunk) it runs on one case in N (default `DET_SAMPLE`), chosen by the case's id,
so that a finding still reproduces from its single case; a case run alone (the campaign's
re-check of a case with a finding, a reduction candidate, `reproduce`) is always compiled
twice."""

from __future__ import annotations

from generators import SeededChoices, generate, load_profile
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.llvm_cpu import DET_SAMPLE
from rgpu_fuzz.pipelines.registry import Registry

CASES = [generate(SeededChoices(s), load_profile("default"), seed=s) for s in range(200)]


def test_detsample_is_an_execution_setting() -> None:
    reg = Registry()
    assert reg.create("llvm-cpu:O3:det:detsample=4").label == "llvm-cpu:O3"
    assert reg.create("llvm-cpu:O3:det").label == "llvm-cpu:O3"


def test_one_case_in_n_in_a_batch_by_case_and_only_by_case() -> None:
    reg = Registry()
    every = reg.create("llvm-cpu:O3:det:detsample=1")
    assert all(every.batch_job(CASES).determinism)
    a, b = reg.create("llvm-cpu:O3:det:detsample=4"), reg.create("llvm-cpu:O3:det:detsample=4")
    chosen = a.batch_job(CASES).determinism
    assert chosen == b.batch_job(list(reversed(CASES))).determinism[::-1]  # per case, not place
    # Binomial(200, 1/4): mean 50, standard deviation 6.1; 30..70 is more than 3 sigma
    assert 30 <= sum(chosen) <= 70
    assert reg.create("llvm-cpu:O3:det").batch_job(CASES).determinism == \
        reg.create(f"llvm-cpu:O3:det:detsample={DET_SAMPLE}").batch_job(CASES).determinism
    assert not any(reg.create("llvm-cpu:O3:detsample=1").batch_job(CASES).determinism), \
        "detsample without det checks nothing"


def test_a_case_run_alone_is_always_compiled_twice() -> None:
    reg = Registry()
    p = reg.create("llvm-cpu:O3:det:detsample=4")
    assert all(p.job(c).check_determinism for c in CASES)
    assert not any(reg.create("llvm-cpu:O3").job(c).check_determinism for c in CASES)


def test_in_a_batch_a_chosen_case_is_compiled_twice_and_another_is_not() -> None:
    p = Registry().create("llvm-cpu:O3:det:detsample=4")
    picks = p.batch_job(CASES).determinism
    chosen = next(c for c, d in zip(CASES, picks, strict=True) if d)
    skipped = next(c for c, d in zip(CASES, picks, strict=True) if not d)
    on_chosen, on_skipped = p.run_many([chosen, skipped])
    assert isinstance(on_chosen, Ok) and isinstance(on_skipped, Ok)
    # in a batch the chosen cases form a group of their own, timed in stage `determinism`
    assert on_chosen.stats.seconds["determinism"] > 0
    assert "determinism" not in on_skipped.stats.seconds
    assert not any(k.endswith("-again") for k in on_chosen.stats.artefacts)
    # alone, the object's hash is recorded by the determinism stage only (toolchain.py)
    alone = p.run(skipped)
    assert isinstance(alone, Ok) and len(alone.stats.artefacts["object"]) == 64
