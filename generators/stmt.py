"""Statement productions: lets, assignments, stores, if/else-if, loops, blocks, calls,
break/continue/return.

Termination and memory discipline by construction:
* every loop is bounded by a small trip count fixed when it is built: `for` over a literal
  range or `s..(s + e % n)`; `while`/`loop` with a counter that is incremented first thing
  in the body (so `continue` cannot skip it) and that nothing else assigns; the product of
  the trip counts of nested loops (`Pos.work`) never exceeds `limits.work_max`;
* stores go to locals, local arrays (index reduced into range), the thread's own output
  slots, and — in a write phase only — the thread's own shared slots;
* `break`/`continue` only where `Pos.in_loop` says the innermost loop is an ordinary one,
  `return` only where `Pos.can_return` (never in a kernel with barriers).
"""

from __future__ import annotations

from generators import half
from generators.context import Builder, LocalArray, Pos, Var
from generators.expr import (
    call_args,
    convert,
    expr,
    if_chain,
    in_range,
    nonzero_divisor,
    own_slot,
)
from generators.values import int_literal, usize
from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.scalars import Scalar

BinOp = ast.BinOp


def depth(b: Builder) -> int:
    return b.src.integer(1, max(1, b.limits.expr_depth))


def block(b: Builder, pos: Pos, *, lo: int = 0, hi: int | None = None,
          bind: tuple[Var, ...] = ()) -> ast.Block:
    """A nested `{ ... }` of ordinary statements, with its own scope (and `bind` in it)."""
    b.push()
    for v in bind:
        b.bind(v)
    out = stmts(b, pos, b.src.integer(lo, b.limits.block_stmts_max if hi is None else hi))
    b.pop()
    return ast.Block(stmts=tuple(out))


def stmts(b: Builder, pos: Pos, n: int) -> list[ast.Stmt]:
    """Up to `n` statements in the current scope (fewer when the budget runs out)."""
    out: list[ast.Stmt] = []
    for _ in range(n):
        if not b.take_stmt():
            break
        out += stmt(b, pos)
    return out


def _loop_ok(b: Builder, pos: Pos) -> bool:
    return (b.features.loops and pos.block_depth < b.limits.block_depth
            and pos.loop_depth < b.limits.loop_depth and pos.work * 2 <= b.limits.work_max)


def _applicable(b: Builder, pos: Pos) -> dict[str, int]:
    w = dict(b.profile.statements)
    if not b.features.local_arrays:
        w["let_array"] = 0
    if not b.assignable():
        w["assign"] = w["compound"] = 0
    if not b.arrays(mutable=True):
        w["array_store"] = 0
    if not (pos.output_access and b.outputs and b.gid is not None):
        w["output_store"] = 0
        w["pair_store"] = 0
    if not (pos.shared_write and b.shared and b.tid is not None):
        w["shared_store"] = 0
    if pos.block_depth >= b.limits.block_depth:
        w["if"] = w["block"] = 0
    if not _loop_ok(b, pos):
        w["for"] = w["while"] = w["loop"] = 0
    if not _callable(b, pos):
        w["call"] = 0
    if not pos.in_loop:
        w["break"] = w["continue"] = 0
    if not pos.can_return:
        w["return"] = 0
    if not any(w.values()):
        w["let"] = 1
    return w


def _callable(b: Builder, pos: Pos) -> list:
    return [h for h in b.helpers[: b.callable_helpers]
            if pos.work * h.cost <= b.limits.work_max and h.callable_at(pos, b.tid)]


def stmt(b: Builder, pos: Pos) -> list[ast.Stmt]:
    """One statement (a loop with its counter is two)."""
    kind = b.src.weighted(_applicable(b, pos))
    return _PRODUCTIONS[kind](b, pos)


def _let(b: Builder, pos: Pos) -> list[ast.Stmt]:
    ty = b.scalar_type()
    init = expr(b, ty, depth(b), pos)
    shadow = b.shadowable()
    name = b.src.choice(shadow).name if shadow and b.src.boolean(0.2) else b.fresh("v")
    mutable = b.src.boolean(0.6)
    annotated = b.src.boolean(0.8)
    b.bind(Var(name, ty, assignable=mutable))
    return [ast.Let(name=name, mutable=mutable,
                    ty=ast.ScalarType(scalar=ty) if annotated else None, init=init)]


