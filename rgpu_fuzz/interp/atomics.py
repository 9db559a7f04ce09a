"""Atomic operations in the reference interpreter (docs/language.md "Atomics").

An atomic operation of the active lanes takes effect one lane at a time, in the order the
running schedule gives (`interp.schedules.lane_order`): each lane reads the element's value
as the previous lanes left it. Lanes of one operation that hit distinct elements commute,
so they are applied together; the operation runs in rounds, round k applying the k-th lane
(in schedule order) of every element.

Every ordering is sequentially consistent here: the reference runs one interleaving at a
time, and a fence orders nothing more. Atomic accesses never take part in race tracking (an
atomic element has no plain accesses, lang/atomics.py). A `#[shared]` element read by an
atomic operation before any thread of the block wrote it is `Rejected(uninit-shared-read)`,
as a plain read is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from rgpu_fuzz.interp.exprs import check_bounds
from rgpu_fuzz.interp.schedules import lane_order
from rgpu_fuzz.interp.signals import RejectSignal
from rgpu_fuzz.interp.state import LaneState
from rgpu_fuzz.lang import ast, semantics
from rgpu_fuzz.lang.atomics import CAS, CAS_TESTS, LOAD, STORE, AtomicOp, atomic_op
from rgpu_fuzz.model.outcome import RejectReason
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.interp.exprs import ExprCompiler, ExprFn

_Update = Callable[[np.ndarray, list[np.ndarray]], tuple[np.ndarray, np.ndarray]]
"""(old values, operand values of the same lanes) -> (new values, results)."""


def _rmw(elem: Scalar) -> dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    add = semantics.binary_fn(ast.BinOp.ADD, elem)
    sub = semantics.binary_fn(ast.BinOp.SUB, elem)
    return {
        "swap": lambda old, v: v,
        "fetch_add": add,
        "fetch_sub": sub,
        "fetch_and": np.bitwise_and,
        "fetch_or": np.bitwise_or,
        "fetch_xor": np.bitwise_xor,
        "fetch_min": np.minimum,
        "fetch_max": np.maximum,
    }


def _update(op: AtomicOp) -> _Update:
    if op.method == LOAD:
        return lambda old, vs: (old, old)
    if op.method == STORE:
        return lambda old, vs: (vs[0], old)
    if op.method == CAS:
        def cas(old: np.ndarray, vs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            ok = old == vs[0]
            return np.where(ok, vs[1], old).astype(old.dtype), ok
        return cas
    f = _rmw(op.elem)[op.method]

    def rmw(old: np.ndarray, vs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(f(old, vs[0]), dtype=old.dtype), old
    return rmw


def compile_method(cx: ExprCompiler, e: ast.MethodCall) -> ExprFn | None:
    """The closure of an atomic method call (None: `e` is an ordinary method call)."""
    if e.method in CAS_TESTS and isinstance(e.receiver, ast.MethodCall):
        inner = compile_method(cx, e.receiver)
        if inner is None:
            return None
        if e.method == "is_ok":
            return inner
        return lambda st, m: ~inner(st, m)
    op = atomic_op(e)
    if op is None:
        return None
    return _compile(cx, op, e.span)


def _compile(cx: ExprCompiler, op: AtomicOp, span: Any) -> ExprFn:
    idx_f = cx.expr(op.index)
    idx_diverges = cx.may_diverge(op.index)
    values = cx.exprs(op.values)
    update = _update(op)
    name = op.base.ident
    reads = op.method != STORE
    shared_len = cx.program.shared_len(name) if op.shared else 0
    result_dtype = np.bool_ if op.method == CAS else op.elem.dtype

    def run(st: LaneState, m: np.ndarray) -> np.ndarray:
        idx = idx_f(st, m)
        if idx_diverges:
            m = st.live(m)
        if op.shared:
            arr = st.shared[name]
            check_bounds(idx, shared_len, m, span)
            if arr.offsets is not None:
                idx = idx + arr.offsets
            data, written = arr.data, arr.written
        else:
            buf = st.buffers[name]
            check_bounds(idx, len(buf), m, span)
            data, written = buf.data, None
        vals, m = values(st, m)
        lanes = lane_order(np.flatnonzero(m))
        elems = idx[lanes].astype(np.intp)
        if written is not None and reads:
            unwritten = ~written[elems]
            if unwritten.any():
                lane = int(lanes[np.flatnonzero(unwritten)[0]])
                raise RejectSignal(
                    RejectReason.UNINIT_SHARED_READ,
                    f"`{name}[{int(idx[lane])}]` read before any thread of the block wrote it",
                    span, lane)
        out = np.zeros(st.lanes, dtype=result_dtype)
        operands = [np.broadcast_to(v, (st.lanes,))[lanes] for v in vals]
        for sel in _rounds(elems):
            e = elems[sel]
            new, res = update(data[e], [v[sel] for v in operands])
            data[e] = new
            out[lanes[sel]] = res
        if written is not None:
            written[elems] = True
        return out

    return run


def _rounds(elems: np.ndarray) -> list[np.ndarray]:
    """Positions in `elems` by round: round k holds the k-th occurrence of every element, so
    one round never touches an element twice and rounds keep the schedule's order."""
    if len(elems) == 0:
        return []
    order = np.argsort(elems, kind="stable")
    sorted_e = elems[order]
    starts = np.r_[0, np.flatnonzero(sorted_e[1:] != sorted_e[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(elems)]))
    rank = np.empty(len(elems), dtype=np.intp)
    rank[order] = np.arange(len(elems)) - group_start
    return [np.flatnonzero(rank == k) for k in range(int(rank.max()) + 1)]
