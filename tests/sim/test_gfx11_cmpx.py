"""GFX10+ `V_CMPX_*` writes EXEC only (RDNA3 ISA §16.8 "VOPC"; LLVM's syntax then names no
destination: `v_cmpx_ne_u32_e32 0, v13`), where GFX9's writes VCC and EXEC. The simulator
also wrote VCC on gfx1100, clobbering a compare result a later `s_and_saveexec_b32 s0,
vcc_lo` read: conformance `short_circuit` computed wrong values on amdgpu-sim:gfx1100:O2 and
rustc-amdgpu:gfx1100 took bounds-check panics that do not happen. Expected values: rustc's
own results for the kernel (tests/semantics/expected)."""

from __future__ import annotations

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from tests.semantics.expected_values import CASES, load_expected, output_mismatches


def test_gfx1100_cmpx_leaves_vcc_alone() -> None:
    case = load(CASES / "short_circuit.toml")
    outcome = Registry().create("amdgpu-sim:gfx1100:O2").run(case)
    assert isinstance(outcome, Ok), outcome
    got = {name: buf.bits() for name, buf in outcome.outputs.items()}
    assert output_mismatches(case, got, load_expected("short_circuit")["outputs"]) == []
