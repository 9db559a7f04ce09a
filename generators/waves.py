"""Wave sections: reductions, scans, ballots, votes, lane reads and shuffles of
thread-dependent values, in control flow that is wave-uniform by construction
(docs/language.md "Wave operations").

A kernel with `limits.wave_share` percent probability gets a section right after `tid`/`gid`
(before any statement that could return) and, when it has shared memory and no returns after
its barriers, another after the last phase, where its arguments may read shared slots that
other waves wrote. Every result is a `let` that later statements (and the final output
stores) read, so the values flow into the outputs. While `wave_share` is 0 no choice is spent
here and every seed of a profile keeps its case; with a share, only the seeds whose kernels
get sections name new cases (`wanted`).

Well-defined by construction, at every wave size some target has (32 and 64), for the launch's
block size `n`:
* wave-uniform control only: a section stands at the kernel's top level, and nests only in
  `if`s whose condition and `for`s whose bounds are built from wave-uniform values —
  block-uniform ones (`barriers.uniform_cond`), results of `ballot`, `read_lane`,
  `read_first_lane`, the reductions and votes, and `thread_idx_x() / wave_size()` when the
  block is one-dimensional (then it is the wave's index);
* lane reads from active lanes only: every wave of a block has at least `A` active lanes
  (the smallest of `n`, `n % 32`, `n % 64` that is not 0), so `read_lane` reads a lane below
  `A`; `shuffle` reads any lane when every wave is full (`n % 64 == 0`), else a lane below
  `A`; `shuffle_xor` flips only bits below `G`, the largest power of two dividing every
  wave's lane count (a lane below such a count, its low bits flipped, stays below it);
  `shuffle_down` is defined for every delta.

A ballot's vote is half the time a lane-dependent comparison (`lane_vote`) and its result half
the time replaced by its vote count (`vote_count`): a random condition is often the same in
every lane, and an output narrower than 64 bits keeps only a stored ballot's low half, so
without these the votes of lanes 32..63 rarely reached an output.
"""

from __future__ import annotations

from dataclasses import replace

from generators.barriers import uniform_cond
from generators.choice import SeededChoices
from generators.context import Builder, Pos, Var
from generators.expr import convert, expr
from generators.stmt import depth
from generators.values import int_literal
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS
from rgpu_fuzz.model.case import Launch
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.targets import WAVE_SIZES

BinOp = ast.BinOp
U32 = Scalar.U32

_NEST_MAX = 2
_TRIPS_MAX = 3


