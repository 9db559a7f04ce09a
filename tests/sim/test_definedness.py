"""The simulator's definedness model (`sim-uninit-read`) against hand-computed bit masks, and
the campaign cases that showed where it was too coarse, judged against `ref` (the reference
interpreter, independent of the simulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.oracles import judge, load_policy
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.salu import SALU

CASES = Path(__file__).parent / "data" / "cases"
M32, M64 = (1 << 32) - 1, (1 << 64) - 1
LO = M32  # low half of a 64-bit value defined, high half not


def _def(op: str, a: int, da: int, b: int, db: int) -> int:
    bitdef = SALU[op].bitdef
    assert bitdef is not None, op
    return bitdef(a, da, b, db)


@pytest.mark.parametrize(("op", "da", "amount", "want"), [
    # {lo, undef} << 32: the undefined half leaves, zeros come in: all 64 bits defined
    ("S_LSHL_B64", LO, 32, M64),
    # << 31: bit 63 comes from the undefined bit 32
    ("S_LSHL_B64", LO, 31, M64 >> 1),
    # {undef, hi} >> 32: all defined
    ("S_LSHR_B64", LO << 32, 32, M64),
    ("S_LSHR_B64", LO << 32, 0, LO << 32),
    # arithmetic shift: the copies of an undefined sign bit are undefined
    ("S_ASHR_I32", M32 >> 1, 4, M32 >> 5),
    ("S_ASHR_I32", M32, 4, M32),
    # only S1[4:0] / S1[5:0] are read: amount 32 + 64 = 96 shifts a B64 by 32
    ("S_LSHL_B64", LO, 96, M64),
])
def test_shift_moves_defined_bits(op: str, da: int, amount: int, want: int) -> None:
    assert _def(op, 0x1234_5678_9ABC_DEF0, da, amount, M32) == want


def test_shift_by_an_undefined_amount_defines_nothing() -> None:
    assert _def("S_LSHL_B64", 1, M64, 32, M32 & ~(1 << 3)) == 0
    # an undefined bit the shift does not read does not matter (S1[5:0] for B64)
    assert _def("S_LSHL_B64", 1, M64, 32, M32 & ~(1 << 8)) == M64


def test_o0_64bit_division_reads_an_implicit_def_that_is_shifted_out() -> None:
    """Campaign bucket 15a114f19e (reduced): LLVM 22's O0 expansion of a 64-bit `urem`
    builds `{s_mul_hi_u32, IMPLICIT_DEF} << 32` (`llc -O0 -stop-after=finalize-isel`:
    REG_SEQUENCE of a V_MUL_HI_U32 and an IMPLICIT_DEF, then V_LSHLREV_B64 by 32). The
    undefined half cannot reach the result; the simulator used to report
    `sim-uninit-read` at the `s_cselect_b64` reading the final carry. Expected: `ref`."""
    case = casefile.load_checked(CASES / "o0_div64_implicit_def.toml")
    specs = ["ref", "amdgpu-sim:gfx942:O0"]
    outcomes = run_case(case, Registry().create_all(specs))
    assert isinstance(outcomes["amdgpu-sim:gfx942:O0"], Ok), outcomes["amdgpu-sim:gfx942:O0"]
    verdict = judge(case, outcomes, load_policy("default"), case_module(case))
    assert not verdict.findings, verdict.findings
