"""RDNA4 (gfx1200) operations the other tables have no counterpart of, and RDNA4's names of
operations they have.

Semantics from AMD's RDNA4 ISA pseudocode as tinygrad 0.14's
`autogen/amd/rdna4/str_pcode.py` carries it from the ISA XML:

* V_MIN_NUM_F32 / V_MAX_NUM_F32 (and F64, F16): IEEE 754-2019 minimumNumber /
  maximumNumber without a mode bit: "if isNAN(S0) && isNAN(S1): D = cvtToQuietNAN(S0)
  elsif isNAN(S0): D = S1 elsif isNAN(S1): D = S0", otherwise the ordered result with
  -0 below +0. A signalling NaN next to a number gives the number (it sets TRAPSTS.INVALID,
  which nothing here reads); only two NaNs give a (quieted) NaN. GFX12 has no IEEE mode:
  unlike V_MIN_F32 before it, nothing depends on one.
* V_MIN3_NUM / V_MAX3_NUM / V_MINMAX_NUM / V_MAXMIN_NUM: the two-operand forms composed as
  their pseudocode composes them (`v_min_num(v_min_num(S0, S1), S2)`,
  `v_min_num(v_max_num(S0, S1), S2)`, ...).
* V_MINIMUM_* / V_MAXIMUM_* (F16, F32, F64) and their MINIMUM3 / MAXIMUM3 /
  MINIMUMMAXIMUM / MAXIMUMMINIMUM compositions: IEEE 754-2019 minimum / maximum, where a NaN
  wins: "if isSignalNAN(S0): D = cvtToQuietNAN(S0) elsif isSignalNAN(S1): D =
  cvtToQuietNAN(S1) elsif isQuietNAN(S0): D = S0 elsif isQuietNAN(S1): D = S1", otherwise
  the ordered result with -0 below +0. LLVM 22's GlobalISel selects V_MINIMUM_F64 on gfx1200
  for `f64::clamp`'s bounds check.
* S_ADD_NC_U64 / S_SUB_NC_U64 / S_MUL_U64: 64-bit scalar arithmetic, modulo 2**64, SCC
  unchanged ("D0.u64 = S0.u64 + S1.u64").

`ALIASES`: RDNA4's renames ("_CO" carries on SALU adds, V_MAD_CO_*) of operations the
tables implement under their CDNA names, with the same pseudocode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rgpu_fuzz.sim.semantics import fp
from rgpu_fuzz.sim.semantics import valu_fp as vf

__all__ = ["ALIASES", "CMPS", "RDNA4_OPS", "RDNA4_SALU", "max_num", "maximum", "min_num",
           "minimum"]

_QUIET = {np.dtype(np.float16): (np.uint16, 0x0200),
          np.dtype(np.float32): (np.uint32, 0x0040_0000),
          np.dtype(np.float64): (np.uint64, 0x0008_0000_0000_0000)}


def _quiet(x: np.ndarray) -> np.ndarray:
    ty, bit = _QUIET[x.dtype]
    return (x.view(ty) | ty(bit)).view(x.dtype)


def _num(ordered: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not (nan_a.any() or nan_b.any()):
        return ordered
    r = np.where(nan_b, a, ordered)
    r = np.where(nan_a, b, r)
    both = nan_a & nan_b
    return np.where(both, _quiet(a), r) if both.any() else r


def _smaller(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ordered smaller operand (-0 below +0), and the operands as arrays."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    return np.where((a < b) | ((a == b) & np.signbit(a)), a, b), a, b


def _larger(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ordered larger operand (+0 above -0), and the operands as arrays."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    return np.where((a > b) | ((a == b) & ~np.signbit(a)), a, b), a, b


def min_num(a: Any, b: Any) -> np.ndarray:
    """V_MIN_NUM_*: the smaller operand (-0 below +0); a NaN operand gives the other."""
    return _num(*_smaller(a, b))


def max_num(a: Any, b: Any) -> np.ndarray:
    """V_MAX_NUM_*: the larger operand (+0 above -0); a NaN operand gives the other."""
    return _num(*_larger(a, b))


def _signalling(x: np.ndarray) -> np.ndarray:
    ty, bit = _QUIET[x.dtype]
    return np.isnan(x) & ((x.view(ty) & ty(bit)) == 0)


def _nan_wins(ordered: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not (nan_a.any() or nan_b.any()):
        return ordered
    r = np.where(nan_b, b, ordered)                 # the pseudocode's order, last test first
    r = np.where(nan_a, a, r)
    r = np.where(_signalling(b), _quiet(b), r)
    return np.where(_signalling(a), _quiet(a), r)


def minimum(a: Any, b: Any) -> np.ndarray:
    """V_MINIMUM_*: the smaller operand (-0 below +0); a NaN operand wins, quieted."""
    return _nan_wins(*_smaller(a, b))


def maximum(a: Any, b: Any) -> np.ndarray:
    """V_MAXIMUM_*: the larger operand (+0 above -0); a NaN operand wins, quieted."""
    return _nan_wins(*_larger(a, b))


def _compositions(t: str, lo: Callable[..., Any], hi: Callable[..., Any],
                  names: tuple[str, str, str, str]
                  ) -> dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]]:
    """The three-operand rows of one min/max pair, as the pseudocode composes them:
    `lo(lo(S0, S1), S2)`, `hi(hi(S0, S1), S2)`, `hi(lo(S0, S1), S2)`, `lo(hi(S0, S1), S2)`,
    named `V_<name>_<T>` in that order."""
    fns = (lambda a, b, c: lo(lo(a, b), c), lambda a, b, c: hi(hi(a, b), c),
           lambda a, b, c: hi(lo(a, b), c), lambda a, b, c: lo(hi(a, b), c))
    return {f"V_{n}_{t.upper()}": ("plain", t, (t, t, t), fn)
            for n, fn in zip(names, fns, strict=True)}


def _rows() -> dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]]:
    rows: dict[str, tuple[str, str, tuple[str, ...], Callable[..., Any]]] = {}
    for t in ("f16", "f32", "f64"):
        rows[f"V_MIN_NUM_{t.upper()}"] = ("plain", t, (t, t), min_num)
        rows[f"V_MAX_NUM_{t.upper()}"] = ("plain", t, (t, t), max_num)
        rows[f"V_MINIMUM_{t.upper()}"] = ("plain", t, (t, t), minimum)
        rows[f"V_MAXIMUM_{t.upper()}"] = ("plain", t, (t, t), maximum)
    for t in ("f16", "f32"):
        rows.update(_compositions(t, min_num, max_num,
                                  ("MIN3_NUM", "MAX3_NUM", "MINMAX_NUM", "MAXMIN_NUM")))
        rows.update(_compositions(t, minimum, maximum,
                                  ("MINIMUM3", "MAXIMUM3", "MINIMUMMAXIMUM", "MAXIMUMMINIMUM")))
    return rows


RDNA4_OPS = _rows()
"""VALU rows, by AMD name; `valu` turns each into a `VOp`."""

_M64 = (1 << 64) - 1

def _f(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(np.float32)[0]


def _b(x: Any) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _f2i(x: np.float32, lo: int, hi: int) -> int:
    """The VALU conversion's saturation (RDNA4 ISA V_CVT_I32_F32: NaN gives 0)."""
    if np.isnan(x):
        return 0
    return int(min(max(float(x), lo), hi)) if np.isfinite(x) else (hi if x > 0 else lo)


