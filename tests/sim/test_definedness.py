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

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok, Trap
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.isa.inst import OpKind, Opnd
from rgpu_fuzz.sim.semantics.salu import SALU
from rgpu_fuzz.sim.state.defined64 import shift64_step
from rgpu_fuzz.sim.state.wave import Wave
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


@pytest.mark.parametrize(("op", "a", "da", "b", "want"), [
    # s_bfe_i64 s[0:1], s[18:19], 0x80000 (offset 0, width 8) with s19 never written:
    # the field is bits 7:0 (defined), the rest copies bit 7 (defined)
    ("S_BFE_I64", 0x5A, LO, 8 << 16, M64),
    # the field's top bit undefined: the sign copies above it are undefined too
    ("S_BFE_I64", 0x5A, 0x7F, 8 << 16, 0x7F),
    # unsigned: the bits above the field are zeros, defined whatever the source
    ("S_BFE_U64", 0x5A, 0x7F, 8 << 16, M64 & ~0x80),
    # offset 28, width 8 of a 32-bit value: bits 31:28 of the source, then 4 zeros
    # shifted in from above S0 (defined), then zeros above the field
    ("S_BFE_U32", 0xF000_0000, M32 >> 4, 28 | 8 << 16, M32 & ~0xF),
    ("S_BFE_I32", 0xF000_0000, M32, 28 | 8 << 16, M32),
    # width 0: the result is 0 whatever the source
    ("S_BFE_I64", 0, 0, 5, M64),
])
def test_bit_field_extract_defines_the_bits_it_reads(op: str, a: int, da: int, b: int,
                                                      want: int) -> None:
    """CDNA3 ISA S_BFE_*: D = (S0 >> S1[5:0]) & ((1 << S1[22:16]) - 1), sign-extended from
    the field's top bit for I; masks by hand."""
    assert _def(op, a, da, b, M32) == want


def test_bit_field_extract_with_an_undefined_width_defines_nothing() -> None:
    assert _def("S_BFE_I64", 0x5A, M64, 8 << 16, M32 & ~(1 << 17)) == 0
    # bit 8 of S1 is neither offset nor width
    assert _def("S_BFE_I64", 0x5A, M64, 8 << 16, M32 & ~(1 << 8)) == M64


@pytest.mark.rustc
@pytest.mark.parametrize("name", ["rustc_o2_bfe_i64_kernarg_i8",
                                  "rustc_o2_kernarg_dwordx4_past_end"])
def test_rustc_o2_campaign_cases_agree_with_ref(name: str) -> None:
    """The two rustc-amdgpu:gfx942:O2 campaign buckets (reduced): fd69f56668
    (`s_bfe_i64` of an i8 kernarg loaded into the low half only: false `sim-uninit-read`)
    and 38d2feb7ba (`s_load_dwordx4` 4 bytes past a 100-byte kernarg segment: false
    `sim-oob-access`). Expected: `ref`."""
    from rgpu_fuzz.pipelines.rustc_program import find_rustc
    if find_rustc() is None:
        pytest.skip("rustc not found")
    case = casefile.load_checked(CASES / f"{name}.toml")
    specs = ["ref", "rustc-amdgpu:gfx942:O2"]
    outcomes = run_case(case, Registry().create_all(specs))
    assert isinstance(outcomes["rustc-amdgpu:gfx942:O2"], Ok), outcomes["rustc-amdgpu:gfx942:O2"]
    verdict = judge(case, outcomes, load_policy("default"), case_module(case))
    assert not verdict.findings, verdict.findings


def test_never_written_scratch_is_undefined_and_lane_mask_bits_survive_a_spill() -> None:
    """Why gfx1100 O0 `cf_while`/`cf_loop_break` (10 lanes of a wave32) stopped reporting
    `sim-uninit-read`: the lane masks their loops spill (v_writelane into a lane VGPR, which
    is then stored to scratch under WWM) are defined in bits 0-9 only (bits 10-31 come from
    IMPLICIT_DEF phis; `s_and_b32 s0, exec_lo, s0` defines them later). The byte-granular
    private shadow of pre-merge tree kept byte 0 and dropped bits 8-9
    (traced: `v_readlane_b32 s3, v9, 24` gave defined bits 0xff, now 0x3ff), so a later
    `s_and_not1_b32 exec_lo, exec_lo, s0` saw an undefined EXEC. The per-bit shadow keeps
    exactly 0x3ff; never-written scratch still reads with no defined bit (checked over all
    10,039 private reads of both kernels, 221,228 of them of never-written bytes).
    Expected bits by hand."""
    from rgpu_fuzz.sim.state.memory import Private
    priv = Private(16, 32)
    lanes = np.arange(32)
    offs = np.zeros(32, np.uint32)
    data = np.tile(np.array([0xFF, 0x03, 0x00, 0x00], np.uint8), (32, 1))
    bits = np.tile(np.array([0xFF, 0x03, 0x00, 0x00], np.uint8), (32, 1))  # 0x3ff
    priv.write(lanes, offs, data, bits, "scratch_store_b32")
    _, got = priv.read_bits(lanes, offs, 4, "scratch_load_b32")
    assert (got.astype(np.uint32) @ (1 << 8 * np.arange(4, dtype=np.uint32)) == 0x3FF).all()
    _, never = priv.read_bits(lanes, offs + 4, 4, "scratch_load_b32")
    assert not never.any()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cf_while", "cf_loop_break"])
def test_gfx1100_o0_loop_lane_masks_agree_with_ref(name: str) -> None:
    """The two conformance kernels of the test above, end to end (~10 s each at O0)."""
    case = casefile.load_checked(Path(__file__).parents[1] / "semantics" / "cases"
                                 / f"{name}.toml")
    outcomes = run_case(case, Registry().create_all(["ref", "amdgpu-sim:gfx1100:O0"]))
    assert isinstance(outcomes["amdgpu-sim:gfx1100:O0"], Ok), outcomes["amdgpu-sim:gfx1100:O0"]
    verdict = judge(case, outcomes, load_policy("default"), case_module(case))
    assert not verdict.findings, verdict.findings
