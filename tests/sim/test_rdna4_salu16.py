"""gfx1200's scalar binary16 float instructions (S_ADD_F16 ... S_CMP_*_F16, V_S_SQRT_F16)
and S_FMAAK_F32 / S_FMAMK_F32 / S_FMAC_F32, which llc-22 selects for uniform `half` and
`float` arithmetic on kernel arguments. Expected values by hand from IEEE 754-2019
(binary16: 11 significant bits; each operation rounded once to nearest, ties to even;
§5.4.1 fusedMultiplyAdd rounds the exact a*b+c once) and the RDNA4 ISA pseudocode
(`SCC = S0.f16 < S1.f16`: a NaN compares unordered; `D0.f16` reads and writes bits
15:0)."""

from __future__ import annotations

import struct
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.isa.code import decode_text
from rgpu_fuzz.sim.launch.engine import Arg
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import ENV, assemble, run_steps
from tests.sim.kernels import build, out, run

IR16 = """
target triple = "amdgcn-amd-amdhsa"
declare half @llvm.fma.f16(half, half, half)
declare half @llvm.floor.f16(half)
declare half @llvm.ceil.f16(half)
declare half @llvm.trunc.f16(half)
declare half @llvm.rint.f16(half)
declare half @llvm.sqrt.f16(half)
define amdgpu_kernel void @k(half %a, half %b, half %c, half %d, half %e, half %f,
                             ptr addrspace(1) %o, ptr addrspace(1) %flags) {
  %r0 = fadd half %a, %b
  %r1 = fsub half %a, %b
  %r2 = fmul half %a, %b
  %r3 = call half @llvm.fma.f16(half %c, half %d, half %e)
  %r4 = fadd half %a, 0xH3C00
  %r5 = call half @llvm.floor.f16(half %f)
  %r6 = call half @llvm.ceil.f16(half %f)
  %r7 = call half @llvm.trunc.f16(half %f)
  %r8 = call half @llvm.rint.f16(half %f)
  %r9 = call half @llvm.sqrt.f16(half %d)
  %c0 = fcmp olt half %a, 0xH4000
  %c1 = fcmp uge half %b, 0xHBC00
  %c2 = fcmp olt half %b, 0xH3C00
  %c3 = fcmp uno half %a, %a
  %z0 = zext i1 %c0 to i32
  %z1 = select i1 %c1, i32 2, i32 0
  %z3 = select i1 %c3, i32 8, i32 0
  %m0 = or i32 %z0, %z1
  %z2 = select i1 %c2, i32 4, i32 0
  %m1 = or i32 %m0, %z2
  %m2 = or i32 %m1, %z3
  store i32 %m2, ptr addrspace(1) %flags
  store half %r0, ptr addrspace(1) %o
  %p1 = getelementptr half, ptr addrspace(1) %o, i32 1
  store half %r1, ptr addrspace(1) %p1
  %p2 = getelementptr half, ptr addrspace(1) %o, i32 2
  store half %r2, ptr addrspace(1) %p2
  %p3 = getelementptr half, ptr addrspace(1) %o, i32 3
  store half %r3, ptr addrspace(1) %p3
  %p4 = getelementptr half, ptr addrspace(1) %o, i32 4
  store half %r4, ptr addrspace(1) %p4
  %p5 = getelementptr half, ptr addrspace(1) %o, i32 5
  store half %r5, ptr addrspace(1) %p5
  %p6 = getelementptr half, ptr addrspace(1) %o, i32 6
  store half %r6, ptr addrspace(1) %p6
  %p7 = getelementptr half, ptr addrspace(1) %o, i32 7
  store half %r7, ptr addrspace(1) %p7
  %p8 = getelementptr half, ptr addrspace(1) %o, i32 8
  store half %r8, ptr addrspace(1) %p8
  %p9 = getelementptr half, ptr addrspace(1) %o, i32 9
  store half %r9, ptr addrspace(1) %p9
  ret void
}
"""

ONE, TINY = 0x3C00, 0x1000            # 1.0; 2**-11 (exponent -11 → biased 4, fraction 0)
ABOVE, BELOW = 0x3C01, 0x3BFF         # 1 + 2**-10; 1 - 2**-11
NEG1, NEG2_5, QNAN = 0xBC00, 0xC100, 0x7E00


def _run16(a: int) -> tuple[list[int], int, str]:
    code = build(IR16, cpu="gfx1200", opt=3)
    texts = " ".join(i.text for i in decode_text(read_code_object(code)))
    args = [Arg(data=struct.pack("<H", v)) for v in (a, TINY, ABOVE, BELOW, NEG1, NEG2_5)]
    res = run(code, (1, 1, 1), (1, 1, 1), [*args, Arg(buffer="o"), Arg(buffer="flags")],
              {"o": np.zeros(10, np.uint16), "flags": np.zeros(1, np.uint32)})
    assert res.fault is None, res.fault
    return out(res, "o", np.uint16).tolist(), int(out(res, "flags", np.uint32)[0]), texts