CMPS: dict[str, Callable[[Any, Any], Any]] = {
    "LT": lambda x, y: x < y, "EQ": lambda x, y: x == y, "LE": lambda x, y: x <= y,
    "GT": lambda x, y: x > y, "LG": lambda x, y: x < y or x > y,
    "GE": lambda x, y: x >= y, "O": lambda x, y: not (np.isnan(x) or np.isnan(y)),
    "U": lambda x, y: bool(np.isnan(x) or np.isnan(y)),
    "NGE": lambda x, y: not x >= y, "NLG": lambda x, y: not (x < y or x > y),
    "NGT": lambda x, y: not x > y, "NLE": lambda x, y: not x <= y,
    "NEQ": lambda x, y: not x == y, "NLT": lambda x, y: not x < y}
"""SOPC S_CMP_<cond>_F32/_F16: `SCC = S0 <cond> S1` on the float values; the N forms
negate, so a NaN makes them true (pseudocode: "With NAN inputs this is not the same
operation as <")."""


def _salu_float() -> dict[str, tuple[str, int, tuple[int, ...], Callable[..., Any]]]:
    """RDNA4's SALU float operations LLVM 22 emits for uniform f32 arithmetic (RDNA4 ISA,
    SOP1/SOP2/SOPC: the VALU pseudocode on scalar operands, IEEE round-to-nearest-even;
    S_MIN_NUM/S_MAX_NUM as V_MIN_NUM/V_MAX_NUM; S_CMP_*_F32 set SCC as V_CMP_*_F32)."""
    M32 = 0xFFFF_FFFF
    two = {
        "S_ADD_F32": lambda x, y: x + y, "S_SUB_F32": lambda x, y: x - y,
        "S_MUL_F32": lambda x, y: x * y,
        "S_MIN_NUM_F32": lambda x, y: min_num(np.float32(x), np.float32(y))[()],
        "S_MAX_NUM_F32": lambda x, y: max_num(np.float32(x), np.float32(y))[()],
    }
    rows: dict[str, tuple[str, int, tuple[int, ...], Callable[..., Any]]] = {}
    for name, fn in two.items():
        rows[name] = ("plain", 32, (32, 32),
                      (lambda f: lambda a, b: (_b(_ieee(f, _f(a), _f(b))), None))(fn))
    rows["S_FMAC_F32"] = ("accumulate", 32, (32, 32, 32),
                          lambda a, b, d: (_b(_fma(_f(a), _f(b), _f(d))), None))
    # S_FMAAK_F32 `fma(S0.f32, S1.f32, SIMM32.f32)`, S_FMAMK_F32 `fma(S0.f32, SIMM32.f32,
    # S1.f32)`: the assembly lists the operands in the fma's order (`s_fmaak_f32 d, s0, s1,
    # k`; `s_fmamk_f32 d, s0, k, s1`), so both are one fma of the sources as listed
    for name in ("S_FMAAK_F32", "S_FMAMK_F32"):
        rows[name] = ("plain", 32, (32, 32, 32),
                      lambda a, b, c: (_b(_fma(_f(a), _f(b), _f(c))), None))
    # VOP3 transcendentals with a scalar result (RDNA4 ISA V_S_RCP_F32 ...: the VALU
    # operation on one value, written to an SGPR): the VALU rows' functions on one lane
    for name, f in (("RCP", vf.recip), ("RSQ", vf.rsq), ("SQRT", np.sqrt),
                    ("EXP", np.exp2), ("LOG", np.log2)):
        rows[f"V_S_{name}_F32"] = ("plain", 32, (32,), (lambda g: lambda a: (
            _b(_one(g, _f(a))), None))(f))
    for name, g in (("CEIL", np.ceil), ("FLOOR", np.floor), ("TRUNC", np.trunc),
                    ("RNDNE", np.rint)):
        rows[f"S_{name}_F32"] = ("plain", 32, (32,), (lambda h: lambda a: (
            _b(_one(h, _f(a))), None))(g))
    # `f16_to_f32(S0.f16)`: a 16-bit source (an inline constant reads as binary16)
    rows["S_CVT_F32_F16"] = ("plain", 32, (16,), lambda a: (_b(np.float32(_h(a))), None))
    rows["S_CVT_HI_F32_F16"] = ("plain", 32, (32,),
                                lambda a: (_b(np.float32(_h(a >> 16))), None))
    rows["S_CVT_F16_F32"] = ("plain", 32, (32,), lambda a: (_hb(_f(a)), None))
    rows["S_CVT_F32_U32"] = ("plain", 32, (32,), lambda a: (_b(np.float32(a & M32)), None))
    rows["S_CVT_F32_I32"] = ("plain", 32, (32,),
                             lambda a: (_b(np.float32(a - ((a >> 31) << 32))), None))
    rows["S_CVT_U32_F32"] = ("plain", 32, (32,), lambda a: (_f2i(_f(a), 0, M32), None))
    rows["S_CVT_I32_F32"] = ("plain", 32, (32,),
                             lambda a: (_f2i(_f(a), -2**31, 2**31 - 1) & M32, None))
    for cond, test in CMPS.items():
        rows[f"S_CMP_{cond}_F32"] = ("cmp", 0, (32, 32),
                                     (lambda t: lambda a, b: (None, int(bool(t(_f(a), _f(b))))))(
                                         test))
    return rows


