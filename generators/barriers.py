"""Barrier structures beyond the default layout: phases inside uniform `if`/`else`, `while` and
`loop`, uniform loops nested two deep, uniform `break`/`continue`/`return` among phases, and
early returns after the last barrier (docs/language.md GPU model).

Used only when one of the profile switches `barrier_ifs`, `barrier_whiles`, `barrier_nested`,
`barrier_exits`, `return_after_barrier` is on (all are off in default.toml); otherwise
`kernel._phases` keeps its original layout and no choice is spent here, so every seed of a
profile without them names the same case as before.

Race freedom and barrier agreement by construction. A *segment* starts and ends in the read
state R: every shared slot has been written and nobody has written since the last barrier.

    phase   sync; <own-slot writes>; sync; <reads> [; sync]
    for     for r in s..(s + U) { segment+ }
    while   let mut c = 0; while c < U [&& C] { c += 1; segment+ }
            let mut c = 0; loop { c += 1; if c > U { break; } segment+ }
    if      if C { segment+ } [else { segment+ } | else { <reads> } | else if C { ... }]
    exit    if C { <reads>; break; | continue; | return; }        (in a loop body only)

`U` (a bound of at most 3) and `C` (a condition) are *uniform by construction*: built only from
literals, consts, scalar kernel parameters, `block_idx_*`, `block_dim_*`, `grid_dim_*`, the
`.len()` of buffers and the counters of the enclosing uniform loops — exactly what
`rgpu_fuzz.lang.uniformity` accepts — so every thread of a block takes the same branches, runs
the same iterations and leaves a loop at the same point, and reaches the same barriers.
Loop counters are reserved names (never shadowed or assigned by ordinary statements); a
parameter counts only while it is not shadowed (`Builder.uniform`). Ordinary statements in a
phase never see a loop with barriers as theirs (`Pos.in_loop` stays as it was), so their
`break`/`continue` only leave ordinary loops. A `return` under a thread-dependent condition
is allowed only in the *tail* — statements after which no barrier can follow: the last
segment's reads (into both branches of a final `if`, never into a loop) and a few statements
after the last segment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generators.context import Builder, Pos, Var
from generators.expr import convert
from generators.stmt import (
    _counter,
    shared_helper_call,
    shared_store,
    shared_update,
    stmts,
)
from generators.values import int_literal, literal, usize
from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.scalars import Scalar

BinOp = ast.BinOp

BOUND_MAX = 3          # most iterations of a loop with barriers (per nesting level)
LOOP_NEST_MAX = 2      # loops with barriers nested in each other
NEST_MAX = 3           # if/loop structures with barriers nested in each other
_SYNC = ast.ExprStmt(expr=ast.Call(func="sync_threads"))
_COMPARE = (BinOp.EQ, BinOp.NE, BinOp.LT, BinOp.LE, BinOp.GT, BinOp.GE)
_UNIFORM_PRELUDE = ("block_idx", "block_dim", "grid_dim")


def enabled(b: Builder) -> bool:
    f = b.features
    return (f.barrier_ifs or f.barrier_whiles or f.barrier_nested or f.barrier_exits
            or f.return_after_barrier)


@dataclass(frozen=True, slots=True)
class Ctx:
    """Where a segment is generated: the positions for its writes and reads and the
    enclosing structures with barriers."""

    base: Pos                 # ordinary position (work, loop depth of the barrier loops)
    loops: int = 0            # enclosing loops with barriers
    nest: int = 0             # enclosing if/loop structures with barriers
    in_loop: bool = False     # inside a loop with barriers (uniform exits allowed)
    tail: bool = False        # no barrier can follow: thread-dependent `return` allowed

    @property
    def write(self) -> Pos:
        return self.base.nested(shared_write=True)

    @property
    def read(self) -> Pos:
        pos = self.base.nested(shared_read=True)
        return replace(pos, can_return=True) if self.tail else pos


# ------------------------------------------------------------------ uniform expressions


def _uniform_vars(b: Builder) -> list[Var]:
    visible = {id(v) for v in b.visible()}
    return [v for v in b.uniform if id(v) in visible]


def _u32_source(b: Builder) -> ast.Expr:
    """A u32 every thread of a block shares (any value)."""
    options = ["prelude", "len"]
    vars_ = _uniform_vars(b) + b.consts
    if vars_:
        options.append("var")
    kind = b.src.choice(options)
    if kind == "var":
        v = b.src.choice(vars_)
        return convert(ast.Name(ident=v.name), v.ty, Scalar.U32)
    if kind == "len":
        buf = b.src.choice(b.inputs + b.outputs)
        return ast.Cast(expr=ast.MethodCall(receiver=ast.Name(ident=buf.name), method="len"),
                        to=Scalar.U32)
    fn = b.src.choice(_UNIFORM_PRELUDE)
    return ast.Call(func=f"{fn}_{b.src.choice('xyz')}")


def uniform_bound(b: Builder, rounds_param: str | None) -> tuple[ast.Expr, int]:
    """A uniform u32 expression and the largest value it can have (at most `BOUND_MAX`)."""
    kind = b.src.integer(0, 2)
    if kind == 1 and rounds_param is not None:
        return ast.Name(ident=rounds_param), BOUND_MAX      # the argument is <= 3
    if kind == 2:
        m = b.src.integer(2, BOUND_MAX + 1)
        return ast.Binary(op=BinOp.REM, lhs=_u32_source(b),
                          rhs=int_literal(m, Scalar.U32)), m - 1
    n = b.src.integer(1, BOUND_MAX)
    return int_literal(n, Scalar.U32), n


def uniform_cond(b: Builder, depth: int = 2) -> ast.Expr:
    """A bool every thread of a block computes alike."""
    kind = b.src.integer(0, 9 if depth > 0 else 6)
    if kind <= 2:                                   # a u32 source against a small number
        lhs = _u32_source(b)
        if b.src.boolean(0.5):
            lhs = ast.Binary(op=BinOp.REM, lhs=lhs,
                             rhs=int_literal(b.src.integer(2, 4), Scalar.U32))
        return ast.Binary(op=b.src.choice(_COMPARE), lhs=lhs,
                          rhs=int_literal(b.src.integer(0, 4), Scalar.U32))
    if kind <= 5:                                   # a uniform variable against a literal
        vars_ = _uniform_vars(b) + b.consts
        if not vars_:
            return uniform_cond(b, 0) if kind > 3 else ast.BoolLit(value=b.src.boolean())
        v = b.src.choice(vars_)
        name = ast.Name(ident=v.name)
        if v.ty is Scalar.BOOL:
            return name if b.src.boolean() else ast.Unary(op=ast.UnOp.NOT, operand=name)
        if v.ty.is_int and b.src.boolean():
            rhs = int_literal(b.src.integer(0, 3), v.ty)
        else:
            rhs = literal(b.src, v.ty, specials=b.features.float_specials)
        return ast.Binary(op=b.src.choice(_COMPARE), lhs=name, rhs=rhs)
    if kind == 6:                                   # a buffer length
        buf = b.src.choice(b.inputs + b.outputs)
        return ast.Binary(op=b.src.choice(_COMPARE), lhs=ast.MethodCall(
            receiver=ast.Name(ident=buf.name), method="len"), rhs=usize(b.src.integer(1, 64)))
    if kind == 7:
        return ast.Unary(op=ast.UnOp.NOT, operand=uniform_cond(b, depth - 1))
    op = BinOp.LAND if kind == 8 else BinOp.LOR
    return ast.Binary(op=op, lhs=uniform_cond(b, depth - 1), rhs=uniform_cond(b, depth - 1))


# ------------------------------------------------------------------ segments


def segments(b: Builder, ctx: Ctx, n: int, rounds_param: str | None) -> list[ast.Stmt]:
    """`n` segments (R → R each); the last one inherits `ctx.tail`."""
    out: list[ast.Stmt] = []
    for i in range(n):
        last = i == n - 1
        out += segment(b, replace(ctx, tail=ctx.tail and last), rounds_param,
                       exits=ctx.in_loop and i > 0)
    return out


def _loop_ok(b: Builder, ctx: Ctx) -> bool:
    return (b.features.loops and ctx.loops < LOOP_NEST_MAX and ctx.nest < NEST_MAX
            and (ctx.loops == 0 or b.features.barrier_nested)
            and ctx.base.work * 2 <= b.limits.work_max)


def segment(b: Builder, ctx: Ctx, rounds_param: str | None, *,
            exits: bool = False) -> list[ast.Stmt]:
    f = b.features
    weights = {"phase": 4, "for": 0, "while": 0, "if": 0, "exit": 0}
    if _loop_ok(b, ctx):
        weights["for"] = 3 if f.barrier_loops else 0
        weights["while"] = 2 if f.barrier_whiles else 0
    if f.barrier_ifs and ctx.nest < NEST_MAX:
        weights["if"] = 3
    if exits and f.barrier_exits:
        weights["exit"] = 2
    kind = b.src.weighted(weights)
    if kind == "for":
        return [_for(b, ctx, rounds_param)]
    if kind == "while":
        return _while(b, ctx, rounds_param)
    if kind == "if":
        return [ast.ExprStmt(expr=_if(b, ctx, rounds_param, 1 + int(b.src.boolean(0.2))),
                             semi=False)]
    if kind == "exit":
        return [_exit(b, ctx)]
    return phase(b, ctx)


def phase(b: Builder, ctx: Ctx) -> list[ast.Stmt]:
    lo, hi = b.limits.top_stmts_min, b.limits.top_stmts_max
    out: list[ast.Stmt] = [_SYNC, shared_store(b, ctx.write)]
    out += stmts(b, ctx.write, b.src.integer(0, lo))
    out.append(_SYNC)
    out += stmts(b, ctx.read, b.src.integer(max(lo, 1) if ctx.tail else lo, hi))
    if not ctx.tail and b.src.boolean(0.2):
        out.append(_SYNC)
    return out


def _body(b: Builder, ctx: Ctx, trips: int, rounds_param: str | None) -> ast.Block:
    inner = Ctx(base=ctx.base.nested(loop_depth=ctx.base.loop_depth + 1,
                                     work=ctx.base.work * max(1, trips)),
                loops=ctx.loops + 1, nest=ctx.nest + 1, in_loop=True)
    b.note_work(inner.base.work)
    return _scoped(b, inner, b.src.integer(1, 2), rounds_param)


def _scoped(b: Builder, ctx: Ctx, n: int, rounds_param: str | None) -> ast.Block:
    """A block of `n` segments with its own scope."""
    b.push()
    out = segments(b, ctx, n, rounds_param)
    b.pop()
    return ast.Block(stmts=tuple(out))


def _capped_bound(b: Builder, ctx: Ctx, rounds_param: str | None) -> tuple[ast.Expr, int]:
    """A uniform bound whose trip count keeps the loop nest within `limits.work_max`."""
    bound, trips = uniform_bound(b, rounds_param)
    cap = max(1, b.limits.work_max // ctx.base.work)
    if trips > cap:
        bound, trips = int_literal(cap, Scalar.U32), cap
    return bound, trips


def _for(b: Builder, ctx: Ctx, rounds_param: str | None) -> ast.For:
    bound, trips = _capped_bound(b, ctx, rounds_param)
    ity = Scalar.U32 if b.src.boolean(0.6) else b.int_type()
    start = b.src.integer(-2 if ity.is_signed else 0, 2)
    var = Var(b.fresh("r"), ity, reserved=True)
    inclusive = False
    if isinstance(bound, ast.IntLit):
        inclusive = bound.value > 0 and b.src.boolean(0.3)
        end: ast.Expr = int_literal(start + bound.value - int(inclusive), ity)
    else:
        end = convert(bound, Scalar.U32, ity)
        if start != 0:
            end = ast.Binary(op=BinOp.ADD, lhs=int_literal(start, ity), rhs=end)
    b.push()
    b.bind(var)
    b.uniform.append(var)
    body = _body(b, ctx, trips, rounds_param)
    b.pop()
    return ast.For(var=var.name, start=int_literal(start, ity), end=end, body=body,
                   inclusive=inclusive)


def _while(b: Builder, ctx: Ctx, rounds_param: str | None) -> list[ast.Stmt]:
    bound, trips = _capped_bound(b, ctx, rounds_param)
    counter, let, bump = _counter(b)
    b.bind(counter)
    b.uniform.append(counter)
    limit = int_literal(bound.value, counter.ty) if isinstance(bound, ast.IntLit) \
        else convert(bound, Scalar.U32, counter.ty)
    c = ast.Name(ident=counter.name)
    if b.src.boolean(0.6):
        cond: ast.Expr = ast.Binary(op=BinOp.LT, lhs=c, rhs=limit)
        if b.src.boolean(0.3):
            cond = ast.Binary(op=BinOp.LAND, lhs=cond, rhs=uniform_cond(b, 1))
        body = _body(b, ctx, trips, rounds_param)
        return [let, ast.While(cond=cond, body=ast.Block(stmts=(bump, *body.stmts)))]
    exit_ = ast.ExprStmt(expr=ast.If(cond=ast.Binary(op=BinOp.GT, lhs=c, rhs=limit),
                                     then=ast.Block(stmts=(ast.Break(),))), semi=False)
    body = _body(b, ctx, trips, rounds_param)
    return [let, ast.Loop(body=ast.Block(stmts=(bump, exit_, *body.stmts)))]


def _if(b: Builder, ctx: Ctx, rounds_param: str | None, arms: int) -> ast.If:
    cond = uniform_cond(b)
    inner = replace(ctx, nest=ctx.nest + 1)
    form = 3 if arms > 1 else b.src.integer(0, 3)   # else: 0, 3 none, 1 phases, 2 reads
    # The checker reads a thread-dependent `return` as making all code *after it in the
    # text* divergent, so only a branch that no branch with barriers follows is a tail.
    then_ctx = inner if form in (0, 2) else replace(inner, tail=False)
    then = _scoped(b, then_ctx, b.src.integer(1, 2), rounds_param)
    else_: ast.Block | ast.If | None = None
    if arms > 1:
        else_ = _if(b, ctx, rounds_param, arms - 1)
    elif form == 1:
        else_ = _scoped(b, inner, b.src.integer(1, 2), rounds_param)
    elif form == 2:
        b.push()
        else_ = ast.Block(stmts=tuple(stmts(b, inner.read, b.src.integer(1, 2))))
        b.pop()
    return ast.If(cond=cond, then=then, else_=else_)


def _exit(b: Builder, ctx: Ctx) -> ast.Stmt:
    """`if C { <reads>; break; }` (or `continue`, or `return`) with a uniform `C`."""
    kinds = ["break", "continue"] + (["return"] if b.features.early_return else [])
    kind = b.src.choice(kinds)
    b.push()
    body = stmts(b, ctx.read, b.src.integer(0, 1))
    b.pop()
    leave = ast.Break() if kind == "break" else ast.Continue() if kind == "continue" \
        else ast.Return()
    return ast.ExprStmt(expr=ast.If(cond=uniform_cond(b),
                                    then=ast.Block(stmts=(*body, leave))), semi=False)


def phases(b: Builder, base: Pos, rounds_param: str | None) -> tuple[list[ast.Stmt], Pos]:
    """The shared-memory part of a kernel body (replaces `kernel._phases`); returns it and
    the position after it (reads allowed, and a thread-dependent `return` when the profile
    has `return_after_barrier`)."""
    lo, hi = b.limits.top_stmts_min, b.limits.top_stmts_max
    write = base.nested(shared_write=True)
    out: list[ast.Stmt] = [shared_store(b, write, i, j)
                           for i, s in enumerate(b.shared) for j in range(s.slots)]
    if b.features.shared_helpers:  # every own slot is written now
        if b.src.boolean(0.5):
            out.append(shared_update(b, write, store=False))
        out += shared_helper_call(b, write, "write")
    out += stmts(b, write, b.src.integer(0, lo))
    out.append(_SYNC)
    n = b.src.integer(0, max(0, b.limits.shared_phases_max - 1))
    ret = b.features.return_after_barrier and b.features.early_return
    first = Ctx(base=base, tail=ret and n == 0)
    if b.features.shared_helpers:
        out += shared_helper_call(b, first.read, "read")
    out += stmts(b, first.read, b.src.integer(lo, hi))
    out += segments(b, Ctx(base=base, tail=ret), n, rounds_param)
    last = base.nested(shared_read=True)
    if ret:
        last = replace(last, can_return=True)
        out += stmts(b, last, b.src.integer(0, 2))
    return out, last


__all__ = ["enabled", "phases", "segment", "uniform_bound", "uniform_cond"]
