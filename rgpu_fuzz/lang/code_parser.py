"""Parsing the inside of items: types, blocks, statements and expressions (docs/language.md
"Statements", "Expressions"), on a token cursor. Precedence climbing for binary operators, with
Rust's rules where the subset is ambiguous (see `rgpu_fuzz.lang.parser`, which parses items
with it)."""

from __future__ import annotations

from typing import Protocol

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.atomics_syntax import ATOMIC_TYPE_NAMES, ordering_lit
from rgpu_fuzz.lang.lexer import Token, TokenKind
from rgpu_fuzz.lang.limits import MAX_NESTING
from rgpu_fuzz.lang.source import Diagnostic, SourceFile, Span
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
# MAX_NESTING (limits.py) counts parentheses, unary operators, blocks, and the length of
# left-associative operator and method chains, which nest too. Every stage walks trees
# recursively; past it a program gets a diagnostic instead of exhausting Python's stack.


class _ParseError(Exception):
    """Internal: unwinds to the item loop, which records the diagnostic and resynchronises."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


class _Located(Protocol):
    """A `Token` or a `Span`: where something starts and ends."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def line(self) -> int: ...
    @property
    def col(self) -> int: ...


def _join(first: _Located, last: _Located) -> Span:
    """The span from the start of `first` to the end of `last` (`Span.to`, for tokens too)."""
    return Span(first.start, max(first.end, last.end), first.line, first.col)


def _too_deep(t: Token) -> _ParseError:
    return _ParseError(f"expression or block nested too deeply (more than {MAX_NESTING} "
                       "levels)", t.span)


def _is_block_like(e: ast.Expr) -> bool:
    return isinstance(e, ast.If | ast.BlockExpr)


_IDENT, _KEYWORD, _PUNCT, _INT, _FLOAT, _EOF = (
    TokenKind.IDENT, TokenKind.KEYWORD, TokenKind.PUNCT, TokenKind.INT, TokenKind.FLOAT,
    TokenKind.EOF)


