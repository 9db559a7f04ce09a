"""The simulator's definedness model (`sim-uninit-read`) against hand-computed bit masks, and
the campaign cases that showed where it was too coarse, judged against `ref` (the reference
interpreter, independent of the simulator)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok, Trap
from rgpu_fuzz.oracles import judge, load_policy
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.defined64 import shift64_step
from rgpu_fuzz.sim.inst import OpKind, Opnd
from rgpu_fuzz.sim.salu import SALU
from rgpu_fuzz.sim.wave import Wave
from tests.toolchain import debian_llvm_tool

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


AMOUNTS = np.array([0, 5, 32, 40], np.uint32)
AMOUNT_DEFINED = np.array([True, True, True, False])


def _halves(opcode: str, lo_defined: bool, hi_defined: bool) -> tuple[list[bool], list[bool]]:
    """(low, high) defined lanes of `opcode` v[0:1], AMOUNTS, v[4:5] on a 4-lane wave whose
    v4 / v5 are defined as given; lane 3's amount is undefined."""
    w = Wave(4, 0, 0)
    w.vdef[:, 4], w.vdef[:, 5] = lo_defined, hi_defined
    got: list[Any] = []
    inst = SimpleNamespace(opcode=opcode, operands=(None, None, Opnd(OpKind.VGPR, 4, 2)))
    step = shift64_step(inst, (lambda w: AMOUNTS, lambda w: AMOUNT_DEFINED),  # type: ignore[arg-type]
                        (lambda w: np.zeros(4, np.uint64), lambda w: np.zeros(4, bool)),
                        lambda a, s: s, np.uint64, lambda w, r, d: got.append(d))
    step(w)
    lo, hi = got[0]
    return np.asarray(lo).tolist(), np.asarray(hi).tolist()


def test_vector_64bit_shift_halves() -> None:
    """By hand, lanes shifted by 0, 5, 32 and an undefined amount: `<< 32` makes the high
    half the old low half and the low half zeros; `>> 32` the mirror; `ashr` fills the high
    half with its own sign bit."""
    assert _halves("V_LSHLREV_B64", True, False) == ([True, True, True, False],
                                                     [False, False, True, False])
    assert _halves("V_LSHRREV_B64", False, True) == ([False, False, True, False],
                                                     [True, True, True, False])
    assert _halves("V_ASHRREV_I64", True, False) == ([True, False, False, False],
                                                     [False, False, False, False])


def _llc_with(tmp: Path, flag: str) -> str:
    """An `llc=` wrapper: Debian's llc-22 with one extra option."""
    llc = debian_llvm_tool("llc", 22)
    path = tmp / f"llc{flag.replace('-', '_').replace('=', '_')}"
    path.write_text(f'#!/bin/sh\nexec {llc} {flag} "$@"\n')
    os.chmod(path, 0o755)
    return str(path)


def test_o0_divergent_break_lane_vgpr_killed_in_loop_header(tmp_path: Path) -> None:
    """Campaign bucket 8081e0ac57 (reduced): an LLVM 22 O0 bug, not the simulator's. At -O0,
    SILowerSGPRSpills places `%lanevgpr = IMPLICIT_DEF` in the loop header, before the header
    restores the lane masks the loop's back edge spilled into that VGPR; the WWM register
    allocator then keeps nothing across the back edge and the header reads stale lanes:
    lane 1, which broke out, runs the `in1[..]` bounds-check trap path.

    Independent expected value: `ref`. The same IR compiled with the lane VGPRs
    pre-allocated (`-amdgpu-prealloc-sgpr-spill-vgprs`) or by the greedy allocator
    (`-optimize-regalloc`; this one needs per-half definedness through `v_lshlrev_b64`)
    agrees with `ref` on the simulator; the default build traps."""
    case = casefile.load_checked(CASES / "o0_divergent_break_lane_vgpr.toml")
    flag = "-amdgpu-prealloc-sgpr-spill-vgprs"
    prealloc = f"amdgpu-sim:gfx942:O0:llc={_llc_with(tmp_path, flag)}"
    greedy = f"amdgpu-sim:gfx942:O0:llc={_llc_with(tmp_path, '-optimize-regalloc')}"
    specs = ["ref", "amdgpu-sim:gfx942:O0", prealloc, greedy]
    outcomes = run_case(case, Registry().create_all(specs))
    ref = outcomes["ref"]
    assert isinstance(ref, Ok), ref
    for spec in (prealloc, greedy):
        got = outcomes[spec]
        assert isinstance(got, Ok), (spec, got)
        assert {k: v.values.tolist() for k, v in got.outputs.items()} == \
            {k: v.values.tolist() for k, v in ref.outputs.items()}
    bug = outcomes["amdgpu-sim:gfx942:O0"]
    assert isinstance(bug, Trap) and bug.kind.value == "out-of-bounds", (
        f"LLVM 22's O0 lane-VGPR bug no longer reproduces (fixed upstream?): {bug}")
