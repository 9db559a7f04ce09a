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
call goes to `model.fma`. NaN results take `model.fma`'s value for non-finite operands
(`nonfinite64/32`), which keeps the NaN payloads the simulator has always produced (x86
picks which NaN operand propagates by instruction operand order, which LLVM commutes).

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
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %nans = phi i64 [ 0, %entry ], [ %nans1, %loop ]
  %pa = getelementptr {t}, ptr %a, i64 %i
  %pb = getelementptr {t}, ptr %b, i64 %i
  %pc = getelementptr {t}, ptr %c, i64 %i
  %pr = getelementptr {t}, ptr %r, i64 %i
  %x = load {t}, ptr %pa
  %y = load {t}, ptr %pb
  %z = load {t}, ptr %pc
  %v = call {t} @llvm.fma.{s}({t} %x, {t} %y, {t} %z)
  store {t} %v, ptr %pr
  %isnan = fcmp uno {t} %v, %v
  %one = zext i1 %isnan to i64
  %nans1 = add i64 %nans, %one
  %next = add i64 %i, 1
  %end = icmp eq i64 %next, %n
  br i1 %end, label %done, label %loop
done:
  %count = phi i64 [ 0, %entry ], [ %nans1, %loop ]
  ret i64 %count
}}
"""

_Kernel = Callable[[int, int, int, int, int], int]


class _HostFma:
    """One compiled loop for one float type, and its staging buffers (a, b, c, result)."""

    def __init__(self, kernel: _Kernel, dtype: type[np.floating[Any]], engine: Any,
                 nonfinite: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> None:
        self.kernel = kernel
        self.dtype = dtype
        self.nonfinite = nonfinite
        self.engine = engine  # owns the machine code `kernel` points into
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
        """fma(a, b, c) elementwise (broadcast). Lanes whose result is NaN (an operand was
        NaN, or inf * 0, or inf - inf: lanes outside EXEC often hold such values) take
        `model.fma`'s value, so NaN payloads are the ones it gives."""
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
        np.copyto(stage[0, :n], a)
        np.copyto(stage[1, :n], b)
        np.copyto(stage[2, :n], c)
        nans = self.kernel(*addresses, n)
        got = stage[3, :n].reshape(shape).copy()
        if nans:
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
    try:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                          features=llvm.get_host_cpu_features().flatten(),
                                          opt=2)
        loops = "".join(_LOOP.format(t=t, s=s) for t, s in (("double", "f64"), ("float", "f32")))
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
    if not (_agrees(f64, exact.fma64, np.float64) and _agrees(f32, exact.fma32, np.float32)):
        return None
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
