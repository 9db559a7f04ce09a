"""A reduction slice hands the candidates it tested to the next slice (each slice
restarted the passes with an empty cache and tested again what the slice before had; one
reduction took 43 s in 3 slices against 14 s in one).

At a fixpoint the last sweep of every pass has tested each candidate of the final case and
found none interesting, so a slice that starts from that case with the tested candidates
must ask the interestingness test nothing (`tried` counts only uncached tests); without
them it tests them all again. The finding is seed 59 of the default profile on
`llvm-cpu-xor2or:O0` (rgpu_fuzz/bench/seeded/miscompile.py), as in test_campaign_slices."""

from __future__ import annotations

from campaigns.jobs import ReduceJob, Setup, _parse, reduce_finding
from generators import SeededChoices, generate, load_profile
from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from tests.unit.test_campaign import MISCOMPILE

SETUP = Setup(("ref", "llvm-cpu-xor2or:O0"), "default", "default", (str(MISCOMPILE),))


def test_a_slice_does_not_test_again_what_the_slice_before_tested() -> None:
    case = generate(SeededChoices(59), load_profile("default"), seed=59)
    reg = Registry()
    reg.load_plugin(MISCOMPILE)
    verdict = judge(case, run_case(case, reg.create_all(SETUP.pipelines)),
                    load_policy("default"), _parse(case))
    (finding,) = [f for f in verdict.findings if "xor2or" in str(f.signature)]
    whole = reduce_finding(ReduceJob(SETUP, casefile.dumps(case), finding.signature, 120.0))
    assert whole.reduced_toml is not None and not whole.out_of_time
    assert whole.tried > 0 and len(whole.tested) >= whole.tried
    again = ReduceJob(SETUP, whole.reduced_toml, finding.signature, 120.0)
    cold = reduce_finding(again)
    warm = reduce_finding(ReduceJob(SETUP, whole.reduced_toml, finding.signature, 120.0,
                                    tested=whole.tested))
    assert cold.tried > 0 and warm.tried == 0
    assert cold.reduced_toml is not None and warm.reduced_toml is not None
    kernels = {casefile.loads(r).kernel for r in (whole.reduced_toml, cold.reduced_toml,
                                                   warm.reduced_toml)}
    assert len(kernels) == 1   # a fixpoint stays one
