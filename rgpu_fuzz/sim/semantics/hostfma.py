"""Fused multiply-add on the host CPU's own instruction, for the simulator's `V_FMA_*`,
`V_FMAC_*`, `V_FMAMK/AK_F32` (and `fp.fma32/fma64` when no scale is asked for).

Why: numpy has no fma, and `model.fma`'s exact emulation (error-free transformations,
integers for the lanes outside its fast range) costs 25 µs (binary32) to 90 µs (binary64,
lanes near the ends of the range) per 64-lane call: 12 % of gfx942 O3's time in
`bench sim`, whose f64 kernels run LLVM's frem loop (one V_FMA_F64 per iteration). The
host's FMA (x86 FMA3 `vfmadd*`; `fma`/`fmaf` from libm where the CPU has none) computes
IEEE 754 §5.4.1 fusedMultiplyAdd with one rounding, the same correctly rounded value.

Independence: the reference interpreter keeps `model.fma` (no LLVM in the reference), so
`ref` against `amdgpu-sim` still compares two implementations, and the tests compare this
module with `model.fma` lane for lane. The host path is trusted only after it matched
`model.fma` on probes in this process (subnormal results, ties, cancellation: a process
that runs with flush-to-zero or denormals-are-zero set in MXCSR fails them), else every
call goes to `model.fma`.

NaN results (an operand NaN, inf * 0, inf - inf; lanes outside EXEC often hold such
values) are `model.fma`'s (`nonfinite64/32`: numpy's unfused `a*b + c`), the payloads the
simulator has always produced. The FMA instruction's own NaN is not used (x86 picks it by
instruction operand order, which LLVM commutes): the loop rebuilds the NaN from the operand
bits (`_NAN_RULES`: the first NaN of a, b quieted; inf * 0 or inf - inf the default NaN; a
NaN c). That is numpy's rule only for some call layouts, so the loop's NaN lanes are kept
only at lane counts where a probe found them equal to `model.fma`'s (`_nan_rule_agrees`,
per-lane b and c); other calls recompute their NaN lanes with `nonfinite64/32` (~5 µs).

The loop is compiled once per process with llvmlite (MCJIT, host CPU and features), on
first use; a process whose kernels never fuse a multiply-add never builds it.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from rgpu_fuzz.model import fma as exact

_LANES = 64
"""Staging buffers hold one wave (64 lanes on gfx9, 32 on gfx1100); wider calls allocate."""

_IR = """
declare double @llvm.fma.f64(double, double, double)
declare float @llvm.fma.f32(float, float, float)
{loops}
"""

_LOOP = """
define i64 @fma_{t}(ptr noalias %a, ptr noalias %b, ptr noalias %c, ptr noalias %r, i64 %n) {{
entry:
  %none = icmp eq i64 %n, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %join ]
  %nans = phi i64 [ 0, %entry ], [ %nans1, %join ]
  %pa = getelementptr {t}, ptr %a, i64 %i
  %pb = getelementptr {t}, ptr %b, i64 %i
  %pc = getelementptr {t}, ptr %c, i64 %i
  %pr = getelementptr {i}, ptr %r, i64 %i
  %x = load {t}, ptr %pa
  %y = load {t}, ptr %pb
  %z = load {t}, ptr %pc
  %v = call {t} @llvm.fma.{s}({t} %x, {t} %y, {t} %z)
  %vb = bitcast {t} %v to {i}
  %isnan = fcmp uno {t} %v, %v
  br i1 %isnan, label %fix, label %join
fix:
  %xa = bitcast {t} %x to {i}
  %xb = bitcast {t} %y to {i}
  %xc = bitcast {t} %z to {i}
  %ma = and {i} %xa, {abs}
  %mb = and {i} %xb, {abs}
  %mc = and {i} %xc, {abs}
  %nan_a = icmp ugt {i} %ma, {inf}
  %nan_b = icmp ugt {i} %mb, {inf}
  %nan_c = icmp ugt {i} %mc, {inf}
  %fin_a = icmp ult {i} %ma, {inf}
  %fin_b = icmp ult {i} %mb, {inf}
  %inf_a = icmp eq {i} %ma, {inf}
  %inf_b = icmp eq {i} %mb, {inf}
  %zero_a = icmp eq {i} %ma, 0
  %zero_b = icmp eq {i} %mb, 0
  %inf_zero = and i1 %inf_a, %zero_b
  %zero_inf = and i1 %zero_a, %inf_b
  %invalid = or i1 %inf_zero, %zero_inf
  %qa = or {i} %xa, {quiet}
  %qb = or {i} %xb, {quiet}
  %qc = or {i} %xc, {quiet}
  %r5 = select i1 %nan_c, {i} %qc, {i} {default}
  %r4 = select i1 %invalid, {i} {default}, {i} %r5
  %r3 = select i1 %nan_b, {i} %qb, {i} %r4
  %r2 = select i1 %nan_a, {i} %qa, {i} %r3
  %fin_ab = and i1 %fin_a, %fin_b
  %r1 = select i1 %fin_ab, {i} {finite_product}, {i} %r2
  br label %join
join:
  %out = phi {i} [ %vb, %loop ], [ %r1, %fix ]
  %one = zext i1 %isnan to i64
  %nans1 = add i64 %nans, %one
  store {i} %out, ptr %pr
  %next = add i64 %i, 1
  %end = icmp eq i64 %next, %n
  br i1 %end, label %done, label %loop
done:
  %count = phi i64 [ 0, %entry ], [ %nans1, %join ]
  ret i64 %count
}}
"""

_NAN_RULES = {
    "double": dict(s="f64", i="i64", abs=0x7FFF_FFFF_FFFF_FFFF, inf=0x7FF0_0000_0000_0000,
                   quiet=0x0008_0000_0000_0000, default=0xFFF8_0000_0000_0000 - (1 << 64),
                   finite_product="%xc"),
    "float": dict(s="f32", i="i32", abs=0x7FFF_FFFF, inf=0x7F80_0000, quiet=0x0040_0000,
                  default=0xFFC0_0000 - (1 << 32), finite_product="%qc"),
}
"""Per type, the constants of the loop's NaN rule (LLVM IR integers are signed literals),
and what a lane with a finite product and a NaN addend gives: binary64's `model.fma` returns
the addend as it is (`nonfinite64`), binary32's quiets it (`nonfinite32` adds in binary64)."""

