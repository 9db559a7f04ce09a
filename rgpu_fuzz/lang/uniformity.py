"""Static uniformity analysis: `sync_threads()` only in control flow every thread of a block
takes alike (docs/language.md "Items"), and collective wave functions only in control flow
every lane of a wave takes alike (docs/language.md "Wave operations").

Sound and deliberately simple (flow-insensitive for variables):
* uniform values: literals, consts, `T::MIN/MAX`, scalar kernel parameters, `block_idx_*`,
  `block_dim_*`, `grid_dim_*`, `.len()`, operators/casts/methods over uniform values, calls
  of helpers that read neither `thread_idx_*` nor shared memory with uniform arguments, and
  locals none of whose assignments is non-uniform or under non-uniform control;
* non-uniform: `thread_idx_*`, reads of buffers and shared arrays, and whatever they flow into;
* control is non-uniform inside an `if`/`while`/`for` whose condition or bounds are
  non-uniform, inside a loop that some thread may leave or skip early (`break`, `continue`
  or `return` under non-uniform control), and after a `return` under non-uniform control.
Variable taint and divergent loops are iterated to a fixpoint; a last pass reports.

The wave analysis is the same analysis run again with a wider notion of "uniform" (every
block-uniform value is wave-uniform, so it is sound where the block analysis is): the results
of `read_first_lane`, `read_lane`, `ballot`, the reductions and `wave_all`/`wave_any` are
wave-uniform, and so is `thread_idx_x() / wave_size()` — the wave's index when the block is
one-dimensional or `block_dim_x` is a multiple of the wave size. The checker cannot see the
block's shape (it is in the case file), so for other shapes the reference interpreter checks
at run time that every lane of the wave reaches each wave operation together, and rejects
the case otherwise (`Rejected(wave-divergence)`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp, NameKind
from rgpu_fuzz.lang.env import Env
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.methods import (
    BARRIER,
    LEN,
    PRELUDE_FUNCTIONS,
    UNIFORM_PRELUDE,
    WAVE_FUNCTIONS,
)
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import ArrayTy
from rgpu_fuzz.lang.waves import is_collective

__all__ = [
    "check_barrier_placement",
    "check_uniformity",
    "check_wave_placement",
    "varying_helpers",
]

Reason = tuple[str, ...]
"""Why control may diverge at a point: the notes of the diagnostic (None: uniform)."""


def varying_helpers(fns: Mapping[str, ast.Fn]) -> frozenset[str]:
    """Helpers whose result may differ between threads even for uniform arguments: they read
    `thread_idx_*`, `lane_id()` or shared memory, directly or through another helper."""
    direct: dict[str, bool] = {}
    callees: dict[str, set[str]] = {}
    for name, fn in fns.items():
        direct[name] = False
        callees[name] = set()
        for n in walk(fn.body):
            if isinstance(n, ast.Call):
                if n.func in fns:
                    callees[name].add(n.func)
                elif n.func.startswith("thread_idx_") or n.func == "lane_id":
                    direct[name] = True
            elif isinstance(n, ast.Name) and n.kind is NameKind.SHARED:
                direct[name] = True
    varying = {n for n, v in direct.items() if v}
    changed = True
    while changed:
        changed = False
        for name, cs in callees.items():
            if name not in varying and cs & varying:
                varying.add(name)
                changed = True
    return frozenset(varying)


def check_barrier_placement(kernel: ast.Fn, env: Env, barriers: int | None = None) -> None:
    """Report every `sync_threads()` that is not a statement of its own reached only through
    blocks and the bodies of `if`/`else`, `while`, `loop` and `for`. A barrier inside an
    expression (a condition, a `let` initialiser, an operand, an `if` used as a value) is
    outside the language: the lowering splits kernels into barrier-free regions at
    statements (`lower/host.py`). `barriers`, when given, is how many `sync_threads()` calls
    the kernel's body holds (the body checker counts them); when every one of them stands
    where a statement barrier may, the rest of the tree is not walked."""
    rest: list[object] = []
    placed = _structural_block(kernel.body, rest, _barrier_stands)
    if barriers is not None and placed == barriers:
        return
    for node in rest:
        _no_barrier(node, env)


def check_wave_placement(kernel: ast.Fn, env: Env, waves: int | None = None) -> None:
    """Report every collective wave call that is not the whole initialiser of a `let` or the
    whole value of an assignment, that statement reached as a barrier is (above), or whose
    arguments hold another collective call. Why: as a barrier does, a wave operation splits
    the host lowering's per-thread regions (`lower/host.py`), which it can only do between
    statements. `waves` as `barriers` above."""
    rest: list[object] = []
    placed = _structural_block(kernel.body, rest, _wave_stands)
    if waves is not None and placed == waves:
        return
    for node in rest:
        for n in walk(node):
            if isinstance(n, ast.Call) and is_collective(n):
                env.error(f"`{n.func}(...)` must be the value of a `let` or an assignment",
                          n.span, "a wave operation may stand as `let v = op(...);` or "
                          "`place = op(...);` (also `op=`) in the kernel's blocks and the "
                          "bodies of `if`/`else`, `while`, `loop` and `for`; its arguments "
                          "hold no other wave operation")


def _barrier_stands(s: ast.Stmt | ast.ExprStmt) -> tuple[object, ...] | None:
    """The parts of `s` left to check when `s` is a barrier standing as a statement."""
    match s:
        case ast.ExprStmt(expr=ast.Call(func=func, args=())) if func == BARRIER:
            return ()
    return None


def _wave_stands(s: ast.Stmt | ast.ExprStmt) -> tuple[object, ...] | None:
    """The parts of `s` left to check when `s` is a collective wave call standing as the
    value of a `let` or an assignment."""
    match s:
        case ast.Let(init=ast.Call(args=args) as call) if is_collective(call):
            return args
        case ast.Assign(target=target, value=ast.Call(args=args) as call) \
                if is_collective(call):
            return (target, *args)
    return None


Stands = Callable[[ast.Stmt | ast.ExprStmt], "tuple[object, ...] | None"]


def _structural_block(b: ast.Block, rest: list[object], stands: Stands) -> int:
    """The statements under `b` that `stands` accepts (barriers or wave calls), counted; the
    nodes where one would be misplaced go to `rest`."""
    placed = 0
    tail = () if b.tail is None else (ast.ExprStmt(expr=b.tail, span=b.tail.span),)
    for s in (*b.stmts, *tail):
        parts = stands(s)
        if parts is not None:
            placed += 1
            rest += parts
            continue
        match s:
            case ast.ExprStmt(expr=ast.BlockExpr(block=block)):
                placed += _structural_block(block, rest, stands)
            case ast.ExprStmt(expr=ast.If() as e):
                placed += _structural_if(e, rest, stands)
            case ast.While():
                rest.append(s.cond)
                placed += _structural_block(s.body, rest, stands)
            case ast.Loop():
                placed += _structural_block(s.body, rest, stands)
            case ast.For():
                rest += (s.start, s.end)
                placed += _structural_block(s.body, rest, stands)
            case _:
                rest.append(s)
    return placed


def _structural_if(e: ast.If, rest: list[object], stands: Stands) -> int:
    rest.append(e.cond)
    placed = _structural_block(e.then, rest, stands)
    if isinstance(e.else_, ast.If):
        placed += _structural_if(e.else_, rest, stands)
    elif isinstance(e.else_, ast.Block):
        placed += _structural_block(e.else_, rest, stands)
    return placed


def _no_barrier(node: object, env: Env) -> None:
    for n in walk(node):
        if isinstance(n, ast.Call) and n.func == BARRIER:
            env.error("`sync_threads()` must be a statement of its own", n.span,
                      "a barrier may stand in the kernel's blocks and in the bodies of "
                      "`if`/`else`, `while`, `loop` and `for`, not inside an expression")


def check_uniformity(kernel: ast.Fn, env: Env, varying: frozenset[str], *,
                     wave: bool = False) -> None:
    """Report every `sync_threads()` of the (typed) kernel in possibly divergent control; with
    `wave`, every collective wave call in control that may differ between the lanes of a
    wave, and every argument that must be wave-uniform and may not be."""
    analysis = _Uniformity(kernel, env, varying, wave)
    while True:
        before = (len(analysis.tainted), len(analysis.divergent_loops))
        analysis.run(report=False)
        if (len(analysis.tainted), len(analysis.divergent_loops)) == before:
            break
    analysis.run(report=True)


class _Uniformity:
    def __init__(self, kernel: ast.Fn, env: Env, varying: frozenset[str], wave: bool) -> None:
        self.kernel = kernel
        self.env = env
        self.varying = varying
        self.wave = wave
        self.among = "the lanes of a wave" if wave else "the threads of a block"
        self.tainted: set[int] = set()
        self.divergent_loops: dict[int, Reason] = {}
        self.loops: list[int] = []
        self.exited: Reason | None = None
        self.report = False

    def run(self, *, report: bool) -> None:
        self.report = report
        self.exited = None
        self.loops = []
        self.block(self.kernel.body, None)

    def _cond_reason(self, span: Span, what: str) -> Reason:
        text = self.env.snippet(span)
        shown = f"`{text}` " if text else ""
        return (f"{what} {shown}at {self.env.where(span)} may differ between {self.among}",)

    def _taint(self, binding: int | None) -> None:
        if binding is not None:
            self.tainted.add(binding)

    # -------------------------------------------------------------- statements

    def block(self, b: ast.Block, ctx: Reason | None) -> bool:
        for s in b.stmts:
            self.stmt(s, ctx)
        return True if b.tail is None else self.expr(b.tail, ctx)

    def stmt(self, s: ast.Stmt, ctx: Reason | None) -> None:
        ctx = ctx or self.exited
        match s:
            case ast.Let():
                if not self.expr(s.init, ctx) or ctx:
                    self._taint(s.binding)
            case ast.Assign():
                self.assign(s, ctx)
            case ast.ExprStmt():
                self.expr(s.expr, ctx)
            case ast.While():
                loop_ctx = ctx or self.divergent_loops.get(id(s))
                uniform = self.expr(s.cond, loop_ctx)
                body_ctx = loop_ctx or (None if uniform else
                                        self._cond_reason(s.cond.span, "the loop condition"))
                self.loop(s, s.body, body_ctx)
            case ast.Loop():
                self.loop(s, s.body, ctx or self.divergent_loops.get(id(s)))
            case ast.For():
                uniform = self.expr(s.start, ctx) & self.expr(s.end, ctx)
                if not uniform or ctx:
                    self._taint(s.binding)
                bounds = None if uniform else self._cond_reason(
                    s.start.span.to(s.end.span), "the loop range")
                self.loop(s, s.body, ctx or bounds or self.divergent_loops.get(id(s)))
            case ast.Break() | ast.Continue():
                if ctx and self.loops:
                    word = "break" if isinstance(s, ast.Break) else "continue"
                    self._diverge(self.loops[-1], ctx, f"`{word}`", s)
            case ast.Return():
                if s.value is not None:
                    self.expr(s.value, ctx)
                if ctx:
                    for loop in self.loops:
                        self._diverge(loop, ctx, "`return`", s)
                    if self.exited is None:
                        self.exited = (f"some threads may have returned at "
                                       f"{self.env.where(s.span)}", *ctx)

    def _diverge(self, loop: int, ctx: Reason, what: str, s: ast.Stmt) -> None:
        if loop not in self.divergent_loops:
            self.divergent_loops[loop] = (
                f"threads may leave this loop or skip iterations differently: {what} at "
                f"{self.env.where(s.span)}", *ctx)

    def loop(self, s: ast.Stmt, body: ast.Block, ctx: Reason | None) -> None:
        self.loops.append(id(s))
        self.block(body, ctx)
        self.loops.pop()

    def assign(self, s: ast.Assign, ctx: Reason | None) -> None:
        value = self.expr(s.value, ctx)
        t = s.target
        if isinstance(t, ast.Name):
            if not value or ctx:
                self._taint(t.binding)
            return
        assert isinstance(t, ast.Index)
        index = self.expr(t.index, ctx)
        base = t.base
        if isinstance(base, ast.Name) and isinstance(base.ty, ArrayTy) \
                and base.kind is NameKind.LOCAL and (not (value and index) or ctx):
            self._taint(base.binding)

    # -------------------------------------------------------------- expressions

    def expr(self, e: ast.Expr, ctx: Reason | None) -> bool:
        """Visit `e` (checking barriers in it); True when its value is uniform."""
        ctx = ctx or self.exited
        match e:
            case ast.IntLit() | ast.FloatLit() | ast.BoolLit() | ast.AssocConst():
                return True
            case ast.Name():
                return e.kind is NameKind.CONST or (
                    e.kind is NameKind.LOCAL and e.binding not in self.tainted)
            case ast.Unary():
                return self.expr(e.operand, ctx)
            case ast.Cast():
                return self.expr(e.expr, ctx)
            case ast.Binary(op=BinOp.LAND | BinOp.LOR):
                lhs = self.expr(e.lhs, ctx)
                rhs_ctx = ctx or (None if lhs else self._cond_reason(e.lhs.span, "the condition"))
                return self.expr(e.rhs, rhs_ctx) and lhs
            case ast.Binary(op=BinOp.DIV, lhs=ast.Call(func="thread_idx_x"),
                            rhs=ast.Call(func="wave_size")) if self.wave:
                return True  # the wave's index; checked at run time (module docstring)
            case ast.Binary():
                return self.expr(e.lhs, ctx) & self.expr(e.rhs, ctx)
            case ast.Index():
                index = self.expr(e.index, ctx)
                base = e.base
                return (isinstance(base, ast.Name) and isinstance(base.ty, ArrayTy)
                        and base.kind is NameKind.LOCAL and base.binding not in self.tainted
                        and index)
            case ast.MethodCall(method=m) if m == LEN:
                return True
            case ast.MethodCall():
                return all([self.expr(e.receiver, ctx), *(self.expr(a, ctx) for a in e.args)])
            case ast.AssocCall():
                return all([self.expr(a, ctx) for a in e.args])
            case ast.Call():
                return self.call(e, ctx)
            case ast.ArrayRepeat():
                return self.expr(e.value, ctx)
            case ast.ArrayList():
                return all([self.expr(x, ctx) for x in e.elems])
            case ast.If():
                return self.if_(e, ctx)
            case ast.BlockExpr():
                return self.block(e.block, ctx)
        raise AssertionError(f"unknown expression {e!r}")

    def call(self, e: ast.Call, ctx: Reason | None) -> bool:
        uniform = [self.expr(a, ctx) for a in e.args]
        if e.func == BARRIER:
            if ctx and self.report and not self.wave:
                self.env.error("`sync_threads()` in possibly divergent control flow", e.span,
                               *ctx, "every thread of a block must reach the same barriers")
            return True
        if e.func in PRELUDE_FUNCTIONS:
            return e.func in UNIFORM_PRELUDE
        if (sig := WAVE_FUNCTIONS.get(e.func)) is not None:
            if self.wave and self.report:
                self._wave_call(e, ctx, uniform)
            return e.func == "wave_size" or (self.wave and sig.uniform_result)
        return all(uniform) and e.func not in self.varying

    def _wave_call(self, e: ast.Call, ctx: Reason | None, uniform: list[bool]) -> None:
        sig = WAVE_FUNCTIONS[e.func]
        ctx = ctx or self.exited  # an argument may have returned (`{ return; }`)
        if sig.collective and ctx:
            self.env.error(f"`{e.func}` in possibly wave-divergent control flow", e.span, *ctx,
                           "every lane of a wave must reach a wave operation together")
        for i in sig.uniform_args:
            if not uniform[i]:
                arg = e.args[i]
                text = self.env.snippet(arg.span)
                self.env.error(f"the argument `{text}` of `{e.func}` may differ between the "
                               "lanes of a wave", arg.span,
                               f"`{e.func}` needs the same value on every lane: a literal, "
                               "a block-uniform value or a wave operation's uniform result")

    def if_(self, e: ast.If, ctx: Reason | None) -> bool:
        cond = self.expr(e.cond, ctx)
        inner = ctx or (None if cond else self._cond_reason(e.cond.span, "the condition"))
        uniform = self.block(e.then, inner) and cond
        if isinstance(e.else_, ast.If):
            uniform = self.if_(e.else_, inner) and uniform
        elif isinstance(e.else_, ast.Block):
            uniform = self.block(e.else_, inner) and uniform
        return uniform