class _CodeParser:
    """Recursive descent over the token list. `tok` is the current token (`toks[pos]`).

    Punctuation and keywords are matched on their text alone: only a PUNCT token's text is
    punctuation and only a KEYWORD token's text is a keyword (the lexer makes every reserved
    word a KEYWORD; identifiers and literals start with a letter, `_` or a digit)."""

    def __init__(self, src: SourceFile, tokens: list[Token]) -> None:
        self.src = src
        self.toks = tokens
        self.pos = 0
        self.tok = tokens[0]
        self.last = len(tokens) - 1
        self.errors: list[Diagnostic] = []
        self.depth = 0

    def nest(self, extra: int, t: Token) -> None:
        """Fail cleanly when the tree under construction would nest deeper than allowed."""
        if self.depth + extra > MAX_NESTING:
            raise _too_deep(t)

    # ---------------------------------------------------------------- token helpers

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.pos + k, self.last)]

    def next(self) -> Token:
        t = self.tok
        if self.pos < self.last:  # the EOF token is last and stays current
            self.pos += 1
            self.tok = self.toks[self.pos]
        return t

    def prev_span(self) -> Span:
        return self.toks[self.pos - 1].span if self.pos > 0 else self.tok.span

    def at(self, text: str) -> bool:
        """Whether the current token is the punctuation or keyword `text`."""
        return self.tok.text == text

    def eat(self, text: str) -> Token | None:
        t = self.tok
        if t.text != text:
            return None
        self.pos += 1  # a matched token is never EOF
        self.tok = self.toks[self.pos]
        return t

    def fail(self, expected: str, tok: Token | None = None) -> _ParseError:
        t = tok or self.tok
        return _ParseError(f"expected {expected}, found {t.describe()}", t.span)

    def error(self, message: str, span: Span) -> Exception:
        """A parse error with its own message, for the syntax helpers of other modules."""
        return _ParseError(message, span)

    def expect(self, text: str) -> Token:
        t = self.tok
        if t.text != text:
            raise self.fail(f"`{text}`")
        self.pos += 1
        self.tok = self.toks[self.pos]
        return t

    def ident(self) -> Token:
        t = self.tok
        if t.kind is not _IDENT or t.text == "_":
            raise self.fail("identifier")
        self.pos += 1
        self.tok = self.toks[self.pos]
        return t

    # ---------------------------------------------------------------- types

    def scalar(self) -> tuple[Scalar, Token]:
        t = self.tok
        if t.kind is not _IDENT or t.text not in _SCALARS:
            raise self.fail("scalar type")
        self.next()
        return _SCALARS[t.text], t

    def elem(self) -> tuple[Scalar, bool]:
        """An element type: a scalar, or an atomic type (`AtomicU32`) with its value type."""
        t = self.tok
        if t.kind is _IDENT and t.text in ATOMIC_TYPE_NAMES:
            self.next()
            return ATOMIC_TYPE_NAMES[t.text], True
        return self.scalar()[0], False

    def type_expr(self) -> ast.TypeExpr:
        start = self.tok
        if self.eat("&"):
            mut = self.eat("mut")
            self.expect("[")
            elem, atomic = self.elem()
            if atomic and mut is not None:
                raise _ParseError("an atomic buffer is `&[Atomic..]`, not `&mut`", mut.span)
            return ast.SliceType(elem=elem, mutable=mut is not None or atomic, atomic=atomic,
                                 span=_join(start, self.expect("]")))
        if self.eat("["):
            elem, atomic = self.elem()
            self.expect(";")
            length = self.expr()
            return ast.ArrayType(elem=elem, len=length, atomic=atomic,
                                 span=_join(start, self.expect("]")))
        if start.kind is _IDENT and start.text in _SCALARS:
            scalar, t = self.scalar()
            return ast.ScalarType(scalar=scalar, span=t.span)
        raise self.fail("type")

    # ---------------------------------------------------------------- statements

    def block(self) -> ast.Block:
        start = self.expect("{")
        if self.depth >= MAX_NESTING:
            raise _too_deep(start)
        self.depth += 1
        try:
            return self.block_rest(start)
        finally:
            self.depth -= 1

    def block_rest(self, start: Token) -> ast.Block:
        stmts: list[ast.Stmt] = []
        tail: ast.Expr | None = None
        while (t := self.tok).text != "}":
            if t.kind is _EOF:
                raise self.fail("`}`")
            if self.eat(";"):
                continue
            stmt, is_tail = self.stmt()
            if is_tail:
                assert isinstance(stmt, ast.ExprStmt)
                tail = stmt.expr
                break
            stmts.append(stmt)
        end = self.expect("}")
        return ast.Block(stmts=tuple(stmts), tail=tail, span=_join(start, end))

    def end_of_stmt(self) -> _Located:
        """`;`, or nothing before a `}` (Rust's tail position, same meaning for these)."""
        if self.at("}"):
            return self.prev_span()
        return self.expect(";")

    def stmt(self) -> tuple[ast.Stmt, bool]:
        """One statement; the flag says it is the block's tail expression."""
        t = self.tok
        if t.kind is not _KEYWORD:
            return self.expr_stmt()
        text = t.text
        if text == "let":
            return self.let_stmt(), False
        if text == "while":
            self.next()
            cond = self.cond()
            body = self.block()
            self.eat(";")
            return ast.While(cond=cond, body=body, span=_join(t, body.span)), False
        if text == "loop":
            self.next()
            body = self.block()
            self.eat(";")
            return ast.Loop(body=body, span=_join(t, body.span)), False
        if text == "for":
            return self.for_stmt(), False
        if text == "break":
            self.next()
            return ast.Break(span=_join(t, self.end_of_stmt())), False
        if text == "continue":
            self.next()
            return ast.Continue(span=_join(t, self.end_of_stmt())), False
        if text == "return":
            self.next()
            value = None if self.at(";") or self.at("}") else self.expr()
            return ast.Return(value=value, span=_join(t, self.end_of_stmt())), False
        return self.expr_stmt()

    def let_stmt(self) -> ast.Let:
        start = self.expect("let")
        mutable = self.eat("mut") is not None
        name = self.ident().text
        ty = self.type_expr() if self.eat(":") else None
        self.expect("=")
        init = self.expr()
        return ast.Let(name=name, mutable=mutable, ty=ty, init=init,
                       span=_join(start, self.expect(";")))

    def for_stmt(self) -> ast.For:
        start = self.expect("for")
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
                       span=_join(start, body.span))

    def cond(self) -> ast.Expr:
        """A condition or range bound: any expression that does not start with a bare block."""
        if self.at("{"):
            raise self.fail("expression")
        return self.expr()

    def expr_stmt(self) -> tuple[ast.Stmt, bool]:
        if self.tok.text in ("{", "if", "unsafe"):
            e = self.primary()
            if not self.at("."):
                if self.at("}"):
                    return ast.ExprStmt(expr=e, semi=False, span=e.span), True
                semi = self.eat(";")
                span = _join(e.span, semi) if semi else e.span
                return ast.ExprStmt(expr=e, semi=semi is not None, span=span), False
            e = self.binary_rest(self.postfix_rest(e), 0)
        else:
            e = self.expr()
        op_tok = self.tok
        if op_tok.kind is _PUNCT and (op_tok.text == "=" or op_tok.text in _COMPOUND):
            self.next()
            if not isinstance(e, ast.Name | ast.Index):
                raise _ParseError("invalid left-hand side of assignment", e.span)
            value = self.expr()
            op = None if op_tok.text == "=" else _COMPOUND[op_tok.text]
            return ast.Assign(target=e, value=value, op=op,
                              span=_join(e.span, self.end_of_stmt())), False
        if self.at("}"):
            return ast.ExprStmt(expr=e, semi=False, span=e.span), True
        return ast.ExprStmt(expr=e, semi=True, span=_join(e.span, self.expect(";"))), False

    # ---------------------------------------------------------------- expressions

    def expr(self) -> ast.Expr:
        return self.binary_rest(self.unary(), 0)

    def binary_op(self) -> ast.BinOp | None:
        return _BINOPS.get(self.tok.text)

    def binary_rest(self, lhs: ast.Expr, min_prec: int) -> ast.Expr:
        """Precedence climbing over `as` and the binary operators, `lhs` already parsed."""
        chain = 0
        while True:
            chain += 1
            t = self.tok
            if self.depth + chain > MAX_NESTING:
                raise _too_deep(t)
            text = t.text
            if text == "as" and CAST_PRECEDENCE >= min_prec:
                self.next()
                to, end = self.scalar()
                lhs = ast.Cast(expr=lhs, to=to, span=_join(lhs.span, end))
                if self.at("<") or self.at("<<"):
                    what = "a comparison" if self.tok.text == "<" else "a shift"
                    raise _ParseError(
                        f"`{self.tok.text}` is interpreted as a start of generic arguments for "
                        f"`{to}`, not {what}", self.tok.span)
                continue
            op = _BINOPS.get(text)
            if op is None:
                return lhs
            prec = BINARY_PRECEDENCE[op]
            if prec < min_prec:
                return lhs
            self.next()
            rhs = self.binary_rest(self.unary(), prec + 1)
            lhs = ast.Binary(op=op, lhs=lhs, rhs=rhs, span=_join(lhs.span, rhs.span))
            if prec == COMPARISON_PRECEDENCE and (nxt := self.binary_op()) is not None \
                    and BINARY_PRECEDENCE[nxt] == COMPARISON_PRECEDENCE:
                raise _ParseError("comparison operators cannot be chained", self.tok.span)

    def unary(self) -> ast.Expr:
        t = self.tok
        if self.depth >= MAX_NESTING:
            raise _too_deep(t)
        self.depth += 1
        try:
            if t.text == "-" or t.text == "!":
                self.next()
                operand = self.unary()
                op = ast.UnOp.NEG if t.text == "-" else ast.UnOp.NOT
                return ast.Unary(op=op, operand=operand, span=_join(t, operand.span))
            return self.postfix_rest(self.primary())
        finally:
            self.depth -= 1

    def postfix_rest(self, e: ast.Expr) -> ast.Expr:
        chain = 0
        while True:
            chain += 1
            t = self.tok
            if self.depth + chain > MAX_NESTING:
                raise _too_deep(t)
            if t.text == ".":
                self.next()
                name = self.ident()
                self.expect("(")
                args, end = self.args()
                e = ast.MethodCall(receiver=e, method=name.text, args=args,
                                   span=_join(e.span, end))
            elif t.text == "[":
                self.next()
                index = self.expr()
                e = ast.Index(base=e, index=index, span=_join(e.span, self.expect("]")))
            else:
                return e

    def args(self) -> tuple[tuple[ast.Expr, ...], Token]:
        """Comma-separated arguments after `(`, through the `)`; a trailing comma is allowed."""
        args: list[ast.Expr] = []
        while not self.at(")"):
            args.append(self.expr())
            if not self.eat(","):
                break
        return tuple(args), self.expect(")")

    def primary(self) -> ast.Expr:
        t = self.tok
        kind = t.kind
        if kind is _IDENT:
            if t.text != "_":
                return self.path_expr()
        elif kind is _INT:
            self.next()
            assert isinstance(t.value, int)
            return ast.IntLit(value=t.value, suffix=t.suffix, span=t.span)
        elif kind is _FLOAT:
            self.next()
            assert isinstance(t.value, str)
            return ast.FloatLit(text=t.value, suffix=t.suffix, span=t.span)
        else:
            text = t.text
            if text == "(":
                self.next()
                e = self.expr()
                self.expect(")")
                return e
            if text == "true" or text == "false":
                self.next()
                return ast.BoolLit(value=text == "true", span=t.span)
            if text == "[":
                return self.array()
            if text == "{":
                b = self.block()
                return ast.BlockExpr(block=b, span=b.span)
            if text == "unsafe":
                self.next()
                b = self.block()
                return ast.BlockExpr(block=b, unsafe=True, span=_join(t, b.span))
            if text == "if":
                return self.if_expr()
        raise self.fail("expression")

    def path_expr(self) -> ast.Expr:
        t = self.next()
        nxt = self.tok.text
        if nxt == "::" and t.text == "Ordering":
            return ordering_lit(self, t)
        if nxt == "::":
            if t.text not in _SCALARS:
                raise _ParseError(
                    f"only a scalar type can come before `::`, found `{t.text}`", t.span)
            self.next()
            name = self.ident()
            if self.eat("("):
                args, end = self.args()
                return ast.AssocCall(scalar=_SCALARS[t.text], name=name.text, args=args,
                                     span=_join(t, end))
            return ast.AssocConst(scalar=_SCALARS[t.text], name=name.text,
                                  span=_join(t, name))
        if nxt == "(":
            self.next()
            args, end = self.args()
            return ast.Call(func=t.text, args=args, span=_join(t, end))
        return ast.Name(ident=t.text, span=t.span)

    def array(self) -> ast.Expr:
        start = self.expect("[")
        first = self.expr()
        if self.eat(";"):
            length = self.expr()
            return ast.ArrayRepeat(value=first, len=length, span=_join(start, self.expect("]")))
        elems = [first]
        while self.eat(","):
            if self.at("]"):
                break
            elems.append(self.expr())
        return ast.ArrayList(elems=tuple(elems), span=_join(start, self.expect("]")))

    def if_expr(self) -> ast.If:
        start = self.expect("if")
        cond = self.cond()
        then = self.block()
        else_: ast.Block | ast.If | None = None
        if self.eat("else"):
            else_ = self.if_expr() if self.at("if") else self.block()
        return ast.If(cond=cond, then=then, else_=else_,
                      span=_join(start, else_.span if else_ else then.span))
