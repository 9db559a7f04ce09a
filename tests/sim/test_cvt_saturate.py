"""Float → integer conversions saturate (CDNA3 ISA "V_CVT_U32_F32", "V_CVT_I32_F32",
"V_CVT_I32_F64", "V_CVT_U32_F64", "V_CVT_U16_F16", "V_CVT_I16_F16": truncate toward zero;
out-of-range values, infinities included, give the nearest representable integer; NaN
gives 0). Expected values are hand-derived from that text, not from the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from rgpu_fuzz.sim.semantics.valu import VALU

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(("opcode", "dtype", "inputs", "expected"), [
    ("V_CVT_U32_F32", np.float32,
     [0.0, -0.0, 1.9, -0.5, -1.0, 4294967296.0, INF, -INF, NAN, 16777216.0],
     [0, 0, 1, 0, 0, 0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0, 16777216]),
    ("V_CVT_I32_F32", np.float32,
     [2.5, -2.5, 2147483648.0, -2147483904.0, INF, -INF, NAN, -0.0],
     [2, -2, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 0]),
    ("V_CVT_I32_F64", np.float64,
     [2147483647.9, -2147483648.9, 1e300, -1e300, NAN, -7.99],
     [2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, -7]),
    ("V_CVT_U32_F64", np.float64,
     [4294967295.5, 4294967296.0, -0.9, NAN, 123.999],
     [0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0, 123]),
    ("V_CVT_U16_F16", np.float16, [65504.0, -1.0, INF, NAN, 7.5], [65504, 0, 65535, 0, 7]),
    ("V_CVT_I16_F16", np.float16, [-65504.0, 65504.0, -INF, NAN, -3.5],
     [-32768, 32767, -32768, 0, -3]),
])
def test_float_to_int_saturates(opcode: str, dtype: type, inputs: list[float],
                                expected: list[int]) -> None:
    got = np.asarray(VALU[opcode].fn(np.array(inputs, dtype)))
    assert got.tolist() == expected


def test_scalar_source_converts_too() -> None:
    """A uniform source (an SGPR or a constant) arrives as a numpy scalar."""
    assert int(VALU["V_CVT_U32_F32"].fn(np.float32(-INF))) == 0
    assert int(VALU["V_CVT_I32_F32"].fn(np.float32(NAN))) == 0
