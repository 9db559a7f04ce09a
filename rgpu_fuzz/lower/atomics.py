"""Atomic methods and `fence` -> LLVM IR (docs/language.md "Atomics").

Each method is one LLVM instruction (LangRef "atomicrmw", "cmpxchg", "load atomic", "store
atomic", "fence") with Rust's orderings mapped as rustc maps them (`Relaxed` → `monotonic`,
`Acquire` → `acquire`, `Release` → `release`, `AcqRel` → `acq_rel`, `SeqCst` → `seq_cst`;
rustc_codegen_llvm `AtomicOrdering`), `fetch_min`/`fetch_max` to `min`/`max` on signed and
`umin`/`umax` on unsigned types, `swap` to `xchg`. The element's address is the bounds-
checked one of a plain access (`ExprLowerer.element_ptr`): global memory on a slice,
the shared array's address space on a `#[shared]` static.

The target says which synchronisation scope every atomic carries (`TargetHooks.atomic_scope`:
None is LLVM's default, the system scope; amdgcn takes `agent`, `workgroup`, `wavefront`,
their `-one-as` variants, `one-as` and `system` — AMDGPUUsage "Memory Scopes") and whether
the pointer goes through the generic (flat) address space first
(`TargetHooks.atomic_flat`: an `addrspacecast` to 0, so global and LDS atomics take the
FLAT path and its aperture check).

The IR is written with the text builder (`lower.textir`), which can spell `syncscope` on
every atomic; under `RGPU_LOWER_IR=llvmlite` a kernel with atomics is a `LowerError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import AtomicOrdering
from rgpu_fuzz.lang.atomics import CAS, CAS_TESTS, LOAD, STORE, atomic_op
from rgpu_fuzz.lower.context import LowerError
from rgpu_fuzz.lower.irapi import BACKEND, ir
from rgpu_fuzz.lower.values import I1, memory_type
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.context import FnState
    from rgpu_fuzz.lower.exprs import ExprLowerer

LLVM_ORDERING: dict[AtomicOrdering, str] = {
    AtomicOrdering.RELAXED: "monotonic",
    AtomicOrdering.ACQUIRE: "acquire",
    AtomicOrdering.RELEASE: "release",
    AtomicOrdering.ACQ_REL: "acq_rel",
    AtomicOrdering.SEQ_CST: "seq_cst",
}

_RMW = {"swap": "xchg", "fetch_add": "add", "fetch_sub": "sub", "fetch_and": "and",
        "fetch_or": "or", "fetch_xor": "xor"}
_MINMAX = {"fetch_min": ("min", "umin"), "fetch_max": ("max", "umax")}

AMDGPU_SCOPES: tuple[str, ...] = (
    "agent", "workgroup", "wavefront", "system", "one-as", "agent-one-as",
    "workgroup-one-as", "wavefront-one-as")
"""LLVM's AMDGPU synchronisation scopes (AMDGPUUsage "Memory Scopes"); "system" is written
without `syncscope`."""


def rmw_operation(method: str, elem: Scalar) -> str:
    """The `atomicrmw` operation of a read-modify-write method."""
    if method in _MINMAX:
        signed, unsigned = _MINMAX[method]
        return signed if elem.is_signed else unsigned
    return _RMW[method]


def _scope(st: FnState) -> str:
    scope = st.ms.target.atomic_scope
    return "" if scope in (None, "system") else f' syncscope("{scope}")'


def is_atomic(e: ast.MethodCall) -> bool:
    """Whether a checked method call is an atomic operation (or `.is_ok()`/`.is_err()` of
    one)."""
    if e.method in CAS_TESTS and isinstance(e.receiver, ast.MethodCall):
        return atomic_op(e.receiver) is not None
    return atomic_op(e) is not None


def lower_atomic(lw: ExprLowerer, e: ast.MethodCall) -> ir.Value | None:
    """The value of an atomic method call (None: `e` is an ordinary method call)."""
    if e.method in CAS_TESTS and isinstance(e.receiver, ast.MethodCall):
        ok = lower_atomic(lw, e.receiver)
        if ok is None or e.method == "is_ok":
            return ok
        return lw.b.xor(ok, ir.Constant(I1, 1))
    op = atomic_op(e)
    if op is None:
        return None
    if BACKEND != "text":
        raise LowerError("atomics are lowered with the text IR builder only")
    assert isinstance(e.receiver, ast.Index)
    ptr, elem = lw.element_ptr(e.receiver)
    values = []
    for v in op.values:
        value = lw.expr(v)
        assert value is not None, v  # an atomic's operands are scalars
        values.append(value)
    b = lw.b
    st = lw.st
    if st.ms.target.atomic_flat and ptr.type.addrspace != 0:
        ptr = b._cast("addrspacecast", ptr, ir.PointerType())
    t = memory_type(elem)
    align = f", align {elem.bits // 8}"
    scope = _scope(st)
    orders = [LLVM_ORDERING[o] for o in op.orderings]
    p = f"{ptr.type} {ptr.ref}"
    if op.method == LOAD:
        return b._value(t, f"load atomic {t}, {p}{scope} {orders[0]}{align}")
    if op.method == STORE:
        v = values[0]
        b._void(f"store atomic {t} {v.ref}, {p}{scope} {orders[0]}{align}")
        return None
    if op.method == CAS:
        cur, new = values
        pair = b._value(ir.LiteralStructType([t, I1]),
                        f"cmpxchg {p}, {t} {cur.ref}, {t} {new.ref}{scope} {orders[0]} "
                        f"{orders[1]}{align}")
        return b.extract_value(pair, 1)
    rmw = rmw_operation(op.method, elem)
    return b._value(t, f"atomicrmw {rmw} {p}, {t} {values[0].ref}{scope} {orders[0]}{align}")


def lower_fence(lw: ExprLowerer, e: ast.Call) -> None:
    """`fence(o)`: `fence [syncscope] o` (a `Relaxed` fence never checks)."""
    (order,) = e.args
    assert isinstance(order, ast.OrderingLit)
    if BACKEND != "text":
        raise LowerError("atomics are lowered with the text IR builder only")
    lw.b._void(f"fence{_scope(lw.st)} {LLVM_ORDERING[order.ordering]}")
