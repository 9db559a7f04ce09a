"""Canonical printer: `ast.Module` to Rust source text.

The canonical form is what case files store and what the reducer measures, so it is fixed:
4-space indentation, one statement per line, `else if` chains, one blank line between items,
a final newline, and the fewest parentheses that parse back to the same tree.

Invariants (tested by tests/property/test_roundtrip.py):
* `parse(print_module(m)) == m` for every tree the parser can produce (spans and checker
  annotations are not part of equality);
* printing is idempotent: `print_module(parse(print_module(m))) == print_module(m)`;
* the output is valid Rust: a cast before `<` or `<<` is parenthesised (Rust would read
  generics), and so is an expression statement that would start with a block-like expression.
"""

from __future__ import annotations

import re

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.parser import BINARY_PRECEDENCE, CAST_PRECEDENCE, COMPARISON_PRECEDENCE
from rgpu_fuzz.lang.types import elem_text

_PRIMARY = 100
_POSTFIX = 90
_UNARY = 80
_LOWEST = 0

_INDENT = "    "
_HEX_FROM = 1 << 16
_ENDS_WITH_CAST = re.compile(r" as \w+$")


def print_type(t: ast.TypeExpr) -> str:
    """`u32`, `[f32; 64]`, `&mut [u32]`."""
    match t:
        case ast.ScalarType():
            return t.scalar.value
        case ast.ArrayType():
            return f"[{elem_text(t.elem, t.atomic)}; {print_expr(t.len)}]"
        case ast.SliceType():
            if t.atomic:
                return f"&[{elem_text(t.elem, True)}]"
            return f"&mut [{t.elem}]" if t.mutable else f"&[{t.elem}]"
    raise TypeError(f"not a type expression: {t!r}")


def print_expr(e: ast.Expr) -> str:
    """One expression in a context that accepts any expression (a `let` initialiser)."""
    return _Printer().expr(e, _LOWEST)


def print_module(m: ast.Module) -> str:
    """The canonical source text of a module, ending with a newline."""
    return "\n\n".join(_Printer().item(i) for i in m.items) + "\n"


def _precedence(e: ast.Expr) -> int:
    match e:
        case ast.Binary():
            return BINARY_PRECEDENCE[e.op]
        case ast.Cast():
            return CAST_PRECEDENCE
        case ast.Unary():
            return _UNARY
        case ast.MethodCall() | ast.Index():
            return _POSTFIX
    return _PRIMARY


def _lhs_precedence(op: ast.BinOp) -> int:
    """The weakest binding a left operand of `op` may have without parentheses."""
    prec = BINARY_PRECEDENCE[op]
    return prec + 1 if prec == COMPARISON_PRECEDENCE else prec


def _leftmost(e: ast.Expr) -> ast.Expr:
    """The expression whose text comes first when `e` is printed without outer parentheses.
    Only descends where the printer adds no parentheses (a left operand is parenthesised only
    when it binds more loosely, and then it does not start the text)."""
    while True:
        match e:
            case ast.Binary() if _precedence(e.lhs) >= _lhs_precedence(e.op):
                e = e.lhs
            case ast.Cast() if _precedence(e.expr) >= CAST_PRECEDENCE:
                e = e.expr
            case ast.MethodCall() if _precedence(e.receiver) >= _POSTFIX:
                e = e.receiver
            case ast.Index() if _precedence(e.base) >= _POSTFIX:
                e = e.base
            case _:
                return e


def _starts_with_block(e: ast.Expr) -> bool:
    """True when `e` is not itself block-like but its text starts with one: in statement
    position Rust would end the statement after that block-like expression."""
    return not isinstance(e, ast.If | ast.BlockExpr) and isinstance(
        _leftmost(e), ast.If | ast.BlockExpr)


def _starts_with_bare_block(e: ast.Expr) -> bool:
    """True when the text of `e` starts with `{` (refused in conditions and range bounds)."""
    first = _leftmost(e)
    return isinstance(first, ast.BlockExpr) and not first.unsafe


def int_text(value: int) -> str:
    """Decimal below 65536, lowercase hex from there (bit patterns read better in hex)."""
    return str(value) if value < _HEX_FROM else f"{value:#x}"


