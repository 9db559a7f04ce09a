"""Float VALU semantics that take more than one numpy ufunc — V_LDEXP, V_FRACT, the
reciprocals, V_CMP_CLASS, the division helpers V_DIV_SCALE and V_DIV_FIXUP, AMD's min, max
and med3 with their NaN rules — as the functions `valu.VALU`'s rows call (CDNA3 ISA
pseudocode; IEEE 754).

They run once per wave-instruction, thousands of times in the hot loops of LLVM's frem and
fdiv expansions, so each one that has special cases first tests, on the exponent fields or
with one `isnan`, whether any lane needs one; where none does, the plain result is all that
is computed. Where some lane does (lanes outside EXEC often hold NaNs and integers), the
pseudocode's if-chain is one gather over all lanes (`_first`), and NaN quieting runs only
when a NaN is present. The values are the same either way: NaN payloads, signed zeros,
subnormals.

Floating-point exceptions: the simulator runs every step under `np.seterr(all="ignore")`
(`engine.simulate`), so these functions enter no `np.errstate` of their own (~1 µs a call);
a caller outside the simulator that wants no warnings sets one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rgpu_fuzz.sim.semantics import fp

U32 = np.uint32
U64 = np.uint64
I32 = np.int32
F32 = np.float32
F64 = np.float64

_F16_TINY = np.float16(np.finfo(np.float16).tiny)
_BELOW_ONE = {F32: np.nextafter(F32(1), F32(0)), F64: np.nextafter(F64(1), F64(0))}


def _exp_field(x: np.ndarray) -> np.ndarray:
    """The biased exponent field of each lane: 0 for zeros and subnormals, 255 /
    2047 for infinities and NaNs."""
    if x.dtype == F32:
        return (x.view(I32) >> 23) & 0xFF
    return (x.view(np.int64) >> 52) & 0x7FF


def _lanes(*xs: Any) -> Any:
    """The operands over one shape, as `np.broadcast_arrays(np.atleast_1d(...))` gives them;
    per-lane operands of one shape (nearly every call) as they are (~2 us less)."""
    first = xs[0]
    if type(first) is np.ndarray and first.ndim == 1 and \
            all(type(x) is np.ndarray and x.shape == first.shape for x in xs[1:]):
        return xs
    return np.broadcast_arrays(*(np.atleast_1d(x) for x in xs))


def fract(x: Any) -> Any:
    """V_FRACT: x - floor(x), at most the largest float below 1; ±inf gives +qNaN."""
    r = np.minimum(x - np.floor(x), _BELOW_ONE[x.dtype.type])
    inf = np.isinf(x)
    if inf.any():
        r = np.where(inf, x.dtype.type(np.nan), r)
    return r


def rsq(x: Any) -> Any:
    return (1.0 / np.sqrt(np.asarray(x, F64))).astype(x.dtype)


def recip(x: Any) -> Any:
    return np.divide(x.dtype.type(1), x)


def ldexp(x: Any, e: Any) -> Any:
    """V_LDEXP: x * 2**e with one rounding (C `ldexp` is exact or correctly rounded; it
    overflows to ±inf and underflows through the subnormals to ±0 for any int exponent, so
    the i32 operand needs no clamping)."""
    return np.ldexp(x, e)


def frexp_exp(x: Any) -> Any:
    return np.frexp(x)[1].astype(I32, copy=False)


def frexp_mant(x: Any) -> Any:
    return np.frexp(x)[0].astype(x.dtype, copy=False)


def cmp_class(x: Any, mask: Any) -> np.ndarray:
    """V_CMP_CLASS_F16/F32/F64: bit i of S1 selects class i (0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
    4 -subnormal, 5 -0, 6 +0, 7 +subnormal, 8 +normal, 9 +inf). A lane's class number is
    counted from its magnitude: 6 + (|x| > 0) + (|x| >= the smallest normal) + (|x| = inf)
    for a positive sign, the mirror 5 - (that count) for a negative one; a NaN lane (rare)
    is 0 or 1 by its quiet bit, the fraction's top bit."""
    x, mask = _lanes(x, np.asarray(mask, U32))
    tiny: Any
    ubits: Any
    if x.dtype == F32:
        tiny, ubits, quiet_at = fp.F32_TINY, U32, 22
    elif x.dtype == F64:
        tiny, ubits, quiet_at = fp.F64_TINY, U64, 51
    else:
        tiny, ubits, quiet_at = _F16_TINY, np.uint16, 9
    mag = np.abs(x)
    count = (mag > 0).view(np.int8) + (mag >= tiny).view(np.int8) + \
        (mag == np.inf).view(np.int8)
    neg = np.signbit(x).view(np.int8)
    cls = 6 + count - neg * (1 + 2 * count)
    nan = x != x
    if nan.any():
        quiet = ((x.view(ubits) >> quiet_at) & 1).astype(np.int8)
        cls = np.where(nan, quiet, cls)
    return ((mask >> cls) & 1) == 1


