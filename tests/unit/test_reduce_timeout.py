"""Reduction candidates get a timeout derived from the original case's own time in each
pipeline (triage/reduce/predicate.py `reduction_timeout`), so a candidate that hangs costs
seconds, not the pipeline's whole timeout (60 s by default)."""

from __future__ import annotations

import threading
from typing import ClassVar

import numpy as np

from oracles import judge, load_policy
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, Timeout
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.ref import RefPipeline
from triage.reduce import signature_predicate
from triage.reduce.predicate import reduction_timeout

ORIGINAL = """use rgpu::*;
#[kernel]
pub fn k(out: &mut [u32]) {
    let t: u32 = thread_idx_x();
    out[t as usize] = t + 41u32;
}
"""
CANDIDATE = ORIGINAL.replace("t + 41u32", "t")


def case(kernel: str) -> Case:
    return Case(entry="k", kernel=kernel, launch=Launch(grid=(1, 1, 1), block=(4, 1, 1)),
                args=(BufferArg(name="out", elem=Scalar.U32, len=4, init=Fill(0)),))


class Sleepy(Pipeline):
    """A compiler under test that computes zeros for the original (a wrong-code finding
    against ref) and hangs on any kernel without `41u32`; it records its timeout per run."""

    name = "sleepy"
    timeout = 60.0
    watchdog_grace: ClassVar[float] = 0.2
    timeouts: ClassVar[list[float]] = []
    release: ClassVar[threading.Event] = threading.Event()

    def _run(self, c: Case) -> Outcome:
        Sleepy.timeouts.append(self.timeout)
        if "41u32" not in c.kernel:
            Sleepy.release.wait(30.0)  # "hangs" (a daemon thread, let go when the test ends)
        return Ok(outputs={"out": Buffer(Scalar.U32, np.zeros(4, dtype=np.uint32))})


def test_reduction_timeout_formula() -> None:
    # factor 4, margin 5 s, capped by the pipeline's own limit (hand arithmetic)
    assert reduction_timeout(0.5, 60.0) == 7.0
    assert reduction_timeout(20.0, 60.0) == 60.0
    assert reduction_timeout(0.1, 60.0, factor=2.0, margin_s=0.5) == 0.7


def test_hanging_candidate_costs_the_derived_timeout() -> None:
    policy = load_policy("default")
    sleepy = Sleepy(PipelineSpec("sleepy"))
    original = case(ORIGINAL)
    outcomes = {"ref": RefPipeline(PipelineSpec("ref")).run(original),
                "sleepy": sleepy.run(original)}
    verdict = judge(original, outcomes, policy, case_module(original))
    assert not verdict.agree
    signature = verdict.findings[0].signature
    Sleepy.timeouts.clear()
    Sleepy.release = threading.Event()
    try:
        interesting = signature_predicate(signature, [sleepy], policy, timeout_margin_s=0.5)
        assert interesting(original)
        assert not interesting(case(CANDIDATE))
    finally:
        Sleepy.release.set()
    # the original ran under the pipeline's own 60 s; the candidate under 4 x (its time) +
    # 0.5 s, which for an in-process pipeline answering at once is well under 2 s
    assert Sleepy.timeouts[0] == 60.0
    assert 0.5 <= Sleepy.timeouts[1] < 2.0
    assert sleepy.timeout == 60.0, "the caller's pipeline keeps its own timeout"


def test_hang_becomes_a_timeout_outcome_under_the_derived_limit() -> None:
    sleepy = Sleepy(PipelineSpec("sleepy"))
    sleepy.timeout = reduction_timeout(0.01, sleepy.timeout, margin_s=0.3)
    Sleepy.release = threading.Event()
    try:
        outcome = sleepy.run(case(CANDIDATE))
    finally:
        Sleepy.release.set()
    assert isinstance(outcome, Timeout) and outcome.seconds == sleepy.timeout
