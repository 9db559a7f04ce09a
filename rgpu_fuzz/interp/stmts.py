"""Compiling statements, blocks and control flow into closures over lanes.

A statement closure is `f(state, mask) -> mask after`: the lanes that go on to the next
statement. `break`, `continue` and `return` take their lanes out and record them in the
state's `brk`, `cont` and `ret` masks; `if` runs each branch under its share of the lanes and
joins them; loops iterate while any lane is still in them. Lanes that are not in the mask
never trap, never touch memory and never count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from rgpu_fuzz.interp.exprs import (
    BlockFn,
    ExprCompiler,
    ExprFn,
    check_bounds,
    is_unit,
    scalar_of,
    trap_division,
)
from rgpu_fuzz.interp.signals import BudgetSignal, RejectSignal
from rgpu_fuzz.interp.state import LaneState
from rgpu_fuzz.lang import ast, semantics
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import ArrayTy, SliceTy
from rgpu_fuzz.model.outcome import RejectReason
from rgpu_fuzz.model.scalars import Scalar

StmtFn: TypeAlias = Callable[[LaneState, np.ndarray], np.ndarray]

_FRESH_ARRAYS = (ast.ArrayRepeat, ast.ArrayList)
"""Array expressions that build a new array (others may return a local's array: copy it,
because Rust arrays are values and element stores update the array in place)."""


def over_budget(st: LaneState, span: Span) -> RejectSignal:
    """The rejection of a launch that ran out of steps or of time (`st.deadline`)."""
    if st.steps > st.budget:
        return RejectSignal(RejectReason.STEP_BUDGET, f"more than {st.budget} steps", span,
                            None)
    return BudgetSignal(RejectReason.STEP_BUDGET, "ran out of time after "
                        f"{st.steps} steps (the interpreter's time budget)", span, None)


class FnCompiler(ExprCompiler):
    """Compiles one function body; see the module docstring for the mask discipline."""

    # ------------------------------------------------------------ blocks

    def block(self, b: ast.Block) -> BlockFn:
        stmts = [self.stmt(s) for s in b.stmts]
        tail = b.tail
        if tail is None:
            tail_f: Callable[[LaneState, np.ndarray], tuple[Any, np.ndarray]] | None = None
        elif is_unit(tail.ty) and isinstance(tail, ast.If | ast.BlockExpr):
            as_stmt = self.stmt(ast.ExprStmt(expr=tail, semi=False, span=tail.span))
            tail_f = lambda st, m: (None, as_stmt(st, m))  # noqa: E731
        else:
            value = self.expr(tail)
            if self.may_diverge(tail):
                tail_f = lambda st, m: (value(st, m), st.live(m))  # noqa: E731
            else:
                tail_f = lambda st, m: (value(st, m), m)  # noqa: E731

        def run(st: LaneState, m: np.ndarray) -> tuple[Any, np.ndarray]:
            w = st.weight(m)
            for s in stmts:
                st.steps += w
                after = s(st, m)
                if after is not m:
                    m = after
                    if not m.any():
                        return None, m
                    w = st.weight(m)
            if tail_f is None:
                return None, m
            st.steps += w
            return tail_f(st, m)

        return run

    def if_value(self, e: ast.If) -> ExprFn:
        cond = self.expr(e.cond)
        then = self.block(e.then)
        els: BlockFn | None = None
        if isinstance(e.else_, ast.Block):
            els = self.block(e.else_)
        elif isinstance(e.else_, ast.If):
            inner = self.if_value(e.else_)
            els = lambda st, m: (inner(st, m), m)  # noqa: E731

        def run(st: LaneState, m: np.ndarray) -> Any:
            c = cond(st, m)
            mt = m & c
            mf = m & ~c
            tv = then(st, mt)[0] if mt.any() else None
            ev = els(st, mf)[0] if els is not None and mf.any() else None
            if tv is None or ev is None:
                return ev if tv is None else tv
            return np.where(c if tv.ndim == 1 else c[:, None], tv, ev)

        return run

    # ------------------------------------------------------------ statements

    def stmt(self, s: ast.Stmt) -> StmtFn:
        match s:
            case ast.Let():
                return self.let(s)
            case ast.Assign():
                return self.assign(s)
            case ast.ExprStmt(expr=ast.If() as e):
                return self.if_stmt(e)
            case ast.ExprStmt(expr=ast.BlockExpr(block=b)):
                run = self.block(b)
                return lambda st, m: run(st, m)[1]
            case ast.ExprStmt(expr=e):
                return self.expr_stmt(e)
            case ast.While() | ast.Loop() | ast.For():
                return self.loop(s)
            case ast.Break():
                return _break
            case ast.Continue():
                return _continue
            case ast.Return():
                return self.return_(s)
        raise AssertionError(f"cannot compile statement {type(s).__name__}")

    def expr_stmt(self, e: ast.Expr) -> StmtFn:
        f = self.expr(e)
        if self.may_diverge(e):
            def diverging(st: LaneState, m: np.ndarray) -> np.ndarray:
                f(st, m)
                return st.live(m)
            return diverging

        def plain(st: LaneState, m: np.ndarray) -> np.ndarray:
            f(st, m)
            return m

        return plain

    def if_stmt(self, e: ast.If) -> StmtFn:
        cond = self.expr(e.cond)
        then = self.block(e.then)
        els: StmtFn | None = None
        if isinstance(e.else_, ast.Block):
            else_block = self.block(e.else_)
            els = lambda st, m: else_block(st, m)[1]  # noqa: E731
        elif isinstance(e.else_, ast.If):
            els = self.if_stmt(e.else_)

        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            c = cond(st, m)
            mt = m & c
            mf = m & ~c
            out_t = then(st, mt)[1] if mt.any() else mt
            if els is None:
                return out_t | mf
            out_f = els(st, mf) if mf.any() else mf
            return out_t | out_f

        return run

    def let(self, s: ast.Let) -> StmtFn:
        init = self.expr(s.init)
        b = s.binding
        assert b is not None
        copy = isinstance(s.init.ty, ArrayTy) and not isinstance(s.init, _FRESH_ARRAYS)
        diverges = self.may_diverge(s.init)

        # No mask needed: a local is in scope only after its `let` in the same block, where
        # every live lane has executed this `let`.
        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            v = init(st, m)
            st.frame[b] = v.copy() if copy else v
            return st.live(m) if diverges else m

        return run

    def return_(self, s: ast.Return) -> StmtFn:
        if s.value is None or is_unit(s.value.ty):
            value = None if s.value is None else self.expr(s.value)

            def bare(st: LaneState, m: np.ndarray) -> np.ndarray:
                if value is not None:
                    value(st, m)
                st.ret = st.ret | m
                return st.none

            return bare
        f = self.expr(s.value)

        def with_value(st: LaneState, m: np.ndarray) -> np.ndarray:
            v = f(st, m)
            st.retval = v if st.retval is None else np.where(m, v, st.retval)
            st.ret = st.ret | m
            return st.none

        return with_value

    # ------------------------------------------------------------ assignment

    def assign(self, s: ast.Assign) -> StmtFn:
        target = s.target
        if isinstance(target, ast.Name):
            return self.assign_local(s, target)
        assert isinstance(target, ast.Index)
        base = target.base
        if isinstance(base, ast.Name) and base.kind is ast.NameKind.SHARED:
            return self.assign_tracked(s, target, shared=True)
        if isinstance(base.ty, SliceTy):
            return self.assign_tracked(s, target, shared=False)
        return self.assign_local_element(s, target)

    def combine(self, s: ast.Assign, ty: Scalar) -> Callable[[np.ndarray, np.ndarray,
                                                               np.ndarray], np.ndarray]:
        """The value stored by `target op= value` from the old value (plain `=`: the value)."""
        op = s.op
        if op is None:
            return lambda old, v, m: v
        span = s.span
        impl = semantics.binary_fn(op, ty)
        if ty.is_int and op in (ast.BinOp.DIV, ast.BinOp.REM):
            name = op.value

            def divide(old: np.ndarray, v: np.ndarray, m: np.ndarray) -> np.ndarray:
                trap_division(semantics.trap_lanes(name, ty, old, v), m, span)
                return impl(old, v)

            return divide
        return lambda old, v, m: impl(old, v)

    def assign_local(self, s: ast.Assign, target: ast.Name) -> StmtFn:
        b = target.binding
        assert b is not None
        value = self.expr(s.value)
        is_array = isinstance(target.ty, ArrayTy)
        copy = is_array and not isinstance(s.value, _FRESH_ARRAYS)
        combine = None if is_array else self.combine(s, scalar_of(target.ty))
        diverges = self.may_diverge(s.value)

        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            v = value(st, m)
            if diverges:
                m = st.live(m)
            old = st.frame[b]
            if combine is not None:
                v = combine(old, v, m)
            if m.all():
                st.frame[b] = v.copy() if copy else v
            else:
                st.frame[b] = np.where(m[:, None] if is_array else m, v, old)
            return m

        return run

    def value_then_index(self, s: ast.Assign, target: ast.Index) -> Callable[
            [LaneState, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The operands of `place[index] (op)= value` in Rust's order: the value first, then
        the index (Reference, "Assignment expressions"; for primitive `op=` too), so a trap
        in the value wins. Returns (value, index, lanes still live)."""
        index = self.expr(target.index)
        value = self.expr(s.value)
        diverges = self.may_diverge(target.index) or self.may_diverge(s.value)

        def operands(st: LaneState, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            v = value(st, m)
            if diverges:
                m = st.live(m)
            idx = index(st, m)
            if diverges:
                m = st.live(m)
            return v, idx, m

        return operands

    def assign_local_element(self, s: ast.Assign, target: ast.Index) -> StmtFn:
        base = target.base
        assert isinstance(base, ast.Name) and base.binding is not None
        assert isinstance(base.ty, ArrayTy)
        b, length, span = base.binding, base.ty.len, target.span
        operands = self.value_then_index(s, target)
        combine = self.combine(s, base.ty.elem)
        compound = s.op is not None

        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            v, idx, m = operands(st, m)
            arr = st.frame[b]
            full = check_bounds(idx, length, m, span)
            e = (idx if full else np.where(m, idx, 0)).astype(np.intp)
            if compound:
                v = combine(arr[st.lane_ids, e], v, m)
            if full:
                arr[st.lane_ids, e] = v
            else:
                arr[st.lane_ids[m], e[m]] = v[m]
            return m

        return run

    def assign_tracked(self, s: ast.Assign, target: ast.Index, *, shared: bool) -> StmtFn:
        base = target.base
        assert isinstance(base, ast.Name)
        ident, span = base.ident, target.span
        elem = scalar_of(target.ty)
        operands = self.value_then_index(s, target)
        combine = self.combine(s, elem)
        compound = s.op is not None
        length = self.program.shared_len(ident) if shared else 0

        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            v, idx, m = operands(st, m)
            mem = st.shared[ident] if shared else st.buffers[ident]
            ids = st.lane_ids if shared else st.gtid
            full = check_bounds(idx, length if shared else len(mem), m, span)
            if compound:
                old = mem.load(idx, m, full, ids, st.lane_ids, span)
                v = combine(old, v, m)
            mem.store(idx, v, m, full, ids, st.lane_ids, span)
            return m

        return run

    # ------------------------------------------------------------ loops

    def loop(self, s: ast.While | ast.Loop | ast.For) -> StmtFn:
        body = self.block(s.body)
        span = s.span
        if isinstance(s, ast.For):
            return self.for_loop(s, body)
        cond = self.expr(s.cond) if isinstance(s, ast.While) else None

        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            saved = st.brk, st.cont
            st.brk = st.none
            active = m
            while True:
                st.steps += st.weight(active)
                if st.steps > st.budget or st.out_of_time():
                    raise over_budget(st, span)
                st.cont = st.none
                if cond is not None:
                    active = active & cond(st, active)
                    if not active.any():
                        break
                body(st, active)
                active = active & ~(st.brk | st.ret)
                if not active.any():
                    break
            st.brk, st.cont = saved
            return m & ~st.ret

        return run

    def for_loop(self, s: ast.For, body: BlockFn) -> StmtFn:
        start = self.expr(s.start)
        end = self.expr(s.end)
        ty = scalar_of(s.start.ty)
        b = s.binding
        assert b is not None
        inclusive, span = s.inclusive, s.span
        one = np.ones(self.lanes, dtype=ty.dtype)

        def run(st: LaneState, m: np.ndarray) -> np.ndarray:
            i = start(st, m)
            stop = end(st, m)
            saved = st.brk, st.cont
            st.brk = st.none
            active = m & (i <= stop if inclusive else i < stop)
            while active.any():
                st.steps += st.weight(active)
                if st.steps > st.budget or st.out_of_time():
                    raise over_budget(st, span)
                st.cont = st.none
                st.frame[b] = i
                body(st, active)
                active = active & ~(st.brk | st.ret)
                # `..=` stops after `end` without computing end + 1 (which may overflow).
                active = active & (i != stop) if inclusive else active
                i = semantics.binary(ast.BinOp.ADD, ty, i, one)
                if not inclusive:
                    active = active & (i < stop)
            st.brk, st.cont = saved
            return m & ~st.ret

        return run


def _break(st: LaneState, m: np.ndarray) -> np.ndarray:
    st.brk = st.brk | m
    return st.none


def _continue(st: LaneState, m: np.ndarray) -> np.ndarray:
    st.cont = st.cont | m
    return st.none
