"""End to end: LLVM IR of `<2 x half>`, `<2 x i16>`, `<2 x float>` and scalar `half`
operations (`packed_kernels`) compiled by our AMDGPU path (llvmlite's LLVM 22, `kernels.build`)
for gfx90a, gfx942 and gfx1100 at O0 and O3, run on the simulator, each result compared with a
reference that does not use the simulator's code: numpy's float16/float32 arithmetic (IEEE
754 binary16/binary32, correctly rounded) for the four operations, sqrt, rounding to
integers and conversions; exact rational arithmetic rounded once (`ieee_round`) for fma,
fmuladd and ldexp; bit operations for fneg/fabs/copysign; the LLVM LangRef's definitions
(minnum: a NaN operand gives the other; minimum: NaN propagates and -0 < +0; round: half
away from zero; the saturating intrinsics) for the rest. The selected code covers VOP3P
packed f16/f32/i16 with op_sel, op_sel_hi, neg_lo/neg_hi and clamp, f16 VOP1/VOP2/VOP3,
GFX9 SDWA (src0_sel:WORD_1) and gfx1100 true16 halves."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.sim.launch.engine import Arg
from tests.sim.ieee_round import exact, round_bits
from tests.sim.kernels import build, out, run
from tests.sim.packed_kernels import Kernel, all_kernels

H, F, U16, I16 = np.float16, np.float32, np.uint16, np.int16
LANES = 64
_SPECIAL16 = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0xBC00, 0x3800, 0x7BFF, 0xFBFF,
              0x0001, 0x8001, 0x03FF, 0x0400, 0x3C01, 0x3BFF, 0x4248, 0xC248, 0x3E00, 0xBE00,
              0x4100, 0x4300, 0x5640, 0x0200]
"""binary16 bit patterns: zeros, infinities, a quiet NaN, ±1, 0.5, ±65504, the smallest
subnormal, the largest subnormal, the smallest normal, 1 + 2**-10, the largest below 1,
±3.14, ±1.5, 2.5, 3.5, 100, a subnormal."""


def _halves(rng: np.random.Generator, n: int) -> np.ndarray:
    bits = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(U16)
    bits[:len(_SPECIAL16)] = _SPECIAL16
    rng.shuffle(bits)
    return bits.view(H)


def _inputs(k: Kernel, seed: int) -> list[np.ndarray]:
    """a, b, c as arrays of elements (`<2 x T>` flattened)."""
    rng = np.random.default_rng(seed)
    n = LANES * (int(k.ty[1]) if k.ty.startswith("<") else 1)
    elem = k.ty.split()[-1].rstrip(">")
    out_: list[np.ndarray] = []
    for _ in range(3):
        if elem == "half":
            x = _halves(rng, n)
            if k.name.startswith(("fptosi", "fptoui")):
                # out of range is poison (LangRef fptosi/fptoui): in range, finite
                lim = 32000 if k.rty.endswith("i16>") or k.rty == "i16" else 60000
                x = np.where(np.isfinite(x), np.clip(x, -lim if "si" in k.name else 0, lim),
                             H(3)).astype(H)
            out_.append(x)
        elif elem == "float":
            x = rng.standard_normal(n).astype(F) * F(1000)
            x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
            rng.shuffle(x)
            out_.append(x)
        elif elem == "i16":
            x = rng.integers(-32768, 32768, n).astype(I16)
            x[:4] = [0, -1, -32768, 32767]
            rng.shuffle(x)
            out_.append(x)
        elif elem == "double":
            out_.append(_halves(rng, n).astype(np.float64) * rng.choice([1.0, 1.0001, 0.999], n))
        elif elem == "i64":
            x = rng.integers(-70000, 70000, n).astype(np.int64)
            x[:3] = [2**40, -2**62, 65519]
            out_.append(x)
        else:
            out_.append(rng.integers(-2**31, 2**31, n).astype(np.int32))
    if k.name.startswith(("shl", "lshr", "ashr")):
        out_[1] = out_[1] & I16(15)  # a shift by >= 16 is poison
    if k.name.startswith(("udiv", "sdiv")):
        out_[1] = np.where(out_[1] == 0, I16(7), out_[1]).astype(I16)
        out_[1] = np.where(out_[1] == -1, I16(3), out_[1]).astype(I16)
    return out_


def _fma_ref(bits: int, dt: type) -> Callable[..., np.ndarray]:
    """fma rounded once, from exact rationals; IEEE 754 §6.3 gives the sign of an exact
    zero sum (+0 under round to nearest unless both addends are -0)."""
    ut = U16 if bits == 16 else np.uint32

    def f(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        r = np.empty(a.shape, ut)
        for i, (x, y, z) in enumerate(zip(a, b, c, strict=True)):
            if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
                r[i] = np.array(dt(np.float64(x) * np.float64(y) + np.float64(z))).view(ut)
                continue
            xs, ys, zs = (int(np.array(v).view(ut)) for v in (x, y, z))
            prod = exact(xs, bits) * exact(ys, bits)
            s = prod + exact(zs, bits)
            neg_prod = bool(np.signbit(x) ^ np.signbit(y))
            neg_zero = s == 0 and (prod == 0 and neg_prod and bool(np.signbit(z)))
            r[i] = round_bits(s, bits, neg_zero)
        return r.view(dt)
    return f


def _ldexp_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    e = (b.view(I16).astype(np.int32) >> 11)
    r = np.empty(a.shape, U16)
    for i, (x, k) in enumerate(zip(a, e, strict=True)):
        if not np.isfinite(x) or x == 0:
            r[i] = np.array(x).view(U16)
        else:
            r[i] = round_bits(exact(int(np.array(x).view(U16)), 16) * Fraction(2) ** int(k),
                              16, bool(np.signbit(x)))
    return r.view(H)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r = np.where((a < b) | ((a == b) & np.signbit(a)), a, b)
    return np.where(np.isnan(a) | np.isnan(b), a.dtype.type(np.nan), r)


def _maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r = np.where((a > b) | ((a == b) & ~np.signbit(a)), a, b)
    return np.where(np.isnan(a) | np.isnan(b), a.dtype.type(np.nan), r)


def _sign_bits(a: np.ndarray, how: str, b: np.ndarray | None = None) -> np.ndarray:
    ut: Any = U16 if a.dtype == H else np.uint32
    sign: Any = ut(1 << (8 * a.itemsize - 1))
    x: Any = a.view(ut)
    if how == "neg":
        return (x ^ sign).view(a.dtype)
    if how == "abs":
        return (x & ~sign).view(a.dtype)
    assert b is not None
    return ((x & ~sign) | (b.view(ut) & sign)).view(a.dtype)


def _sat(lo: int, hi: int, f: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    return lambda a, b: np.clip(f(a.astype(np.int64), b.astype(np.int64)), lo, hi)


_REF: dict[str, Callable[..., Any]] = {
    "fadd": lambda a, b, c: a + b, "fsub": lambda a, b, c: a - b,
    "fmul": lambda a, b, c: a * b, "fdiv": lambda a, b, c: a / b,
    "minnum": lambda a, b, c: np.fmin(a, b), "maxnum": lambda a, b, c: np.fmax(a, b),
    "minimumnum": lambda a, b, c: np.fmin(a, b), "maximumnum": lambda a, b, c: np.fmax(a, b),
    "fsubrev": lambda a, b, c: b - a,
    "minimum": lambda a, b, c: _minimum(a, b), "maximum": lambda a, b, c: _maximum(a, b),
    "fabs": lambda a, b, c: _sign_bits(a, "abs"), "fneg": lambda a, b, c: _sign_bits(a, "neg"),
    "copysign": lambda a, b, c: _sign_bits(a, "copy", b),
    "canonicalize": lambda a, b, c: a, "sqrt": lambda a, b, c: np.sqrt(a),
    "floor": lambda a, b, c: np.floor(a), "ceil": lambda a, b, c: np.ceil(a),
    "trunc": lambda a, b, c: np.trunc(a), "rint": lambda a, b, c: np.rint(a),
    "roundeven": lambda a, b, c: np.rint(a),
    "round": lambda a, b, c: np.where(np.isfinite(a), np.copysign(np.floor(
        np.abs(a.astype(np.float64)) + 0.5), a), a).astype(a.dtype),
    "fnegmul": lambda a, b, c: a * -b,
    "fcmp": lambda a, b, c: np.where(a < b, a, c),
    "fptosi": lambda a, b, c: np.trunc(a.astype(np.float64)),
    "fptoui": lambda a, b, c: np.trunc(a.astype(np.float64)),
    "sitofp": lambda a, b, c: a.astype(H), "uitofp": lambda a, b, c: a.view(
        {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]).astype(H),
    "fpext": lambda a, b, c: a, "fptrunc": lambda a, b, c: a.astype(H),
    "frem": lambda a, b, c: np.fmod(a, b),
    "viaf32": lambda a, b, c: (a.astype(F) * b.astype(F) + c.astype(F)).astype(H),
    "add": lambda a, b, c: a + b, "sub": lambda a, b, c: a - b, "mul": lambda a, b, c: a * b,
    "mad": lambda a, b, c: a * b + c,
    "shl": lambda a, b, c: a << b, "lshr": lambda a, b, c: (a.view(U16) >> b.view(U16)),
    "ashr": lambda a, b, c: a >> b, "and": lambda a, b, c: a & b,
    "or": lambda a, b, c: a | b, "xor": lambda a, b, c: a ^ b,
    "udiv": lambda a, b, c: a.view(U16) // b.view(U16),
    "sdiv": lambda a, b, c: (np.trunc(a.astype(np.float64) / b)).astype(np.int64),
    "smax": lambda a, b, c: np.maximum(a, b), "smin": lambda a, b, c: np.minimum(a, b),
    "umax": lambda a, b, c: np.maximum(a.view(U16), b.view(U16)),
    "umin": lambda a, b, c: np.minimum(a.view(U16), b.view(U16)),
    "sadd.sat": lambda a, b, c: _sat(-32768, 32767, np.add)(a, b),
    "ssub.sat": lambda a, b, c: _sat(-32768, 32767, np.subtract)(a, b),
    "uadd.sat": lambda a, b, c: _sat(0, 65535, np.add)(a.view(U16), b.view(U16)),
    "usub.sat": lambda a, b, c: _sat(0, 65535, np.subtract)(a.view(U16), b.view(U16)),
    "abs": lambda a, b, c: np.abs(a), "icmp": lambda a, b, c: np.where(a < b, b, c),
    "addk": lambda a, b, c: a + np.tile(np.array([-3, 1000], I16), len(a) // 2),
}


def _reference(k: Kernel, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    base = k.name.rsplit("_", 1)[0]
    if k.name.startswith("fcmp_une"):
        return np.where(a != b, b, c)
    if base in ("fma", "fmuladd"):
        return _fma_ref(16 if a.dtype == H else 32, a.dtype.type)(a, b, c)
    if k.name == "ldexp_f16":
        return _ldexp_ref(a, b)
    if k.name == "swap_add_v2f16":
        return a.reshape(-1, 2)[:, ::-1].reshape(-1) + b
    if k.name == "splat_fma_v2f16":
        s = np.repeat(a.reshape(-1, 2)[:, 1], 2)
        return _fma_ref(16, H)(s, b, np.tile(np.array([1.0, 2.0], H), len(a) // 2))
    if base.startswith("fcmp"):
        base = "fcmp"
    return _REF[base.split("_")[0] if base.split("_")[0] in _REF else base](a, b, c)


_DT = {"half": H, "float": F, "double": np.float64, "i16": I16, "i32": np.int32,
       "i64": np.int64}


def _compare(k: Kernel, got: np.ndarray, want: np.ndarray) -> None:
    """Bit-exact, except: any NaN for a NaN (LLVM does not fix NaN payloads); minnum/
    maxnum/minimum/maximum may order -0 and +0 either way (LangRef minnum; binary16
    min/max select one)."""
    if got.dtype.kind == "f":
        want = want.astype(got.dtype)
        nan = np.isnan(want)
        assert (np.isnan(got) == nan).all(), (k.name, np.flatnonzero(np.isnan(got) != nan))
        ut = {2: U16, 4: np.uint32, 8: np.uint64}[got.itemsize]
        same = got.view(ut) == want.view(ut)
        if k.name.split("_")[0] in ("minnum", "maxnum", "minimum", "maximum", "minimumnum",
                                    "maximumnum", "canonicalize"):
            same |= got == want
        bad = np.flatnonzero(~same & ~nan)
        assert not len(bad), (k.name, [(hex(int(got.view(ut)[i])),
                                        hex(int(want.view(ut)[i]))) for i in bad[:6]])
    else:
        assert (got == want.astype(got.dtype)).all(), (k.name, got[:8], want[:8])


KERNELS = [k for k in all_kernels() if not k.name.startswith("fdiv")]
"""fdiv is LLVM's expansion around V_RCP, whose hardware approximation is not modelled:
left out of the bit-exact comparison."""


@pytest.mark.parametrize("tier", ["bound", "fused"])
@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a", "gfx1100"])
@pytest.mark.parametrize("opt", [0, 3])
def test_packed_and_half_kernels_match_ieee_references(
        cpu: str, opt: int, tier: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tier`: bound steps, or every run fused at its first execution (the tiers' threshold
    at 1, fresh programs), so straight-line f16 code runs on the fused tier."""
    from rgpu_fuzz.sim.launch import engine, tiers

    engine._PROGRAMS.clear()
    if tier == "fused":
        monkeypatch.setattr(tiers, "HOT", 1)
    failures = []
    for i, k in enumerate(KERNELS):
        a, b, c = _inputs(k, i)
        relem = k.rty.split()[-1].rstrip(">")
        rdt = _DT[relem]
        n = LANES * (int(k.rty[1]) if k.rty.startswith("<") else 1)
        code = build(k.ir(), cpu, opt)
        res = run(code, (1, 1, 1), (LANES, 1, 1), [Arg(buffer=x) for x in ("a", "b", "c",
                                                                            "out")],
                  {"a": a, "b": b, "c": c, "out": np.zeros(n, rdt)})
        if res.status.value != "ok":
            failures.append(f"{k.name}: {res.fault}")
            continue
        with np.errstate(all="ignore"):
            want = _reference(k, a, b, c)
        try:
            _compare(k, out(res, "out", rdt), np.asarray(want))
        except AssertionError as e:
            failures.append(str(e)[:300])
    engine._PROGRAMS.clear()
    assert not failures, "\n".join(failures)
