"""rustc's O0 code through the simulator: definedness must travel through private memory
byte by byte. Two reduced kernels that used to end in a false `sim-uninit-read` (found by
the conformance suite at rustc-amdgpu:gfx942:O0, `local_arrays` and `cf_for_ranges`):

* SGPR lane masks built from IMPLICIT_DEF loop phis are partly defined (`s_or_b64 s[0:1],
  s[0:1], exec`); LLVM spills them to VGPR lanes (`v_writelane_b32`) and spills that VGPR to
  scratch; the lane must come back with the same defined bits, not wholly undefined.
* A `RangeInclusive<u32>` (`0..=3`) is copied through the stack with dwordx4 flat loads and
  stores; its padding bytes are undefined, its `exhausted` byte is not, and it must stay so.

Expected outputs: `local_arrays` from the real rustc on the host (tests/semantics/expected);
the range kernel by hand, 0 + 1 + 2 + 3 = 6 per thread.
"""

from __future__ import annotations

import pytest

from rgpu_fuzz.casefile import case_from_dict, load
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.rustc_program import find_rustc
from tests.semantics.expected_values import CASES, load_expected, output_mismatches

pytestmark = pytest.mark.rustc

PADDED_RANGE = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], out: &mut [u64]) {
    let i: usize = thread_idx_x() as usize;
    let mut acc: u64 = 0;
    for j in 0u32..=3u32 {
        acc = acc + j as u64;
    }
    out[i] = acc;
}
"""


def test_o0_spilled_lane_masks_come_back_defined() -> None:
    """Conformance kernel `local_arrays` at O0 computes what the real rustc computed on the
    host (`tests/semantics/expected`)."""
    if find_rustc() is None:
        pytest.skip("rustc not found")
    outcome = Registry().create("rustc-amdgpu:gfx942:O0").run(
        load(CASES / "local_arrays.toml"))
    assert isinstance(outcome, Ok), outcome
    got = {name: buf.bits() for name, buf in outcome.outputs.items()}
    case = load(CASES / "local_arrays.toml")
    assert output_mismatches(case, got, load_expected("local_arrays")["outputs"]) == []


def test_o0_padded_struct_copies_keep_their_defined_bytes() -> None:
    if find_rustc() is None:
        pytest.skip("rustc not found")
    case = case_from_dict({
        "format": "rgpu-case/1", "entry": "k", "kernel": PADDED_RANGE,
        "launch": {"grid": [1, 1, 1], "block": [8, 1, 1]},
        "args": [{"name": "a", "buffer": "u32", "len": 8, "init": {"fill": 3}},
                 {"name": "out", "buffer": "u64", "len": 8, "init": {"fill": 0}}]})
    outcome = Registry().create("rustc-amdgpu:gfx942:O0").run(case)
    assert isinstance(outcome, Ok), outcome
    assert outcome.outputs["out"].values.tolist() == [6] * 8