_Kernel = Callable[[int, int, int, int, int], int]


class _HostFma:
    """One compiled loop for one float type, its staging buffers (a, b, c, result), and
    the lane counts at which the loop's NaN rule was found to be `model.fma`'s."""

    def __init__(self, kernel: _Kernel, dtype: type[np.floating[Any]], engine: Any,
                 nonfinite: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> None:
        self.kernel = kernel
        self.dtype = dtype
        self.nonfinite = nonfinite
        self.engine = engine  # owns the machine code `kernel` points into
        self.nan_rule: frozenset[int] = frozenset()
        """Lane counts at which a call whose b and c are per-lane vectors (not 0-d, not
        broadcast with stride 0) gets NaN lanes from the loop alone (`_nan_rule_agrees`);
        every other call's NaN lanes are recomputed by `nonfinite`."""
        # per thread: a launch abandoned past its time limit (`pipelines.base._call_bounded`)
        # may still be simulating in its thread while the next one runs in another
        self.local = threading.local()

    def _staged(self) -> tuple[np.ndarray, tuple[int, int, int, int]]:
        got = getattr(self.local, "stage", None)
        if got is None:
            stage = np.zeros((4, _LANES), self.dtype)
            got = self.local.stage = (stage, _addresses(stage))
        return got  # type: ignore[no-any-return]

    def __call__(self, a: Any, b: Any, c: Any) -> np.ndarray:
        """fma(a, b, c) elementwise (broadcast); NaN results are `model.fma`'s (see the
        module docstring)."""
        a = np.asarray(a, self.dtype)
        b = np.asarray(b, self.dtype)
        c = np.asarray(c, self.dtype)
        if a.ndim > 1 or b.ndim > 1 or c.ndim > 1:
            a, b, c = np.broadcast_arrays(a, b, c)
            shape = a.shape
            a, b, c = a.ravel(), b.ravel(), c.ravel()
        else:
            shape = max(a.shape, b.shape, c.shape)
        n = max(a.size, b.size, c.size)
        if n > _LANES:
            stage = np.empty((4, n), self.dtype)
            addresses = _addresses(stage)
        else:
            stage, addresses = self._staged()
        if n == _LANES:  # a wave (nearly every call): whole rows, no slicing
            np.copyto(stage[0], a)
            np.copyto(stage[1], b)
            np.copyto(stage[2], c)
            nans = self.kernel(*addresses, n)
            got = stage[3].reshape(shape).copy()
        else:
            np.copyto(stage[0, :n], a)
            np.copyto(stage[1, :n], b)
            np.copyto(stage[2, :n], c)
            nans = self.kernel(*addresses, n)
            got = stage[3, :n].reshape(shape).copy()
        if nans and not (n in self.nan_rule and b.ndim == 1 and c.ndim == 1
                         and b.strides[0] and c.strides[0]):
            where = np.isnan(got)
            got[where] = self.nonfinite(a, b, c).reshape(shape)[where]
        return got


def _addresses(stage: np.ndarray) -> tuple[int, int, int, int]:
    a, b, c, r = (int(stage[i].ctypes.data) for i in range(4))
    return a, b, c, r


@cache
def _compiled() -> tuple[_HostFma, _HostFma] | None:
    """The two loops, or None where llvmlite cannot build them or the host's results
    differ from `model.fma` on the probes."""
    loops = _build()
    if loops is None or not (_agrees(loops[0], exact.fma64, np.float64)
                             and _agrees(loops[1], exact.fma32, np.float32)):
        return None
    for loop, model in zip(loops, (exact.fma64, exact.fma32), strict=True):
        loop.nan_rule = frozenset(n for n in (64, 32) if _nan_rule_agrees(loop, model, n))
    return loops


def _build() -> tuple[_HostFma, _HostFma] | None:
    """The two loops, compiled for the host (None where llvmlite cannot build them)."""
    try:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                          features=llvm.get_host_cpu_features().flatten(),
                                          opt=2)
        loops = "".join(_LOOP.format(t=t, **rule) for t, rule in _NAN_RULES.items())
        module = llvm.parse_assembly(_IR.format(loops=loops))
        module.verify()
        engine = llvm.create_mcjit_compiler(module, tm)
        engine.finalize_object()
    except (ImportError, RuntimeError, OSError):
        return None
    signature = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    f64 = _HostFma(signature(engine.get_function_address("fma_double")), np.float64, engine,
                   exact.nonfinite64)
    f32 = _HostFma(signature(engine.get_function_address("fma_float")), np.float32, engine,
                   exact.nonfinite32)
    return f64, f32


