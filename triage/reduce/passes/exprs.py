"""Passes over expressions, using the checker's types: replace an expression by a literal of
its type or by a same-typed sub-expression, shrink literals toward 0 and 1, and inline
helper calls.

Every expression moved to a new place has its unsuffixed literals pinned to their checked
type first (`pin_literals`), so a rewrite never changes a type by re-inference; what still
fails to check is dropped by the reducer before any pipeline sees it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import replace

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.literals import float_literal, float_literal_value, int_literal
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.scalars import Scalar
from triage.reduce.state import Pass, State
from triage.reduce.tree import (
    Path,
    children,
    contains,
    get,
    is_expr,
    nodes,
    pin_literals,
    put,
    rebuild,
    scalar_ty,
    splice,
)

_LITERALS = (ast.IntLit, ast.FloatLit, ast.BoolLit)


def simple_literals(ty: Scalar) -> list[ast.Expr]:
    """The simplest values of a type, simplest first: 0 and 1, `false` and `true`."""
    if ty is Scalar.BOOL:
        return [ast.BoolLit(value=False), ast.BoolLit(value=True)]
    if ty.is_int:
        return [int_literal(0, ty), int_literal(1, ty)]
    return [float_literal(0.0, ty), float_literal(1.0, ty)]


def _same_typed_descendants(expr: ast.Expr, ty: Scalar) -> Iterator[ast.Expr]:
    """Descendant expressions of type `ty`, breadth first (direct children first)."""
    queue = deque(child for _, child in children(expr))
    while queue:
        n = queue.popleft()
        if is_expr(n) and scalar_ty(n) is ty:
            yield n  # type: ignore[misc]
        queue.extend(child for _, child in children(n))


def replace_exprs(state: State) -> Iterator[Case]:
    """Each scalar expression (outermost first) → 0, 1, then each same-typed sub-expression.
    Literals are left to `shrink_literals`; assignment targets are not expressions to
    replace."""
    for path, n in nodes(state.module):
        ty = scalar_ty(n)
        if ty is None or isinstance(n, _LITERALS) or (path and path[-1] == ("target", None)):
            continue
        for lit in simple_literals(ty):
            yield state.with_module(put(state.module, path, _fit(path, lit)))
        for sub in _same_typed_descendants(n, ty):  # type: ignore[arg-type]
            yield state.with_module(put(state.module, path, _fit(path, pin_literals(sub))))


def _fit(path: Path, expr: ast.Expr) -> ast.Expr | ast.Block:
    """`expr` as what its slot holds: an `if` expression's `else_` holds a block (or an
    else-if), so an else-if replaced by a value becomes `else { value }`."""
    if path and path[-1][0] == "else_":
        return ast.Block(stmts=(), tail=expr)
    return expr


def _int_steps(value: int) -> list[int]:
    steps = [0, 1, value // 2] if value > 1 else [0]
    return [v for v in dict.fromkeys(steps) if v < value]


def _float_steps(value: float) -> list[float]:
    """Simpler floats than `value` (non-negative: a literal's sign is a separate `-`)."""
    if value == 0.0 or math.isnan(value):
        return []
    steps = [0.0, 1.0]
    if math.isfinite(value):
        steps += [float(math.trunc(value)), float(f"{value:.3g}"), float(f"{value:.1g}")]
    return [v for v in dict.fromkeys(steps) if v != value]


def shrink_literals(state: State) -> Iterator[Case]:
    """Integer literals toward 0 (0, 1, half); float literals toward 0.0, 1.0 and fewer
    significant digits. The suffix stays as it was."""
    for path, n in nodes(state.module):
        match n:
            case ast.IntLit(value=value):
                for v in _int_steps(value):
                    yield state.with_module(put(state.module, path, replace(n, value=v)))
            case ast.FloatLit(text=text, suffix=suffix):
                ty = n.ty if isinstance(n.ty, Scalar) else (suffix or Scalar.F64)
                for x in _float_steps(float_literal_value(text, ty)):
                    lit = float_literal(x, ty)
                    if isinstance(lit, ast.FloatLit):
                        yield state.with_module(put(state.module, path,
                                                    replace(lit, suffix=suffix)))


def _inlined(fn: ast.Fn, call: ast.Call) -> ast.Expr:
    """`f(a, b)` → `{ let x: T = a; let y: U = b; <body of f> }`."""
    lets = tuple(ast.Let(name=p.name, mutable=p.mutable, ty=p.ty, init=pin_literals(arg))
                 for p, arg in zip(fn.params, call.args, strict=True))
    body = pin_literals(fn.body)
    return ast.BlockExpr(block=ast.Block(stmts=lets + body.stmts, tail=body.tail))


def inline_helpers(state: State) -> Iterator[Case]:
    """For each helper without `return`: every call inlined and the helper removed, then each
    call site alone."""
    helpers = {i.name: i for i in state.module.items
               if isinstance(i, ast.Fn) and not i.kernel and not contains(i.body, (ast.Return,))}
    sites: dict[str, list[tuple[tuple, ast.Call]]] = {name: [] for name in helpers}
    for path, n in nodes(state.module):
        if isinstance(n, ast.Call) and n.func in helpers:
            sites[n.func].append((path, n))
    for name, calls in sites.items():
        if not calls:
            continue
        module = state.module
        # innermost (last in pre-order) first, so earlier paths stay valid
        for path, _ in reversed(calls):
            module = put(module, path, _inlined(helpers[name], get(module, path)))
        items = tuple(i for i in module.items if not (isinstance(i, ast.Fn) and i.name == name))
        yield state.with_module(ast.Module(items=items))
    for name, calls in sites.items():
        for path, call in calls:
            yield state.with_module(put(state.module, path, _inlined(helpers[name], call)))


def inline_lets(state: State) -> Iterator[Case]:
    """`let x = e; ... x ...` → `... e ...` for an immutable `let`: every use of its binding
    (bindings are unique per function, so shadowing cannot confuse it) becomes `e`, and the
    `let` goes. This removes a local that replacing one use at a time could not: each single
    replacement of `x` by a literal is no smaller."""
    for path, n in nodes(state.module):
        if not isinstance(n, ast.Let) or n.mutable or n.binding is None or \
                path[-1][0] != "stmts":
            continue
        binding, init = n.binding, pin_literals(n.init)

        def visit(x: object, binding: int = binding, init: ast.Expr = init) -> object:
            if isinstance(x, ast.Name) and x.kind is ast.NameKind.LOCAL and x.binding == binding:
                return init
            return x

        fn_path = path[:1]
        module = put(state.module, fn_path, rebuild(get(state.module, fn_path), visit))
        yield state.with_module(splice(module, path, ()))


REPLACE_EXPRS = Pass("replace-exprs", replace_exprs)
INLINE_LETS = Pass("inline-lets", inline_lets)
SHRINK_LITERALS = Pass("shrink-literals", shrink_literals)
INLINE_HELPERS = Pass("inline-helpers", inline_helpers)
