"""Printer: canonical layout and the fewest parentheses that still parse back (golden text
written by hand from Rust's precedence and associativity)."""

from __future__ import annotations

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import BinOp, UnOp
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_expr, print_module, print_type
from rgpu_fuzz.model.scalars import Scalar

a, b, c, d = (ast.Name(ident=x) for x in "abcd")


def bin_(op: BinOp, lhs: ast.Expr, rhs: ast.Expr) -> ast.Binary:
    return ast.Binary(op=op, lhs=lhs, rhs=rhs)


def cast(e: ast.Expr, to: Scalar = Scalar.U32) -> ast.Cast:
    return ast.Cast(expr=e, to=to)


def neg(e: ast.Expr) -> ast.Unary:
    return ast.Unary(op=UnOp.NEG, operand=e)


def lit(v: int, s: Scalar | None = None) -> ast.IntLit:
    return ast.IntLit(value=v, suffix=s)


IF = ast.If(cond=c, then=ast.Block(tail=lit(1)), else_=ast.Block(tail=lit(2)))


def fn_module(*stmts: ast.Stmt, tail: ast.Expr | None = None) -> ast.Module:
    return ast.Module(items=(ast.Fn(name="f", params=(), ret=None,
                                    body=ast.Block(stmts=stmts, tail=tail)),))


@pytest.mark.parametrize(("e", "text"), [
    (bin_(BinOp.SUB, a, bin_(BinOp.SUB, b, c)), "a - (b - c)"),
    (bin_(BinOp.SUB, bin_(BinOp.SUB, a, b), c), "a - b - c"),
    (bin_(BinOp.MUL, bin_(BinOp.ADD, a, b), c), "(a + b) * c"),
    (bin_(BinOp.ADD, a, bin_(BinOp.MUL, b, c)), "a + b * c"),
    (bin_(BinOp.SHL, a, bin_(BinOp.ADD, b, c)), "a << b + c"),
    (bin_(BinOp.AND, bin_(BinOp.OR, a, b), c), "(a | b) & c"),
    (bin_(BinOp.LAND, bin_(BinOp.LOR, a, b), c), "(a || b) && c"),
    (bin_(BinOp.LT, bin_(BinOp.LT, a, b), c), "(a < b) < c"),
    (bin_(BinOp.EQ, a, bin_(BinOp.EQ, b, c)), "a == (b == c)"),
    (bin_(BinOp.EQ, bin_(BinOp.AND, a, b), c), "a & b == c"),
    (bin_(BinOp.LT, cast(a), b), "(a as u32) < b"),
    (bin_(BinOp.SHL, cast(a), b), "(a as u32) << b"),
    (bin_(BinOp.LT, bin_(BinOp.ADD, a, cast(b)), c), "(a + b as u32) < c"),
    (bin_(BinOp.GT, cast(a), b), "a as u32 > b"),
    (bin_(BinOp.LT, a, cast(b)), "a < b as u32"),
    (bin_(BinOp.SHR, cast(a), b), "a as u32 >> b"),
    (cast(cast(a, Scalar.U8)), "a as u8 as u32"),
    (cast(bin_(BinOp.ADD, a, b)), "(a + b) as u32"),
    (cast(neg(a)), "-a as u32"),
    (neg(cast(a)), "-(a as u32)"),
    (neg(neg(a)), "--a"),
    (bin_(BinOp.SUB, a, neg(lit(1))), "a - -1"),
    (ast.MethodCall(receiver=neg(lit(1, Scalar.I32)), method="abs"), "(-1i32).abs()"),
    (neg(ast.MethodCall(receiver=lit(1, Scalar.I32), method="abs")), "-1i32.abs()"),
    (ast.MethodCall(receiver=cast(a), method="max", args=(b, c)), "(a as u32).max(b, c)"),
    (ast.Index(base=bin_(BinOp.ADD, a, b), index=cast(c, Scalar.USIZE)), "(a + b)[c as usize]"),
    (ast.MethodCall(receiver=lit(1), method="max", args=(lit(2),)), "1.max(2)"),
    (ast.MethodCall(receiver=ast.FloatLit(text="2.0", suffix=Scalar.F32), method="sqrt"),
     "2.0f32.sqrt()"),
    (lit(65535, Scalar.U32), "65535u32"),
    (lit(65536, Scalar.U32), "0x10000u32"),
    (lit(0x9E3779B9, Scalar.U32), "0x9e3779b9u32"),
    (neg(lit(128, Scalar.I8)), "-128i8"),
    (ast.FloatLit(text="1e-45", suffix=Scalar.F32), "1e-45f32"),
    (ast.AssocCall(scalar=Scalar.F32, name="from_bits", args=(lit(0x7FC00000, Scalar.U32),)),
     "f32::from_bits(0x7fc00000u32)"),
    (ast.AssocConst(scalar=Scalar.I64, name="MIN"), "i64::MIN"),
    (ast.ArrayRepeat(value=ast.FloatLit(text="0.0", suffix=Scalar.F32), len=lit(8)),
     "[0.0f32; 8]"),
    (ast.ArrayList(elems=(lit(1, Scalar.U8), lit(2))), "[1u8, 2]"),
    (bin_(BinOp.ADD, IF, lit(3)), "if c {\n    1\n} else {\n    2\n} + 3"),
])
def test_expression_text(e: ast.Expr, text: str) -> None:
    assert print_expr(e) == text
    assert parse(print_module(fn_module(ast.Let(name="v", mutable=False, ty=None, init=e)))) \
        == fn_module(ast.Let(name="v", mutable=False, ty=None, init=e))


