"""S_CMPK_* compare S0 with SIMM16 sign-extended (I32) or zero-extended (U32) (CDNA3 ISA
"SOPK"). The simulator compared with the raw 16 bits, so `s_cmpk_lt_i32 s0, 0xffc7`
(s0 < -57) was true for s0 = 0: campaign bucket 0c85a73aa6 (wrong-code at O3,
`(-58i8 >= in0[0] as i8) as i32` gave 1, 2026-12-01). Expected values by hand and `ref`."""

from __future__ import annotations

import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.semantics.salu import SALU
from tests.sim.test_definedness import CASES


@pytest.mark.parametrize(("op", "s0", "simm16", "scc"), [
    ("S_CMPK_LT_I32", 0, 0xFFC7, 0),            # 0 < -57
    ("S_CMPK_GT_I32", 0, 0xFFC7, 1),            # 0 > -57
    ("S_CMPK_EQ_I32", 0xFFFF_FFC7, 0xFFC7, 1),  # -57 == -57
    ("S_CMPK_LT_U32", 0, 0xFFC7, 1),            # 0 < 65479
    ("S_CMPK_EQ_U32", 0xFFFF_FFC7, 0xFFC7, 0),  # 4294967239 != 65479
    ("S_CMPK_LE_I32", 5, 0x0005, 1),
])
def test_cmpk_extends_the_immediate_by_the_compare_type(op: str, s0: int, simm16: int,
                                                        scc: int) -> None:
    assert SALU[op].fn(s0, simm16)[1] == scc


@pytest.mark.parametrize("opt", ["O0", "O3"])
def test_signed_i8_compare_with_a_negative_constant(opt: str) -> None:
    case = casefile.load_checked(CASES / "cmpk_signed_imm.toml")
    spec = f"amdgpu-sim:gfx942:{opt}"
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert outcomes[spec].outputs["out0"].values.tolist() == [0]  # -58 >= 0 is false
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings
