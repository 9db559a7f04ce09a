"""Atomics in generated kernels: only patterns whose outputs do not depend on the order of
the threads (docs/language.md "Atomics and schedules"; the reference checks every case under
several schedules and rejects one that does).

Switched on per case with probability `limits.atomics_percent` (0 spends no choice, so
every seed of a profile without atomics names the same case as before). A case then gets
`acc: &[AtomicT]` (a few counters) and some of:

* commutative read-modify-writes: each counter has one operation family fixed per case —
  `fetch_add`/`fetch_sub` (wrapping sums commute), `fetch_and`, `fetch_or`, `fetch_xor`,
  `fetch_min` or `fetch_max` — and receives only that family, with any operand; the old value
  is unused;
* ticket sums: `let t = acc[i].fetch_add(C, o);` on a counter that only ever receives the
  same constant C (the arrivals see init, init + C, ..., a set fixed whatever the order),
  every `t` of counter i combined into the one sum counter chosen for i (its own family:
  add/xor/min/max) and used for nothing else. Which statement draws which ticket depends
  on the order, so tickets of one counter never go to two sum counters (the reference's
  blocks-one-by-one schedules caught exactly that);
* per-thread slots: `own: &[AtomicT]` with one element per thread, reached only at `[gid]`:
  any method, orderings and compare-exchange included, whose result is a value later
  statements may use;
* one winner: `if flag[0].compare_exchange(0, 1, s, f).is_ok() { win[0] = V; }` with V
  built from literals and scalar parameters only (the same whoever wins);
* a shared counter read after a barrier, at the very start of the kernel (before any
  statement that could return): `if tid == 0 { C[0].store(v, o); } sync_threads();
  C[0].fetch_<family>(e, o); sync_threads(); let c = C[0].load(o);` — `c` is one value for
  every thread of the block;
* `fence(o)` now and then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generators.context import Builder, Pos, Var
from generators.expr import expr
from generators.stmt import depth
from generators.values import int_literal, usize
from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.case import Arg, BufferArg, Dist, Fill, Random
from rgpu_fuzz.model.scalars import Scalar

Ord = ast.AtomicOrdering
TYPES = (Scalar.U32, Scalar.I32, Scalar.U64, Scalar.I64)
FAMILIES: dict[str, tuple[str, ...]] = {
    "add": ("fetch_add", "fetch_sub"), "and": ("fetch_and",), "or": ("fetch_or",),
    "xor": ("fetch_xor",), "min": ("fetch_min",), "max": ("fetch_max",)}
COMBINE = ("add", "xor", "min", "max")
LOAD_ORDERS = (Ord.RELAXED, Ord.ACQUIRE, Ord.SEQ_CST)
STORE_ORDERS = (Ord.RELAXED, Ord.RELEASE, Ord.SEQ_CST)
FAIL_ORDERS = (Ord.RELAXED, Ord.ACQUIRE, Ord.SEQ_CST)
FENCE_ORDERS = (Ord.ACQUIRE, Ord.RELEASE, Ord.ACQ_REL, Ord.SEQ_CST)
OWN_METHODS = ("load", "store", "swap", "fetch_add", "fetch_sub", "fetch_and", "fetch_or",
               "fetch_xor", "fetch_min", "fetch_max", "compare_exchange")


@dataclass
class Plan:
    """The atomic buffers and shared counter of one case, and what each counter takes."""

    ty: Scalar
    families: list[str]
    tickets: dict[int, int] = field(default_factory=dict)   # counter -> its constant C
    sums: dict[int, int] = field(default_factory=dict)      # ticket counter -> its sum counter
    params: list[ast.Param] = field(default_factory=list)
    args: list[Arg] = field(default_factory=list)
    items: list[ast.Item] = field(default_factory=list)
    own: str | None = None
    winner: tuple[str, str, Scalar] | None = None            # flag, win buffer, its type
    shared: str | None = None


def _lit(v: int, ty: Scalar) -> ast.Expr:
    return int_literal(v, ty)


def _order(b: Builder, options: tuple[Ord, ...] = tuple(Ord)) -> ast.OrderingLit:
    return ast.OrderingLit(ordering=b.src.choice(options))


def _call(base: str, index: ast.Expr, method: str, args: list[ast.Expr]) -> ast.MethodCall:
    return ast.MethodCall(receiver=ast.Index(base=ast.Name(ident=base), index=index),
                          method=method, args=tuple(args))


def plan(b: Builder, total: int) -> Plan | None:
    """Whether this case uses atomics (a choice only when `atomics_percent` > 0), and its
    buffers; the caller adds `params`/`args` to the kernel and `items` to the module."""
    pct = b.limits.atomics_percent
    if pct == 0 or not b.src.boolean(pct / 100):
        return None
    ty = b.src.choice(TYPES)
    counters = b.src.integer(1, 4)
    p = Plan(ty=ty, families=[b.src.choice(tuple(FAMILIES)) for _ in range(counters)])
    p.params.append(ast.Param(name="acc", ty=ast.SliceType(elem=ty, mutable=True, atomic=True)))
    init = Fill(0) if b.src.boolean(0.5) else Random(b.src.bits(32), Dist.EDGES)
    p.args.append(BufferArg(name="acc", elem=ty, len=counters, init=init))
    for i, fam in enumerate(p.families):
        if fam == "add" and b.src.boolean(0.5):
            p.tickets[i] = b.src.integer(1, 5)
    for i in p.tickets:
        sums = [j for j, f in enumerate(p.families) if f in COMBINE and j not in p.tickets]
        if sums:
            p.sums[i] = b.src.choice(sums)
    if b.src.boolean(0.5):
        p.own = "own"
        p.params.append(ast.Param(name="own", ty=ast.SliceType(elem=ty, mutable=True,
                                                               atomic=True)))
        p.args.append(BufferArg(name="own", elem=ty, len=total,
                                init=Random(b.src.bits(32), Dist.EDGES)))
    if b.src.boolean(0.3):
        wty = b.scalar_type(allow_bool=False, only_int=True)
        p.winner = ("flag", "win", wty)
        p.params.append(ast.Param(name="flag", ty=ast.SliceType(elem=Scalar.U32, mutable=True,
                                                                atomic=True)))
        p.args.append(BufferArg(name="flag", elem=Scalar.U32, len=1, init=Fill(0)))
        p.params.append(ast.Param(name="win", ty=ast.SliceType(elem=wty, mutable=True)))
        p.args.append(BufferArg(name="win", elem=wty, len=1, init=Fill(0)))
    if b.features.shared and b.src.boolean(0.3):
        p.shared = b.fresh("A")
        p.items.append(ast.Shared(
            name=p.shared, elem=ty, len=ast.IntLit(value=1), atomic=True,
            init=ast.ArrayRepeat(value=ast.IntLit(value=0), len=ast.IntLit(value=1))))
    return p


def prologue(b: Builder, p: Plan, pos: Pos) -> list[ast.Stmt]:
    """The shared counter's init, barrier, update, barrier and read (first in the kernel,
    before anything that could return)."""
    if p.shared is None:
        return []
    assert b.tid is not None
    zero = usize(0)
    tid0 = ast.Binary(op=ast.BinOp.EQ, lhs=ast.Name(ident=b.tid), rhs=usize(0))
    init = _call(p.shared, zero, "store", [expr(b, p.ty, 1, pos), _order(b, STORE_ORDERS)])
    sync = ast.ExprStmt(expr=ast.Call(func="sync_threads"))
    fam = b.src.choice(tuple(FAMILIES))
    update = _call(p.shared, zero, b.src.choice(FAMILIES[fam]),
                   [expr(b, p.ty, depth(b), pos), _order(b)])
    name = b.fresh("c")
    read = _call(p.shared, zero, "load", [_order(b, LOAD_ORDERS)])
    out: list[ast.Stmt] = [
        ast.ExprStmt(expr=ast.If(cond=tid0, then=ast.Block(stmts=(ast.ExprStmt(expr=init),))),
                     semi=False),
        sync, ast.ExprStmt(expr=update), sync,
        ast.Let(name=name, mutable=False, ty=ast.ScalarType(scalar=p.ty), init=read)]
    b.bind(Var(name, p.ty))
    return out


def statements(b: Builder, p: Plan, pos: Pos, n: int) -> list[ast.Stmt]:
    """`n` order-independent atomic statements (they may bind locals later code uses)."""
    out: list[ast.Stmt] = []
    for _ in range(n):
        kind = b.src.choice(("rmw", "rmw", "own", "winner", "fence"))
        if kind == "own" and p.own is not None:
            out += _own(b, p, pos)
        elif kind == "winner" and p.winner is not None:
            out.append(_winner(b, p, pos))
        elif kind == "fence":
            out.append(ast.ExprStmt(expr=ast.Call(func="fence", args=(_order(b, FENCE_ORDERS),))))
        else:
            out += _rmw(b, p, pos)
    return out


def _rmw(b: Builder, p: Plan, pos: Pos) -> list[ast.Stmt]:
    i = b.src.integer(0, len(p.families) - 1)
    if i in p.tickets:
        call = _call("acc", usize(i), "fetch_add", [_lit(p.tickets[i], p.ty), _order(b)])
        if i not in p.sums:
            return [ast.ExprStmt(expr=call)]
        name = b.fresh("t")
        j = p.sums[i]
        combine = _call("acc", usize(j), FAMILIES[p.families[j]][0],
                        [ast.Name(ident=name), _order(b)])
        return [ast.Let(name=name, mutable=False, ty=ast.ScalarType(scalar=p.ty), init=call),
                ast.ExprStmt(expr=combine)]
    method = b.src.choice(FAMILIES[p.families[i]])
    return [ast.ExprStmt(expr=_call("acc", usize(i), method,
                                    [expr(b, p.ty, depth(b), pos), _order(b)]))]


def _own(b: Builder, p: Plan, pos: Pos) -> list[ast.Stmt]:
    assert p.own is not None and b.gid is not None
    gid = ast.Name(ident=b.gid)
    method = b.src.choice(OWN_METHODS)
    if method == "store":
        return [ast.ExprStmt(expr=_call(p.own, gid, "store", [
            expr(b, p.ty, depth(b), pos), _order(b, STORE_ORDERS)]))]
    if method == "load":
        call = _call(p.own, gid, "load", [_order(b, LOAD_ORDERS)])
        ty = p.ty
    elif method == "compare_exchange":
        inner = _call(p.own, gid, method, [expr(b, p.ty, 1, pos), expr(b, p.ty, 1, pos),
                                           _order(b), _order(b, FAIL_ORDERS)])
        call = ast.MethodCall(receiver=inner, method=b.src.choice(("is_ok", "is_err")))
        ty = Scalar.BOOL
    else:
        call = _call(p.own, gid, method, [expr(b, p.ty, depth(b), pos), _order(b)])
        ty = p.ty
    name = b.fresh("a")
    b.bind(Var(name, ty))
    return [ast.Let(name=name, mutable=False, ty=ast.ScalarType(scalar=ty), init=call)]


def _uniform_value(b: Builder, ty: Scalar) -> ast.Expr:
    """A value every thread computes alike: a literal, or a scalar parameter cast."""
    params = [v for v in b.uniform if v.ty.is_int and not v.reserved]
    if params and b.src.boolean(0.5):
        v = b.src.choice(params)
        return ast.Cast(expr=ast.Name(ident=v.name), to=ty) if v.ty is not ty \
            else ast.Name(ident=v.name)
    return int_literal(b.src.integer(0, 100), ty)


def _winner(b: Builder, p: Plan, pos: Pos) -> ast.Stmt:
    assert p.winner is not None
    flag, win, wty = p.winner
    cas = _call(flag, usize(0), "compare_exchange",
                [_lit(0, Scalar.U32), _lit(1, Scalar.U32), _order(b), _order(b, FAIL_ORDERS)])
    store = ast.Assign(target=ast.Index(base=ast.Name(ident=win), index=usize(0)),
                       value=_uniform_value(b, wty))
    return ast.ExprStmt(expr=ast.If(cond=ast.MethodCall(receiver=cas, method="is_ok"),
                                    then=ast.Block(stmts=(store,))), semi=False)


CONSTRUCTS: dict[str, str] = {
    "atomic:buffer": "a `&[AtomicT]` kernel parameter",
    "atomic:shared": "a `#[shared]` static of atomics",
    "atomic:64bit": "an `AtomicU64` or `AtomicI64`",
    "atomic:load": "`load`",
    "atomic:store": "`store`",
    "atomic:swap": "`swap`",
    "atomic:fetch-add-sub": "`fetch_add` / `fetch_sub`",
    "atomic:fetch-bitwise": "`fetch_and` / `fetch_or` / `fetch_xor`",
    "atomic:fetch-min-max-signed": "`fetch_min` / `fetch_max` on a signed atomic",
    "atomic:fetch-min-max-unsigned": "`fetch_min` / `fetch_max` on an unsigned atomic",
    "atomic:compare-exchange": "`compare_exchange(..).is_ok()` or `.is_err()`",
    "atomic:rmw-shared": "a read-modify-write of a shared atomic",
    "atomic:result-used": "an atomic's result bound by a `let`",
    "atomic:fence": "`fence(o)`",
}
"""The atomics constructs (generators/constructs.py adds them to its catalogue)."""


def constructs(module: ast.Module) -> set[str]:
    """The atomics constructs of a checked module."""
    from rgpu_fuzz.lang.atomics import CAS_TESTS, atomic_op
    from rgpu_fuzz.lang.features import walk

    found: set[str] = set()
    for item in module.items:
        if isinstance(item, ast.Shared) and item.atomic:
            found.add("atomic:shared")
            found |= {"atomic:64bit"} if item.elem.bits == 64 else set()
        if isinstance(item, ast.Fn):
            for prm in item.params:
                if isinstance(prm.ty, ast.SliceType) and prm.ty.atomic:
                    found.add("atomic:buffer")
                    found |= {"atomic:64bit"} if prm.ty.elem.bits == 64 else set()
    for n in walk(module):
        if isinstance(n, ast.Call) and n.func == "fence" and n.args \
                and isinstance(n.args[0], ast.OrderingLit):
            found.add("atomic:fence")
        if isinstance(n, ast.Let) and isinstance(n.init, ast.MethodCall) and (
                atomic_op(n.init) is not None or (
                    n.init.method in CAS_TESTS and isinstance(n.init.receiver, ast.MethodCall)
                    and atomic_op(n.init.receiver) is not None)):
            found.add("atomic:result-used")
        if not isinstance(n, ast.MethodCall) or (op := atomic_op(n)) is None:
            continue
        m = op.method
        found.add({"load": "atomic:load", "store": "atomic:store", "swap": "atomic:swap",
                   "compare_exchange": "atomic:compare-exchange", "fetch_add":
                   "atomic:fetch-add-sub", "fetch_sub": "atomic:fetch-add-sub"}.get(
            m, "atomic:fetch-bitwise" if m in ("fetch_and", "fetch_or", "fetch_xor") else
            "atomic:fetch-min-max-signed" if op.elem.is_signed else
            "atomic:fetch-min-max-unsigned"))
        if op.shared and m not in ("load", "store"):
            found.add("atomic:rmw-shared")
    return found


__all__ = ["CONSTRUCTS", "Plan", "constructs", "plan", "prologue", "statements"]
