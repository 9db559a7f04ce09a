"""The oracle on kernels with wave functions: each pipeline is judged against the reference
at its own wave size, the reference running once per size (`oracles.waves`,
`pipelines.runner`). Expected sums are worked by hand: 40 threads with `a[t] = t + 1`, so
wave 64 sums 1..40 = 820 and wave 32 sums 1..32 = 528 and 33..40 = 292.
"""

from __future__ import annotations

import numpy as np

from oracles.compare import judge
from oracles.policy import load_policy
from oracles.verdict import FindingKind
from oracles.waves import arbiter_outcome, wave_groups
from rgpu_fuzz import casefile
from rgpu_fuzz.interp import Finished, run_kernel
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.inputs import argument_values
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, Stats
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.ref import RefPipeline
from rgpu_fuzz.pipelines.runner import run_case, run_cases, wave_references

KERNEL = """use rgpu::*;
#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t = thread_idx_x() as usize;
    let s = wave_sum(a[t]);
    out[t] = s;
}
"""


def case(kernel: str = KERNEL) -> Case:
    return casefile.loads(f"""format = "rgpu-case/1"
entry = "k"
kernel = '''
{kernel}'''
[launch]
grid = [1, 1, 1]
block = [40, 1, 1]
[[args]]
name = "a"
buffer = "u32"
len = 40
init = {{ values = {list(range(1, 41))} }}
[[args]]
name = "out"
buffer = "u32"
len = 40
init = {{ fill = 0 }}
""")


class Lanes(Pipeline):
    """A second opinion that runs the reference interpreter at `runs_at` lanes while it
    declares `wave_size` (a pipeline with a wave-size bug when the two differ)."""

    name = "lanes"
    declared = 32
    runs_at = 32

    @property
    def wave_size(self) -> int:
        return self.declared

    def _run(self, c: Case) -> Outcome:
        prepared = prepare(c)
        assert isinstance(prepared, tuple)
        r = run_kernel(prepared[0], c.entry, grid=c.launch.grid, block=c.launch.block,
                       args=argument_values(c.args), wave_size=self.runs_at)
        assert isinstance(r, Finished)
        return Ok(outputs={"out": Buffer(Scalar.U32, r.outputs["out"])})


class WrongLanes(Lanes):
    name = "wrong-lanes"
    runs_at = 64


def out_of(o: Outcome) -> list[int]:
    assert isinstance(o, Ok), o
    return [int(v) for v in o.outputs["out"].values]


def test_the_reference_runs_once_more_at_each_other_wave_size() -> None:
    outcomes = run_case(case(), [RefPipeline("ref"), Lanes("lanes")])
    assert list(outcomes) == ["ref", "lanes", "ref:wave=32"]
    assert out_of(outcomes["ref"]) == [820] * 40
    assert out_of(outcomes["ref:wave=32"]) == [528] * 32 + [292] * 8
    assert [o.stats.wave_size for o in outcomes.values()] == [64, 32, 32]
    verdict = judge(case(), outcomes, load_policy())
    assert verdict.agree, verdict


def test_a_pipeline_at_the_wrong_wave_size_is_a_wrong_code_finding() -> None:
    outcomes = run_case(case(), [RefPipeline("ref"), WrongLanes("wrong-lanes")])
    verdict = judge(case(), outcomes, load_policy())
    [finding] = verdict.findings
    assert finding.kind is FindingKind.WRONG_CODE
    assert finding.pipelines == ("ref:wave=32", "wrong-lanes")
    assert finding.differing_elements == 40   # 820 everywhere instead of 528 / 292


def test_a_kernel_without_wave_functions_runs_the_reference_once() -> None:
    plain = KERNEL.replace("wave_sum(a[t])", "a[t] + 1u32")
    outcomes = run_cases([case(plain), case()], [RefPipeline("ref"), Lanes("lanes")])
    assert list(outcomes[0]) == ["ref", "lanes"]
    assert all(o.stats.wave_size is None for o in outcomes[0].values())
    assert list(outcomes[1]) == ["ref", "lanes", "ref:wave=32"]


def test_the_reference_keeps_its_other_options_at_another_size() -> None:
    [extra] = wave_references([RefPipeline("ref:steps=500"), Lanes("lanes")])
    assert extra.label == "ref:steps=500:wave=32"
    assert wave_references([RefPipeline("ref:wave=32"), Lanes("lanes")]) == []


def test_groups_split_by_wave_size_and_unsized_outcomes_join_the_first_reference() -> None:
    def ok(n: int, w: int | None) -> Ok:
        return Ok(outputs={"out": Buffer(Scalar.U32, np.array([n], np.uint32))},
                  stats=Stats(wave_size=w))

    outcomes: dict[str, Outcome] = {"ref": ok(1, 64), "a": ok(2, 32), "b": ok(1, None),
                                    "ref:wave=32": ok(2, 32), "c": ok(3, 32)}
    groups = wave_groups(outcomes, "ref")
    assert [list(g) for g in groups] == [["ref", "b"], ["a", "ref:wave=32", "c"]]
    verdict = judge(case(), outcomes, load_policy())
    assert [f.pipelines for f in verdict.findings] == [("ref:wave=32", "c")]
    assert verdict.compared == ("ref", "b", "a", "ref:wave=32", "c")


def test_a_wave_size_without_a_reference_is_judged_by_agreement() -> None:
    def ok(n: int, w: int) -> Ok:
        return Ok(outputs={"out": Buffer(Scalar.U32, np.array([n], np.uint32))},
                  stats=Stats(wave_size=w))

    outcomes: dict[str, Outcome] = {"ref": ok(1, 64), "a": ok(2, 32), "b": ok(2, 32)}
    assert judge(case(), outcomes, load_policy()).agree


def test_a_reduction_judges_at_the_pipelines_wave_size() -> None:
    """The reduction predicate runs the arbiter at the wave size of the pipeline it tests, so
    a wave-32 wrong-code finding stays interesting (it would vanish against wave 64)."""
    from triage.reduce import signature_predicate

    verdict = judge(case(), run_case(case(), [RefPipeline("ref"), WrongLanes("wrong-lanes")]),
                    load_policy())
    [finding] = verdict.findings
    interesting = signature_predicate(finding.signature, [WrongLanes("wrong-lanes")],
                                      load_policy())
    assert interesting(case())


def test_the_arbiter_outcome_at_a_wave_size() -> None:
    def ok(w: int | None) -> Ok:
        return Ok(outputs={}, stats=Stats(wave_size=w))

    outcomes: dict[str, Outcome] = {"ref": ok(64), "a": ok(32), "ref:wave=32": ok(32)}
    assert arbiter_outcome(outcomes, "ref", 32) == ("ref:wave=32", outcomes["ref:wave=32"])
    assert arbiter_outcome(outcomes, "ref", 64) == ("ref", outcomes["ref"])
    assert arbiter_outcome(outcomes, "ref", None) == ("ref", outcomes["ref"])
    assert arbiter_outcome({"ref": ok(64)}, "ref", 32) is None