def _let_array(b: Builder, pos: Pos) -> list[ast.Stmt]:
    elem = b.scalar_type()
    n = 1 << b.src.integer(0, 3) if b.src.boolean() else b.src.integer(1, 8)
    init: ast.Expr
    if n <= 4 and b.src.boolean(0.4):
        init = ast.ArrayList(elems=tuple(expr(b, elem, depth(b) - 1, pos) for _ in range(n)))
    else:
        init = ast.ArrayRepeat(value=expr(b, elem, depth(b) - 1, pos),
                               len=ast.IntLit(value=n))
    mutable = b.src.boolean(0.85)
    name = b.fresh("a")
    b.bind(LocalArray(name, elem, n, mutable))
    annotated = b.src.boolean(0.7)
    return [ast.Let(name=name, mutable=mutable,
                    ty=ast.ArrayType(elem=elem, len=ast.IntLit(value=n)) if annotated else None,
                    init=init)]


def _compound_ops(ty: Scalar) -> tuple[BinOp, ...]:
    if ty is Scalar.BOOL:
        return (BinOp.AND, BinOp.OR, BinOp.XOR)
    if ty.is_float:
        return (BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.DIV, BinOp.REM)
    return (BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.DIV, BinOp.REM, BinOp.AND, BinOp.OR,
            BinOp.XOR, BinOp.SHL, BinOp.SHR)


def _assignment(b: Builder, target: ast.Expr, ty: Scalar, pos: Pos,
                compound: bool) -> ast.Assign:
    """`target = e` or `target op= e`, with a safe right-hand side for `/=` and `%=`."""
    d = depth(b)
    if compound:
        ops = {op: b.profile.operators.get(op.value, 0) for op in _compound_ops(ty)}
        if any(ops.values()):
            op = b.src.weighted(ops)
            if op in (BinOp.SHL, BinOp.SHR):
                value = expr(b, b.int_type(), d, pos)
            elif op in (BinOp.DIV, BinOp.REM) and ty.is_int:
                value = nonzero_divisor(b, ty, d, pos)
            else:
                value = expr(b, ty, d, pos)
            return ast.Assign(target=target, value=value, op=op)
    return ast.Assign(target=target, value=expr(b, ty, d, pos))


def _assign(b: Builder, pos: Pos, compound: bool = False) -> list[ast.Stmt]:
    v = b.src.choice(b.assignable())
    return [_assignment(b, ast.Name(ident=v.name), v.ty, pos, compound)]


def _compound(b: Builder, pos: Pos) -> list[ast.Stmt]:
    return _assign(b, pos, compound=True)


def _array_store(b: Builder, pos: Pos) -> list[ast.Stmt]:
    a = b.src.choice(b.arrays(mutable=True))
    length = ast.MethodCall(receiver=ast.Name(ident=a.name), method="len") \
        if b.src.boolean() else usize(a.len)
    idx = in_range(b, length, a.len, depth(b) - 1, pos)
    target = ast.Index(base=ast.Name(ident=a.name), index=idx)
    return [_assignment(b, target, a.elem, pos, b.src.boolean(0.3))]


def _pair_store(b: Builder, pos: Pos) -> list[ast.Stmt]:
    """Two adjacent own output slots from one expression tree (`generators/half.py`); a
    plain output store when the kernel has no 16-bit output with two slots."""
    return half.pair_store(b, pos) or _output_store(b, pos)


def _output_store(b: Builder, pos: Pos) -> list[ast.Stmt]:
    out = b.src.choice(b.outputs)
    assert b.gid is not None
    target = ast.Index(base=ast.Name(ident=out.name),
                       index=own_slot(b, b.gid, out.slots, depth(b) - 1, pos))
    return [_assignment(b, target, out.elem, pos, b.src.boolean(0.3))]


def shared_store(b: Builder, pos: Pos, shared_index: int | None = None,
                 slot: int | None = None) -> ast.Stmt:
    """`unsafe { S[tid * slots + j] = e; }` — the thread's own slot of a shared array."""
    s = b.shared[shared_index] if shared_index is not None else b.src.choice(b.shared)
    assert b.tid is not None
    if slot is None:
        index = own_slot(b, b.tid, s.slots, depth(b) - 1, pos)
    elif s.slots == 1:
        index = ast.Name(ident=b.tid)
    else:
        index = ast.Binary(op=BinOp.ADD, lhs=ast.Binary(op=BinOp.MUL, lhs=ast.Name(ident=b.tid),
                                                        rhs=usize(s.slots)), rhs=usize(slot))
    target = ast.Index(base=ast.Name(ident=s.name), index=index)
    src_ty = s.elem if b.src.boolean(0.7) else b.scalar_type()
    value = convert(expr(b, src_ty, depth(b), pos), src_ty, s.elem)
    assign = ast.Assign(target=target, value=value)
    return ast.ExprStmt(expr=ast.BlockExpr(block=ast.Block(stmts=(assign,)), unsafe=True),
                        semi=False)


