"""Parser: tokens to `ast.Module` (docs/language.md "Items", "Statements", "Expressions").

Recursive descent for items and statements, precedence climbing for binary operators, with
Rust's rules where the subset is ambiguous:
* a statement that starts with a block-like expression (`if`, `{}`, `unsafe {}`) ends after
  it unless a method call follows (`if c {} - 1` is two statements, as in rustc);
* the last expression of a block without `;` is the block's `tail`;
* comparisons do not chain; `x as T < y` is refused, because Rust reads `<` as generics.

A parse error inside an item is recorded and the parser skips to the next item keyword, so one
run reports the errors of several items; every skip consumes at least one token.
"""

from __future__ import annotations

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.lexer import Token, TokenKind, tokenize
from rgpu_fuzz.lang.limits import MAX_NESTING, MAX_SOURCE_BYTES
from rgpu_fuzz.lang.source import Diagnostic, DiagnosticError, SourceFile, Span
from rgpu_fuzz.model.scalars import Scalar

BINARY_PRECEDENCE: dict[ast.BinOp, int] = {
    ast.BinOp.MUL: 10, ast.BinOp.DIV: 10, ast.BinOp.REM: 10,
    ast.BinOp.ADD: 9, ast.BinOp.SUB: 9,
    ast.BinOp.SHL: 8, ast.BinOp.SHR: 8,
    ast.BinOp.AND: 7,
    ast.BinOp.XOR: 6,
    ast.BinOp.OR: 5,
    ast.BinOp.EQ: 4, ast.BinOp.NE: 4, ast.BinOp.LT: 4, ast.BinOp.LE: 4, ast.BinOp.GT: 4,
    ast.BinOp.GE: 4,
    ast.BinOp.LAND: 3,
    ast.BinOp.LOR: 2,
}
"""Binding strength of the binary operators (higher binds tighter); all left-associative
except the comparisons (level 4), which do not associate."""

CAST_PRECEDENCE = 11
"""`as` binds tighter than every binary operator and looser than unary operators."""

COMPARISON_PRECEDENCE = 4

_BINOPS: dict[str, ast.BinOp] = {op.value: op for op in ast.BinOp}
_COMPOUND: dict[str, ast.BinOp] = {op.value + "=": op for op in ast.COMPOUND_OPS}
_SCALARS: dict[str, Scalar] = {s.value: s for s in Scalar}
_ITEM_STARTS = ("#", "pub", "fn", "const", "static", "use")
# MAX_NESTING (limits.py) counts parentheses, unary operators, blocks, and the length of
# left-associative operator and method chains, which nest too. Every stage walks trees
# recursively; past it a program gets a diagnostic instead of exhausting Python's stack.
_ATTRIBUTES = ("kernel", "shared", "inline(never)")