class WaveGen:
    """The facts a section's productions need about the launch, and the wave-uniform
    variables made so far."""

    def __init__(self, b: Builder, launch: Launch) -> None:
        self.b = b
        n = launch.threads_per_block
        counts = {n % w or w for w in WAVE_SIZES} | ({n} if n < max(WAVE_SIZES) else set())
        counts = {min(c, n) for c in counts}
        self.active_min = min(counts)
        self.full = all(n % w == 0 for w in WAVE_SIZES)
        self.xor_below = min(c & -c for c in counts)
        self.one_d = launch.block[1] == 1 and launch.block[2] == 1
        self.uniform: list[Var] = []
        self.results: list[Var] = []

    def stored(self) -> list[Var]:
        """The results still in scope (the output stores read them)."""
        visible = {id(v) for v in self.b.visible()}
        return [v for v in self.results if id(v) in visible]

    # -------------------------------------------------------------- values

    def _visible_uniform(self) -> list[Var]:
        visible = {id(v) for v in self.b.visible()}
        return [v for v in self.uniform if id(v) in visible]

    def uniform_u32(self) -> ast.Expr:
        """A u32 every lane of a wave shares."""
        vars_ = self._visible_uniform()
        if vars_ and self.b.src.boolean(0.6):
            v = self.b.src.choice(vars_)
            return convert(ast.Name(ident=v.name), v.ty, U32)
        if self.one_d and self.b.src.boolean(0.3):
            return ast.Binary(op=BinOp.DIV, lhs=ast.Call(func="thread_idx_x"),
                              rhs=ast.Call(func="wave_size"))
        return int_literal(self.b.src.integer(0, 70), U32)

    def uniform_cond(self) -> ast.Expr:
        """A bool every lane of a wave computes alike."""
        vars_ = [v for v in self._visible_uniform() if not v.ty.is_float]
        if not vars_ or self.b.src.boolean(0.3):
            return uniform_cond(self.b, 1)
        v = self.b.src.choice(vars_)
        name = ast.Name(ident=v.name)
        if v.ty is Scalar.BOOL:
            return name if self.b.src.boolean() else ast.Unary(op=ast.UnOp.NOT, operand=name)
        rem = ast.Binary(op=BinOp.REM, lhs=name,
                         rhs=int_literal(self.b.src.integer(2, 4), v.ty))
        return ast.Binary(op=self.b.src.choice((BinOp.EQ, BinOp.NE, BinOp.LT, BinOp.GT)),
                          lhs=rem, rhs=int_literal(self.b.src.integer(0, 1), v.ty))

    def lane_below(self, bound: int, pos: Pos) -> ast.Expr:
        """A per-lane u32 below `bound` (a thread-dependent value reduced into range)."""
        if bound <= 1:
            return int_literal(0, U32)
        src = self.b.src.integer(0, 2)
        if src == 0:
            base: ast.Expr = ast.Binary(op=BinOp.ADD, lhs=ast.Call(func="lane_id"),
                                        rhs=int_literal(self.b.src.integer(1, 40), U32))
        elif src == 1:
            base = ast.Binary(op=BinOp.XOR, lhs=ast.Call(func="lane_id"),
                              rhs=int_literal(self.b.src.integer(1, 63), U32))
        else:
            base = expr(self.b, U32, depth(self.b), pos)
        return ast.Binary(op=BinOp.REM, lhs=base, rhs=int_literal(bound, U32))

    # -------------------------------------------------------------- statements

    def section(self, pos: Pos, n: int, nest: int = 0) -> list[ast.Stmt]:
        """`n` wave statements at a wave-uniform position."""
        out: list[ast.Stmt] = []
        arg_pos = replace(pos, can_return=False, in_loop=False)
        for _ in range(n):
            if not self.b.take_stmt():
                break
            weights = dict(self.b.profile.waves)
            if nest >= _NEST_MAX or pos.block_depth >= self.b.limits.block_depth:
                weights["if"] = weights["for"] = 0
            if pos.work * _TRIPS_MAX > self.b.limits.work_max:
                weights["for"] = 0
            if not any(weights.values()):
                weights["wave_sum"] = 1
            kind = self.b.src.weighted(weights)
            if kind == "if":
                out.append(self._if(pos, nest))
            elif kind == "for":
                out.append(self._for(pos, nest))
            else:
                out.append(self.call(kind, arg_pos))
                if kind == "ballot" and self.b.src.boolean(0.5):
                    out.append(self.vote_count())
        return out

    def _if(self, pos: Pos, nest: int) -> ast.Stmt:
        inner = pos.nested()
        self.b.push()
        then = self.section(inner, self.b.src.integer(1, 2), nest + 1)
        self.b.pop()
        else_: ast.Block | None = None
        if self.b.src.boolean(0.4):
            self.b.push()
            else_ = ast.Block(stmts=tuple(self.section(inner, 1, nest + 1)))
            self.b.pop()
        return ast.ExprStmt(expr=ast.If(cond=self.uniform_cond(), then=ast.Block(
            stmts=tuple(then)), else_=else_), semi=False)

    def _for(self, pos: Pos, nest: int) -> ast.Stmt:
        bound = ast.Binary(op=BinOp.REM, lhs=self.uniform_u32(),
                           rhs=int_literal(_TRIPS_MAX + 1, U32))
        var = Var(self.b.fresh("wr"), U32, reserved=True)
        inner = pos.nested(loop_depth=pos.loop_depth + 1, work=pos.work * _TRIPS_MAX)
        self.b.note_work(inner.work)
        self.b.push()
        self.b.bind(var)
        self.uniform.append(var)
        body = self.section(inner, self.b.src.integer(1, 2), nest + 1)
        self.b.pop()
        return ast.For(var=var.name, start=int_literal(0, U32), end=bound,
                       body=ast.Block(stmts=tuple(body)))

    def call(self, kind: str, pos: Pos) -> ast.Stmt:
        """`let w: T = kind(args);` — its result bound for later statements."""
        sig = WAVE_FUNCTIONS[kind]
        b = self.b
        if sig.operands == frozenset(Scalar):
            ty = b.scalar_type()
        elif sig.operands:
            ty = b.int_type()
        else:
            ty = Scalar.BOOL
        if kind == "ballot" and b.src.boolean(0.5):
            value = self.lane_vote(pos)
        else:
            value = expr(b, ty, depth(b), pos)
        args: tuple[ast.Expr, ...] = (value,)
        if kind == "read_lane":
            args += (self._uniform_lane(),)
        elif kind == "shuffle":
            args += (expr(b, U32, depth(b), pos) if self.full and b.src.boolean(0.5)
                     else self.lane_below(self.active_min, pos),)
        elif kind == "shuffle_xor":
            args += (int_literal(b.src.integer(0, self.xor_below - 1), U32),)
        elif kind == "shuffle_down":
            args += (self.uniform_u32(),)
        _, result = sig.resolve(ty if sig.operands else None)
        var = Var(b.fresh("w"), result, reserved=True)
        b.bind(var)
        self.results.append(var)
        if sig.uniform_result:
            self.uniform.append(var)
        return ast.Let(name=var.name, mutable=False, ty=ast.ScalarType(scalar=result),
                       init=ast.Call(func=kind, args=args))

    def vote_count(self) -> ast.Stmt:
        """`let c: u32 = w.count_ones();` of the last result (a ballot), which the count
        replaces among the results the outputs store: every lane's vote reaches a u32, where
        an output narrower than 64 bits keeps only the low half (lanes 0..31) of the ballot
        itself. A wave function must be a `let`'s whole value, hence a statement of its own."""
        ballot = self.results.pop()
        var = Var(self.b.fresh("w"), U32, reserved=True)
        self.b.bind(var)
        self.results.append(var)
        self.uniform.append(var)
        return ast.Let(name=var.name, mutable=False, ty=ast.ScalarType(scalar=U32),
                       init=ast.MethodCall(receiver=ast.Name(ident=ballot.name),
                                           method="count_ones"))

    def lane_vote(self, pos: Pos) -> ast.Expr:
        """A vote that differs between the lanes of a wave: `lane_below(m) < r`, so a
        ballot has bits set and clear across the whole wave, 32..63 included."""
        m = self.b.src.integer(2, 7)
        return ast.Binary(op=BinOp.LT, lhs=self.lane_below(m, pos),
                          rhs=int_literal(self.b.src.integer(1, m - 1), U32))

    def _uniform_lane(self) -> ast.Expr:
        if self.active_min == 1 or self.b.src.boolean(0.4):
            return int_literal(self.b.src.integer(0, self.active_min - 1), U32)
        return ast.Binary(op=BinOp.REM, lhs=self.uniform_u32(),
                          rhs=int_literal(self.active_min, U32))


_SHARE_STREAM = 0x57A7E5
"""Offsets a seed into the stream of its wave-share draw (`wanted`)."""


def wanted(b: Builder) -> bool:
    """Whether this kernel gets wave sections. None while the share is 0 and all at 100,
    without a choice. In between, a seeded kernel draws from a stream of its own (seed
    offset by `_SHARE_STREAM`), not from `b.src`: a kernel without wave sections then takes
    every decision as before, so a profile that gains a share (the default's 10 %) keeps
    the cases of the seeds that do not get one, and the tests and filed findings that name
    them. Other drivers (Hypothesis, atheris) draw from `b.src`."""
    share = b.limits.wave_share
    if share <= 0 or share >= 100:
        return share >= 100
    if isinstance(b.src, SeededChoices):
        return SeededChoices(b.src.seed + _SHARE_STREAM).integer(1, 100) <= share
    return b.src.integer(1, 100) <= share


__all__ = ["WaveGen", "wanted"]