def shared_update(b: Builder, pos: Pos, store: bool) -> ast.Stmt:
    """`unsafe { [S[k] = e;] S[k] op= e2; }` on an own slot `k = tid * slots + j` (a fixed
    `j`, so both statements name one element): `op=` reads the element, so without the
    store it is made only where every own slot has been written (after a write phase's
    first stores); no other thread touches the slot in this barrier interval."""
    s_index = b.src.integer(0, len(b.shared) - 1)
    s = b.shared[s_index]
    first = shared_store(b, pos, s_index, b.src.integer(0, s.slots - 1))
    assert isinstance(first, ast.ExprStmt) and isinstance(first.expr, ast.BlockExpr)
    assign = first.expr.block.stmts[0]
    assert isinstance(assign, ast.Assign)
    update = _assignment(b, assign.target, s.elem, pos, compound=True)
    body = (assign, update) if store else (update,)
    return ast.ExprStmt(expr=ast.BlockExpr(block=ast.Block(stmts=body), unsafe=True),
                        semi=False)


def shared_helper_call(b: Builder, pos: Pos, kind: str) -> list[ast.Stmt]:
    """A call of a shared `kind` ("read"/"write") helper, when there is one and a coin says
    so: `h(tid, ...);` or `let v: T = h(...);`. Made where the phase allows it (after a write
    phase's first stores, first thing in a read phase), so that the helpers the profile
    switch `shared_helpers` adds are called, not only defined."""
    helpers = [h for h in b.helpers if h.shared == kind and h.callable_at(pos, b.tid)
               and pos.work * h.cost <= b.limits.work_max]
    if not helpers or not b.src.boolean(0.7):
        return []
    h = b.src.choice(helpers)
    b.note_work(pos.work * h.cost)
    call = call_args(b, h, lambda: depth(b) - 1, pos)
    if h.ret is None:
        return [ast.ExprStmt(expr=call)]
    name = b.fresh("v")
    b.bind(Var(name, h.ret))
    return [ast.Let(name=name, mutable=False, ty=ast.ScalarType(scalar=h.ret), init=call)]


def _shared_store(b: Builder, pos: Pos) -> list[ast.Stmt]:
    return [shared_store(b, pos)]


def _if(b: Builder, pos: Pos) -> list[ast.Stmt]:
    return [ast.ExprStmt(expr=if_stmt(b, pos, 1 + int(b.src.boolean(0.25))), semi=False)]


def if_stmt(b: Builder, pos: Pos, arms: int) -> ast.If:
    cond = expr(b, Scalar.BOOL, depth(b), pos)
    then = block(b, pos.nested(), lo=1)
    else_: ast.Block | ast.If | None = None
    if arms > 1:
        else_ = if_stmt(b, pos, arms - 1)
    elif b.src.boolean(0.5):
        else_ = block(b, pos.nested(), lo=1)
    return ast.If(cond=cond, then=then, else_=else_)


