"""Hypothesis strategies for syntactically valid kernel-language ASTs.

The trees are not well-typed (a `Binary` may add a bool to a slice name): they exercise the
parser and the printer, not the checker. They stay inside what the printer promises to
round-trip: non-negative `IntLit` values with integer suffixes, `FloatLit` text in the lexer's
canonical form, identifiers that are not keywords, assignment targets that are names or
indexing, `ExprStmt(semi=False)` only for block-like expressions and never as the last
statement of a block without a tail (the parser reads that as the tail).
"""

from __future__ import annotations

from hypothesis import strategies as st

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.lexer import is_identifier
from rgpu_fuzz.model.scalars import FLOAT_TYPES, INT_TYPES, Scalar

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True).filter(is_identifier)
scalars = st.sampled_from(list(Scalar))
int_suffixes = st.one_of(st.none(), st.sampled_from(INT_TYPES))
float_suffixes = st.one_of(st.none(), st.sampled_from(FLOAT_TYPES))

int_lits = st.builds(
    ast.IntLit,
    value=st.one_of(st.integers(0, 300), st.integers(0, 2**64 - 1)),
    suffix=int_suffixes,
)
# Canonical float text: digits, then `.digits` and/or an exponent; no `_`, no `E`, no `1.`.
float_texts = st.from_regex(r"[0-9]{1,4}(\.[0-9]{1,4})?(e[+-]?[0-9]{1,3})?", fullmatch=True).filter(
    lambda t: "." in t or "e" in t)
float_lits = st.builds(ast.FloatLit, text=float_texts, suffix=float_suffixes)
leaves: st.SearchStrategy[ast.Expr] = st.one_of(
    int_lits,
    float_lits,
    st.builds(ast.BoolLit, value=st.booleans()),
    st.builds(ast.Name, ident=identifiers),
    st.builds(ast.AssocConst, scalar=scalars, name=st.sampled_from(["MIN", "MAX"])),
    st.builds(ast.Call, func=identifiers),
)


def _tuples(s: st.SearchStrategy[ast.Expr], min_size: int = 0) -> st.SearchStrategy[tuple]:
    return st.lists(s, min_size=min_size, max_size=3).map(tuple)


def _block_like(e: ast.Expr) -> bool:
    return isinstance(e, ast.If | ast.BlockExpr)


def _fix_block(stmts: list[ast.Stmt], tail: ast.Expr | None) -> ast.Block:
    """A block the printer round-trips: no `semi=False` on a non-block-like expression, and
    a trailing block-like statement without `;` only when a tail follows it."""
    fixed = [
        ast.ExprStmt(expr=s.expr, semi=True)
        if isinstance(s, ast.ExprStmt) and not s.semi and not _block_like(s.expr) else s
        for s in stmts
    ]
    if tail is None and fixed and isinstance(fixed[-1], ast.ExprStmt) and not fixed[-1].semi:
        fixed[-1] = ast.ExprStmt(expr=fixed[-1].expr, semi=True)
    return ast.Block(stmts=tuple(fixed), tail=tail)


def _type_exprs(exprs: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.TypeExpr]:
    lengths = st.one_of(int_lits, st.builds(ast.Name, ident=identifiers), exprs)
    return st.one_of(
        st.builds(ast.ScalarType, scalar=scalars),
        st.builds(ast.ArrayType, elem=scalars, len=lengths),
        st.builds(ast.SliceType, elem=scalars, mutable=st.booleans()),
    )


def _stmts(exprs: st.SearchStrategy[ast.Expr],
           blocks: st.SearchStrategy[ast.Block]) -> st.SearchStrategy[ast.Stmt]:
    targets = st.one_of(
        st.builds(ast.Name, ident=identifiers),
        st.builds(ast.Index, base=exprs, index=exprs),
    )
    return st.one_of(
        st.builds(ast.Let, name=identifiers, mutable=st.booleans(),
                  ty=st.one_of(st.none(), _type_exprs(exprs)), init=exprs),
        st.builds(ast.Assign, target=targets, value=exprs,
                  op=st.one_of(st.none(), st.sampled_from(sorted(ast.COMPOUND_OPS)))),
        st.builds(ast.ExprStmt, expr=exprs, semi=st.booleans()),
        st.builds(ast.While, cond=exprs, body=blocks),
        st.builds(ast.Loop, body=blocks),
        st.builds(ast.For, var=identifiers, start=exprs, end=exprs, body=blocks,
                  inclusive=st.booleans()),
        st.builds(ast.Break),
        st.builds(ast.Continue),
        st.builds(ast.Return, value=st.one_of(st.none(), exprs)),
    )


def _blocks(exprs: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Block]:
    """Blocks one level deep over `exprs` (nested blocks come from the recursion in exprs)."""
    flat_blocks = st.builds(
        lambda stmts, tail: _fix_block(stmts, tail),
        st.lists(st.builds(ast.ExprStmt, expr=exprs, semi=st.booleans()), max_size=2),
        st.one_of(st.none(), exprs),
    )
    return st.builds(
        _fix_block,
        st.lists(_stmts(exprs, flat_blocks), max_size=3),
        st.one_of(st.none(), exprs),
    )


def _extend(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    blocks = _blocks(children)
    ifs = st.deferred(lambda: st.builds(
        ast.If, cond=children, then=blocks,
        else_=st.one_of(st.none(), blocks,
                        st.builds(ast.If, cond=children, then=blocks, else_=st.none())),
    ))
    return st.one_of(
        st.builds(ast.Unary, op=st.sampled_from(list(ast.UnOp)), operand=children),
        st.builds(ast.Binary, op=st.sampled_from(list(ast.BinOp)), lhs=children, rhs=children),
        st.builds(ast.Cast, expr=children, to=scalars),
        st.builds(ast.Index, base=children, index=children),
        st.builds(ast.MethodCall, receiver=children, method=identifiers, args=_tuples(children)),
        st.builds(ast.Call, func=identifiers, args=_tuples(children)),
        st.builds(ast.AssocCall, scalar=scalars, name=identifiers, args=_tuples(children)),
        st.builds(ast.ArrayRepeat, value=children, len=children),
        st.builds(ast.ArrayList, elems=_tuples(children, min_size=1)),
        ifs,
        st.builds(ast.BlockExpr, block=blocks, unsafe=st.booleans()),
    )


exprs: st.SearchStrategy[ast.Expr] = st.recursive(leaves, _extend, max_leaves=12)
blocks: st.SearchStrategy[ast.Block] = _blocks(exprs)

params = st.builds(ast.Param, name=identifiers, ty=_type_exprs(exprs), mutable=st.booleans())
items: st.SearchStrategy[ast.Item] = st.one_of(
    st.builds(ast.Use),
    st.builds(ast.Const, name=identifiers, ty=st.builds(ast.ScalarType, scalar=scalars),
              value=exprs),
    st.builds(ast.Shared, name=identifiers, elem=scalars, len=exprs, init=exprs),
    st.builds(ast.Fn, name=identifiers, params=st.lists(params, max_size=3).map(tuple),
              ret=st.one_of(st.none(), st.builds(ast.ScalarType, scalar=scalars)),
              body=blocks, kernel=st.booleans(), public=st.booleans(),
              inline_never=st.booleans()),
)
modules: st.SearchStrategy[ast.Module] = st.builds(
    ast.Module, items=st.lists(items, max_size=4).map(tuple))
