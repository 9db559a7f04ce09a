"""RDNA4 (gfx1200) semantics the conformance kernels reach only in passing, checked against
values worked by hand from the RDNA4 pseudocode (`sim.semantics.rdna4`'s docstring quotes
it) and IEEE 754: V_MIN_NUM/V_MAX_NUM's NaN and signed-zero rules, the SALU float
conversions and compares, S_FMAC_F32, and the SIMM16 layout of the combined waits."""

from __future__ import annotations

import struct

import numpy as np

from rgpu_fuzz.sim.bound.inflight import split_wait_counts
from rgpu_fuzz.sim.semantics.rdna4 import max_num, min_num
from rgpu_fuzz.sim.semantics.salu import SALU


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


F32 = np.float32
QNAN, SNAN = 0x7FC0_0000, 0x7FA0_0000


def _f(bits: int) -> np.ndarray:
    return np.array([bits], np.uint32).view(F32)


def test_min_max_num_nan_and_zero_rules() -> None:
    one, two = _f(_bits(1.0)), _f(_bits(2.0))
    assert min_num(_f(QNAN), one)[0] == 1.0            # a NaN operand gives the other
    assert max_num(two, _f(QNAN))[0] == 2.0
    # a signalling NaN next to a number gives the number, not a quieted NaN
    assert min_num(_f(SNAN), two)[0] == 2.0
    # two NaNs: S0 quieted (0x7fa00000 | quiet bit 22 = 0x7fe00000)
    assert min_num(_f(SNAN), _f(QNAN)).view(np.uint32)[0] == 0x7FE0_0000
    neg0, pos0 = _f(0x8000_0000), _f(0)
    assert min_num(pos0, neg0).view(np.uint32)[0] == 0x8000_0000   # -0 below +0
    assert max_num(neg0, pos0).view(np.uint32)[0] == 0
    assert min_num(one, two)[0] == 1.0 and max_num(one, two)[0] == 2.0


def test_salu_float_conversions_and_compares() -> None:
    # 2**32 - 1 rounds to 2**32 = 0x4f800000 in binary32 (nearest even)
    assert SALU["S_CVT_F32_U32"].fn(0xFFFF_FFFF) == (0x4F80_0000, None)
    assert SALU["S_CVT_F32_I32"].fn(0xFFFF_FFFF) == (_bits(-1.0), None)
    assert SALU["S_CVT_I32_F32"].fn(QNAN) == (0, None)             # NaN -> 0
    assert SALU["S_CVT_I32_F32"].fn(_bits(-3.75)) == (0xFFFF_FFFD, None)   # toward zero
    assert SALU["S_CVT_U32_F32"].fn(_bits(-1.0)) == (0, None)      # saturates at 0
    assert SALU["S_CVT_U32_F32"].fn(_bits(1e10)) == (0xFFFF_FFFF, None)
    assert SALU["S_CMP_LT_F32"].fn(QNAN, _bits(1.0)) == (None, 0)  # ordered: false on NaN
    assert SALU["S_CMP_NGE_F32"].fn(QNAN, _bits(1.0)) == (None, 1)  # unordered: true
    assert SALU["S_CMP_LG_F32"].fn(_bits(1.0), _bits(2.0)) == (None, 1)
    assert SALU["S_FMAC_F32"].fn(_bits(2.0), _bits(3.0), _bits(1.0)) == (_bits(7.0), None)
    assert SALU["S_MAX_NUM_F32"].fn(QNAN, _bits(-5.0)) == (_bits(-5.0), None)
    assert SALU["S_TRUNC_F32"].fn(_bits(-2.5)) == (_bits(-2.0), None)
    assert SALU["S_RNDNE_F32"].fn(_bits(2.5)) == (_bits(2.0), None)    # ties to even
    assert SALU["S_CVT_F16_F32"].fn(_bits(1.0)) == (0x3C00, None)
    assert SALU["S_CVT_HI_F32_F16"].fn(0xC000_0000) == (_bits(-2.0), None)
    assert SALU["S_ADD_NC_U64"].fn(2**64 - 1, 2) == (1, None)          # modulo 2**64


def test_combined_wait_layout() -> None:
    # s_wait_loadcnt_dscnt: LOADcnt in SIMM16[13:8], DScnt in [5:0]; LLVM's gfx1200 code
    # waits `s_wait_loadcnt_dscnt 0x301` for "3 loads, 1 LDS op" outstanding
    assert split_wait_counts("S_WAIT_LOADCNT_DSCNT", 0x0301) == (3, 1, None)
    assert split_wait_counts("S_WAIT_STORECNT_DSCNT", 0x0102) == (None, 2, None)
    assert split_wait_counts("S_WAIT_KMCNT", 0) == (None, None, 0)
    assert split_wait_counts("S_WAIT_LOADCNT", 5) == (5, None, None)
