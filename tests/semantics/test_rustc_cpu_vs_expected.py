"""`rustc-cpu` (batched, as a campaign runs it) computes the stored rustc values on every
hand-written semantics kernel: the pipeline's own plumbing (printed kernel, argument files,
output decoding, trap mapping) loses nothing that `regen_expected.py` saw."""

from __future__ import annotations

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok, Outcome, Trap
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.rustc_cpu import RustcCpuPipeline
from rgpu_fuzz.pipelines.rustc_program import find_rustc
from tests.semantics.expected_values import CASES, case_names, load_expected, output_mismatches

BATCH_SIZE = 16

pytestmark = [
    pytest.mark.rustc,
    pytest.mark.slow,
    pytest.mark.skipif(find_rustc() is None,
                       reason="rustc not found (put it on PATH or set RGPU_RUSTC)"),
]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    """Every semantics case through `rustc-cpu:O2`, in batches of `BATCH_SIZE`."""
    names = case_names()
    pipeline = RustcCpuPipeline(PipelineSpec("rustc-cpu", ("O2",)))
    found: dict[str, Outcome] = {}
    for start in range(0, len(names), BATCH_SIZE):
        chunk = names[start:start + BATCH_SIZE]
        found.update(zip(chunk, pipeline.run_batch([load(CASES / f"{n}.toml") for n in chunk]),
                         strict=True))
    return found


@pytest.mark.parametrize("name", case_names())
def test_rustc_cpu_computes_the_stored_values(name: str, outcomes: dict[str, Outcome]) -> None:
    case = load(CASES / f"{name}.toml")
    want = load_expected(name)
    outcome = outcomes[name]
    if "trap" in want:
        assert isinstance(outcome, Trap), f"rustc traps with {want['trap']}, rustc-cpu: {outcome}"
        assert str(outcome.kind) == want["trap"]
        return
    assert isinstance(outcome, Ok), f"rustc computes outputs, rustc-cpu: {outcome}"
    got = {buf: outcome.outputs[buf].bits() for buf in outcome.outputs}
    assert output_mismatches(case, got, want["outputs"]) == []
