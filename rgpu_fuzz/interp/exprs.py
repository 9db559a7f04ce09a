"""Compiling typed expressions into closures over lanes.

Each expression becomes `f(state, mask) -> values` once per (module, function, block size);
running a kernel then calls closures and never dispatches on node types. Values are arrays
with one entry per lane (2-D, lanes × length, for local arrays). Only lanes in `mask` are
meaningful: others may hold anything, and nothing they compute may trap or touch memory.

An expression may contain a block that returns, breaks or continues (`if c { return; } else
{ x }`); closures built over such children re-derive the live mask after evaluating them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from rgpu_fuzz.interp.signals import RejectSignal, TrapSignal, first_lane
from rgpu_fuzz.interp.state import LaneState
from rgpu_fuzz.interp.waves import collective
from rgpu_fuzz.lang import ast, semantics
from rgpu_fuzz.lang.features import children
from rgpu_fuzz.lang.literals import float_literal_value
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS
from rgpu_fuzz.lang.semantics import floats
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import ArrayTy, SliceTy, Special, Type
from rgpu_fuzz.model.outcome import RejectReason, TrapKind
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.interp.program import Program

ExprFn: TypeAlias = Callable[[LaneState, np.ndarray], Any]
BlockFn: TypeAlias = Callable[[LaneState, np.ndarray], tuple[Any, np.ndarray]]

_WAVE_QUERIES = frozenset(n for n, sig in WAVE_FUNCTIONS.items() if not sig.collective)
_DIVISION = {ast.BinOp.DIV: "/", ast.BinOp.REM: "%"}
_LEAVES = (ast.Name, ast.IntLit, ast.FloatLit, ast.BoolLit, ast.AssocConst)
"""Expressions without sub-expressions: they never diverge (asked about most often)."""
_FOLDABLE = (*_LEAVES, ast.Unary, ast.Cast)
"""The expressions `constant_value` may fold (the others are never constant)."""


def scalar_of(ty: Type | None) -> Scalar:
    """The scalar type the checker gave an expression (an internal invariant if not)."""
    assert isinstance(ty, Scalar), f"expected a scalar type, got {ty}"
    return ty


def trap_division(kind_masks: tuple[np.ndarray, np.ndarray], mask: np.ndarray,
                  span: Span) -> None:
    """Raise the trap of the first active lane that divides by zero or overflows."""
    zero, overflow = kind_masks
    bad = (zero | overflow) & mask
    if bad.any():
        lane = first_lane(bad)
        kind = TrapKind.DIV_BY_ZERO if zero[lane] else TrapKind.DIV_OVERFLOW
        raise TrapSignal(kind, span, lane)


def check_bounds(idx: np.ndarray, length: int, mask: np.ndarray, span: Span) -> bool:
    """Trap on the first active lane indexing out of bounds; True when every lane is active
    (so accesses may skip compressing by the mask)."""
    oob = idx >= np.uint64(length)
    if oob.any():
        bad = oob & mask
        if bad.any():
            raise TrapSignal(TrapKind.OUT_OF_BOUNDS, span, first_lane(bad))
    return bool(mask.all())


class ExprCompiler:
    """Turns the expressions of one typed function into closures (see module docstring)."""

    def __init__(self, program: Program, fn: ast.Fn) -> None:
        self.program = program
        self.fn = fn
        self.lanes = program.lanes
        self._diverges: dict[int, bool] = {}

    def may_diverge(self, node: object) -> bool:
        """Whether evaluating `node` (or a tuple of nodes) can make lanes leave through
        `return`, `break` or `continue` (conservatively: any such statement inside it).
        Memoised per node, so compiling a function asks about each node once."""
        if isinstance(node, tuple):
            return any(self.may_diverge(n) for n in node)
        if isinstance(node, _LEAVES):
            return False
        key = id(node)
        hit = self._diverges.get(key)
        if hit is None:
            hit = isinstance(node, ast.Return | ast.Break | ast.Continue) or any(
                self.may_diverge(c) for c in children(node))
            self._diverges[key] = hit
        return hit

    # ------------------------------------------------------------ helpers

    def const(self, value: object, ty: Scalar) -> ExprFn:
        arr = np.full(self.lanes, value, dtype=ty.dtype)
        arr.flags.writeable = False
        return lambda st, m: arr

    def constant_value(self, e: ast.Expr) -> np.ndarray | None:
        """The lanes of a constant expression (literals, consts, negation and casts of them),
        folded at compile time with the run-time semantics; None if not constant."""
        match e:
            case ast.IntLit(value=v):
                # `128i8` and `9223372036854775808i64` only occur negated (the checker
                # allows MIN that way): hold the literal's two's-complement bits, and the
                # wrapping negation gives MIN.
                ty = scalar_of(e.ty)
                wrapped = v & ((1 << ty.bits) - 1) if ty.is_int else v
                if ty.is_signed and wrapped >> (ty.bits - 1):
                    wrapped -= 1 << ty.bits
                return np.full(self.lanes, wrapped, dtype=ty.dtype)
            case ast.FloatLit(text=text):
                ty = scalar_of(e.ty)
                return np.full(self.lanes, float_literal_value(text, ty), dtype=ty.dtype)
            case ast.BoolLit(value=v):
                return np.full(self.lanes, v, dtype=bool)
            case ast.AssocConst(scalar=s, name=name):
                return np.full(self.lanes, s.min_value if name == "MIN" else s.max_value,
                               dtype=s.dtype)
            case ast.Name(kind=ast.NameKind.CONST, ident=ident):
                return np.full(self.lanes, self.program.checked.consts[ident],
                               dtype=scalar_of(e.ty).dtype)
            case ast.Unary(op=op, operand=inner):
                lanes = self.constant_value(inner)
                return None if lanes is None else semantics.unary(op, scalar_of(inner.ty),
                                                                  lanes)
            case ast.Cast(expr=inner, to=to):
                lanes = self.constant_value(inner)
                if lanes is None or (to.is_float and scalar_of(inner.ty).is_float
                                     and np.isnan(lanes).any()):
                    return None  # an arithmetic NaN: its bits are chosen at run time
                return semantics.cast(lanes, scalar_of(inner.ty), to)
            case _:
                return None

    def block(self, b: ast.Block) -> BlockFn:  # implemented by the statement compiler
        raise NotImplementedError

    def if_value(self, e: ast.If) -> ExprFn:  # implemented by the statement compiler
        raise NotImplementedError

    def exprs(self, es: tuple[ast.Expr, ...]) -> Callable[[LaneState, np.ndarray],
                                                             tuple[list[Any], np.ndarray]]:
        """Left-to-right evaluation of several operands; returns the values and the live
        mask after them."""
        fs = [self.expr(x) for x in es]
        if not any(self.may_diverge(x) for x in es):
            return lambda st, m: ([f(st, m) for f in fs], m)
        divs = [self.may_diverge(x) for x in es]

        def run(st: LaneState, m: np.ndarray) -> tuple[list[Any], np.ndarray]:
            out = []
            for f, d in zip(fs, divs, strict=True):
                out.append(f(st, m))
                if d:
                    m = st.live(m)
            return out, m

        return run

    # ------------------------------------------------------------ dispatch

    def expr(self, e: ast.Expr) -> ExprFn:
        if isinstance(e, _FOLDABLE):
            folded = self.constant_value(e)
            if folded is not None:
                folded.flags.writeable = False
                return lambda st, m: folded
        match e:
            case ast.Name():
                return self.name(e)
            case ast.Unary(op=op, operand=inner):
                f = self.expr(inner)
                ty = scalar_of(inner.ty)
                return lambda st, m: semantics.unary(op, ty, f(st, m))
            case ast.Binary():
                return self.binary(e)
            case ast.Cast(expr=inner, to=to):
                f = self.expr(inner)
                src = scalar_of(inner.ty)
                return lambda st, m: semantics.cast(f(st, m), src, to)
            case ast.Index():
                return self.index(e)
            case ast.MethodCall():
                return self.method_call(e)
            case ast.Call():
                return self.call(e)
            case ast.AssocCall(scalar=s, args=(arg,)):
                f = self.expr(arg)
                return lambda st, m: semantics.from_bits(f(st, m), s)
            case ast.ArrayRepeat(value=value):
                return self.array_repeat(value, e.ty)
            case ast.ArrayList(elems=elems):
                operands = self.exprs(elems)
                return lambda st, m: np.stack(operands(st, m)[0], axis=1)
            case ast.If():
                return self.if_value(e)
            case ast.BlockExpr(block=b):
                run = self.block(b)
                return lambda st, m: run(st, m)[0]
        raise AssertionError(f"cannot compile expression {type(e).__name__}")

    def name(self, e: ast.Name) -> ExprFn:
        assert e.kind is ast.NameKind.LOCAL and e.binding is not None, e
        assert not isinstance(e.ty, SliceTy), "slices are used only by indexing and .len()"
        b = e.binding
        return lambda st, m: st.frame[b]

    def array_repeat(self, value: ast.Expr, ty: Type | None) -> ExprFn:
        assert isinstance(ty, ArrayTy)
        n = ty.len
        const = self.constant_value(value)
        if const is not None:
            template = np.repeat(const[:, None], n, axis=1)
            return lambda st, m: template.copy()
        f = self.expr(value)
        return lambda st, m: np.repeat(f(st, m)[:, None], n, axis=1)

    # ------------------------------------------------------------ operators

    def binary(self, e: ast.Binary) -> ExprFn:
        op = e.op
        ty = scalar_of(e.lhs.ty)
        lf, rf = self.expr(e.lhs), self.expr(e.rhs)
        lhs_diverges = self.may_diverge(e.lhs)
        if op is ast.BinOp.LAND or op is ast.BinOp.LOR:
            is_and = op is ast.BinOp.LAND

            def short_circuit(st: LaneState, m: np.ndarray) -> np.ndarray:
                left = lf(st, m)
                if lhs_diverges:
                    m = st.live(m)
                need = m & left if is_and else m & ~left
                if not need.any():
                    return left
                right = rf(st, need)
                return left & right if is_and else left | right

            return short_circuit
        span = e.span
        impl = semantics.binary_fn(op, ty)
        if op in _DIVISION and ty.is_int:
            name = _DIVISION[op]

            def divide(st: LaneState, m: np.ndarray) -> np.ndarray:
                a = lf(st, m)
                if lhs_diverges:
                    m = st.live(m)
                b = rf(st, m)
                trap_division(semantics.trap_lanes(name, ty, a, b), m, span)
                return impl(a, b)

            return divide
        if lhs_diverges or self.may_diverge(e.rhs):
            operands = self.exprs((e.lhs, e.rhs))

            def general(st: LaneState, m: np.ndarray) -> np.ndarray:
                (a, b), _ = operands(st, m)
                return impl(a, b)

            return general
        return lambda st, m: impl(lf(st, m), rf(st, m))

    def method_call(self, e: ast.MethodCall) -> ExprFn:
        if e.method == "len":
            return self.length(e.receiver)
        from rgpu_fuzz.interp.atomics import compile_method  # it builds on this module
        atomic = compile_method(self, e)
        if atomic is not None:
            return atomic
        ty = scalar_of(e.receiver.ty)
        name = e.method
        operands = self.exprs((e.receiver, *e.args))
        if name == "clamp":
            return self._clamp(e, ty, operands)
        if name in ("wrapping_div", "wrapping_rem", "div_euclid", "rem_euclid"):
            span = e.span

            def checked(st: LaneState, m: np.ndarray) -> np.ndarray:
                (r, a), m = operands(st, m)
                trap_division(semantics.trap_lanes(name, ty, r, a), m, span)
                return semantics.method(name, ty, r, [a])

            return checked

        def call(st: LaneState, m: np.ndarray) -> np.ndarray:
            vals, _ = operands(st, m)
            return semantics.method(name, ty, vals[0], vals[1:])

        return call

    @staticmethod
    def _clamp(e: ast.MethodCall, ty: Scalar, operands: Callable[..., Any]) -> ExprFn:
        """`x.clamp(lo, hi)`: core's `assert!(min <= max)` panics first (trap `assert`)."""
        span = e.span

        def checked(st: LaneState, m: np.ndarray) -> np.ndarray:
            (r, lo, hi), m = operands(st, m)
            bad = floats.clamp_trap(lo, hi) & m
            if bad.any():
                raise TrapSignal(TrapKind.ASSERT, span, first_lane(bad))
            return semantics.method("clamp", ty, r, [lo, hi])

        return checked

    def length(self, receiver: ast.Expr) -> ExprFn:
        ty = receiver.ty
        if isinstance(ty, ArrayTy):
            return self.const(ty.len, Scalar.USIZE)
        assert isinstance(receiver, ast.Name) and isinstance(ty, SliceTy), receiver
        ident = receiver.ident
        return lambda st, m: st.lens[ident]

    # ------------------------------------------------------------ memory

    def index(self, e: ast.Index) -> ExprFn:
        base = e.base
        span = e.span
        idx_f = self.expr(e.index)
        idx_diverges = self.may_diverge(e.index)
        if isinstance(base, ast.Name) and base.kind is ast.NameKind.SHARED:
            ident = base.ident
            length = self.program.shared_len(ident)

            def load_shared(st: LaneState, m: np.ndarray) -> np.ndarray:
                idx = idx_f(st, m)
                if idx_diverges:
                    m = st.live(m)
                full = check_bounds(idx, length, m, span)
                return st.shared[ident].load(idx, m, full, st.lane_ids, st.lane_ids, span)

            return load_shared
        if isinstance(base.ty, SliceTy):
            assert isinstance(base, ast.Name)
            ident = base.ident

            def load_global(st: LaneState, m: np.ndarray) -> np.ndarray:
                idx = idx_f(st, m)
                if idx_diverges:
                    m = st.live(m)
                buf = st.buffers[ident]
                full = check_bounds(idx, len(buf), m, span)
                return buf.load(idx, m, full, st.gtid, st.lane_ids, span)

            return load_global
        assert isinstance(base.ty, ArrayTy), base
        length = base.ty.len
        base_f = self.expr(base)

        def load_local(st: LaneState, m: np.ndarray) -> np.ndarray:
            arr = base_f(st, m)
            idx = idx_f(st, m)
            if idx_diverges:
                m = st.live(m)
            if check_bounds(idx, length, m, span):
                return arr[st.lane_ids, idx.astype(np.intp)]
            safe = np.where(m, idx, 0).astype(np.intp)
            return arr[st.lane_ids, safe]

        return load_local

    # ------------------------------------------------------------ calls

    def call(self, e: ast.Call) -> ExprFn:
        name = e.func
        if name == "sync_threads":
            return self.barrier(e.span)
        if name == "fence" and name not in self.program.checked.fns:
            return lambda st, m: None  # one interleaving at a time: nothing to order
        if name in ast.PRELUDE_FUNCTIONS or name in _WAVE_QUERIES:
            return lambda st, m: st.prelude[name]
        if name in WAVE_FUNCTIONS:
            return self.wave_call(e)
        callee = self.program.fn(name)
        operands = self.exprs(e.args)

        def call(st: LaneState, m: np.ndarray) -> Any:
            vals, m = operands(st, m)
            return callee.invoke(st, m, vals)

        return call

    def wave_call(self, e: ast.Call) -> ExprFn:
        """A collective wave function (`waves.py`): the arguments of every executing lane,
        then one step over the waves."""
        operands = self.exprs(e.args)
        run = collective(e.func, scalar_of(e.args[0].ty), e.span)

        def wave(st: LaneState, m: np.ndarray) -> np.ndarray:
            vals, m = operands(st, m)
            return run(st.waves, m, vals)

        return wave

    def barrier(self, span: Span) -> ExprFn:
        """`sync_threads()`: every thread of the block must arrive here together (lock step
        makes "together" this very execution); then a new shared-memory interval starts.
        In a wave of several blocks each block either arrives whole or not at all (a block
        whose threads all took another uniform path is not at this barrier)."""

        def sync(st: LaneState, m: np.ndarray) -> None:
            if st.groups == 1:
                if not m.all():
                    raise RejectSignal(
                        RejectReason.BARRIER_DIVERGENCE,
                        f"{int(m.sum())} of {st.threads} threads of the block reached this "
                        "barrier", span, first_lane(~m),
                    )
                for shared in st.shared.values():
                    shared.barrier()
                return
            some, every = st.per_block(m)
            if (some != every).any():
                # Some block arrived in part. The launch is re-run block by block, which
                # reports this barrier with the block's own thread count.
                raise RejectSignal(RejectReason.BARRIER_DIVERGENCE, "a block arrived in part",
                                   span, None)
            for shared in st.shared.values():
                shared.barrier(every)

        return sync


def is_unit(ty: Type | None) -> bool:
    return ty is None or isinstance(ty, Special)