def div_fixup(q: Any, d: Any, n: Any) -> np.ndarray:
    """V_DIV_FIXUP_F32/F64 (pseudocode): the special cases of n / d, else q with the sign
    of the quotient. The published pseudocode's overflow test reads `exponent(S1) == 255`,
    which every earlier branch has already excluded (S1 infinite or NaN); it is read here as
    a test of the quotient S0, the only reading under which an overflowing quotient (which
    the V_DIV_SCALE range cannot always avoid) gives the IEEE result, ±inf.

    Where n and d are finite, nonzero and normal, q is finite and not NaN, and the exponent
    gap is above the underflow bound, no special case applies: the result is q with the sign
    of d * n (a product of nonzero finite numbers has the XOR of their signs even where it
    rounds to 0 or inf)."""
    q, d, n = _lanes(q, d, n)
    emax = 255 if q.dtype == F32 else 2047
    under = -150 if q.dtype == F32 else -1075
    eq, ed, en = _exp_field(q), _exp_field(d), _exp_field(n)
    if (np.minimum(ed, en) >= 1).all() and (np.maximum(np.maximum(ed, en), eq) < emax).all() \
            and (en - ed >= under).all():
        return np.copysign(q, d * n)
    return _div_fixup_cases(q, d, n, en - ed < under, eq == emax)


def _div_fixup_cases(q: np.ndarray, d: np.ndarray, n: np.ndarray, underflow: np.ndarray,
                     overflow: np.ndarray) -> np.ndarray:
    """The pseudocode's cases, each lane taking the first that holds (the pseudocode's
    if-chain; `_first`; neighbouring cases with the same result as one): NaN numerator, NaN
    denominator (quieted), 0/0 or inf/inf (NaN), x/0 or inf/x (signed inf), x/inf, 0/x or
    an exponent gap below the underflow bound (`underflow`: signed zero), an overflowed
    quotient (`overflow`: signed inf); else q with the quotient's sign (there d * n is a
    nonzero finite product: its sign is the XOR)."""
    t = q.dtype.type
    one = np.where(np.signbit(d) ^ np.signbit(n), t(-1.0), t(1.0))
    inf, zero = one * t(np.inf), one * t(0.0)
    nan_n, nan_d = np.isnan(n), np.isnan(d)
    inf_n, inf_d = np.isinf(n), np.isinf(d)
    zero_n, zero_d = n == 0, d == 0
    conds = [nan_n, nan_d, (zero_d & zero_n) | (inf_d & inf_n), zero_d | inf_n,
             inf_d | zero_n | underflow, overflow]
    values = [fp.quiet(n) if nan_n.any() else q, fp.quiet(d) if nan_d.any() else q,
              np.full_like(q, np.nan), inf, zero, inf]
    return _first(conds, values, np.copysign(q, d * n))[0]


