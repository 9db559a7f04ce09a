"""RDNA4 (gfx1200) scalar binary16 float operations: the SOP1/SOP2/SOPC `_F16` rows and the
VOP3 `V_S_*_F16` transcendentals with an SGPR result, which LLVM 22 selects for uniform
`half` arithmetic.

Semantics from AMD's RDNA4 ISA pseudocode as tinygrad 0.14's
`autogen/amd/rdna4/str_pcode.py` carries it from the ISA XML:

* S_ADD_F16 / S_SUB_F16 / S_MUL_F16 `D0.f16 = S0.f16 + S1.f16` (..., `*`), S_FMAC_F16
  `D0.f16 = fma(S0.f16, S1.f16, D0.f16)`: IEEE 754 binary16 arithmetic, rounded once to
  nearest even. The functions are the VALU rows' (`semantics.f16.F16_OPS`: binary32 then
  binary16 is one correct rounding for + - * and sqrt since 24 >= 2*11 + 2; the fma is
  exact in binary64 before its one rounding), so the scalar and vector forms cannot differ.
* S_CEIL_F16 / S_FLOOR_F16 / S_TRUNC_F16 / S_RNDNE_F16: the pseudocode's trunc-and-adjust
  (`D0.f16 = trunc(S0.f16); if S0.f16 > 0 && S0.f16 != D0.f16 then D0.f16 += 1.0`, ...) is
  IEEE roundToIntegral toward +inf, -inf, zero and nearest-even, as numpy's ceil, floor,
  trunc and rint compute it on binary16.
* S_MIN_NUM_F16 / S_MAX_NUM_F16 / S_MINIMUM_F16 / S_MAXIMUM_F16: the V_MIN_NUM/V_MINIMUM
  pseudocode on scalar operands (`semantics.rdna4.min_num`, ...).
* S_CMP_*_F16 `SCC = S0.f16 < S1.f16` (...): as S_CMP_*_F32, on binary16 values; a NaN
  compares unordered.
* V_S_SQRT/RCP/RSQ/EXP/LOG_F16 `D0.f16 = sqrt(S0.f16); D0[31 : 16] = 16'0x0`: the VALU rows'
  functions on one value.

Operands: every source is read as 16 bits (`S0.f16`: bits 15:0 of the SGPR, and a constant
at binary16 -- the inline constant `1.0` is 0x3c00), so only the low half need be defined.
Results: bits 15:0 hold the binary16 value and bits 31:16 are written 0. The V_S_ forms say
so (`D0[31 : 16] = 16'0x0`); the SOP forms only write `D0.f16`, and the zeroed high half is
this simulator's reading of that, as for S_CVT_F16_F32 (`semantics.rdna4`): LLVM reads only
bits 15:0 of a uniform `half` in an SGPR, so no compiled kernel observes the difference.

f16 denormals: as for the VALU rows, flushing is not modelled (`bound.salu` refuses these
rows where FLOAT_DENORM_MODE_16_64 flushes); the default mode keeps them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.semantics.f16 import F16_OPS
from rgpu_fuzz.sim.semantics.rdna4 import CMPS, max_num, maximum, min_num, minimum

__all__ = ["RDNA4_SALU16"]

Row = tuple[str, int, tuple[int, ...], Callable[..., Any]]


def _h(bits: int) -> np.ndarray:
    """Bits 15:0 of a source as a one-element binary16 array."""
    return np.array([bits & 0xFFFF], np.uint16).view(np.float16)


def _bits(x: Any) -> int:
    """A binary16 result as D0: bits 15:0, the high half 0."""
    return int(np.asarray(x, np.float16).reshape(-1).view(np.uint16)[0])


def _apply(fn: Callable[..., Any], *srcs: int) -> tuple[int, None]:
    with np.errstate(all="ignore"):
        return _bits(fn(*(_h(s) for s in srcs))), None


def _lift(fn: Callable[..., Any]) -> Callable[..., tuple[int, None]]:
    return lambda *srcs: _apply(fn, *srcs)


def _cmp(test: Callable[[np.float16, np.float16], Any]) -> Callable[..., tuple[None, int]]:
    def cmp(a: int, b: int) -> tuple[None, int]:
        with np.errstate(all="ignore"):
            return None, int(bool(test(_h(a)[0], _h(b)[0])))
    return cmp


def _rows() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for op in ("ADD", "SUB", "MUL"):
        rows[f"S_{op}_F16"] = ("plain", 32, (16, 16), _lift(F16_OPS[f"V_{op}_F16"][3]))
    for name, fn in (("MIN_NUM", min_num), ("MAX_NUM", max_num), ("MINIMUM", minimum),
                     ("MAXIMUM", maximum)):
        rows[f"S_{name}_F16"] = ("plain", 32, (16, 16), _lift(fn))
    rows["S_FMAC_F16"] = ("accumulate", 32, (16, 16, 16), _lift(F16_OPS["V_FMA_F16"][3]))
    for op in ("CEIL", "FLOOR", "TRUNC", "RNDNE"):
        rows[f"S_{op}_F16"] = ("plain", 32, (16,), _lift(F16_OPS[f"V_{op}_F16"][3]))
    for op in ("SQRT", "RCP", "RSQ", "EXP", "LOG"):
        rows[f"V_S_{op}_F16"] = ("plain", 32, (16,), _lift(F16_OPS[f"V_{op}_F16"][3]))
    for cond, test in CMPS.items():
        rows[f"S_CMP_{cond}_F16"] = ("cmp", 0, (16, 16), _cmp(test))
    return rows


RDNA4_SALU16: dict[str, Row] = _rows()
"""SALU rows (shape, result bits, source bits, fn returning (result, SCC or None))."""