def _trips(b: Builder, pos: Pos) -> int:
    return b.src.integer(1, max(1, min(b.limits.loop_iters, b.limits.work_max // pos.work)))


def _loop_pos(b: Builder, pos: Pos, trips: int) -> Pos:
    b.note_work(pos.work * trips)
    return pos.nested(loop_depth=pos.loop_depth + 1, work=pos.work * trips, in_loop=True)


def _for(b: Builder, pos: Pos) -> list[ast.Stmt]:
    ity = b.int_type()
    n = _trips(b, pos)
    inclusive = b.src.boolean(0.3)
    form = b.src.integer(0, 3)
    lo = -10 if ity.is_signed else 0
    if form == 0 and b.src.boolean(0.4):   # up to T::MAX: the range must not overflow
        start = ity.max_value - n + 1
        e_expr: ast.Expr = ast.AssocConst(scalar=ity, name="MAX")
        s_expr, inclusive = int_literal(start, ity), True
    else:
        start = b.src.integer(lo, min(20, ity.max_value - n))
        s_expr = int_literal(start, ity)
        last = start + n - 1 if inclusive else start + n
        if form == 1:  # a data-dependent trip count: start + e % n (<= n; may be negative)
            e = expr(b, ity, depth(b) - 1, pos)
            e_expr = ast.Binary(op=BinOp.ADD, lhs=int_literal(start, ity), rhs=ast.Binary(
                op=BinOp.REM, lhs=e, rhs=int_literal(n, ity)))
            inclusive = False
        else:
            e_expr = int_literal(last, ity)
    var = b.fresh("i")
    body = block(b, _loop_pos(b, pos, n), lo=1, bind=(Var(var, ity),))
    return [ast.For(var=var, start=s_expr, end=e_expr, body=body, inclusive=inclusive)]


def _counter(b: Builder) -> tuple[Var, ast.Let, ast.Assign]:
    cty = b.int_type()
    name = b.fresh("c")
    counter = Var(name, cty, assignable=False, reserved=True)
    let = ast.Let(name=name, mutable=True, ty=ast.ScalarType(scalar=cty),
                  init=int_literal(0, cty))
    one = int_literal(1, cty)
    bump = ast.Assign(target=ast.Name(ident=name), value=one, op=BinOp.ADD) \
        if b.src.boolean() else ast.Assign(target=ast.Name(ident=name), value=ast.Binary(
            op=BinOp.ADD, lhs=ast.Name(ident=name), rhs=one))
    return counter, let, bump


def _while(b: Builder, pos: Pos) -> list[ast.Stmt]:
    n = _trips(b, pos)
    counter, let, bump = _counter(b)
    b.bind(counter)
    cond: ast.Expr = ast.Binary(op=BinOp.LT, lhs=ast.Name(ident=counter.name),
                                rhs=int_literal(n, counter.ty))
    if b.src.boolean(0.3):
        cond = ast.Binary(op=BinOp.LAND, lhs=cond, rhs=expr(b, Scalar.BOOL, depth(b) - 1, pos))
    body = block(b, _loop_pos(b, pos, n), lo=1)
    return [let, ast.While(cond=cond, body=ast.Block(stmts=(bump, *body.stmts)))]


def _loop(b: Builder, pos: Pos) -> list[ast.Stmt]:
    n = _trips(b, pos)
    counter, let, bump = _counter(b)
    b.bind(counter)
    exit_ = ast.ExprStmt(expr=ast.If(
        cond=ast.Binary(op=BinOp.GT, lhs=ast.Name(ident=counter.name),
                        rhs=int_literal(n, counter.ty)),
        then=ast.Block(stmts=(ast.Break(),))), semi=False)
    body = block(b, _loop_pos(b, pos, n), lo=1)
    return [let, ast.Loop(body=ast.Block(stmts=(bump, exit_, *body.stmts)))]


def _block(b: Builder, pos: Pos) -> list[ast.Stmt]:
    inner = block(b, pos.nested(), lo=1)
    return [ast.ExprStmt(expr=ast.BlockExpr(block=inner, unsafe=b.src.boolean(0.2)), semi=False)]


def _call(b: Builder, pos: Pos) -> list[ast.Stmt]:
    h = b.src.choice(_callable(b, pos))
    b.note_work(pos.work * h.cost)
    return [ast.ExprStmt(expr=call_args(b, h, lambda: depth(b) - 1, pos))]


def _guarded(b: Builder, pos: Pos, s: ast.Stmt) -> list[ast.Stmt]:
    cond = expr(b, Scalar.BOOL, depth(b), pos)
    return [ast.ExprStmt(expr=ast.If(cond=cond, then=ast.Block(stmts=(s,))), semi=False)]


def _break(b: Builder, pos: Pos) -> list[ast.Stmt]:
    return _guarded(b, pos, ast.Break())


def _continue(b: Builder, pos: Pos) -> list[ast.Stmt]:
    return _guarded(b, pos, ast.Continue())


def _return(b: Builder, pos: Pos) -> list[ast.Stmt]:
    value = expr(b, pos.ret, depth(b), pos) if pos.ret is not None else None
    return _guarded(b, pos, ast.Return(value=value))


_PRODUCTIONS = {
    "let": _let, "let_array": _let_array, "assign": _assign, "compound": _compound,
    "array_store": _array_store, "output_store": _output_store, "pair_store": _pair_store,
    "shared_store": _shared_store, "if": _if, "for": _for, "while": _while, "loop": _loop,
    "block": _block, "call": _call, "break": _break, "continue": _continue,
    "return": _return,
}

__all__ = [
    "block",
    "call_args",
    "if_chain",
    "shared_helper_call",
    "shared_store",
    "shared_update",
    "stmt",
    "stmts",
]
