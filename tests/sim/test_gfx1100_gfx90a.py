"""gfx1100 (true16, RDNA3 V_CMPX, D16 loads) and gfx90a (GFX9 MAD family) behaviour of the
simulator: conformance kernels against what the real rustc computed
(`tests/semantics/expected`), and hand-computed values for the pieces."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.sim.semantics.valu import VALU
from rgpu_fuzz.sim.semantics.valu_mad import mad_f32, mad_legacy_f32
from rgpu_fuzz.sim.state.halves import HIGH, LOW, bits_defined, defined_bits, write_bits
from rgpu_fuzz.sim.state.wave import Wave
from tests.semantics.expected_values import CASES, load_expected, output_mismatches

F32 = np.float32


@pytest.mark.parametrize(("name", "spec"), [
    # v_cmpx on GFX10+ writes EXEC only: writing VCC too clobbered `a != 0` (bool_ops)
    ("bool_ops", "amdgpu-sim:gfx1100:O3"),
    # scratch_load_d16_u8 + scratch_load_d16_hi_u8 into one VGPR, both in flight
    ("int_methods_u8", "amdgpu-sim:gfx1100:O0"),
    # true16 halves through v_cvt_f32_ubyte0 / v_sub_nc_u32 / v_and_b16
    ("int_methods_u8", "amdgpu-sim:gfx1100:O3"),
    # v_bfe_i32 v4, v4, 0, 16 sign-extends a register whose high half is undefined
    ("int_ops_i16", "amdgpu-sim:gfx1100:O3"),
    # v_cndmask_b16 into true16 halves
    ("cast_from_f32", "amdgpu-sim:gfx1100:O3"),
    # v_mad_f32 / v_madmk_f32 (unfused, flushing) in LLVM's 16-bit division expansion
    ("int_ops_i16", "amdgpu-sim:gfx90a:O3"),
])
def test_conformance_kernel_computes_what_rustc_computed(name: str, spec: str) -> None:
    case = load(CASES / f"{name}.toml")
    out = Registry().create(spec).run(case)
    assert isinstance(out, Ok), out
    want = load_expected(name)
    got = {b: out.outputs[b].bits() for b in out.outputs}
    assert output_mismatches(case, got, want["outputs"]) == []


def test_mad_f32_rounds_the_product_and_flushes_denormals() -> None:
    """By hand: (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46 rounds to 1 + 2^-22, so adding
    -(1 + 2^-22) gives 0 unfused (a fused multiply-add gives 2^-46); 2^-70 * 2^-70 = 2^-140
    is an f32 denormal, flushed to +0; a denormal addend is flushed too."""
    one_ulp = F32(1 + 2.0 ** -23)
    got = mad_f32(np.array([one_ulp]), np.array([one_ulp]), np.array([-F32(1 + 2.0 ** -22)]))
    assert got.tolist() == [0.0]
    tiny = F32(2.0 ** -70)
    assert mad_f32(np.array([tiny]), np.array([tiny]), np.array([F32(0)])).tolist() == [0.0]
    denorm = F32(2.0 ** -140)
    assert mad_f32(np.array([F32(1)]), np.array([F32(1)]), np.array([denorm])).tolist() == [1.0]
    # DX9 legacy rule: 0 * inf = 0, so the result is the addend
    assert mad_legacy_f32(np.array([F32(0)]), np.array([F32(np.inf)]),
                          np.array([F32(3)])).tolist() == [3.0]


def test_half_writes_keep_the_other_half() -> None:
    """v0.l written defined on a register nothing wrote: v0.l reads defined, v0.h and v0 as a
    whole do not; then v0.h written defined: the whole register is."""
    w = Wave(4, 0, 0)
    write_bits(w, 0, np.full(4, 0x1234, np.uint32), np.ones(4, bool), LOW, None)
    assert bits_defined(w, 0, LOW).tolist() == [True] * 4
    assert bits_defined(w, 0, HIGH).tolist() == [False] * 4
    assert w.vdef[:, 0].tolist() == [False] * 4
    exec_mask = np.array([True, False, True, False])
    write_bits(w, 0, np.full(4, 0xABCD0000, np.uint32), np.ones(4, bool), HIGH, exec_mask)
    assert w.vdef[:, 0].tolist() == [True, False, True, False]
    assert w.V[:, 0].tolist() == [0xABCD1234, 0x1234, 0xABCD1234, 0x1234]
    assert defined_bits(w, 0).tolist() == [0xFFFF_FFFF, 0xFFFF, 0xFFFF_FFFF, 0xFFFF]


def test_rdna3_minmax_order() -> None:
    """RDNA3 pseudocode: V_MINMAX = max(min(S0, S1), S2), V_MAXMIN = min(max(S0, S1), S2);
    by hand for (1, 3, 10): 10 and 3."""
    args = [np.array([1], np.int32), np.array([3], np.int32), np.array([10], np.int32)]
    assert VALU["V_MINMAX_I32"].fn(*args).tolist() == [10]
    assert VALU["V_MAXMIN_I32"].fn(*args).tolist() == [3]


def test_vopd_y_reads_the_old_value_of_x_destination() -> None:
    """corpus/254dd5a67c19 at gfx1100 O3 has `v_dual_mov_b32 v0, v3 :: v_dual_add_nc_u32 v5,
    v0, v5`: both halves read before either writes (RDNA3 ISA "Dual issue"). Expected: the
    reference interpreter's outputs."""
    from pathlib import Path

    from rgpu_fuzz import casefile
    from rgpu_fuzz.pipelines.runner import run_case

    case = casefile.load_checked(Path(__file__).parent.parent.parent / "corpus" /
                                 "254dd5a67c19.toml")
    outs = run_case(case, Registry().create_all(["ref", "amdgpu-sim:gfx1100:O3"]))
    ref, got = outs["ref"], outs["amdgpu-sim:gfx1100:O3"]
    assert isinstance(ref, Ok) and isinstance(got, Ok), (ref, got)
    assert {k: v.bits() for k, v in got.outputs.items()} == \
        {k: v.bits() for k, v in ref.outputs.items()}
