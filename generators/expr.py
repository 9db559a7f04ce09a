"""Typed expression productions: `expr(b, ty, depth, pos)` builds an expression of type `ty`.

Every expression is well-defined by construction:
* integer `/ %` and `wrapping_div/rem` get a divisor that cannot be zero (`d | 1`), or a guard
  `if d != 0 && !(a == T::MIN && d == -1) { a / d } else { a }` inside a block expression;
* every index is reduced into range (`(e as usize) % xs.len()`, `& (N - 1)` for a length
  that is a power of two, or a literal below the length);
* shared memory is read only in a read phase (`pos.shared_read`), output slots are touched
  only at the thread's own `gid * slots + j`;
* expressions have no side effects (helpers are pure), so duplicating one is harmless.
"""

from __future__ import annotations

from collections.abc import Callable

from generators import half
from generators.context import Builder, Helper, Pos, Var
from generators.values import explicit_from_bits, int_literal, literal, one, usize, zero
from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.scalars import Scalar

BinOp = ast.BinOp
ARITH = (BinOp.ADD, BinOp.SUB, BinOp.MUL)
BITWISE = (BinOp.AND, BinOp.OR, BinOp.XOR)
SHIFTS = (BinOp.SHL, BinOp.SHR)
COMPARE = (BinOp.EQ, BinOp.NE, BinOp.LT, BinOp.LE, BinOp.GT, BinOp.GE)
LOGIC = (BinOp.LAND, BinOp.LOR)

INT_SAME = ("wrapping_add", "wrapping_sub", "wrapping_mul", "min", "max")
INT_DIV = ("wrapping_div", "wrapping_rem")
INT_UNARY = ("wrapping_neg",)
INT_U32ARG = ("wrapping_shl", "wrapping_shr", "rotate_left", "rotate_right")
INT_COUNT = ("count_ones", "leading_zeros", "trailing_zeros")
SIGNED_UNARY = ("abs", "wrapping_abs")
FLOAT_UNARY = ("abs", "sqrt")
FLOAT_BIN = ("min", "max")


def _bin(op: BinOp, lhs: ast.Expr, rhs: ast.Expr) -> ast.Binary:
    return ast.Binary(op=op, lhs=lhs, rhs=rhs)


def _pick_op(b: Builder, ops: tuple[BinOp, ...]) -> BinOp | None:
    weights = {op: b.profile.operators.get(op.value, 0) for op in ops}
    if not any(weights.values()):
        return None
    return b.src.weighted(weights)


def convert(e: ast.Expr, frm: Scalar, to: Scalar) -> ast.Expr:
    """`e` (of type `frm`) as a value of type `to`, with only conversions Rust allows."""
    if frm is to:
        return e
    if to is Scalar.BOOL:
        return _bin(BinOp.NE, e, zero(frm)) if frm.is_int else _bin(BinOp.LT, e, one(frm))
    if frm is Scalar.BOOL and to.is_float:
        return ast.Cast(expr=ast.Cast(expr=e, to=Scalar.U8), to=to)
    return ast.Cast(expr=e, to=to)


