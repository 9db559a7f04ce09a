"""gfx1200's V_MINIMUM_F64 / V_MAXIMUM_F64 / V_MINIMUM_F32 (IEEE 754-2019 §9.6 minimum and
maximum: a NaN operand gives a quiet NaN, -0 is below +0), selected by llc-22 for
`llvm.minimum` / `llvm.maximum`. Expected values by hand from IEEE 754-2019 §9.6 and the
RDNA4 pseudocode (a signalling NaN comes back quieted: bit 51 of an f64 set)."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.isa.code import decode_text
from rgpu_fuzz.sim.launch.engine import Arg
from tests.sim.kernels import build, out, run

IR = """
target triple = "amdgcn-amd-amdhsa"
declare double @llvm.minimum.f64(double, double)
declare double @llvm.maximum.f64(double, double)
declare float @llvm.minimum.f32(float, float)
define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b,
                             ptr addrspace(1) %lo, ptr addrspace(1) %hi,
                             ptr addrspace(1) %lo32) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr double, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr double, ptr addrspace(1) %b, i32 %t
  %x = load double, ptr addrspace(1) %pa
  %y = load double, ptr addrspace(1) %pb
  %mn = call double @llvm.minimum.f64(double %x, double %y)
  %mx = call double @llvm.maximum.f64(double %x, double %y)
  %x32 = fptrunc double %x to float
  %y32 = fptrunc double %y to float
  %mn32 = call float @llvm.minimum.f32(float %x32, float %y32)
  %plo = getelementptr double, ptr addrspace(1) %lo, i32 %t
  %phi = getelementptr double, ptr addrspace(1) %hi, i32 %t
  %plo32 = getelementptr float, ptr addrspace(1) %lo32, i32 %t
  store double %mn, ptr addrspace(1) %plo
  store double %mx, ptr addrspace(1) %phi
  store float %mn32, ptr addrspace(1) %plo32
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""

QNAN = 0x7FF8_0000_0000_0000
SNAN = 0x7FF0_0000_0000_0001
A = [2.0, -0.0, 0.0, 1.0, 5.0, -np.inf]
B = [3.0, 0.0, -0.0, np.nan, -7.5, 1.0]


@pytest.mark.parametrize("opt", [0, 3])
def test_gfx1200_minimum_and_maximum_follow_ieee_754_2019(opt: int) -> None:
    code = build(IR, cpu="gfx1200", opt=opt)
    texts = " ".join(i.text for i in decode_text(read_code_object(code)))
    assert "v_minimum_f64" in texts and "v_maximum_f64" in texts
    n = len(A)
    res = run(code, (1, 1, 1), (n, 1, 1), [Arg(buffer=x) for x in ("a", "b", "lo", "hi", "lo32")],
              {"a": np.array(A), "b": np.array(B), "lo": np.zeros(n), "hi": np.zeros(n),
               "lo32": np.zeros(n, np.float32)})
    assert res.fault is None, res.fault
    lo, hi = out(res, "lo", np.float64), out(res, "hi", np.float64)
    lo32 = out(res, "lo32", np.float32)
    # by hand: min/max of each pair; -0 < +0; a NaN operand gives NaN
    assert lo[[0, 4, 5]].tolist() == [2.0, -7.5, -np.inf]
    assert hi[[0, 4, 5]].tolist() == [3.0, 5.0, 1.0]
    assert np.signbit(lo[1]) and np.signbit(lo[2]) and not np.signbit(hi[1]) \
        and not np.signbit(hi[2]) and lo[1] == 0 and hi[2] == 0
    assert np.isnan(lo[3]) and np.isnan(hi[3]) and np.isnan(lo32[3])
    assert lo32[[0, 4]].tolist() == [2.0, -7.5] and np.signbit(lo32[1])


def test_a_signalling_nan_comes_back_quiet() -> None:
    """RDNA4 pseudocode: `isSignalNAN(S1)` → `D = cvtToQuietNAN(S1)`: the payload with the
    quiet bit (51) set, ahead of a quiet NaN in S0."""
    from rgpu_fuzz.sim.semantics.rdna4 import maximum, minimum

    s = np.array([SNAN], np.uint64).view(np.float64)
    q = np.array([QNAN | 5], np.uint64).view(np.float64)
    for fn in (minimum, maximum):
        assert fn(q, s).view(np.uint64)[0] == SNAN | (1 << 51)
        assert fn(np.array([1.0]), q).view(np.uint64)[0] == QNAN | 5