class _ParseError(Exception):
    """Internal: unwinds to the item loop, which records the diagnostic and resynchronises."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


def _is_block_like(e: ast.Expr) -> bool:
    return isinstance(e, ast.If | ast.BlockExpr)


class _Parser:
    def __init__(self, src: SourceFile, tokens: list[Token]) -> None:
        self.src = src
        self.toks = tokens
        self.pos = 0
        self.errors: list[Diagnostic] = []
        self.depth = 0

    def nest(self, extra: int, span: Span) -> None:
        """Fail cleanly when the tree under construction would nest deeper than allowed."""
        if self.depth + extra > MAX_NESTING:
            raise _ParseError(f"expression or block nested too deeply (more than "
                              f"{MAX_NESTING} levels)", span)

    # ---------------------------------------------------------------- token helpers

    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.pos]
        if t.kind is not TokenKind.EOF:
            self.pos += 1
        return t

    def prev_span(self) -> Span:
        return self.toks[self.pos - 1].span if self.pos > 0 else self.tok.span

    def at(self, text: str) -> bool:
        t = self.tok
        return t.text == text and t.kind in (TokenKind.PUNCT, TokenKind.KEYWORD)

    def eat(self, text: str) -> Token | None:
        return self.next() if self.at(text) else None

    def fail(self, expected: str, tok: Token | None = None) -> _ParseError:
        t = tok or self.tok
        return _ParseError(f"expected {expected}, found {t.describe()}", t.span)

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.fail(f"`{text}`")
        return self.next()

    def ident(self) -> Token:
        t = self.tok
        if t.kind is not TokenKind.IDENT or t.text == "_":
            raise self.fail("identifier")
        return self.next()

    # ---------------------------------------------------------------- items

    def module(self) -> ast.Module:
        items: list[ast.Item] = []
        while self.tok.kind is not TokenKind.EOF:
            start = self.pos
            try:
                items.append(self.item())
            except _ParseError as e:
                self.errors.append(Diagnostic(e.message, e.span, self.src))
                if self.pos == start:
                    self.next()
                while self.tok.kind is not TokenKind.EOF and not (
                    self.tok.text in _ITEM_STARTS and self.tok.kind is not TokenKind.IDENT
                ):
                    self.next()
        end = self.toks[-1].span
        return ast.Module(items=tuple(items), span=Span(0, end.end, 1, 1))

    def attributes(self) -> list[tuple[str, Span]]:
        attrs: list[tuple[str, Span]] = []
        while self.at("#"):
            start = self.next().span
            self.expect("[")
            name = self.ident().text
            if self.eat("("):
                arg = self.ident().text
                self.expect(")")
                name = f"{name}({arg})"
            span = start.to(self.expect("]").span)
            if name not in _ATTRIBUTES:
                raise _ParseError(
                    f"unsupported attribute `#[{name}]`: expected `#[kernel]`, `#[shared]` "
                    "or `#[inline(never)]`", span)
            if any(n == name for n, _ in attrs):
                raise _ParseError(f"duplicate attribute `#[{name}]`", span)
            attrs.append((name, span))
        return attrs

    def item(self) -> ast.Item:
        attrs = self.attributes()
        start = attrs[0][1] if attrs else self.tok.span
        names = {n for n, _ in attrs}
        allowed = {"kernel", "inline(never)"} if self.at("pub") or self.at("fn") else (
            {"shared"} if self.at("static") else set())
        for name, span in attrs:
            if name not in allowed:
                where = "a `static mut` item" if name == "shared" else "a `fn`"
                raise _ParseError(f"`#[{name}]` is only allowed on {where}", span)
        if self.at("use"):
            return self.use_item(start)
        if self.at("const"):
            return self.const_item(start)
        if self.at("static"):
            return self.static_item(start, "shared" in names)
        if self.at("pub") or self.at("fn"):
            return self.fn_item(start, names)
        raise self.fail("item (`use`, `const`, `static` or `fn`)")

    def use_item(self, start: Span) -> ast.Use:
        self.expect("use")
        t = self.tok
        if not (t.kind is TokenKind.IDENT and t.text == "rgpu" and self.peek().is_punct("::")
                and self.peek(2).is_punct("*")):
            raise _ParseError("only `use rgpu::*;` is supported", t.span)
        self.pos += 3
        return ast.Use(span=start.to(self.expect(";").span))

    def const_item(self, start: Span) -> ast.Const:
        self.expect("const")
        name = self.ident().text
        self.expect(":")
        ty = self.type_expr()
        if not isinstance(ty, ast.ScalarType):
            raise _ParseError("a `const` must have a scalar type", ty.span)
        self.expect("=")
        value = self.expr()
        return ast.Const(name=name, ty=ty, value=value, span=start.to(self.expect(";").span))

    def static_item(self, start: Span, shared: bool) -> ast.Shared:
        kw = self.expect("static")
        if not shared:
            raise _ParseError("a `static` item must be `#[shared] static mut`", kw.span)
        self.expect("mut")
        name = self.ident().text
        self.expect(":")
        ty = self.type_expr()
        if not isinstance(ty, ast.ArrayType):
            raise _ParseError("a `#[shared]` static must have an array type `[T; N]`", ty.span)
        self.expect("=")
        init = self.expr()
        return ast.Shared(name=name, elem=ty.elem, len=ty.len, init=init,
                          span=start.to(self.expect(";").span))

    def fn_item(self, start: Span, attrs: set[str]) -> ast.Fn:
        public = self.eat("pub") is not None
        self.expect("fn")
        name = self.ident().text
        self.expect("(")
        params: list[ast.Param] = []
        while not self.at(")"):
            p_start = self.tok.span
            mutable = self.eat("mut") is not None
            p_name = self.ident().text
            self.expect(":")
            ty = self.type_expr()
            params.append(ast.Param(name=p_name, ty=ty, mutable=mutable, span=p_start.to(ty.span)))
            if not self.eat(","):
                break
        self.expect(")")
        ret: ast.ScalarType | None = None
        if self.eat("->"):
            ty = self.type_expr()
            if not isinstance(ty, ast.ScalarType):
                raise _ParseError("a function can only return a scalar type", ty.span)
            ret = ty
        body = self.block()
        return ast.Fn(name=name, params=tuple(params), ret=ret, body=body,
                      kernel="kernel" in attrs, public=public,
                      inline_never="inline(never)" in attrs, span=start.to(body.span))

    # ---------------------------------------------------------------- types

    def scalar(self) -> tuple[Scalar, Span]:
        t = self.tok
        if t.kind is not TokenKind.IDENT or t.text not in _SCALARS:
            raise self.fail("scalar type")
        self.next()
        return _SCALARS[t.text], t.span

    def type_expr(self) -> ast.TypeExpr:
        start = self.tok.span
        if self.eat("&"):
            mutable = self.eat("mut") is not None
            self.expect("[")
            elem, _ = self.scalar()
            return ast.SliceType(elem=elem, mutable=mutable, span=start.to(self.expect("]").span))
        if self.eat("["):
            elem, _ = self.scalar()
            self.expect(";")
            length = self.expr()
            return ast.ArrayType(elem=elem, len=length, span=start.to(self.expect("]").span))
        if self.tok.kind is TokenKind.IDENT and self.tok.text in _SCALARS:
            scalar, span = self.scalar()
            return ast.ScalarType(scalar=scalar, span=span)
        raise self.fail("type")

    # ---------------------------------------------------------------- statements

    def block(self) -> ast.Block:
        start = self.expect("{").span
        self.nest(1, start)
        self.depth += 1
        try:
            return self.block_rest(start)
        finally:
            self.depth -= 1

    def block_rest(self, start: Span) -> ast.Block:
        stmts: list[ast.Stmt] = []
        tail: ast.Expr | None = None
        while not self.at("}"):
            if self.tok.kind is TokenKind.EOF:
                raise self.fail("`}`")
            if self.eat(";"):
                continue
            stmt, is_tail = self.stmt()
            if is_tail:
                assert isinstance(stmt, ast.ExprStmt)
                tail = stmt.expr
                break
            stmts.append(stmt)
        end = self.expect("}").span
        return ast.Block(stmts=tuple(stmts), tail=tail, span=start.to(end))

    def end_of_stmt(self) -> Span:
        """`;`, or nothing before a `}` (Rust's tail position, same meaning for these)."""
        if self.at("}"):
            return self.prev_span()
        return self.expect(";").span

    def stmt(self) -> tuple[ast.Stmt, bool]:
        """One statement; the flag says it is the block's tail expression."""
        t = self.tok
        if t.is_keyword("let"):
            return self.let_stmt(), False
        if t.is_keyword("while"):
            self.next()
            cond = self.cond()
            body = self.block()
            self.eat(";")
            return ast.While(cond=cond, body=body, span=t.span.to(body.span)), False
        if t.is_keyword("loop"):
            self.next()
            body = self.block()
            self.eat(";")
            return ast.Loop(body=body, span=t.span.to(body.span)), False
        if t.is_keyword("for"):
            return self.for_stmt(), False
        if t.is_keyword("break"):
            self.next()
            return ast.Break(span=t.span.to(self.end_of_stmt())), False
        if t.is_keyword("continue"):
            self.next()
            return ast.Continue(span=t.span.to(self.end_of_stmt())), False
        if t.is_keyword("return"):
            self.next()
            value = None if self.at(";") or self.at("}") else self.expr()
            return ast.Return(value=value, span=t.span.to(self.end_of_stmt())), False
        return self.expr_stmt()

    def let_stmt(self) -> ast.Let:
        start = self.expect("let").span
        mutable = self.eat("mut") is not None
        name = self.ident().text
        ty = self.type_expr() if self.eat(":") else None
        self.expect("=")
        init = self.expr()
        return ast.Let(name=name, mutable=mutable, ty=ty, init=init,
                       span=start.to(self.expect(";").span))

    def for_stmt(self) -> ast.For:
        start = self.expect("for").span
        var = self.ident().text
        self.expect("in")
        lo = self.cond()
        if self.eat("..="):
            inclusive = True
        elif self.eat(".."):
            inclusive = False
        else:
            raise self.fail("`..` or `..=`")
        hi = self.cond()
        body = self.block()
        self.eat(";")
        return ast.For(var=var, start=lo, end=hi, body=body, inclusive=inclusive,
                       span=start.to(body.span))

    def cond(self) -> ast.Expr:
        """A condition or range bound: any expression that does not start with a bare block."""
        if self.at("{"):
            raise self.fail("expression")
        return self.expr()

    def expr_stmt(self) -> tuple[ast.Stmt, bool]:
        start = self.tok
        if start.is_punct("{") or start.is_keyword("if") or start.is_keyword("unsafe"):
            e = self.primary()
            if not self.at("."):
                if self.at("}"):
                    return ast.ExprStmt(expr=e, semi=False, span=e.span), True
                semi = self.eat(";")
                span = e.span.to(semi.span) if semi else e.span
                return ast.ExprStmt(expr=e, semi=semi is not None, span=span), False
            e = self.binary_rest(self.postfix_rest(e), 0)
        else:
            e = self.expr()
        op_tok = self.tok
        if op_tok.is_punct("=") or (op_tok.kind is TokenKind.PUNCT and op_tok.text in _COMPOUND):
            self.next()
            if not isinstance(e, ast.Name | ast.Index):
                raise _ParseError("invalid left-hand side of assignment", e.span)
            value = self.expr()
            op = None if op_tok.text == "=" else _COMPOUND[op_tok.text]
            return ast.Assign(target=e, value=value, op=op,
                              span=e.span.to(self.end_of_stmt())), False
        if self.at("}"):
            return ast.ExprStmt(expr=e, semi=False, span=e.span), True
        return ast.ExprStmt(expr=e, semi=True, span=e.span.to(self.expect(";").span)), False

    # ---------------------------------------------------------------- expressions

    def expr(self) -> ast.Expr:
        return self.binary_rest(self.unary(), 0)

    def binary_op(self) -> ast.BinOp | None:
        t = self.tok
        return _BINOPS.get(t.text) if t.kind is TokenKind.PUNCT else None

    def binary_rest(self, lhs: ast.Expr, min_prec: int) -> ast.Expr:
        """Precedence climbing over `as` and the binary operators, `lhs` already parsed."""
        chain = 0
        while True:
            chain += 1
            self.nest(chain, self.tok.span)
            if self.at("as") and CAST_PRECEDENCE >= min_prec:
                self.next()
                to, span = self.scalar()
                lhs = ast.Cast(expr=lhs, to=to, span=lhs.span.to(span))
                if self.at("<") or self.at("<<"):
                    what = "a comparison" if self.tok.text == "<" else "a shift"
                    raise _ParseError(
                        f"`{self.tok.text}` is interpreted as a start of generic arguments for "
                        f"`{to}`, not {what}", self.tok.span)
                continue
            op = self.binary_op()
            if op is None or BINARY_PRECEDENCE[op] < min_prec:
                return lhs
            prec = BINARY_PRECEDENCE[op]
            self.next()
            rhs = self.binary_rest(self.unary(), prec + 1)
            lhs = ast.Binary(op=op, lhs=lhs, rhs=rhs, span=lhs.span.to(rhs.span))
            if prec == COMPARISON_PRECEDENCE and (nxt := self.binary_op()) is not None \
                    and BINARY_PRECEDENCE[nxt] == COMPARISON_PRECEDENCE:
                raise _ParseError("comparison operators cannot be chained", self.tok.span)

    def unary(self) -> ast.Expr:
        t = self.tok
        self.nest(1, t.span)
        self.depth += 1
        try:
            return self.unary_inner(t)
        finally:
            self.depth -= 1

    def unary_inner(self, t: Token) -> ast.Expr:
        if t.is_punct("-") or t.is_punct("!"):
            self.next()
            operand = self.unary()
            op = ast.UnOp.NEG if t.text == "-" else ast.UnOp.NOT
            return ast.Unary(op=op, operand=operand, span=t.span.to(operand.span))
        return self.postfix_rest(self.primary())

    def postfix_rest(self, e: ast.Expr) -> ast.Expr:
        chain = 0
        while True:
            chain += 1
            self.nest(chain, self.tok.span)
            if self.eat("."):
                name = self.ident()
                self.expect("(")
                args, end = self.args()
                e = ast.MethodCall(receiver=e, method=name.text, args=args, span=e.span.to(end))
            elif self.eat("["):
                index = self.expr()
                e = ast.Index(base=e, index=index, span=e.span.to(self.expect("]").span))
            else:
                return e

    def args(self) -> tuple[tuple[ast.Expr, ...], Span]:
        """Comma-separated arguments after `(`, through the `)`; a trailing comma is allowed."""
        args: list[ast.Expr] = []
        while not self.at(")"):
            args.append(self.expr())
            if not self.eat(","):
                break
        return tuple(args), self.expect(")").span

    def primary(self) -> ast.Expr:
        t = self.tok
        if t.kind is TokenKind.INT:
            self.next()
            assert isinstance(t.value, int)
            return ast.IntLit(value=t.value, suffix=t.suffix, span=t.span)
        if t.kind is TokenKind.FLOAT:
            self.next()
            assert isinstance(t.value, str)
            return ast.FloatLit(text=t.value, suffix=t.suffix, span=t.span)
        if t.is_keyword("true") or t.is_keyword("false"):
            self.next()
            return ast.BoolLit(value=t.text == "true", span=t.span)
        if t.kind is TokenKind.IDENT and t.text != "_":
            return self.path_expr()
        if t.is_punct("("):
            self.next()
            e = self.expr()
            self.expect(")")
            return e
        if t.is_punct("["):
            return self.array()
        if t.is_punct("{"):
            b = self.block()
            return ast.BlockExpr(block=b, span=b.span)
        if t.is_keyword("unsafe"):
            self.next()
            b = self.block()
            return ast.BlockExpr(block=b, unsafe=True, span=t.span.to(b.span))
        if t.is_keyword("if"):
            return self.if_expr()
        raise self.fail("expression")

    def path_expr(self) -> ast.Expr:
        t = self.next()
        if self.at("::"):
            if t.text not in _SCALARS:
                raise _ParseError(
                    f"only a scalar type can come before `::`, found `{t.text}`", t.span)
            self.next()
            name = self.ident()
            if self.eat("("):
                args, end = self.args()
                return ast.AssocCall(scalar=_SCALARS[t.text], name=name.text, args=args,
                                     span=t.span.to(end))
            return ast.AssocConst(scalar=_SCALARS[t.text], name=name.text,
                                  span=t.span.to(name.span))
        if self.eat("("):
            args, end = self.args()
            return ast.Call(func=t.text, args=args, span=t.span.to(end))
        return ast.Name(ident=t.text, span=t.span)

    def array(self) -> ast.Expr:
        start = self.expect("[").span
        first = self.expr()
        if self.eat(";"):
            length = self.expr()
            return ast.ArrayRepeat(value=first, len=length, span=start.to(self.expect("]").span))
        elems = [first]
        while self.eat(","):
            if self.at("]"):
                break
            elems.append(self.expr())
        return ast.ArrayList(elems=tuple(elems), span=start.to(self.expect("]").span))

    def if_expr(self) -> ast.If:
        start = self.expect("if").span
        cond = self.cond()
        then = self.block()
        else_: ast.Block | ast.If | None = None
        if self.eat("else"):
            else_ = self.if_expr() if self.at("if") else self.block()
        return ast.If(cond=cond, then=then, else_=else_,
                      span=start.to(else_.span if else_ else then.span))


def parse(text: str, filename: str = "<input>") -> ast.Module:
    """Parses a kernel file. Raises `DiagnosticError` with every lexical error, or with every
    parse error found (one per item at most: the parser resynchronises at the next item)."""
    src = SourceFile(filename, text)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise DiagnosticError([Diagnostic(
            f"kernel source is {size} bytes; the limit is {MAX_SOURCE_BYTES} "
            "(docs/language.md \"Limits\")", Span(0, 0, 1, 1), src)])
    parser = _Parser(src, tokenize(src))
    module = parser.module()
    if parser.errors:
        raise DiagnosticError(parser.errors)
    return module
