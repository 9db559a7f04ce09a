"""V_MIN3/MAX3/MED3 on 16-bit integers (GFX9 VOP3: gfx90a, gfx942), and the GFX9 op_sel
destination the simulator does not model.

Expected values are computed here by plain Python on the 16-bit operands (min, max and
the middle of the three, signed or unsigned as the opcode says: CDNA3 ISA pseudocode,
`D0.i16 = v_min_i16(v_min_i16(S0.i16, S1.i16), S2.i16)`, med3 the middle value).
D[31:16] is expected zero, as V_MIN_I16/V_MAX_I16 write it on GFX9 (LLVM's
`GCNSubtarget::zeroesHigh16BitsOfDest`). The campaign case is `o3_min3_i16.toml`, judged
against `ref` (the reference interpreter). llvm-mc-22 encodes the instructions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.common.fault import SimStop
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

CASES = Path(__file__).parent / "data" / "cases"
EDGES = [0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234, 0xFEDC]


def _signed(x: int) -> int:
    return x - 0x10000 if x & 0x8000 else x


def _expected(op: str, a: int, b: int, c: int) -> int:
    signed = op.endswith("i16")
    key = _signed if signed else (lambda x: x)
    ordered = sorted((a, b, c), key=key)
    return {"min3": ordered[0], "max3": ordered[2], "med3": ordered[1]}[op.split("_")[1]]


def _operands() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """64 lanes of (a, b, c): every ordering pattern of the edge values, the high halves
    filled with garbage the instruction must not read."""
    rng = np.random.default_rng(16)
    idx = rng.integers(0, len(EDGES), (3, 64))
    idx[:, :6] = [[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1], [2, 1, 2, 0, 1, 0]]
    lo = np.array(EDGES, np.uint32)[idx]
    hi = rng.integers(0, 0x10000, (3, 64)).astype(np.uint32) << np.uint32(16)
    return lo[0] | hi[0], lo[1] | hi[1], lo[2] | hi[2]


@pytest.mark.parametrize("op", ["v_min3_i16", "v_max3_i16", "v_med3_i16",
                                "v_min3_u16", "v_max3_u16", "v_med3_u16"])
@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a"])
def test_three_operand_16_bit_min_max_med(op: str, cpu: str) -> None:
    a, b, c = _operands()
    w = Wave(64, 0, 0)
    w.vdef[:, :] = True
    w.V[:, 1], w.V[:, 2], w.V[:, 3] = a, b, c
    w.V[:, 0] = 0xDEAD_BEEF
    run_steps(assemble([f"{op} v0, v1, v2, v3"], cpu), w)
    want = [_expected(op, int(x) & 0xFFFF, int(y) & 0xFFFF, int(z) & 0xFFFF)
            for x, y, z in zip(a, b, c, strict=True)]
    assert w.V[:, 0].tolist() == want  # D[31:16] zero


def test_op_sel_selects_the_high_half_of_a_source() -> None:
    a, b, c = _operands()
    w = Wave(64, 0, 0)
    w.vdef[:, :] = True
    w.V[:, 1], w.V[:, 2], w.V[:, 3] = a, b, c
    run_steps(assemble(["v_med3_u16 v0, v1, v2, v3 op_sel:[0,1,0,0]"]), w)
    want = [_expected("v_med3_u16", int(x) & 0xFFFF, int(y) >> 16, int(z) & 0xFFFF)
            for x, y, z in zip(a, b, c, strict=True)]
    assert w.V[:, 0].tolist() == want


def test_op_sel_destination_on_gfx9_is_unsupported_not_guessed() -> None:
    """GFX9 VOP3 op_sel[3] puts a 16-bit result in D[31:16]; what D[15:0] keeps we have no
    document for, so the instruction is reported, not run."""
    w = Wave(64, 0, 0)
    w.vdef[:, :] = True
    with pytest.raises(SimStop) as stop:
        run_steps(assemble(["v_mad_u16 v0, v1, v2, v3 op_sel:[0,0,0,1]"]), w)
    assert stop.value.fault.signature == "unsupported-instruction:v_mad_u16"


@pytest.mark.parametrize(("name", "mnemonic"), [("o3_min3_i16", "v_min3_i16"),
                                                ("o3_gpr_idx_dst", "s_set_gpr_idx_on")])
@pytest.mark.parametrize("spec", ["amdgpu-sim:gfx942:O3", "amdgpu-sim:gfx90a:O3"])
def test_campaign_cases_with_the_instruction_agree_with_ref(name: str, mnemonic: str,
                                                            spec: str) -> None:
    """Generated cases of the session-8 campaign (seeds 81013382 and 81002116) that were
    `unsupported-instruction:<mnemonic>` at O3."""
    case = casefile.load_checked(CASES / f"{name}.toml")
    pipelines = Registry().create_all(["ref", spec])
    asm = pipelines[1].artefact_text(case, "asm")  # type: ignore[attr-defined]
    assert mnemonic in asm
    outcomes = run_case(case, pipelines)
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    verdict = judge(case, outcomes, load_policy("default"), case_module(case))
    assert not verdict.findings, verdict.findings