def _h(bits: int) -> np.float16:
    return np.array([bits & 0xFFFF], np.uint16).view(np.float16)[0]


def _hb(x: np.float32) -> int:
    """An f32 to f16 bits, round to nearest even (S_CVT_F16_F32: D0[15:0]; the high half is
    written 0, as the pseudocode writes `D0.f16`)."""
    with np.errstate(all="ignore"):
        return int(np.array([x], np.float32).astype(np.float16).view(np.uint16)[0])


def _one(fn: Callable[..., Any], x: np.float32) -> np.float32:
    with np.errstate(all="ignore"):
        return np.float32(fn(np.array([x], np.float32))[0])


def _fma(x: np.float32, y: np.float32, z: np.float32) -> np.float32:
    """Correctly rounded binary32 fma (`sim.semantics.fp.fma32`, as V_FMA_F32)."""
    return np.float32(fp.fma32(np.array([x]), np.array([y]), np.array([z]))[0])


def _ieee(fn: Callable[..., Any], x: np.float32, y: np.float32) -> np.float32:
    with np.errstate(all="ignore"):
        return np.float32(fn(x, y))


RDNA4_SALU: dict[str, tuple[str, int, tuple[int, ...], Callable[..., Any]]] = {
    "S_ADD_NC_U64": ("plain", 64, (64, 64), lambda a, b: ((a + b) & _M64, None)),
    "S_SUB_NC_U64": ("plain", 64, (64, 64), lambda a, b: ((a - b) & _M64, None)),
    "S_MUL_U64": ("plain", 64, (64, 64), lambda a, b: ((a * b) & _M64, None)),
    **_salu_float(),
}
"""SALU rows (shape, result bits, source bits, fn returning (result, SCC or None))."""

ALIASES: dict[str, str] = {
    "S_ADD_CO_U32": "S_ADD_U32", "S_SUB_CO_U32": "S_SUB_U32",
    "S_ADD_CO_I32": "S_ADD_I32", "S_SUB_CO_I32": "S_SUB_I32",
    "S_ADD_CO_CI_U32": "S_ADDC_U32", "S_SUB_CO_CI_U32": "S_SUBB_U32",
    "S_ADDK_CO_I32": "S_ADDK_I32",
    "V_MAD_CO_U64_U32": "V_MAD_U64_U32", "V_MAD_CO_I64_I32": "V_MAD_I64_I32",
    "V_DUAL_MIN_NUM_F32": "V_MIN_NUM_F32", "V_DUAL_MAX_NUM_F32": "V_MAX_NUM_F32",
}
"""RDNA4 names of operations implemented under another name (RDNA4 ISA guide, opcode
renames: same pseudocode)."""
