"""Passes over statements and control flow: empty whole blocks (loop and `if` bodies),
remove runs of statements (halving chunk sizes, as delta debugging does), replace an `if` by
one of its branches, drop an `else`, turn a loop into one iteration or unroll a short `for`,
and splice plain blocks into the enclosing one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.types import UNIT
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.scalars import Scalar
from triage.reduce.state import Pass, State
from triage.reduce.tree import Path, nodes, pin_literals, put, splice

MAX_UNROLL = 8
"""Unroll a `for` loop only when its constant range has at most this many iterations."""


def _blocks(state: State) -> list[tuple[Path, ast.Block]]:
    return [(p, n) for p, n in nodes(state.module) if isinstance(n, ast.Block)]


def _contents(block: ast.Block) -> tuple[ast.Stmt, ...]:
    """A block's statements with its tail as a last statement, for splicing."""
    if block.tail is None:
        return block.stmts
    return (*block.stmts, ast.ExprStmt(expr=block.tail, semi=False))


def _block_stmt(block: ast.Block) -> ast.Stmt:
    return ast.ExprStmt(expr=ast.BlockExpr(block=block), semi=False)


def empty_blocks(state: State) -> Iterator[Case]:
    """Every block with statements, emptied (its tail kept), outermost first."""
    for path, block in _blocks(state):
        if block.stmts:
            yield state.with_module(put(state.module, path, replace(block, stmts=())))


def remove_stmts(state: State) -> Iterator[Case]:
    """Runs of consecutive statements, largest runs first (n/2, n/4, ... 1) in every block."""
    blocks = _blocks(state)
    longest = max((len(b.stmts) for _, b in blocks), default=0)
    chunk = max(1, longest // 2)
    while True:
        for path, block in blocks:
            n = len(block.stmts)
            if chunk >= n and n > 1:
                continue  # emptying whole blocks is `empty_blocks`' job
            for start in range(0, n, chunk):
                stmts = block.stmts[:start] + block.stmts[start + chunk:]
                yield state.with_module(put(state.module, path, replace(block, stmts=stmts)))
        if chunk == 1:
            return
        chunk //= 2


def _stmt_paths(state: State, kind: type) -> list[tuple[Path, object]]:
    """Statements (or `ExprStmt`s wrapping an expression) of `kind`, outermost first."""
    found = []
    for path, n in nodes(state.module):
        if not path or path[-1][0] != "stmts":
            continue
        if isinstance(n, kind):
            found.append((path, n))
        elif isinstance(n, ast.ExprStmt) and isinstance(n.expr, kind):
            found.append((path, n.expr))
    return found


def if_branches(state: State) -> Iterator[Case]:
    """`if c { A } else { B }` as a statement → `A`, `B` (spliced, then as a block), or
    `if c { A }` without its else."""
    for path, node in _stmt_paths(state, ast.If):
        assert isinstance(node, ast.If)
        branches: list[tuple[ast.Stmt, ...]] = [_contents(node.then)]
        wrapped: list[tuple[ast.Stmt, ...]] = [(_block_stmt(node.then),)]
        if isinstance(node.else_, ast.Block):
            branches.append(_contents(node.else_))
            wrapped.append((_block_stmt(node.else_),))
        elif isinstance(node.else_, ast.If):
            branches.append((ast.ExprStmt(expr=node.else_, semi=False),))
        else:
            branches.append(())
        for stmts in branches + wrapped:
            yield state.with_module(splice(state.module, path, stmts))
        if node.else_ is not None and node.ty is UNIT:
            dropped = ast.ExprStmt(expr=replace(node, else_=None), semi=False)
            yield state.with_module(splice(state.module, path, (dropped,)))


def _int_value(e: ast.Expr) -> int | None:
    if isinstance(e, ast.IntLit):
        return e.value
    if isinstance(e, ast.Unary) and e.op is ast.UnOp.NEG and isinstance(e.operand, ast.IntLit):
        return -e.operand.value
    return None


def _iteration(var: str, ty: Scalar, value: ast.Expr, body: ast.Block) -> ast.Stmt:
    """`{ let var: ty = value; body }` — one iteration with the loop variable bound."""
    let = ast.Let(name=var, mutable=False, ty=ast.ScalarType(scalar=ty), init=value)
    return _block_stmt(ast.Block(stmts=(let, *body.stmts), tail=body.tail))


def loops(state: State) -> Iterator[Case]:
    """A loop → one iteration (a `for` with its variable bound to the start by `let`, a
    `while` as `if`, a `loop` as its body), or a short constant `for` → its iterations."""
    from rgpu_fuzz.lang.literals import int_literal

    for path, n in nodes(state.module):
        if not path or path[-1][0] != "stmts":
            continue
        match n:
            case ast.For(var=var, start=start, end=end, body=body):
                ty = getattr(start, "ty", None)
                if not isinstance(ty, Scalar):
                    continue
                yield state.with_module(splice(state.module, path, (
                    _iteration(var, ty, pin_literals(start), body),)))
                lo, hi = _int_value(start), _int_value(end)
                if lo is None or hi is None:
                    continue
                count = hi - lo + (1 if n.inclusive else 0)
                if 1 < count <= MAX_UNROLL:
                    copies = tuple(_iteration(var, ty, int_literal(v, ty), body)
                                   for v in range(lo, lo + count))
                    yield state.with_module(splice(state.module, path, copies))
            case ast.While(cond=cond, body=body):
                as_if = ast.ExprStmt(expr=ast.If(cond=cond, then=body), semi=False)
                yield state.with_module(splice(state.module, path, (as_if,)))
                yield state.with_module(splice(state.module, path, (_block_stmt(body),)))
            case ast.Loop(body=body):
                yield state.with_module(splice(state.module, path, (_block_stmt(body),)))


def flatten_blocks(state: State) -> Iterator[Case]:
    """A block statement (`{ ... }`, `unsafe { ... }`) spliced into the enclosing block."""
    for path, node in _stmt_paths(state, ast.BlockExpr):
        assert isinstance(node, ast.BlockExpr)
        yield state.with_module(splice(state.module, path, _contents(node.block)))


EMPTY_BLOCKS = Pass("empty-blocks", empty_blocks)
REMOVE_STMTS = Pass("remove-stmts", remove_stmts)
IF_BRANCHES = Pass("if-branches", if_branches)
LOOPS = Pass("loops", loops)
FLATTEN_BLOCKS = Pass("flatten-blocks", flatten_blocks)
