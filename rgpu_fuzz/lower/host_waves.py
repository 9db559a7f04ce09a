"""Wave operations on the host target: lanes emulated exactly (docs/design.md §3).

The host runs a block's threads one after another (`lower.host`). A wave is `wave_size`
consecutive threads of the block in linear order (`x + y·bx + z·bx·by`, the order the host
runs them in); the lanes of a wave that are past the block's end, or whose thread has
returned (`RETURNED`, or left the loop a structural `break`/`continue` leaves), are inactive.

A cross-lane wave operation splits a region exactly as `sync_threads()` does: every thread
evaluates the operation's arguments in the region before it, then the block function runs a
*wave step* — for each wave, its lanes' arguments are read from their frames and each active
lane's result written to its frame — and the region after it reads the result. To give the
step a statement of its own, `hoist_waves` first rewrites the kernel's body: each wave call
`w(e0, e1)` of a statement becomes, before that statement,

    let a0 = e0; let a1 = e1; let r = w(a0, a1);

and the call itself the name `r` (fresh bindings, innermost calls first, arguments left to
right). A wave call in a `while` condition makes the loop `loop { <lets>; if !cond { break; }
body }`; one in an `if` condition or a `for` range is hoisted before the statement. What this
changes: a statement's wave operations (and their arguments) are evaluated before the rest of
that statement; the checker only lets them stand in wave-uniform control flow, so every lane
of a wave reaches them together, as on a GPU. A wave call where its evaluation is
conditional inside one expression (an arm of an `if` expression, a block expression, the
right of `&&`/`||`) or inside a helper function is `Unsupported` here (`LowerError`).

`wave_size()` and `lane_id()` are per-thread values (`lane_query`) and need no step.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp, NameKind, UnOp
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.types import Special
from rgpu_fuzz.lower.context import TCTX_BDIM, TCTX_TID, FnState, LowerError
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I8, I32, I64, load_scalar, store_scalar
from rgpu_fuzz.lower.waves import CROSS_LANE, SCAN, binop, identity, is_wave_call, reduce_op
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.host import EntryState
    from rgpu_fuzz.lower.targets import HostTarget


def lane_query(target: HostTarget, st: FnState, op: str) -> ir.Value:
    """`wave_size()` or `lane_id()` of the current thread; any other wave operation here is
    one `hoist_waves` could not give a step of its own."""
    ws = ir.Constant(I32, target.wave_size)
    if op == "wave_size":
        return ws
    if op != "lane_id":
        raise LowerError(f"wave operation {op} in a conditional expression or helper")
    b = st.b
    tid = [st.tctx_word(TCTX_TID + i) for i in range(3)]
    bx, by = st.tctx_word(TCTX_BDIM), st.tctx_word(TCTX_BDIM + 1)
    linear = b.add(tid[0], b.mul(bx, b.add(tid[1], b.mul(by, tid[2]))))
    return b.urem(linear, ws)


# ---------------------------------------------------------------- the rewrite


class _Hoister:
    """`hoist_waves` for one function: fresh bindings after the largest one in use."""

    def __init__(self, fn: ast.Fn) -> None:
        used = [b for n in walk(fn) if isinstance(b := getattr(n, "binding", None), int)]
        self.next = max(used, default=-1) + 1

    def fresh(self, init: ast.Expr, prefix: str) -> tuple[ast.Let, ast.Name]:
        binding = self.next
        self.next += 1
        name = f"rgpu_{prefix}{binding}"
        let = ast.Let(name=name, mutable=False, ty=None, init=init, binding=binding)
        return let, ast.Name(ident=name, ty=init.ty, kind=NameKind.LOCAL, binding=binding)

    # ---- expressions: wave calls out, in evaluation order
    def expr(self, e: ast.Expr, out: list[ast.Stmt]) -> ast.Expr:
        if isinstance(e, ast.Call) and e.func in CROSS_LANE:
            args = []
            for a in e.args:
                let, name = self.fresh(self.expr(a, out), "arg")
                out.append(let)
                args.append(name)
            let, name = self.fresh(dataclasses.replace(e, args=tuple(args)), "wave")
            out.append(let)
            return name
        if not any(is_wave_call(n) for n in walk(e)):
            return e
        if isinstance(e, ast.Binary) and e.op in (BinOp.LAND, BinOp.LOR) \
                and _has_wave(e.rhs):
            raise LowerError("wave operation on the right of && or || (host)")
        if isinstance(e, ast.If | ast.BlockExpr):
            raise LowerError("wave operation inside an if or block expression (host)")
        changes: dict[str, object] = {}
        for f in dataclasses.fields(e):
            value = getattr(e, f.name)
            if isinstance(value, tuple):
                changes[f.name] = tuple(self.expr(v, out) if _is_expr(v) else v for v in value)
            elif _is_expr(value):
                changes[f.name] = self.expr(value, out)
        return dataclasses.replace(e, **changes)  # type: ignore[arg-type]

    # ---- statements
    def block(self, blk: ast.Block) -> ast.Block:
        stmts: list[ast.Stmt] = []
        for s in blk.stmts:
            stmts += self.stmt(s)
        tail = blk.tail
        if tail is not None and _has_wave(tail):
            if _block_like(tail):
                stmts += self.stmt(ast.ExprStmt(expr=tail, semi=False))
                if tail.ty not in (Special.UNIT, Special.NEVER, None):
                    raise LowerError("a block-like tail with a value and a wave operation")
                tail = None
            else:
                tail = self.expr(tail, stmts)
        return dataclasses.replace(blk, stmts=tuple(stmts), tail=tail)

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        if not _has_wave(s):
            return [s]
        out: list[ast.Stmt] = []
        match s:
            case ast.Let(init=init):
                out.append(dataclasses.replace(s, init=self.expr(init, out)))
            case ast.Assign(target=target, value=value):
                v = self.expr(value, out)
                out.append(dataclasses.replace(s, target=self.expr(target, out), value=v))
            case ast.Return(value=value) if value is not None:
                out.append(dataclasses.replace(s, value=self.expr(value, out)))
            case ast.ExprStmt(expr=ast.If() as e):
                out.append(dataclasses.replace(s, expr=self.if_(e, out)))
            case ast.ExprStmt(expr=ast.BlockExpr(block=blk) as e):
                out.append(dataclasses.replace(s, expr=dataclasses.replace(
                    e, block=self.block(blk))))
            case ast.ExprStmt(expr=e):
                out.append(dataclasses.replace(s, expr=self.expr(e, out)))
            case ast.While(cond=cond, body=body):
                out.append(self.while_(s, cond, body))
            case ast.Loop(body=body):
                out.append(dataclasses.replace(s, body=self.block(body)))
            case ast.For(start=start, end=end, body=body):
                start = self.expr(start, out)
                out.append(dataclasses.replace(s, start=start, end=self.expr(end, out),
                                               body=self.block(body)))
            case _:
                raise LowerError(f"wave operation in {type(s).__name__} (host)")
        return out

    def if_(self, e: ast.If, out: list[ast.Stmt]) -> ast.If:
        cond = self.expr(e.cond, out)
        else_: ast.Block | ast.If | None = e.else_
        if isinstance(else_, ast.If):
            if _has_wave(else_.cond):
                pre: list[ast.Stmt] = []
                inner = self.if_(else_, pre)
                else_ = ast.Block(stmts=(*pre, ast.ExprStmt(expr=inner, semi=False)))
            else:
                else_ = self.if_(else_, [])
        elif else_ is not None:
            else_ = self.block(else_)
        return dataclasses.replace(e, cond=cond, then=self.block(e.then), else_=else_)

    def while_(self, s: ast.While, cond: ast.Expr, body: ast.Block) -> ast.Stmt:
        if not _has_wave(cond):
            return dataclasses.replace(s, body=self.block(body))
        pre: list[ast.Stmt] = []
        c = self.expr(cond, pre)
        stop = ast.If(cond=ast.Unary(op=UnOp.NOT, operand=c, ty=Scalar.BOOL),
                      then=ast.Block(stmts=(ast.Break(),)), ty=Special.UNIT)
        inner = self.block(body)
        stmts = (*pre, ast.ExprStmt(expr=stop, semi=False), *inner.stmts)
        return ast.Loop(body=dataclasses.replace(inner, stmts=stmts), span=s.span)


def _is_expr(v: object) -> bool:
    return type(v).__module__ == ast.__name__ and hasattr(v, "ty") and not isinstance(
        v, ast.Block)


def _has_wave(node: object) -> bool:
    return any(is_wave_call(n) for n in walk(node))


def _block_like(e: ast.Expr) -> bool:
    return isinstance(e, ast.If | ast.BlockExpr)


def hoist_waves(fn: ast.Fn) -> ast.Fn:
    """`fn` with every cross-lane wave call given a `let` of its own (module docstring)."""
    if not _has_wave(fn.body):
        return fn
    return dataclasses.replace(fn, body=_Hoister(fn).block(fn.body))


def is_wave_let(s: ast.Stmt) -> bool:
    """A statement `hoist_waves` made for a wave step: `let r = w(a0, ...)`."""
    return isinstance(s, ast.Let) and is_wave_call(s.init)


# ---------------------------------------------------------------- the wave step


def emit_wave_step(st: EntryState, let: ast.Let, wave_size: int) -> None:
    """Run the wave call of `let` (`is_wave_let`) for every wave of the block: read each
    lane's arguments from its frame, write each active lane's result to its frame."""
    call = let.init
    assert isinstance(call, ast.Call) and let.binding is not None
    args = [a for a in call.args if isinstance(a, ast.Name) and a.binding is not None]
    assert len(args) == len(call.args), call
    b = st.b
    ws = ir.Constant(I32, wave_size)
    waves = b.udiv(b.add(st.nthreads, ir.Constant(I32, wave_size - 1)), ws)
    _WaveStep(st, call.func, args, let, wave_size).run(waves)


class _WaveStep:
    """The IR of one wave step, inside the block function (`optnone`: plain loops)."""

    def __init__(self, st: EntryState, op: str, args: list[ast.Name], let: ast.Let,
                 wave_size: int) -> None:
        self.st = st
        self.op = op
        self.args = args
        self.types = [a.ty for a in args]
        assert all(isinstance(t, Scalar) for t in self.types)
        self.result_ty = let.init.ty
        assert isinstance(self.result_ty, Scalar)
        self.result_binding = let.binding
        self.ws = wave_size

    @property
    def b(self) -> ir.IRBuilder:
        return self.st.b

    def c32(self, n: int) -> ir.Constant:
        return ir.Constant(I32, n)

    def slot(self, t: ir.Value, binding: int) -> ir.Value:
        return self.b.gep(self.st.frame_of(t), [ir.Constant(I64, self.st.offsets[binding])],
                          source_etype=I8)

    def arg(self, t: ir.Value, i: int) -> ir.Value:
        s = self.types[i]
        binding = self.args[i].binding
        assert isinstance(s, Scalar) and binding is not None
        return load_scalar(self.b, self.slot(t, binding), s)

    def running(self, t: ir.Value) -> ir.Value:
        from rgpu_fuzz.lower.host import RUNNING

        state = self.b.load(self.st.frame_of(t), typ=I8)
        return self.b.icmp_unsigned("==", state, ir.Constant(I8, RUNNING))

    def var(self, t: ir.Type, init: ir.Value, name: str) -> ir.Value:
        slot = self.st.temp(t, name)
        self.b.store(init, slot)
        return slot

    def lanes(self, base: ir.Value, body: object) -> None:
        """`body(lane, thread)` for each lane of the wave at `base` whose thread is running
        (lanes in order)."""
        st = self.st
        count = self.b.sub(st.nthreads, base)
        count = self.b.select(self.b.icmp_unsigned("<", count, self.c32(self.ws)), count,
                              self.c32(self.ws))

        def each(lane: ir.Value, nxt: ir.Block) -> None:
            t = self.b.add(base, lane)
            go = st.fn.append_basic_block("lane.active")
            self.b.cbranch(self.running(t), go, nxt)
            self.b.position_at_end(go)
            body(lane, t)  # type: ignore[operator]

        st.counted(count, each, "lane")

    def run(self, waves: ir.Value) -> None:
        self.st.counted(waves, lambda w, _nxt: self.wave(self.b.mul(w, self.c32(self.ws))),
                        "wave")

    def wave(self, base: ir.Value) -> None:
        """Pass 1 gathers what the lanes share (first and last active lane, the ballot of the
        first argument when it is a bool, the fold of the first argument); pass 2 gives each
        active lane its result."""
        b = self.b
        first = self.var(I32, self.c32(-1), "wave.first")
        last = self.var(I32, self.c32(-1), "wave.last")
        mask = self.var(I64, ir.Constant(I64, 0), "wave.mask")
        active = self.var(I64, ir.Constant(I64, 0), "wave.active")
        s0 = self.types[0]
        assert isinstance(s0, Scalar)
        kind = reduce_op(self.op, s0) if self.op.startswith("wave_") and s0.is_int else ""
        acc = self.var(_vt(s0), identity(kind, s0), "wave.acc") if kind else None

        def gather(lane: ir.Value, t: ir.Value) -> None:
            is_first = b.icmp_signed("<", b.load(first, typ=I32), self.c32(0))
            b.store(b.select(is_first, lane, b.load(first, typ=I32)), first)
            b.store(lane, last)
            bit = b.shl(ir.Constant(I64, 1), b.zext(lane, I64))
            b.store(b.or_(b.load(active, typ=I64), bit), active)
            if s0 is Scalar.BOOL:
                votes = b.select(self.arg(t, 0), bit, ir.Constant(I64, 0))
                b.store(b.or_(b.load(mask, typ=I64), votes), mask)
            if acc is not None and self.op != SCAN:
                b.store(binop(b, self.st.ms.intrinsics, kind, b.load(acc, typ=_vt(s0)),
                              self.arg(t, 0)), acc)

        self.lanes(base, gather)
        shared = {"first": first, "last": last, "mask": mask, "active": active, "acc": acc,
                  "base": base}
        self.lanes(base, lambda lane, t: self.give(lane, t, shared))

    def give(self, lane: ir.Value, t: ir.Value, sh: dict[str, object]) -> None:
        b = self.b
        op = self.op
        ws = self.ws
        base = sh["base"]
        assert isinstance(base, ir.Value)
        first, last, mask, active = (
            b.load(sh[k], typ=I64 if k in ("mask", "active") else I32)  # type: ignore
            for k in ("first", "last", "mask", "active"))
        n = self.st.nthreads

        def from_lane(src: ir.Value) -> ir.Value:
            """The first argument of lane `src` (i32, any value) when its thread exists,
            else this lane's own (an ill-defined case the reference rejects)."""
            in_wave = b.icmp_unsigned("<", src, self.c32(ws))
            ts = b.add(base, b.select(in_wave, src, lane))  # type: ignore[arg-type]
            ts = b.select(b.icmp_unsigned("<", ts, n), ts, t)
            return self.arg(ts, 0)

        match op:
            case "ballot":
                value = mask
            case "wave_any":
                value = b.icmp_unsigned("!=", mask, ir.Constant(I64, 0))
            case "wave_all":
                value = b.icmp_unsigned("==", mask, active)
            case "read_first_lane":
                value = from_lane(first)
            case "read_lane":
                value = from_lane(self.arg(t, 1))
            case "shuffle":
                value = from_lane(b.and_(self.arg(t, 1), self.c32(ws - 1)))
            case "shuffle_xor":
                value = from_lane(b.and_(b.xor(lane, self.arg(t, 1)), self.c32(ws - 1)))
            case "shuffle_down":
                delta = self.arg(t, 1)
                ok = b.icmp_unsigned("<=", delta, b.sub(last, lane))
                value = from_lane(b.select(ok, b.add(lane, delta), lane))
            case _ if op == SCAN:
                acc = sh["acc"]
                s0 = self.types[0]
                assert isinstance(acc, ir.Value) and isinstance(s0, Scalar)
                value = b.add(b.load(acc, typ=_vt(s0)), self.arg(t, 0))
                b.store(value, acc)
            case _:
                acc = sh["acc"]
                s0 = self.types[0]
                assert isinstance(acc, ir.Value) and isinstance(s0, Scalar)
                value = b.load(acc, typ=_vt(s0))
        assert isinstance(self.result_ty, Scalar)
        assert self.result_binding is not None
        store_scalar(b, value, self.slot(t, self.result_binding), self.result_ty)


def _vt(s: Scalar) -> ir.Type:
    from rgpu_fuzz.lower.values import value_type

    return value_type(s)


__all__ = ["emit_wave_step", "hoist_waves", "is_wave_let", "lane_query"]
