"""Reduced cases of campaigns that the simulator got wrong, judged against `ref`
(the reference interpreter) on every target that compiles them the same way. Each case
file's kernel says what it does; the reason it failed is in the test's docstring."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case

CASES = Path(__file__).parent / "data" / "cases"
O3 = ["amdgpu-sim:gfx942:O3", "amdgpu-sim:gfx90a:O3", "amdgpu-sim:gfx1100:O3"]


@pytest.mark.parametrize("spec", O3)
def test_one_load_through_a_pointer_selected_per_lane(spec: str) -> None:
    """Bucket be9333042f: `if in1[t] { in0[0] != 0 } else { in1[0] }` becomes one
    `global_load_ubyte` whose lanes read two buffers; `AddressSpace` wanted one mapping
    per access and reported `sim-oob-access`."""
    case = casefile.load_checked(CASES / "o3_per_lane_pointer_select.toml")
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings


@pytest.mark.parametrize("spec", O3)
def test_a_byte_compare_of_a_partly_stored_array(spec: str) -> None:
    """Bucket a8b8660435 (second campaign): an 8-byte array of which O3 stores 2 bytes, read
    back with `scratch_load_dwordx2`; `v_cmp_ne_u16_sdwa ... src0_sel:BYTE_0` reads the
    defined byte, but SDWA sources counted as defined only as a whole register."""
    case = casefile.load_checked(CASES / "o3_sdwa_byte_of_partly_defined_load.toml")
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings


@pytest.mark.parametrize("spec", ["amdgpu-sim:gfx942:O3", "amdgpu-sim:gfx90a:O3"])
def test_packed_16_bit_integer_operations(spec: str) -> None:
    """Seed 101001005 of the second campaign: LLVM's O3 code adds pairs of 16-bit values
    with `v_pk_add_u16 v15, s40, 4 op_sel_hi:[1,0]` and subtracts with `v_pk_sub_i16`;
    both were `unsupported-instruction` (`bound.packed`)."""
    case = casefile.load_checked(CASES / "o3_packed_u16_add.toml")
    pipelines = Registry().create_all(["ref", spec])
    asm = pipelines[1].artefact_text(case, "asm")  # type: ignore[attr-defined]
    assert "v_pk_add_u16" in asm and "v_pk_sub_i16" in asm
    outcomes = run_case(case, pipelines)
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings


def test_a_dword_load_and_a_d16_hi_load_to_one_register() -> None:
    """Bucket c232097e70 (gfx1100 O0 campaign): `in0[0] as i8 - b as i8` loads the dword
    into v0 and the bool into v0's high half (`scratch_load_d16_hi_u8`) before one wait;
    the dword's low half was dropped, so 1 - 1 came out -1."""
    case = casefile.load_checked(CASES / "o0_gfx1100_dword_then_d16_hi_load.toml")
    spec = "amdgpu-sim:gfx1100:O0"
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings


def test_a_lane_mask_spilled_through_mubuf_keeps_its_defined_bits() -> None:
    """Bucket 25a4e21b33 (gfx90a O0, `memory` profile, 28 of 200 cases): a 21-lane wave's
    loop mask, defined in bits 0-20, spilled by `buffer_store_dword` and reloaded; MUBUF
    loads kept definedness per byte, so bits 16-20 came back undefined and
    `s_andn2_b64 exec, exec, s[4:5]` was `sim-uninit-read` (docs/findings/25a4e21b33.md).
    gfx942 spills through SCRATCH, which kept the bits."""
    case = casefile.load_checked(CASES / "o0_gfx90a_mubuf_lane_mask_spill.toml")
    spec = "amdgpu-sim:gfx90a:O0"
    pipelines = Registry().create_all(["ref", spec])
    assert "buffer_store_dword" in pipelines[1].artefact_text(case, "asm")  # type: ignore[attr-defined]
    outcomes = run_case(case, pipelines)
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings


def test_two_loads_to_one_vgpr_for_different_lanes() -> None:
    """Bucket b08b6336a9 (gfx1100 O1-O3, rustc's O2 code too): lane 1 loads a byte with
    `global_load_d16_u8 v10`, lane 0 then `global_load_b64 v[10:11]`, one `s_waitcnt
    vmcnt(0)` for both; the newer load to v10 dropped the older one's data though it
    writes other lanes, so `out0[1]` came out 0 (the unreduced kernel at O1: the store
    read undefined bits)."""
    spec = "amdgpu-sim:gfx1100:O3"
    case = casefile.load_checked(CASES / "o3_gfx1100_loads_to_one_vgpr_under_two_exec.toml")
    outcomes = run_case(case, Registry().create_all(["ref", spec]))
    assert isinstance(outcomes[spec], Ok), outcomes[spec]
    assert not judge(case, outcomes, load_policy("default"), case_module(case)).findings