def test_gfx1200_scalar_f16_arithmetic_rounds_as_ieee_754() -> None:
    """a = 1.0, b = 2**-11, c = 1 + 2**-10, d = 1 - 2**-11, e = -1.0, f = -2.5, by hand:
    a + b = 1 + 2**-11 lies halfway between 1.0 and 1 + 2**-10: ties to even, 1.0 (0x3c00);
    a - b = 1 - 2**-11 is exact (0x3bff); a * b = 2**-11 (0x1000);
    fma(c, d, e) = (1 + 2**-10)(1 - 2**-11) - 1 = 2**-11 - 2**-21 = 2**-12 * 1.111111111b,
    exact: biased exponent 3, fraction 0x3fe → 0x0ffe (an unfused multiply rounds the
    product to 1.0 first and gives 0); a + 1.0 (the inline constant 1.0, read as binary16
    0x3c00) = 2.0 (0x4000); floor/ceil/trunc/rint(-2.5) = -3 (0xc200), -2 (0xc000), -2, -2
    (ties to even); sqrt(1 - 2**-11) = 1 - 2**-12 - 2**-25 - ..., below the midpoint
    1 - 2**-12, so 1 - 2**-11 (0x3bff).
    SCC: a < 2.0 true (bit 0); b >= -1.0 unordered-or true (bit 1); b < 1.0 true (bit 2);
    a is not NaN (bit 3 clear). a and b share one SGPR (a in bits 15:0, b in 31:16), so a
    compare that read 32 bits would see neither."""
    got, flags, texts = _run16(ONE)
    for m in ("s_add_f16", "s_sub_f16", "s_mul_f16", "s_fmac_f16", "s_floor_f16",
              "s_ceil_f16", "s_trunc_f16", "s_rndne_f16", "v_s_sqrt_f16", "s_cmp_lt_f16",
              "s_cmp_nlt_f16", "s_cmp_u_f16"):
        assert m in texts, m
    assert "s_add_f16" in texts and ", 1.0" in texts
    assert got == [0x3C00, 0x3BFF, 0x1000, 0x0FFE, 0x4000, 0xC200, 0xC000, 0xC000, 0xC000,
                   0x3BFF]
    assert flags == 0b0111


def test_a_nan_propagates_and_compares_unordered() -> None:
    """a = NaN (0x7e00): a + b, a - b, a * b and a + 1.0 are NaN (IEEE 754 §6.2: a quiet
    NaN operand gives a quiet NaN); a < 2.0 is false (ordered compare), uno(a, a) true; the
    compares of b are unchanged (bits 1, 2)."""
    got, flags, _ = _run16(QNAN)
    half = np.array(got, np.uint16).view(np.float16)
    assert np.isnan(half[[0, 1, 2, 4]]).all()
    assert got[3] == 0x0FFE and got[9] == 0x3BFF
    assert flags == 0b1110


IR32 = """
target triple = "amdgcn-amd-amdhsa"
declare float @llvm.fma.f32(float, float, float)
define amdgpu_kernel void @k(float %x, float %y, ptr addrspace(1) %o) {
  %r0 = call float @llvm.fma.f32(float %x, float %y, float -1.5)
  %r1 = call float @llvm.fma.f32(float %x, float 3.0e+00, float %y)
  store float %r0, ptr addrspace(1) %o
  %p1 = getelementptr float, ptr addrspace(1) %o, i32 1
  store float %r1, ptr addrspace(1) %p1
  ret void
}
"""


def _f32(q: Fraction) -> float:
    """An exact rational that binary32 represents exactly, as a float (checked)."""
    f = float(np.float32(float(q)))
    assert Fraction(f) == q, q
    return f


@pytest.mark.parametrize("opt", [3])
def test_s_fmaak_and_fmac_f32_round_once(opt: int) -> None:
    """x = y = 1 + 2**-12. fma(x, y, -1.5): the exact product 1 + 2**-11 + 2**-24 plus -1.5
    is -(1/2 - 2**-11 - 2**-24), a multiple of 2**-25 in [1/4, 1/2), so exact in binary32
    (an unfused multiply rounds the product's 2**-24, half an ulp, to even and gives
    -(1/2 - 2**-11)). fma(x, 3.0, y) = 4 + 4 * 2**-12 = 4 + 2**-10, exact."""
    code = build(IR32, cpu="gfx1200", opt=opt)
    texts = " ".join(i.text for i in decode_text(read_code_object(code)))
    assert "s_fmaak_f32" in texts and "s_fmac_f32" in texts
    x = struct.pack("<f", 1 + 2**-12)
    res = run(code, (1, 1, 1), (1, 1, 1), [Arg(data=x), Arg(data=x), Arg(buffer="o")],
              {"o": np.zeros(2, np.float32)})
    assert res.fault is None, res.fault
    got = out(res, "o", np.float32).tolist()
    assert got == [_f32(-(Fraction(1, 2) - Fraction(1, 2**11) - Fraction(1, 2**24))),
                   _f32(4 + Fraction(1, 2**10))]