def test_types() -> None:
    assert print_type(ast.ScalarType(scalar=Scalar.BOOL)) == "bool"
    assert print_type(ast.ArrayType(elem=Scalar.F32, len=ast.Name(ident="N"))) == "[f32; N]"
    assert print_type(ast.SliceType(elem=Scalar.U32, mutable=True)) == "&mut [u32]"
    assert print_type(ast.SliceType(elem=Scalar.I8, mutable=False)) == "&[i8]"


def test_statement_starting_with_block_like_is_parenthesised() -> None:
    m = fn_module(
        ast.ExprStmt(expr=bin_(BinOp.SUB, IF, lit(1))),
        ast.ExprStmt(expr=IF, semi=False),
        ast.Assign(target=ast.Index(base=ast.BlockExpr(block=ast.Block(tail=a), unsafe=True),
                                    index=lit(0)), value=lit(1)),
        tail=ast.MethodCall(receiver=ast.BlockExpr(block=ast.Block(tail=a)), method="max",
                            args=(b,)),
    )
    assert print_module(m) == (
        "fn f() {\n"
        "    (if c {\n"
        "        1\n"
        "    } else {\n"
        "        2\n"
        "    } - 1);\n"
        "    if c {\n"
        "        1\n"
        "    } else {\n"
        "        2\n"
        "    }\n"
        "    (unsafe {\n"
        "        a\n"
        "    }[0]) = 1;\n"
        "    ({\n"
        "        a\n"
        "    }.max(b))\n"
        "}\n")
    assert parse(print_module(m)) == m


def test_conditions_and_ranges_never_start_with_a_bare_block() -> None:
    blk = ast.BlockExpr(block=ast.Block(tail=a))
    m = fn_module(
        ast.While(cond=bin_(BinOp.EQ, blk, b), body=ast.Block()),
        ast.For(var="i", start=blk, end=blk, body=ast.Block(), inclusive=True),
    )
    assert print_module(m) == (
        "fn f() {\n"
        "    while ({\n"
        "        a\n"
        "    } == b) {}\n"
        "    for i in ({\n"
        "        a\n"
        "    })..=({\n"
        "        a\n"
        "    }) {}\n"
        "}\n")
    assert parse(print_module(m)) == m


def test_module_layout() -> None:
    m = ast.Module(items=(
        ast.Use(),
        ast.Const(name="N", ty=ast.ScalarType(scalar=Scalar.USIZE), value=lit(64)),
        ast.Shared(name="T", elem=Scalar.F32, len=ast.Name(ident="N"),
                   init=ast.ArrayRepeat(value=ast.FloatLit(text="0.0", suffix=Scalar.F32),
                                        len=ast.Name(ident="N"))),
        ast.Fn(name="h", params=(ast.Param(name="x", ty=ast.ScalarType(scalar=Scalar.I32),
                                           mutable=True),),
               ret=ast.ScalarType(scalar=Scalar.I32), inline_never=True,
               body=ast.Block(stmts=(ast.Assign(target=ast.Name(ident="x"), value=lit(1),
                                                op=BinOp.SHL),),
                              tail=ast.Name(ident="x"))),
        ast.Fn(name="k", params=(ast.Param(name="o", ty=ast.SliceType(elem=Scalar.U32,
                                                                      mutable=True)),),
               ret=None, kernel=True, public=True,
               body=ast.Block(stmts=(
                   ast.ExprStmt(expr=ast.If(
                       cond=a, then=ast.Block(stmts=(ast.Return(),)),
                       else_=ast.If(cond=b, then=ast.Block(stmts=(ast.Break(),)),
                                    else_=ast.Block(stmts=(ast.Continue(),)))), semi=False),
                   ast.Loop(body=ast.Block()),
                   ast.For(var="i", start=lit(0, Scalar.U32), end=lit(4, Scalar.U32),
                           body=ast.Block()),
                   ast.Let(name="y", mutable=True, ty=ast.ScalarType(scalar=Scalar.U32),
                           init=lit(0)),
                   ast.Return(value=ast.BoolLit(value=True)),
               ))),
    ))
    assert print_module(m) == """\
use rgpu::*;

const N: usize = 64;

#[shared]
static mut T: [f32; N] = [0.0f32; N];

#[inline(never)]
fn h(mut x: i32) -> i32 {
    x <<= 1;
    x
}

#[kernel]
pub fn k(o: &mut [u32]) {
    if a {
        return;
    } else if b {
        break;
    } else {
        continue;
    }
    loop {}
    for i in 0u32..4u32 {}
    let mut y: u32 = 0;
    return true;
}
"""
    assert parse(print_module(m)) == m


def test_empty_module_is_a_newline() -> None:
    assert print_module(ast.Module(items=())) == "\n"