def _probes(dtype: type[np.floating[Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Operands whose fused results differ from the unfused ones or need gradual underflow:
    a subnormal product, a product cancelled to its rounding error, a tie broken by the
    addend's low bits, and an exact zero sum."""
    info = np.finfo(dtype)
    tiny, eps = float(info.tiny), float(info.eps)
    third = float(dtype(1.0) / dtype(3.0))
    a = [tiny, 1.0 + eps, third, 1.5, 2.0, -0.0, tiny * 3]
    b = [0.75, 1.0 - eps, 3.0, 1.0 + eps, -1.0, 5.0, -0.5]
    c = [0.0, -1.0, -1.0, eps / 4, 2.0, -0.0, tiny]
    return (np.array(a, dtype), np.array(b, dtype), np.array(c, dtype))


_NAN_PROBES = {
    np.float64: (np.uint64, (0x7FF8_0000_0000_0000, 0xFFF8_0000_0000_0123, 0x7FF0_0000_0000_0001,
                             0xFFF4_0000_0000_4567, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000,
                             0, 0x8000_0000_0000_0000, 0x3FF0_0000_0000_0000)),
    np.float32: (np.uint32, (0x7FC0_0000, 0xFFC0_0123, 0x7F80_0001, 0xFFA0_4567, 0x7F80_0000,
                             0xFF80_0000, 0, 0x8000_0000, 0x3F80_0000)),
}
"""Quiet and signalling NaNs of both signs with payloads, the infinities, the zeros and 1."""


def _nan_rule_agrees(host: _HostFma, model: Callable[..., np.ndarray], n: int) -> bool:
    """Whether the loop's NaN rule gives `model.fma`'s bits on every combination of
    `_NAN_PROBES` in calls of `n` lanes with per-lane b and c (a per-lane, then uniform;
    contiguous, then strided).
    `model.fma`'s NaN is the one numpy's unfused `a*b + c` propagates, which depends on
    numpy's loop: on x86 its SIMD loops return the first NaN operand quieted (Intel SDM
    Vol. 1 §4.8.3.5, Table 4-7, "SSE and SSE2 ... first source operand"), which is the
    loop's rule, but a uniform b or c (0-d or stride 0), or lanes past the last whole SIMD
    block of a short call, take another loop that returns the second; such calls are not
    trusted here."""
    width, patterns = _NAN_PROBES[host.dtype]
    pool = np.array(patterns, width).view(host.dtype)
    k = len(pool)
    triples = np.array(np.meshgrid(pool, pool, pool, indexing="ij")).reshape(3, -1)
    pairs = triples[1:, :k * k]  # every (b, c), for each uniform a

    def chunks(x: np.ndarray) -> list[np.ndarray]:
        x = np.concatenate([x, x[:, :(-x.shape[1]) % n]], axis=1)
        return [x[:, at:at + n] for at in range(0, x.shape[1], n)]

    def strided(x: np.ndarray) -> np.ndarray:  # a column of a register file
        wide = np.zeros((len(x), 3), x.dtype)
        wide[:, 1] = x
        return wide[:, 1]

    per_lane = [tuple(t) for t in chunks(triples)]
    calls = per_lane + [(a, *bc) for a in pool for bc in chunks(pairs)]
    calls += [(strided(a), strided(b), strided(c)) for a, b, c in per_lane]
    saved, host.nan_rule = host.nan_rule, frozenset({n})
    try:
        for a, b, c in calls:
            want = np.asarray(model(a, b, c), host.dtype)
            if host(a, b, c).tobytes() != want.tobytes():
                return False
        return True
    finally:
        host.nan_rule = saved


def _agrees(host: _HostFma, model: Callable[..., np.ndarray],
            dtype: type[np.floating[Any]]) -> bool:
    a, b, c = _probes(dtype)
    return host(a, b, c).tobytes() == np.asarray(model(a, b, c), dtype).tobytes()


def fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """Correctly rounded binary64 fma (see the module docstring for who computes it)."""
    loops = _compiled()
    return loops[0](a, b, c) if loops else exact.fma64(a, b, c)


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """Correctly rounded binary32 fma."""
    loops = _compiled()
    return loops[1](a, b, c) if loops else exact.fma32(a, b, c)


def available() -> bool:
    """Whether this process computes fma on the host's instruction (else `model.fma`)."""
    return _compiled() is not None


__all__ = ["available", "fma32", "fma64"]