class _Printer:
    def __init__(self) -> None:
        self.depth = 0

    # ---------------------------------------------------------------- items

    def item(self, i: ast.Item) -> str:
        match i:
            case ast.Use():
                return "use rgpu::*;"
            case ast.Const():
                return f"const {i.name}: {print_type(i.ty)} = {self.expr(i.value, _LOWEST)};"
            case ast.Shared() if i.atomic:
                return self.atomic_shared(i)
            case ast.Shared():
                return (f"#[shared]\nstatic mut {i.name}: [{i.elem}; {self.expr(i.len, _LOWEST)}]"
                        f" = {self.expr(i.init, _LOWEST)};")
            case ast.Fn():
                lines = []
                if i.kernel:
                    lines.append("#[kernel]")
                if i.inline_never:
                    lines.append("#[inline(never)]")
                params = ", ".join(
                    f"{'mut ' if p.mutable else ''}{p.name}: {print_type(p.ty)}" for p in i.params)
                ret = f" -> {print_type(i.ret)}" if i.ret is not None else ""
                pub = "pub " if i.public else ""
                lines.append(f"{pub}fn {i.name}({params}){ret} {self.block(i.body)}")
                return "\n".join(lines)
        raise TypeError(f"not an item: {i!r}")

    def atomic_shared(self, i: ast.Shared) -> str:
        """`static NAME: [AtomicU32; N] = [const { AtomicU32::new(v) }; N];`."""
        assert isinstance(i.init, ast.ArrayRepeat)
        ty = elem_text(i.elem, True)
        n = self.expr(i.len, _LOWEST)
        return (f"#[shared]\nstatic {i.name}: [{ty}; {n}] = [const {{ {ty}::new("
                f"{self.expr(i.init.value, _LOWEST)}) }}; {self.expr(i.init.len, _LOWEST)}];")

    # ---------------------------------------------------------------- statements

    def block(self, b: ast.Block) -> str:
        if not b.stmts and b.tail is None:
            return "{}"
        self.depth += 1
        pad = _INDENT * self.depth
        lines = [pad + self.stmt(s) for s in b.stmts]
        if b.tail is not None:
            lines.append(pad + self.stmt_expr(b.tail))
        self.depth -= 1
        return "{\n" + "\n".join(lines) + "\n" + _INDENT * self.depth + "}"

    def stmt_expr(self, e: ast.Expr) -> str:
        """An expression at the start of a statement: parenthesised when it would otherwise
        start with a block-like expression that ends the statement early."""
        text = self.expr(e, _LOWEST)
        return f"({text})" if _starts_with_block(e) else text

    def cond(self, e: ast.Expr) -> str:
        text = self.expr(e, _LOWEST)
        return f"({text})" if _starts_with_bare_block(e) else text

    def stmt(self, s: ast.Stmt) -> str:
        match s:
            case ast.Let():
                ty = f": {print_type(s.ty)}" if s.ty is not None else ""
                mut = "mut " if s.mutable else ""
                return f"let {mut}{s.name}{ty} = {self.expr(s.init, _LOWEST)};"
            case ast.Assign():
                op = f"{s.op.value}=" if s.op is not None else "="
                return f"{self.stmt_expr(s.target)} {op} {self.expr(s.value, _LOWEST)};"
            case ast.ExprStmt():
                block_like = isinstance(s.expr, ast.If | ast.BlockExpr)
                semi = ";" if s.semi or not block_like else ""
                return self.stmt_expr(s.expr) + semi
            case ast.While():
                return f"while {self.cond(s.cond)} {self.block(s.body)}"
            case ast.Loop():
                return f"loop {self.block(s.body)}"
            case ast.For():
                dots = "..=" if s.inclusive else ".."
                return (f"for {s.var} in {self.cond(s.start)}{dots}{self.cond(s.end)} "
                        f"{self.block(s.body)}")
            case ast.Break():
                return "break;"
            case ast.Continue():
                return "continue;"
            case ast.Return():
                return "return;" if s.value is None else f"return {self.expr(s.value, _LOWEST)};"
        raise TypeError(f"not a statement: {s!r}")

    # ---------------------------------------------------------------- expressions

    def expr(self, e: ast.Expr, min_prec: int) -> str:
        """`e` parenthesised if it binds more loosely than `min_prec` requires."""
        text = self.bare(e)
        return f"({text})" if _precedence(e) < min_prec else text

    def args(self, args: tuple[ast.Expr, ...]) -> str:
        return ", ".join(self.expr(a, _LOWEST) for a in args)

    def bare(self, e: ast.Expr) -> str:
        match e:
            case ast.IntLit():
                return int_text(e.value) + (e.suffix.value if e.suffix else "")
            case ast.FloatLit():
                return e.text + (e.suffix.value if e.suffix else "")
            case ast.BoolLit():
                return "true" if e.value else "false"
            case ast.Name():
                return e.ident
            case ast.Unary():
                return e.op.value + self.expr(e.operand, _UNARY)
            case ast.Binary():
                return self.binary(e)
            case ast.Cast():
                return f"{self.expr(e.expr, CAST_PRECEDENCE)} as {e.to.value}"
            case ast.Index():
                return f"{self.expr(e.base, _POSTFIX)}[{self.expr(e.index, _LOWEST)}]"
            case ast.MethodCall():
                return f"{self.expr(e.receiver, _POSTFIX)}.{e.method}({self.args(e.args)})"
            case ast.Call():
                return f"{e.func}({self.args(e.args)})"
            case ast.AssocCall():
                return f"{e.scalar.value}::{e.name}({self.args(e.args)})"
            case ast.AssocConst():
                return f"{e.scalar.value}::{e.name}"
            case ast.ArrayRepeat():
                return f"[{self.expr(e.value, _LOWEST)}; {self.expr(e.len, _LOWEST)}]"
            case ast.ArrayList():
                return f"[{self.args(e.elems)}]"
            case ast.If():
                return self.if_expr(e)
            case ast.BlockExpr():
                return ("unsafe " if e.unsafe else "") + self.block(e.block)
            case ast.OrderingLit():
                return f"Ordering::{e.ordering.value}"
        raise TypeError(f"not an expression: {e!r}")

    def binary(self, e: ast.Binary) -> str:
        lhs = self.expr(e.lhs, _lhs_precedence(e.op))
        if e.op in (ast.BinOp.LT, ast.BinOp.SHL) and _ENDS_WITH_CAST.search(lhs):
            lhs = f"({lhs})"
        return f"{lhs} {e.op.value} {self.expr(e.rhs, BINARY_PRECEDENCE[e.op] + 1)}"

    def if_expr(self, e: ast.If) -> str:
        text = f"if {self.cond(e.cond)} {self.block(e.then)}"
        if isinstance(e.else_, ast.If):
            text += " else " + self.if_expr(e.else_)
        elif e.else_ is not None:
            text += " else " + self.block(e.else_)
        return text
