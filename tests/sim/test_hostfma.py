"""`sim.hostfma` (the host CPU's FMA instruction through an llvmlite-compiled loop) against
two independent sources: exact rational arithmetic (`Fraction`, which Python rounds
correctly, IEEE 754 §6.3's sign for an exact zero sum) on hand-picked hard cases, and
`model.fma` (error-free transformations and integer significands, no LLVM, no hardware
FMA) lane for lane on random bit patterns. NaN lanes are also judged without `model.fma`:
which lanes are NaN from IEEE 754 §7.2 by hand, and their bits by LLVM LangRef's NaN rule
(the rule Rust RFC 3514 adopts), worked here from the operand bits. The existing
`test_fp_fma64` cases reach the host path through `fp.fma64` as well."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.model import fma as model
from rgpu_fuzz.sim.semantics import fp, hostfma


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint64 if x.dtype == np.float64 else np.uint32)


def _rational(a: float, b: float, c: float, dtype: Any) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        negative = math.copysign(1.0, a) * math.copysign(1.0, b) < 0 and math.copysign(1.0, c) < 0
        return -0.0 if negative else 0.0
    if dtype == np.float64:
        return float(exact)
    # binary32: round the rational once, to 24 bits or the 2**-149 grid (IEEE 754 §4.3.1)
    sign = -1 if exact < 0 else 1
    mag = abs(exact)
    e = math.floor(math.log2(mag.numerator) - math.log2(mag.denominator))
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    ulp = Fraction(2) ** max(e - 23, -149)
    q, rest = divmod(mag, ulp)
    if rest > ulp / 2 or (rest == ulp / 2 and q % 2):
        q += 1
    return sign * float(q * ulp)


def test_the_host_path_is_in_use() -> None:
    """On x86-64 with llvmlite the loop builds and passes its probes; if it did not, every
    other test here would silently test `model.fma` instead."""
    assert hostfma.available()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hard_cases_against_rationals(dtype: Any) -> None:
    info = np.finfo(dtype)
    eps, tiny = float(info.eps), float(info.tiny)
    cases = [
        (1.0 + eps, 1.0 - eps, -1.0),           # the product's rounding error alone: -eps**2
        (1.0 + eps, 1.0 + eps, -(1.0 + 2 * eps)),  # eps**2 exactly
        (tiny, 0.5, 0.0),                       # a subnormal result (gradual underflow)
        (tiny, 0.25 + eps, -tiny / 8),          # subnormal, rounded on the 2**-1074/-149 grid
        (3.0, 1 / 3, -1.0),                     # 3 * RN(1/3) - 1: a tiny nonzero residue
        (1.5, 1.0 + eps, eps / 4),              # a tie in the unfused sum, broken by c
        (-0.0, 5.0, -0.0),                      # -0 + -0 = -0 (IEEE 754 §6.3)
        (2.0, -1.0, 2.0),                       # an exact zero sum of nonzero terms: +0
        (float(info.max), 2.0, -float(info.max)),  # the product overflows, the sum does not
    ]
    a, b, c = (np.array(col, dtype) for col in zip(*cases, strict=True))
    got = hostfma.fma64(a, b, c) if dtype == np.float64 else hostfma.fma32(a, b, c)
    assert got.dtype == dtype
    for x, y, z, g in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist(), strict=True):
        want = _rational(x, y, z, dtype)
        assert g == want and math.copysign(1, g) == math.copysign(1, want), (x, y, z, g, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_bit_patterns_match_model_fma(dtype: Any) -> None:
    rng = np.random.default_rng(20261201)
    width = np.uint64 if dtype == np.float64 else np.uint32
    host = hostfma.fma64 if dtype == np.float64 else hostfma.fma32
    exact = model.fma64 if dtype == np.float64 else model.fma32
    for _ in range(150):
        a, b, c = (rng.integers(0, np.iinfo(width).max, 64, dtype=np.uint64, endpoint=True)
                   .astype(width).view(dtype) for _ in range(3))
        got, want = host(a, b, c), np.asarray(exact(a, b, c), dtype)
        assert np.array_equal(_bits(got), _bits(want)), (a, b, c)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_non_finite_lanes_match_model_fma(dtype: Any) -> None:
    """Operands drawn from NaNs (quiet and signalling, both signs, other payloads),
    infinities, zeros and ones: every lane's bits equal `model.fma`'s, the lanes with
    finite results included (a wave's lanes outside EXEC often hold such values)."""
    rng = np.random.default_rng(7)
    width = np.uint64 if dtype == np.float64 else np.uint32
    if dtype == np.float64:
        nans = [0x7FF8_0000_0000_0000, 0xFFF8_0000_0000_0001, 0x7FF0_0000_0000_0001,
                0x7FF4_0000_0000_1234]
    else:
        nans = [0x7FC0_0000, 0xFFC0_0001, 0x7F80_0001, 0x7FA0_1234]
    pool = np.concatenate([np.array(nans, width).view(dtype),
                           np.array([np.inf, -np.inf, 0.0, -0.0, 1.0, -2.0, 3.5], dtype)])
    host = hostfma.fma64 if dtype == np.float64 else hostfma.fma32
    exact = model.fma64 if dtype == np.float64 else model.fma32
    for _ in range(40):
        a, b, c = (rng.choice(pool, 64) for _ in range(3))
        assert np.array_equal(_bits(host(a, b, c)), _bits(np.asarray(exact(a, b, c), dtype)))
    # a uniform (scalar) operand against lane vectors holding NaNs
    a = rng.choice(pool, 64)
    assert np.array_equal(_bits(host(a, dtype(2.0), pool[0])),
                          _bits(np.asarray(exact(a, dtype(2.0), pool[0]), dtype)))


def test_nan_results_keep_model_fma_payloads() -> None:
    """A NaN addend with a finite product is returned as it is (`model.fma`: the unfused
    expression's NaN); the host instruction would quiet a signalling one."""
    snan = np.array([0x7FF0_0000_0000_0001], np.uint64).view(np.float64)
    got = hostfma.fma64(np.array([2.0]), np.array([3.0]), snan)
    assert _bits(got)[0] == 0x7FF0_0000_0000_0001


def test_broadcast_shapes_and_wide_calls() -> None:
    """Uniform operands (numpy scalars) broadcast against lane vectors; a call wider than
    the 64-lane staging buffers allocates its own."""
    a = np.arange(100, dtype=np.float64)
    got = hostfma.fma64(a, np.float64(0.5), np.float64(1.0))
    assert got.shape == (100,) and got.tolist() == [x * 0.5 + 1.0 for x in range(100)]
    assert hostfma.fma32(np.float32(2), np.float32(3), np.float32(1)).shape == ()
    two_d = hostfma.fma64(np.ones((2, 3)), np.full((2, 3), 2.0), np.float64(1))
    assert two_d.shape == (2, 3) and (two_d == 3.0).all()


def test_probes_reject_an_unfused_or_flushing_fma() -> None:
    """The probes that guard the host path tell a fused result from `a*b + c` rounded
    twice, and gradual underflow from flush-to-zero (what MXCSR's FTZ/DAZ would give)."""
    loops = hostfma._compiled()
    assert loops is not None

    class Unfused:
        def __call__(self, a: Any, b: Any, c: Any) -> np.ndarray:
            return np.asarray(a * b + c, a.dtype)

    class Flushing:
        def __call__(self, a: Any, b: Any, c: Any) -> np.ndarray:
            r = np.asarray(model.fma64(a, b, c) if a.dtype == np.float64 else
                           model.fma32(a, b, c), a.dtype)
            return np.where(np.abs(r) < np.finfo(a.dtype).tiny, 0 * r, r)

    for dtype, exact in ((np.float64, model.fma64), (np.float32, model.fma32)):
        assert hostfma._agrees(Unfused(), exact, dtype) is False  # type: ignore[arg-type]
        assert hostfma._agrees(Flushing(), exact, dtype) is False  # type: ignore[arg-type]


def test_a_scale_applies_before_the_one_rounding() -> None:
    """V_DIV_FMAS's scale cannot ride on the host instruction: (1.5 * 2**-946 * 1 - 2**-1006)
    * 2**-128 is exactly (1.5 - 2**-60) * 2**-1074, just below the tie between 2**-1074 and
    2**-1073 on the subnormal grid: one rounding gives 2**-1074; rounding the fma first (to
    1.5 * 2**-946) and scaling after would give the tie, rounded to even, 2**-1073 (IEEE 754
    §4.3.1, by hand)."""
    got = fp.fma64(np.array([1.5 * 2.0**-946]), np.array([1.0]), np.array([-(2.0**-1006)]),
                   np.array([-128]))
    assert got.tolist() == [2.0**-1074]


def test_threads_do_not_share_staging_buffers() -> None:
    """Two threads computing different fmas at once (an abandoned launch still running
    beside the next one) each get their own results."""
    import threading

    results: dict[int, list[bool]] = {1: [], 2: []}

    def work(k: int) -> None:
        a = np.full(64, float(k))
        for _ in range(2000):
            got = hostfma.fma64(a, a, a)
            results[k].append(bool((got == k * k + k).all()))

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[1]) and all(results[2]) and len(results[1]) == len(results[2]) == 2000


