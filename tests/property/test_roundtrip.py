"""The printer's contract: `parse(print_module(m)) == m` and printing is idempotent."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_expr, print_module
from tests.property.ast_strategies import exprs, modules

_SETTINGS = settings(max_examples=200, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_SETTINGS
@given(modules)
def test_module_round_trips(m: ast.Module) -> None:
    text = print_module(m)
    assert parse(text) == m, text
    assert print_module(parse(text)) == text


@_SETTINGS
@given(exprs)
def test_expression_round_trips_in_a_let(e: ast.Expr) -> None:
    body = ast.Block(stmts=(ast.Let(name="v", mutable=False, ty=None, init=e),))
    m = ast.Module(items=(ast.Fn(name="f", params=(), ret=None, body=body),))
    text = print_module(m)
    assert parse(text) == m, text
    if "\n" not in print_expr(e):
        assert f"    let v = {print_expr(e)};\n" in text


@_SETTINGS
@given(exprs)
def test_expression_round_trips_as_statement_and_tail(e: ast.Expr) -> None:
    semi = ast.ExprStmt(expr=e, semi=True)
    body = ast.Block(stmts=(semi, semi), tail=e)
    m = ast.Module(items=(ast.Fn(name="f", params=(), ret=None, body=body),))
    text = print_module(m)
    assert parse(text) == m, text