def test_inline_constants_read_as_binary16_and_the_high_half_is_zeroed() -> None:
    """llc-22 writes most f16 compare constants as literals, so the inline forms are
    assembled by hand (llvm-mc-22). s4 = 0xdead3800 (0.5 under garbage): `s_cmp_lt_f16 s4,
    1.0` reads `S0.f16` = 0.5 and the inline constant 1.0 as binary16 0x3c00: 0.5 < 1.0,
    SCC = 1. `s_add_f16 s5, s4, 1.0` = 1.5 (0x3e00), bits 31:16 written 0. `s_cmp_u_f16
    s6, 0` with s6 = 0x7e00 (a quiet NaN): unordered, SCC = 1, and `s_cmp_eq_f16 s6, s6`
    false. `s_cvt_f32_f16 s7, 2.0`: the constant at binary16 gives f32 2.0 (0x40000000).
    `v_s_sqrt_f16 s8, 4.0` = 2.0 (0x4000) with bits 31:16 zero (pseudocode: `D0[31 : 16] =
    16'0x0`). Only the low halves of s4 and s6 are defined: a 16-bit read needs no more.
    `s_fmamk_f32 s12, s13, 3.0 (as a literal), s14` = fma(s13, 3.0, s14) with s13 = s14 =
    1 + 2**-12 (0x3f800800): 4 + 2**-10, exact: exponent 2, fraction bit 11 (0x40800800)."""
    w = Wave(32, 0, 0)
    w.S[4], w.sdef[4] = 0xDEAD_3800, 0xFFFF
    w.S[6], w.sdef[6] = 0x7E00, 0xFFFF
    w.S[13], w.sdef[13] = 0x3F80_0800, 0xFFFF_FFFF
    w.S[14], w.sdef[14] = 0x3F80_0800, 0xFFFF_FFFF
    for n in (5, 7, 8):
        w.S[n], w.sdef[n] = 0xFFFF_FFFF, 0
    run_steps(assemble(["s_cmp_lt_f16 s4, 1.0", "s_cselect_b32 s9, 1, 0",
                        "s_add_f16 s5, s4, 1.0",
                        "s_cmp_u_f16 s6, 0", "s_cselect_b32 s10, 1, 0",
                        "s_cmp_eq_f16 s6, s6", "s_cselect_b32 s11, 1, 0",
                        "s_cvt_f32_f16 s7, 2.0", "v_s_sqrt_f16 s8, 4.0",
                        "s_fmamk_f32 s12, s13, 0x40400000, s14"], "gfx1200"), w)
    assert (w.S[9], w.S[10], w.S[11]) == (1, 1, 0)
    assert (w.S[5], w.S[7], w.S[8]) == (0x3E00, 0x4000_0000, 0x4000)
    assert w.S[12] == 0x4080_0800
    assert w.sdef[5] == w.sdef[7] == w.sdef[8] == 0xFFFF_FFFF


def test_min_num_and_maximum_f16_nan_rules() -> None:
    """RDNA4 pseudocode: S_MIN_NUM_F16 of a NaN and a number gives the number
    (minimumNumber); S_MAXIMUM_F16 of a quiet NaN and a number gives the NaN (maximum);
    -0 is below +0 (S_MIN_NUM_F16 of +0, -0 gives -0, 0x8000). s2 = 0x7e00 (quiet NaN),
    s3 = 0x4000 (2.0), s4 = 0x0000, s5 = 0x8000."""
    w = Wave(32, 0, 0)
    for n, v in ((2, 0x7E00), (3, 0x4000), (4, 0), (5, 0x8000)):
        w.S[n], w.sdef[n] = v, 0xFFFF_FFFF
    run_steps(assemble(["s_min_num_f16 s6, s2, s3", "s_maximum_f16 s7, s3, s2",
                        "s_min_num_f16 s8, s4, s5", "s_max_num_f16 s9, s5, s4"],
                       "gfx1200"), w)
    assert (w.S[6], w.S[7], w.S[8], w.S[9]) == (0x4000, 0x7E00, 0x8000, 0x0000)


def test_flushed_f16_denormals_are_refused() -> None:
    """f16 denormal flushing is not modelled (docs/simulator.md): with
    FLOAT_DENORM_MODE_16_64 flushing, S_ADD_F16 stops with `unsupported-instruction`
    rather than give a result the hardware may not."""
    w = Wave(32, 0, 0)
    with pytest.raises(SimStop, match="binary16 denormals") as stop:
        run_steps(assemble(["s_add_f16 s0, s1, s2"], "gfx1200"), w,
                  replace(ENV, flush64=True))
    assert stop.value.fault.kind is FaultKind.UNSUPPORTED