def _wave(dtype: Any, *lanes: tuple[int, int, int]) -> tuple[np.ndarray, ...]:
    """64-lane operands (the pattern repeated) from (a, b, c) bit patterns."""
    width = np.uint64 if dtype == np.float64 else np.uint32
    cols = [np.array([lane[k] for lane in lanes] * (64 // len(lanes)), width).view(dtype)
            for k in range(3)]
    return cols[0], cols[1], cols[2]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_lanes_come_from_the_loop_in_a_wave(dtype: Any, monkeypatch: Any) -> None:
    """In a 64-lane call with per-lane operands the loop itself gives `model.fma`'s NaN:
    the first NaN of a and b quieted (x86 SSE's rule for a NaN operand, Intel SDM Vol. 1
    Table 4-7, which numpy's `a*b` follows there), else the default NaN for inf * 0
    (SDM §4.8.3.7, "QNaN floating-point indefinite": sign set, top fraction bit), else c
    quieted, else the default NaN for inf - inf; a finite product with a NaN c gives c as
    it is in binary64 (`model.fma.nonfinite64`) and quieted in binary32 (which adds in
    binary64). Worked by hand; `nonfinite` (the Python fix-up) must not run."""
    loops = hostfma._compiled()
    assert loops is not None
    host = loops[0] if dtype == np.float64 else loops[1]
    assert 64 in host.nan_rule

    def no_fixup(*args: Any) -> np.ndarray:
        raise AssertionError("the NaN fix-up ran outside the loop")

    monkeypatch.setattr(host, "nonfinite", no_fixup)
    if dtype == np.float64:
        one, two, inf, zero = 0x3FF0 << 48, 0x4000 << 48, 0x7FF0 << 48, 0
        minus_inf, default = 0xFFF0 << 48, 0xFFF8 << 48
        snan_a, qnan_b, snan_b = 0x7FF0_0000_0000_0001, 0xFFF8_0000_0000_0123, 0xFFF4_0000_0000_4567
        lanes = [(snan_a, qnan_b, one, 0x7FF8_0000_0000_0001),
                 (one, snan_b, qnan_b, 0xFFFC_0000_0000_4567),
                 (inf, zero, snan_a, default),
                 (two, inf, snan_a, 0x7FF8_0000_0000_0001),
                 (inf, two, minus_inf, default),
                 (two, two, snan_a, snan_a),
                 (two, two, one, 0x4014 << 48),  # 5.0, no NaN
                 (zero, minus_inf, qnan_b, default)]
    else:
        one, two, inf, zero = 0x3F80_0000, 0x4000_0000, 0x7F80_0000, 0
        minus_inf, default = 0xFF80_0000, 0xFFC0_0000
        snan_a, qnan_b, snan_b = 0x7F80_0001, 0xFFC0_0123, 0xFFA0_4567
        lanes = [(snan_a, qnan_b, one, 0x7FC0_0001),
                 (one, snan_b, qnan_b, 0xFFE0_4567),
                 (inf, zero, snan_a, default),
                 (two, inf, snan_a, 0x7FC0_0001),
                 (inf, two, minus_inf, default),
                 (two, two, snan_a, 0x7FC0_0001),
                 (two, two, one, 0x40A0_0000),  # 5.0, no NaN
                 (zero, minus_inf, qnan_b, default)]
    a, b, c = _wave(dtype, *(lane[:3] for lane in lanes))
    want = [lane[3] for lane in lanes] * 8
    assert _bits(host(a, b, c)).tolist() == want


def test_a_uniform_addend_takes_the_python_fixup() -> None:
    """numpy adds a uniform addend (0-d, or broadcast with stride 0) with the NaN operands
    the other way round: a*b's NaN 0x7FF8...456 plus c's 0xFFF8...123 gives c's there. Such
    a call's NaN lanes are recomputed by `model.fma` and match it."""
    qnan_c = np.array([0xFFF8_0000_0000_0123], np.uint64).view(np.float64)[0]
    a = np.array([0x7FF8_0000_0000_0456] * 64, np.uint64).view(np.float64)
    for c in (qnan_c, np.broadcast_to(qnan_c, (64,))):
        got = hostfma.fma64(a, np.ones(64), c)
        want = np.asarray(model.fma64(a, np.ones(64), c))
        assert np.array_equal(_bits(got), _bits(want))


def test_the_nan_rule_probe_rejects_another_rule() -> None:
    """A loop that returned b's NaN before a's (x87's or another ordering) fails the probe
    that decides whether the loop's NaN lanes are trusted."""
    loops = hostfma._compiled()
    assert loops is not None
    host = loops[0]

    class SecondFirst:
        dtype = np.float64
        nan_rule: frozenset[int] = frozenset()

        def __call__(self, a: Any, b: Any, c: Any) -> np.ndarray:
            return np.asarray(model.fma64(b, a, c), np.float64)

    assert hostfma._nan_rule_agrees(host, model.fma64, 64)
    assert not hostfma._nan_rule_agrees(SecondFirst(), model.fma64, 64)  # type: ignore[arg-type]



def _langref_nan(result: int, operands: tuple[int, ...], frac_bits: int) -> bool:
    """Whether NaN bits `result` are one LLVM may return for an operation on `operands`
    (LangRef "Behavior of Floating-Point NaN values", which Rust adopted for its floats in
    RFC 3514): any sign; quiet with an all-zero payload (the preferred NaN), quiet with the
    payload of an input NaN, or an input NaN's quiet bit and payload unchanged. x86 adds no
    target-specific payloads: its default NaN is the preferred NaN with the sign set."""
    exp_bits = 11 if frac_bits == 52 else 8
    mask, exp_mask = (1 << frac_bits) - 1, ((1 << exp_bits) - 1) << frac_bits
    quiet = 1 << (frac_bits - 1)

    def is_nan(x: int) -> bool:
        return x & exp_mask == exp_mask and x & mask != 0

    inputs = [x & mask for x in operands if is_nan(x)]
    allowed = {quiet} | {p | quiet for p in inputs} | set(inputs)
    return is_nan(result) and result & mask in allowed


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_non_finite_lanes_follow_ieee_and_the_langref_nan_rule(dtype: Any) -> None:
    """The same operand pool as above, judged without `model.fma`: a lane is NaN exactly
    where IEEE 754 §7.2 says (a NaN operand, inf * 0, inf - inf; worked here from the
    operands), its bits then obey LangRef's NaN rule (`_langref_nan`), and every other lane
    equals Python's `a * b + c`, which is exact on this pool (its products and sums are
    representable, so no rounding for fusing to remove; IEEE 754 §6.3 signs its zeros)."""
    rng = np.random.default_rng(11)
    width = np.uint64 if dtype == np.float64 else np.uint32
    frac_bits = 52 if dtype == np.float64 else 23
    one, snan = (0x3FF << 52, 0x7FF0_0000_0000_0001) if frac_bits == 52 else (0x3F8 << 20,
                                                                                0x7F80_0001)
    quiet, sign = 1 << (frac_bits - 1), 1 << (63 if frac_bits == 52 else 31)
    # the rule by itself: an input's payload (quieted or not) and the preferred NaN of either
    # sign pass; a payload no input had, or a number, does not
    assert _langref_nan(snan, (one, snan, one), frac_bits)
    assert _langref_nan(snan | quiet | sign, (one, snan, one), frac_bits)
    assert _langref_nan((snan & ~1) | quiet | sign, (one, snan, one), frac_bits)
    assert not _langref_nan(snan + 1, (one, snan, one), frac_bits)
    assert not _langref_nan(one, (one, snan, one), frac_bits)
    if dtype == np.float64:
        nans = [0x7FF8_0000_0000_0000, 0xFFF8_0000_0000_0001, 0x7FF0_0000_0000_0001,
                0x7FF4_0000_0000_1234]
    else:
        nans = [0x7FC0_0000, 0xFFC0_0001, 0x7F80_0001, 0x7FA0_1234]
    pool = np.concatenate([np.array(nans, width).view(dtype),
                           np.array([np.inf, -np.inf, 0.0, -0.0, 1.0, -2.0, 3.5], dtype)])
    host = hostfma.fma64 if dtype == np.float64 else hostfma.fma32
    nan_lanes = 0
    for _ in range(40):
        a, b, c = (rng.choice(pool, 64) for _ in range(3))
        got = _bits(host(a, b, c)).tolist()
        for x, y, z, g, bits in zip(a.tolist(), b.tolist(), c.tolist(), got,
                                    zip(_bits(a).tolist(), _bits(b).tolist(),
                                        _bits(c).tolist(), strict=True), strict=True):
            product_inf = math.isinf(x) or math.isinf(y)
            invalid = ((math.isinf(x) and y == 0) or (math.isinf(y) and x == 0)
                       or (product_inf and math.isinf(z)
                           and math.copysign(1, x) * math.copysign(1, y) != math.copysign(1, z)))
            if any(map(math.isnan, (x, y, z))) or invalid:
                assert _langref_nan(g, bits, frac_bits), (hex(g), [hex(v) for v in bits])
                nan_lanes += 1
            else:
                want = np.array([x * y + z], dtype)
                assert g == _bits(want)[0], (x, y, z, hex(g))
    assert nan_lanes > 1000          # the rule was tested, not only the finite lanes
