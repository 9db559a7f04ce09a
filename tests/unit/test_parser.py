"""Parser: tree shapes (precedence, statement/expression rules) and every parse diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp, UnOp
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.lang.source import DiagnosticError
from rgpu_fuzz.model.scalars import Scalar

DESIGN_EXAMPLE = (Path(__file__).parents[2] / "examples" / "kernel.rs").read_text()


def body(src: str) -> ast.Block:
    m = parse("fn f() {\n" + src + "\n}")
    fn = m.items[0]
    assert isinstance(fn, ast.Fn)
    return fn.body


def expr(src: str) -> ast.Expr:
    let = body(f"let v = {src};").stmts[0]
    assert isinstance(let, ast.Let)
    return let.init


def errors(src: str) -> list[tuple[int, int, str]]:
    with pytest.raises(DiagnosticError) as exc:
        parse(src, "t.rs")
    return [(d.span.line, d.span.col, d.message) for d in exc.value.diagnostics]


def n(ident: str) -> ast.Name:
    return ast.Name(ident=ident)


def i(value: int, suffix: Scalar | None = None) -> ast.IntLit:
    return ast.IntLit(value=value, suffix=suffix)


def b(op: BinOp, lhs: ast.Expr, rhs: ast.Expr) -> ast.Binary:
    return ast.Binary(op=op, lhs=lhs, rhs=rhs)


# ---------------------------------------------------------------- expressions


def test_binary_precedence_follows_rust() -> None:
    # Each operator binds looser than the next, so the tree nests to the right:
    # a || (b && (c == (d | (e ^ (f & (g << (h + (i * j))))))))
    ops = [BinOp.LOR, BinOp.LAND, BinOp.EQ, BinOp.OR, BinOp.XOR, BinOp.AND, BinOp.SHL,
           BinOp.ADD, BinOp.MUL]
    names = "abcdefghij"
    expected: ast.Expr = n("j")
    for op, name in reversed(list(zip(ops, names, strict=False))):
        expected = b(op, n(name), expected)
    assert expr("a || b && c == d | e ^ f & g << h + i * j") == expected


def test_binary_operators_are_left_associative() -> None:
    assert expr("a - b - c") == b(BinOp.SUB, b(BinOp.SUB, n("a"), n("b")), n("c"))
    assert expr("a - (b - c)") == b(BinOp.SUB, n("a"), b(BinOp.SUB, n("b"), n("c")))


def test_cast_binds_between_unary_and_multiplication() -> None:
    assert expr("-x as u32 * y") == b(
        BinOp.MUL, ast.Cast(expr=ast.Unary(op=UnOp.NEG, operand=n("x")), to=Scalar.U32), n("y"))
    assert expr("x as u8 as u32") == ast.Cast(
        expr=ast.Cast(expr=n("x"), to=Scalar.U8), to=Scalar.U32)
    assert expr("(x as u32) < y") == b(BinOp.LT, ast.Cast(expr=n("x"), to=Scalar.U32), n("y"))
    assert expr("x as u32 > y") == b(BinOp.GT, ast.Cast(expr=n("x"), to=Scalar.U32), n("y"))


def test_method_call_binds_tighter_than_negation() -> None:
    assert expr("-1i32.abs()") == ast.Unary(op=UnOp.NEG, operand=ast.MethodCall(
        receiver=i(1, Scalar.I32), method="abs"))
    assert expr("(-1i32).abs()") == ast.MethodCall(
        receiver=ast.Unary(op=UnOp.NEG, operand=i(1, Scalar.I32)), method="abs")


def test_postfix_chains_and_calls() -> None:
    assert expr("a[i].min(b.len(),)[0]") == ast.Index(
        base=ast.MethodCall(receiver=ast.Index(base=n("a"), index=n("i")), method="min",
                            args=(ast.MethodCall(receiver=n("b"), method="len"),)),
        index=i(0))
    assert expr("mix(x, 1)") == ast.Call(func="mix", args=(n("x"), i(1)))


def test_associated_items_need_a_scalar_type() -> None:
    assert expr("i8::MIN") == ast.AssocConst(scalar=Scalar.I8, name="MIN")
    assert expr("f32::from_bits(0x7fc0_0000u32)") == ast.AssocCall(
        scalar=Scalar.F32, name="from_bits", args=(i(0x7FC00000, Scalar.U32),))


def test_literals_and_arrays() -> None:
    assert expr("-128i8") == ast.Unary(op=UnOp.NEG, operand=i(128, Scalar.I8))
    assert expr("[0.0f32; 64]") == ast.ArrayRepeat(
        value=ast.FloatLit(text="0.0", suffix=Scalar.F32), len=i(64))
    assert expr("[1u8, 2, true,]") == ast.ArrayList(
        elems=(i(1, Scalar.U8), i(2), ast.BoolLit(value=True)))


def test_if_else_if_chain_and_blocks_as_expressions() -> None:
    e = expr("if a { 1 } else if b { 2 } else { unsafe { 3 } }")
    assert isinstance(e, ast.If) and isinstance(e.else_, ast.If)
    assert isinstance(e.else_.else_, ast.Block)
    tail = e.else_.else_.tail
    assert isinstance(tail, ast.BlockExpr) and tail.unsafe and tail.block.tail == i(3)


def test_block_like_in_expression_position_continues() -> None:
    assert expr("if c { 1 } else { 2 } - 1") == b(BinOp.SUB, ast.If(
        cond=n("c"), then=ast.Block(tail=i(1)), else_=ast.Block(tail=i(2))), i(1))


# ---------------------------------------------------------------- statements


def test_block_like_statement_ends_before_an_operator() -> None:
    blk = body("if c {} - 1")
    assert blk.stmts == (ast.ExprStmt(expr=ast.If(cond=n("c"), then=ast.Block()), semi=False),)
    assert blk.tail == ast.Unary(op=UnOp.NEG, operand=i(1))


def test_block_like_statement_continues_with_a_method_call() -> None:
    blk = body("{ x }.max(y) - 1;")
    assert blk.stmts == (ast.ExprStmt(expr=b(BinOp.SUB, ast.MethodCall(
        receiver=ast.BlockExpr(block=ast.Block(tail=n("x"))), method="max", args=(n("y"),)),
        i(1))),)


def test_final_expression_is_the_tail_and_semicolons_are_kept() -> None:
    blk = body("f(); if a {} if b {}; { 1 }")
    assert blk.stmts == (
        ast.ExprStmt(expr=ast.Call(func="f")),
        ast.ExprStmt(expr=ast.If(cond=n("a"), then=ast.Block()), semi=False),
        ast.ExprStmt(expr=ast.If(cond=n("b"), then=ast.Block()), semi=True),
    )
    assert blk.tail == ast.BlockExpr(block=ast.Block(tail=i(1)))


def test_statement_forms() -> None:
    blk = body(
        "let mut x: [f32; N] = a; x[0] += 1.0; y = 2; while x < 3 {} loop { break; continue }"
        " for k in 0u32..=n {} return; return 5")
    assert blk.stmts == (
        ast.Let(name="x", mutable=True, ty=ast.ArrayType(elem=Scalar.F32, len=n("N")),
                init=n("a")),
        ast.Assign(target=ast.Index(base=n("x"), index=i(0)),
                   value=ast.FloatLit(text="1.0"), op=BinOp.ADD),
        ast.Assign(target=n("y"), value=i(2)),
        ast.While(cond=b(BinOp.LT, n("x"), i(3)), body=ast.Block()),
        ast.Loop(body=ast.Block(stmts=(ast.Break(), ast.Continue()))),
        ast.For(var="k", start=i(0, Scalar.U32), end=n("n"), body=ast.Block(), inclusive=True),
        ast.Return(),
        ast.Return(value=i(5)),
    )
    assert blk.tail is None


def test_items_and_attributes() -> None:
    m = parse("use rgpu::*;\nconst N: usize = 4;\n#[shared] static mut T: [u32; N] = [0; N];\n"
              "#[inline(never)] fn h(mut a: u32) -> u32 { a }\n"
              "#[kernel] pub fn k(o: &mut [u32], i: &[f64]) {}")
    use, const, shared, helper, kernel = m.items
    assert use == ast.Use()
    assert const == ast.Const(name="N", ty=ast.ScalarType(scalar=Scalar.USIZE), value=i(4))
    assert shared == ast.Shared(name="T", elem=Scalar.U32, len=n("N"),
                                init=ast.ArrayRepeat(value=i(0), len=n("N")))
    assert helper == ast.Fn(
        name="h", params=(ast.Param(name="a", ty=ast.ScalarType(scalar=Scalar.U32), mutable=True),),
        ret=ast.ScalarType(scalar=Scalar.U32), body=ast.Block(tail=n("a")), inline_never=True)
    assert isinstance(kernel, ast.Fn) and kernel.kernel and kernel.public
    assert [p.ty for p in kernel.params] == [
        ast.SliceType(elem=Scalar.U32, mutable=True), ast.SliceType(elem=Scalar.F64, mutable=False)]


def test_spans_cover_the_source_of_each_node() -> None:
    src = "fn f() {\n    let v = a + b * 2;\n}"
    let = parse(src).items[0].body.stmts[0]  # type: ignore[union-attr]
    assert isinstance(let, ast.Let) and isinstance(let.init, ast.Binary)
    assert src[let.span.start:let.span.end] == "let v = a + b * 2;"
    assert src[let.init.span.start:let.init.span.end] == "a + b * 2"
    assert (let.init.rhs.span.line, let.init.rhs.span.col) == (2, 17)


def test_design_example_parses_and_round_trips() -> None:
    m = parse(DESIGN_EXAMPLE)
    assert [type(item).__name__ for item in m.items] == ["Use", "Const", "Fn", "Shared", "Fn"]
    assert [k.name for k in m.kernels()] == ["k"]
    text = print_module(m)
    assert parse(text) == m
    assert print_module(parse(text)) == text


# ---------------------------------------------------------------- diagnostics


@pytest.mark.parametrize(("src", "expected"), [
    ("fn f() { let x = 1 }", (1, 20, "expected `;`, found `}`")),
    ("fn f() {\n  let = 1;\n}", (2, 7, "expected identifier, found `=`")),
    ("fn f() { let match = 1; }", (1, 14, "expected identifier, found keyword `match`")),
    ("fn f() { let _ = 1; }", (1, 14, "expected identifier, found `_`")),
    ("fn f() { g(); ", (1, 15, "expected `}`, found end of file")),
    ("fn f() { x = ; }", (1, 14, "expected expression, found `;`")),
    ("let x = 1;", (1, 1, "expected item (`use`, `const`, `static` or `fn`), found keyword `let`")),
    ("fn f(a: foo) {}", (1, 9, "expected type, found `foo`")),
    ("fn f(a: &[[u32; 2]]) {}", (1, 11, "expected scalar type, found `[`")),
    ("fn f() { x.y; }", (1, 13, "expected `(`, found `;`")),
    ("fn f() { for i 0..4 {} }", (1, 16, "expected `in`, found `0`")),
    ("fn f() { for i in 0, 4 {} }", (1, 20, "expected `..` or `..=`, found `,`")),
    ("fn f() { if { c } {} }", (1, 13, "expected expression, found `{`")),
    ("fn f() { while {c} {} }", (1, 16, "expected expression, found `{`")),
    ("fn f() { (a, b); }", (1, 12, "expected `)`, found `,`")),
    ("#[foo] fn f() {}", (1, 1, "unsupported attribute `#[foo]`: expected `#[kernel]`, "
                                "`#[shared]` or `#[inline(never)]`")),
    ("#[inline(always)] fn f() {}", (1, 1, "unsupported attribute `#[inline(always)]`: "
                                           "expected `#[kernel]`, `#[shared]` or "
                                           "`#[inline(never)]`")),
    ("#[kernel] #[kernel] pub fn f() {}", (1, 11, "duplicate attribute `#[kernel]`")),
    ("#[shared] fn f() {}", (1, 1, "`#[shared]` is only allowed on a `static mut` item")),
    ("#[kernel]\nconst N: u32 = 1;", (1, 1, "`#[kernel]` is only allowed on a `fn`")),
    ("use std::*;", (1, 5, "only `use rgpu::*;` is supported")),
    ("use rgpu::thread_idx_x;", (1, 5, "only `use rgpu::*;` is supported")),
    ("const N: [u32; 2] = 1;", (1, 10, "a `const` must have a scalar type")),
    ("static mut T: [u32; 2] = [0; 2];", (1, 1, "a `static` item must be `#[shared] static mut`")),
    ("#[shared] static mut T: u32 = 0;",
     (1, 25, "a `#[shared]` static must have an array type `[T; N]`")),
    ("fn f() -> [u32; 2] {}", (1, 11, "a function can only return a scalar type")),
    ("pub const N: u32 = 1;", (1, 5, "expected `fn`, found keyword `const`")),
    ("fn f() { f() = 1; }", (1, 10, "invalid left-hand side of assignment")),
    ("fn f() { a < b < c; }", (1, 16, "comparison operators cannot be chained")),
    ("fn f() { a == b != c; }", (1, 17, "comparison operators cannot be chained")),
    ("fn f() { x as u32 < y; }", (1, 19, "`<` is interpreted as a start of generic arguments "
                                         "for `u32`, not a comparison")),
    ("fn f() { x as u32 << y; }", (1, 19, "`<<` is interpreted as a start of generic "
                                          "arguments for `u32`, not a shift")),
    ("fn f() { x as foo; }", (1, 15, "expected scalar type, found `foo`")),
    ("fn f() { foo::MAX; }", (1, 10, "only a scalar type can come before `::`, found `foo`")),
    ("fn f() { let x = []; }", (1, 19, "expected expression, found `]`")),
])
def test_parse_diagnostics(src: str, expected: tuple[int, int, str]) -> None:
    assert errors(src) == [expected]


def test_identifier_describes_itself_in_diagnostics() -> None:
    # rustc says "found `T`"; the kind of an identifier token is not named, only its text
    assert errors("#[shared] static T: [u32; 2] = [0; 2];") == [
        (1, 18, "expected `mut`, found `T`")]


def test_recovery_reports_one_error_per_item_and_stops() -> None:
    src = (") fn a() { let = 1; }\n"
           "fn b() { ok(); }\n"
           "fn c() { x = ; }\n"
           "const N: u32 = ;\n"
           "} } ) #[kernel] pub fn d() { 1 + }\n")
    assert errors(src) == [
        (1, 1, "expected item (`use`, `const`, `static` or `fn`), found `)`"),
        (1, 16, "expected identifier, found `=`"),
        (3, 14, "expected expression, found `;`"),
        (4, 16, "expected expression, found `;`"),
        (5, 34, "expected expression, found `}`"),
    ]


def test_recovery_terminates_on_garbage() -> None:
    assert len(errors("fn " * 50 + "{ ) ] #")) >= 1


def test_lexical_errors_come_through_parse() -> None:
    assert errors("fn f() { let x = 1u7; }") == [
        (1, 18, "invalid suffix `u7` for number literal")]


def test_diagnostic_renders_with_file_and_caret() -> None:
    with pytest.raises(DiagnosticError) as exc:
        parse("fn f() {\n    let x = 1\n}", "k.rs")
    assert str(exc.value) == (
        "k.rs:3:1: error: expected `;`, found `}`\n"
        "  |\n"
        "3 | }\n"
        "  | ^")


def test_nesting_limit_is_a_diagnostic() -> None:
    """Deep nesting (parentheses, unary chains, long operator chains) ends in one located
    diagnostic, never a RecursionError (found by the fuzz/frontend.py harness)."""
    from rgpu_fuzz.lang.parser import MAX_NESTING

    template = "use rgpu::*;\n#[kernel]\npub fn k(out: &mut [u32]) {\n    out[0usize] = %s;\n}\n"
    ok = "(" * (MAX_NESTING - 8) + "1u32" + ")" * (MAX_NESTING - 8)
    parse(template % ok)
    for deep in ("(" * 5000 + "1u32" + ")" * 5000, "-" * 5000 + "1u32",
                 " + ".join(["1u32"] * 5000)):
        with pytest.raises(DiagnosticError) as e:
            parse(template % deep)
        (d,) = e.value.diagnostics
        assert "nested too deeply" in d.message and d.span.line == 4


@pytest.mark.parametrize(("src", "caret"), [
    # widths counted by hand: the whole attribute, the whole left-hand side, one token
    ("#[foo] fn f() {}", "^~~~~~"),
    ("fn f() { f(1) = 1; }", "         ^~~~"),
    ("fn f() { a <= b < c; }", "                ^"),
    ("fn f() { let x = 1u7; }", "                 ^~~"),
    ("fn f() { x /* y }", "           ^~"),
    ("const N: [u32; 2] = 1;", "         ^~~~~~~~"),
])
def test_diagnostic_carets_cover_the_span(src: str, caret: str) -> None:
    """The caret line under a one-line source: the span's start and width (its end), which
    the parser joins from the tokens and nodes it spans."""
    with pytest.raises(DiagnosticError) as exc:
        parse(src, "k.rs")
    rendered = exc.value.diagnostics[0].render().splitlines()
    assert rendered[2] == f"1 | {src}"
    assert rendered[3] == f"  | {caret}"