def expr(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    """An expression of type `ty`, at most `depth` productions deep."""
    if depth <= 0:
        return leaf(b, ty, pos)
    kinds = _applicable(b, ty, pos)
    kind = b.src.weighted(kinds)
    made = _PRODUCTIONS[kind](b, ty, depth - 1, pos)
    return made if made is not None else leaf(b, ty, pos)


def _applicable(b: Builder, ty: Scalar, pos: Pos) -> dict[str, int]:
    w = dict(b.profile.expressions)
    is_int, is_float, is_bool = ty.is_int, ty.is_float, ty is Scalar.BOOL
    if not (is_int or is_float):
        w["arith"] = w["divrem"] = 0
        if not (is_bool and half.bool_methods_on(b)):  # `is_nan`: the half profile only
            w["method"] = 0
    if not (is_int or is_bool):
        w["bitwise"] = 0
    if not is_int:
        w["shift"] = 0
    if not is_bool:
        w["compare"] = w["logic"] = 0
    if is_bool:
        w["cast"] = w["assoc"] = 0
    if not any(h.ret is not None and pos.work * h.cost <= b.limits.work_max
               and h.callable_at(pos, b.tid) for h in b.helpers[: b.callable_helpers]):
        w["call"] = 0
    if not pos.in_kernel and not b.features.shared_helpers:
        w["prelude"] = 0
    if not any(w.values()):
        w["literal"] = 1
    return w


def leaf(b: Builder, ty: Scalar, pos: Pos) -> ast.Expr:
    """A variable of type `ty` when one is in scope (mostly), else a literal."""
    vars_ = b.scalars(ty)
    if vars_ and b.src.boolean(0.75):
        return ast.Name(ident=b.src.choice(vars_).name)
    return literal(b.src, ty, specials=b.features.float_specials)


def _literal(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    return literal(b.src, ty, specials=b.features.float_specials)


def _var(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    vars_ = b.scalars(ty)
    if vars_:
        return ast.Name(ident=b.src.choice(vars_).name)
    others = b.scalars()
    if others:
        v: Var = b.src.choice(others)
        return convert(ast.Name(ident=v.name), v.ty, ty)
    return literal(b.src, ty, specials=b.features.float_specials)


def _unary(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    ops = {}
    if ty.is_signed or ty.is_float:
        ops[ast.UnOp.NEG] = b.profile.operators.get("neg", 0)
    if ty.is_int or ty is Scalar.BOOL:
        ops[ast.UnOp.NOT] = b.profile.operators.get("not", 0)
    if not any(ops.values()):
        return None
    op = b.src.weighted(ops)
    operand = expr(b, ty, depth, pos)
    if (op is ast.UnOp.NEG and isinstance(operand, ast.Unary) and operand.op is ast.UnOp.NEG
            and isinstance(operand.operand, ast.IntLit) and ty.is_int
            and operand.operand.value > ty.max_value):
        # `--128i8`: rustc no longer counts the literal as negated (overflowing_literals,
        # docs/language.md); `-i8::MIN` says the same and is valid Rust.
        operand = ast.AssocConst(scalar=ty, name="MIN")
    return ast.Unary(op=op, operand=operand)


def _binary_same(b: Builder, ty: Scalar, depth: int, pos: Pos,
                 ops: tuple[BinOp, ...]) -> ast.Expr | None:
    op = _pick_op(b, ops)
    if op is None:
        return None
    return _bin(op, expr(b, ty, depth, pos), expr(b, ty, depth, pos))


def _arith(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    return _binary_same(b, ty, depth, pos, ARITH)


def _bitwise(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    return _binary_same(b, ty, depth, pos, BITWISE)


def _shift(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    op = _pick_op(b, SHIFTS)
    if op is None:
        return None
    amount_ty = b.int_type()
    return _bin(op, expr(b, ty, depth, pos), expr(b, amount_ty, depth - 1, pos))


def nonzero_divisor(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    """An expression of integer type `ty` that is never 0 and never -1: `d | 1` for unsigned
    types, `(d & 0x3f) | 1` (positive) for signed ones."""
    d = expr(b, ty, depth, pos)
    if ty.is_signed:
        d = _bin(BinOp.AND, d, int_literal(0x3F, ty))
    return _bin(BinOp.OR, d, one(ty))


def _divrem(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    op = _pick_op(b, (BinOp.DIV, BinOp.REM))
    if op is None:
        return None
    if ty.is_float:  # IEEE: no trap
        return _bin(op, expr(b, ty, depth, pos), expr(b, ty, depth, pos))
    if b.src.boolean(0.5):
        return _bin(op, expr(b, ty, depth, pos), nonzero_divisor(b, ty, depth, pos))
    # The guarded form, in a block so each operand is evaluated once:
    # { let x = a; let y = d; if y != 0 && !(x == MIN && y == -1) { x / y } else { x } }
    x, y = b.fresh("n"), b.fresh("d")
    nx, ny = ast.Name(ident=x), ast.Name(ident=y)
    guard: ast.Expr = _bin(BinOp.NE, ny, zero(ty))
    if ty.is_signed:
        overflow = _bin(BinOp.LAND,
                        _bin(BinOp.EQ, nx, ast.AssocConst(scalar=ty, name="MIN")),
                        _bin(BinOp.EQ, ny, int_literal(-1, ty)))
        guard = _bin(BinOp.LAND, guard, ast.Unary(op=ast.UnOp.NOT, operand=overflow))
    fallback = nx if b.src.boolean() else literal(b.src, ty)
    body = ast.Block(
        stmts=(ast.Let(name=x, mutable=False, ty=ast.ScalarType(scalar=ty),
                       init=expr(b, ty, depth, pos)),
               ast.Let(name=y, mutable=False, ty=ast.ScalarType(scalar=ty),
                       init=expr(b, ty, depth, pos))),
        tail=ast.If(cond=guard, then=ast.Block(tail=_bin(op, nx, ny)),
                    else_=ast.Block(tail=fallback)))
    return ast.BlockExpr(block=body)


def _compare(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    op = _pick_op(b, COMPARE)
    if op is None:
        return None
    operand = b.scalar_type()
    if operand is Scalar.BOOL and op not in (BinOp.EQ, BinOp.NE):
        operand = b.int_type()
    return _bin(op, expr(b, operand, depth, pos), expr(b, operand, depth, pos))


def _logic(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    return _binary_same(b, ty, depth, pos, LOGIC)


def _cast(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    frm = b.scalar_type(allow_bool=ty.is_int)
    return ast.Cast(expr=expr(b, frm, depth, pos), to=ty)


def _method(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    names: list[str] = []
    if ty.is_int:
        names += [*INT_SAME, *INT_DIV, *INT_UNARY, *INT_U32ARG]
        if ty.is_signed:
            names += SIGNED_UNARY
        names += INT_COUNT  # u32 results, converted to `ty`
        if ty in (Scalar.U32, Scalar.U64) or (ty is Scalar.U16 and Scalar.F16 in b.types):
            names.append("to_bits")
    elif ty.is_float:
        names += [*FLOAT_UNARY, *FLOAT_BIN, "mul_add"]
    # zero-weight names are never drawn: the default profile's choices are unchanged
    names += half.method_names(b, ty)
    weights = {n: b.profile.methods.get(n, 0) for n in names}
    if not any(weights.values()):
        return None
    name = b.src.weighted(weights)
    if name in half.NEW_METHODS:
        return half.new_method(b, ty, name, depth, pos)
    call = ast.MethodCall
    if name in INT_COUNT:
        recv_ty = b.int_type()
        return convert(call(receiver=expr(b, recv_ty, depth, pos), method=name), Scalar.U32, ty)
    if name == "to_bits":
        if not b.features.floats:
            return None
        src_ty = {Scalar.U16: Scalar.F16, Scalar.U32: Scalar.F32}.get(ty, Scalar.F64)
        return call(receiver=expr(b, src_ty, depth, pos), method=name)
    recv = expr(b, ty, depth, pos)
    if name in INT_DIV:
        return call(receiver=recv, method=name, args=(nonzero_divisor(b, ty, depth, pos),))
    if name in INT_SAME or name in FLOAT_BIN:
        return call(receiver=recv, method=name, args=(expr(b, ty, depth, pos),))
    if name in INT_U32ARG:
        return call(receiver=recv, method=name, args=(expr(b, Scalar.U32, depth, pos),))
    if name == "mul_add":
        return call(receiver=recv, method=name,
                    args=(expr(b, ty, depth, pos), expr(b, ty, depth, pos)))
    return call(receiver=recv, method=name)


def _call(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    helpers = [h for h in b.helpers[: b.callable_helpers]
               if h.ret is not None and pos.work * h.cost <= b.limits.work_max
               and h.callable_at(pos, b.tid)]
    if not helpers:
        return None
    same = [h for h in helpers if h.ret is ty]
    h = b.src.choice(same) if same and b.src.boolean(0.7) else b.src.choice(helpers)
    b.note_work(pos.work * h.cost)
    assert h.ret is not None
    return convert(call_args(b, h, lambda: depth, pos), h.ret, ty)


def call_args(b: Builder, h: Helper, depth_of: Callable[[], int], pos: Pos) -> ast.Call:
    """A call of `h`, each argument `depth_of()` deep; a shared writer gets the caller's
    thread index first."""
    if h.shared == "write":
        assert b.tid is not None
        rest = tuple(expr(b, p, depth_of(), pos) for p in h.params[1:])
        return ast.Call(func=h.name, args=(ast.Name(ident=b.tid), *rest))
    return ast.Call(func=h.name, args=tuple(expr(b, p, depth_of(), pos) for p in h.params))


def _if(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    return if_chain(b, ty, depth, pos, arms=1 + int(b.src.boolean(0.3)))


def if_chain(b: Builder, ty: Scalar, depth: int, pos: Pos, arms: int) -> ast.If:
    """`if c { e } else if c2 { e2 } else { e3 }` as an expression."""
    cond = expr(b, Scalar.BOOL, depth, pos)
    then = ast.Block(tail=expr(b, ty, depth, pos))
    rest: ast.Block | ast.If
    if arms > 1:
        rest = if_chain(b, ty, depth, pos, arms - 1)
    else:
        rest = ast.Block(tail=expr(b, ty, depth, pos))
    return ast.If(cond=cond, then=then, else_=rest)


def _block(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    """`{ let t: T2 = e; tail }` — a scope of its own, sometimes shadowing a name."""
    b.push()
    stmts = []
    for _ in range(1 + int(b.src.boolean(0.3))):
        let_ty = b.scalar_type()
        init = expr(b, let_ty, depth, pos)
        shadow = b.shadowable()
        name = b.src.choice(shadow).name if shadow and b.src.boolean(0.3) else b.fresh("t")
        stmts.append(ast.Let(name=name, mutable=False, ty=ast.ScalarType(scalar=let_ty),
                             init=init))
        b.bind(Var(name, let_ty))
    tail = expr(b, ty, depth, pos)
    b.pop()
    return ast.BlockExpr(block=ast.Block(stmts=tuple(stmts), tail=tail))


def in_range(b: Builder, length: ast.Expr, static_len: int | None, depth: int,
             pos: Pos) -> ast.Expr:
    """A `usize` index that is always `< length` (`static_len` when known at build time)."""
    form = b.src.integer(0, 3)
    if static_len is not None and form == 0:
        return usize(b.src.integer(0, static_len - 1))
    ity = b.int_type()
    e = expr(b, ity, depth, pos)
    if ity is not Scalar.USIZE or b.src.boolean(0.1):
        e = ast.Cast(expr=e, to=Scalar.USIZE)
    if static_len is not None and form == 1 and static_len & (static_len - 1) == 0:
        return _bin(BinOp.AND, e, usize(static_len - 1))
    return _bin(BinOp.REM, e, length)


def own_slot(b: Builder, gid: str, slots: int, depth: int, pos: Pos) -> ast.Expr:
    """`gid * slots + j`: an element the current thread owns."""
    base: ast.Expr = ast.Name(ident=gid)
    if slots == 1:
        return base
    if b.src.boolean(0.7):
        j = usize(b.src.integer(0, slots - 1))
    else:
        j = in_range(b, usize(slots), slots, depth, pos)
    return _bin(BinOp.ADD, _bin(BinOp.MUL, base, usize(slots)), j)


def shared_read(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    """`unsafe { S[i] }` for any slot `i` (legal only in a read phase)."""
    if not (pos.shared_read and b.shared):
        return None
    s = b.src.choice(b.shared)
    length: ast.Expr = ast.Name(ident=s.len_const) if s.len_const else usize(s.len)
    if b.features.shared_helpers and b.src.boolean(0.3):
        length = ast.MethodCall(receiver=ast.Name(ident=s.name), method="len")
    if b.tid is not None and b.src.boolean(0.4):  # the neighbour pattern: (tid + k) % len
        idx: ast.Expr = _bin(BinOp.REM, _bin(BinOp.ADD, ast.Name(ident=b.tid),
                                             usize(b.src.integer(1, s.len))), length)
    else:
        idx = in_range(b, length, s.len, depth, pos)
    read = ast.BlockExpr(block=ast.Block(tail=ast.Index(base=ast.Name(ident=s.name), index=idx)),
                         unsafe=True)
    return convert(read, s.elem, ty)


def _index(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr | None:
    options = ["input"] if b.inputs and pos.in_kernel else []
    if b.arrays():
        options.append("array")
    if pos.shared_read and b.shared:
        options.append("shared")
    if pos.output_access and b.outputs and b.gid is not None:
        options.append("output")
    if not options:
        return None
    where = b.src.choice(options)
    if where == "shared":
        return shared_read(b, ty, depth, pos)
    if where == "array":
        arrays = b.arrays()
        same = [a for a in arrays if a.elem is ty]
        a = b.src.choice(same) if same and b.src.boolean(0.7) else b.src.choice(arrays)
        length = ast.MethodCall(receiver=ast.Name(ident=a.name), method="len") \
            if b.src.boolean() else usize(a.len)
        idx = in_range(b, length, a.len, depth, pos)
        return convert(ast.Index(base=ast.Name(ident=a.name), index=idx), a.elem, ty)
    if where == "output":
        out = b.src.choice(b.outputs)
        assert b.gid is not None
        slot = own_slot(b, b.gid, out.slots, depth, pos)
        return convert(ast.Index(base=ast.Name(ident=out.name), index=slot), out.elem, ty)
    same_in = [i for i in b.inputs if i.elem is ty]
    buf = b.src.choice(same_in) if same_in and b.src.boolean(0.7) else b.src.choice(b.inputs)
    length = ast.MethodCall(receiver=ast.Name(ident=buf.name), method="len")
    idx = in_range(b, length, None, depth, pos)
    return convert(ast.Index(base=ast.Name(ident=buf.name), index=idx), buf.elem, ty)


def _assoc(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    if ty.is_int:
        return ast.AssocConst(scalar=ty, name=b.src.choice(("MIN", "MAX")))
    bits_ty = ty.uint
    if b.src.boolean(0.5) and b.features.float_specials:
        return explicit_from_bits(b.src.bits(ty.bits), ty)
    # from_bits of a computed pattern: any u32/u64 is a valid (maybe NaN) float
    if not b.features.float_specials:
        return literal(b.src, ty, specials=False)
    return ast.AssocCall(scalar=ty, name="from_bits", args=(expr(b, bits_ty, depth, pos),))


def _prelude(b: Builder, ty: Scalar, depth: int, pos: Pos) -> ast.Expr:
    kind = b.src.choice(("thread_idx", "block_idx", "block_dim", "grid_dim"))
    axis = b.src.choice(("x", "y", "z"))
    return convert(ast.Call(func=f"{kind}_{axis}"), Scalar.U32, ty)


_PRODUCTIONS = {
    "literal": _literal, "var": _var, "unary": _unary, "arith": _arith,
    "bitwise": _bitwise, "shift": _shift, "divrem": _divrem, "compare": _compare,
    "logic": _logic, "cast": _cast, "method": _method, "call": _call, "if": _if,
    "block": _block, "index": _index, "assoc": _assoc, "prelude": _prelude,
}