def _first(conds: list[np.ndarray], values: list[np.ndarray],
           default: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per lane, the value of the first condition that holds there, else `default` (an
    if-chain over whole waves: one argmax and one gather instead of a where per case), and
    the number of that case (len(conds) for the default)."""
    n = default.shape[0]
    case = np.array([*conds, np.ones(n, bool)]).argmax(axis=0)
    return np.array([*values, default])[case, np.arange(n)], case


_SCALE_RANGE = {F32: (252, 255, 24, 96, 64), F64: (2044, 2047, 53, 768, 128)}
"""Per type: the largest denominator exponent field that is not "huge" (2 * bias - 2), the
all-ones exponent, `tiny_n` (a numerator exponent field at or below it is scaled up), the
exponent gap `big` that sets VCC either way, and the scale (V_DIV_SCALE's 2**64 / 2**128)."""


def div_scale(s0: Any, s1: Any, s2: Any) -> tuple[np.ndarray, np.ndarray]:
    """V_DIV_SCALE_F32/F64: (result, vcc lanes), S1 the denominator, S2 the numerator and S0
    one of them.

    Not the published pseudocode, which for F32 tests `1.0 / 64'F(S1) == DENORM.f64` (never
    true: a huge binary32 denominator is then left unscaled, its reciprocal is subnormal and
    LLVM's f32 division macro returns a quotient 1 ulp off, e.g. -2**24 / FLT_MAX) and tests
    whether the quotient is subnormal. These are the rules of AMD's own emulator, rocjitsu
    (ROCm/rocm-systems PR #11613, `shared/division.h`: "The finite-input rules and source-2
    FMAS selector were checked on physical gfx1100/gfx1201. The public pseudocode's DENORM
    predicates and fixed FMAS factors do not reproduce these instructions or LLVM division
    macros"), on encoded exponent fields `de` (|S1|) and `ne` (|S2|), first match:
    - ne - de >= big (96 / 768): VCC; S0 scaled up when it is the denominator;
    - de == 0 (a subnormal or zero denominator): scaled up;
    - de >= 2 * bias - 1 (a huge denominator): scaled down, except the numerator when
      ne - de <= -big, which then sets VCC;
    - ne - de <= -big: VCC; S0 scaled up when it is the numerator;
    - ne <= 24 / 53 (a tiny numerator): scaled up.
    A zero S1 or S2 gives the default NaN (negative, quiet) with that VCC; a NaN S0 comes
    back quieted, an infinite one as it is. With these rules the division macros of
    `tests/sim/test_fdiv_macro.py` return IEEE's correctly rounded quotient for every case
    there (the published pseudocode: 12 of 3,008 f32 cases 1 ulp off)."""
    s0, s1, s2 = _lanes(s0, s1, s2)
    e1max, emax, tiny_n, big, _ = _SCALE_RANGE[s0.dtype.type]
    e1, e2 = _exp_field(s1), _exp_field(s2)
    gap = e2 - e1
    if (e1 >= 1).all() and (e1 <= e1max).all() and (e2 > tiny_n).all() and \
            (e2 < emax).all() and (gap < big).all() and (gap > -big).all():
        return s0.copy(), np.zeros(s0.shape, bool)
    return _div_scale_cases(s0, s1, s2, e1, gap)


def _div_scale_cases(s0: np.ndarray, s1: np.ndarray, s2: np.ndarray, e1: np.ndarray,
                     gap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`div_scale`'s rules over whole waves (`_first`: each lane takes the first that
    holds), as a power-of-two adjustment and a VCC bit per lane."""
    e1max, _, tiny_n, big, scale = _SCALE_RANGE[s0.dtype.type]
    ubits = np.uint32 if s0.dtype == F32 else np.uint64
    den = s0.view(ubits) == s1.view(ubits)
    e2 = gap + e1
    huge_tiny = gap <= -big
    zero = np.zeros(s0.shape, np.int64)
    conds = [gap >= big, e1 == 0, e1 > e1max, gap <= -big, e2 <= tiny_n]
    adjust = [np.where(den, scale, 0), zero + scale,
              np.where(huge_tiny & ~den, 0, -scale), np.where(den, 0, scale), zero + scale]
    vcc = [np.ones(s0.shape, bool), np.zeros(s0.shape, bool), huge_tiny,
           np.ones(s0.shape, bool), np.zeros(s0.shape, bool)]
    adj, case = _first(conds, adjust, zero)
    flag = np.array([*vcc, np.zeros(s0.shape, bool)])[case, np.arange(s0.shape[0])]
    d = ldexp(s0, adj.astype(np.int32))
    nan = np.isnan(s0)
    if nan.any():
        d = np.where(nan, fp.quiet(s0), d)
    inf = np.isinf(s0)
    if inf.any():
        d = np.where(inf, s0, d)
    undefined = (s1 == 0) | (s2 == 0)
    if undefined.any():
        d = np.where(undefined, -s0.dtype.type(np.nan), d)
    return d.astype(s0.dtype, copy=False), flag


def div_fmas(a: Any, b: Any, c: Any, vcc: Any) -> Any:
    """V_DIV_FMAS: fma(S0, S1, S2), scaled when VCC is set, with one rounding.

    AMD's pseudocode gives a fixed 2**32 (F32) / 2**64 (F64). That cannot undo what
    V_DIV_SCALE did, which sets VCC both when it scaled the numerator up (a tiny quotient)
    and when it scaled the denominator up (a huge one), by 2**64 (F32) / 2**128 (F64). The
    scale applied here undoes V_DIV_SCALE's, selected by the addend S2's exponent field:
    up when it is above the bias (|S2| >= 2), down otherwise — rocjitsu's "source-2 FMAS
    selector", checked on gfx1100/gfx1201 hardware (see `div_scale`); the LLVM lowering of
    fdiv (SIISelLowering LowerFDIV32/64) is correct only with such a reading."""
    is32 = a.dtype == F32
    k = 64 if is32 else 128
    exp = fp.exponent32 if is32 else fp.exponent64
    bias = 127 if is32 else 1023
    scale = np.where(vcc, np.where(exp(np.atleast_1d(c)) > bias, k, -k), 0)
    if is32:
        return fp.fma32(a, b, c, scale)
    return fp.fma64(a, b, c, scale)


def f64_to_f32(x: Any) -> Any:
    return np.asarray(x, F64).astype(F32)


def _min_ordered(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min without NaNs: the smaller, -0 below +0."""
    return np.where((a < b) | ((a == b) & np.signbit(a)), a, b)


def _max_ordered(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a > b) | ((a == b) & ~np.signbit(a)), a, b)


def _nan_rules(r: np.ndarray, a: np.ndarray, b: np.ndarray, ieee: bool) -> np.ndarray:
    """AMD's NaN rules for V_MIN/V_MAX (ISA pseudocode) over `r`, the ordered result: in
    IEEE mode a signalling NaN operand gives its quieted self (S0's first), otherwise a NaN
    operand gives the other operand. Lanes without a NaN keep `r`."""
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not (nan_a.any() or nan_b.any()):
        return r
    r = np.where(nan_b, a, r)
    r = np.where(nan_a, b, r)
    if ieee:
        snan_b = nan_b & ~_quiet_bit(b)
        if snan_b.any():
            r = np.where(snan_b, fp.quiet(b), r)
        snan_a = nan_a & ~_quiet_bit(a)
        if snan_a.any():
            r = np.where(snan_a, fp.quiet(a), r)
    return r


def _quiet_bit(x: np.ndarray) -> np.ndarray:
    if x.dtype == F32:
        return (x.view(U32) & U32(0x0040_0000)) != 0
    return (x.view(U64) & U64(0x0008_0000_0000_0000)) != 0


def fmin(ieee: bool, a: Any, b: Any) -> np.ndarray:
    """V_MIN_F32/F64: the smaller operand, -0 below +0, NaNs by `_nan_rules`."""
    a, b = _lanes(a, b)
    return _nan_rules(_min_ordered(a, b), a, b, ieee)


def fmax(ieee: bool, a: Any, b: Any) -> np.ndarray:
    """V_MAX_F32/F64: the larger operand, +0 above -0, NaNs by `_nan_rules`."""
    a, b = _lanes(a, b)
    return _nan_rules(_max_ordered(a, b), a, b, ieee)


def fmin3(ieee: bool, a: Any, b: Any, c: Any) -> np.ndarray:
    return fmin(ieee, fmin(ieee, a, b), c)


def fmax3(ieee: bool, a: Any, b: Any, c: Any) -> np.ndarray:
    return fmax(ieee, fmax(ieee, a, b), c)


def fmed3(ieee: bool, a: Any, b: Any, c: Any) -> np.ndarray:
    """V_MED3_F32: max(min(a, b), min(max(a, b), c)) with V_MIN/V_MAX's rules."""
    return fmax(ieee, fmin(ieee, a, b), fmin(ieee, fmax(ieee, a, b), c))
