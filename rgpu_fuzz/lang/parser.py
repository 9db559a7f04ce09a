"""Parser: tokens to `ast.Module` (docs/language.md "Items", "Statements", "Expressions").

Recursive descent for items (here) and statements, precedence climbing for binary operators
(`rgpu_fuzz.lang.code_parser`: types, blocks, statements, expressions), with Rust's rules where
the subset is ambiguous:
* a statement that starts with a block-like expression (`if`, `{}`, `unsafe {}`) ends after
  it unless a method call follows (`if c {} - 1` is two statements, as in rustc);
* the last expression of a block without `;` is the block's `tail`;
* comparisons do not chain; `x as T < y` is refused, because Rust reads `<` as generics.

A parse error inside an item is recorded and the parser skips to the next item keyword, so one
run reports the errors of several items; every skip consumes at least one token.
"""

from __future__ import annotations

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.atomics_syntax import atomic_array_init
from rgpu_fuzz.lang.code_parser import (
    _EOF,
    _IDENT,
    BINARY_PRECEDENCE,
    CAST_PRECEDENCE,
    COMPARISON_PRECEDENCE,
    _CodeParser,
    _join,
    _ParseError,
)
from rgpu_fuzz.lang.lexer import tokenize
from rgpu_fuzz.lang.limits import MAX_NESTING, MAX_SOURCE_BYTES
from rgpu_fuzz.lang.source import Diagnostic, DiagnosticError, SourceFile, Span

__all__ = ["BINARY_PRECEDENCE", "CAST_PRECEDENCE", "COMPARISON_PRECEDENCE", "MAX_NESTING", "parse"]

_ITEM_STARTS = ("#", "pub", "fn", "const", "static", "use")
_ATTRIBUTES = ("kernel", "shared", "inline(never)")


class _Parser(_CodeParser):
    """Items (docs/language.md "Items") on `_CodeParser`'s cursor, with the error recovery:
    a parse error inside an item is recorded and the parser skips to the next item keyword."""

    def module(self) -> ast.Module:
        items: list[ast.Item] = []
        while self.tok.kind is not _EOF:
            start = self.pos
            try:
                items.append(self.item())
            except _ParseError as e:
                self.errors.append(Diagnostic(e.message, e.span, self.src))
                if self.pos == start:
                    self.next()
                while self.tok.kind is not _EOF and not (
                    self.tok.text in _ITEM_STARTS and self.tok.kind is not _IDENT
                ):
                    self.next()
        end = self.toks[-1]
        return ast.Module(items=tuple(items), span=Span(0, end.end, 1, 1))

    def attributes(self) -> list[tuple[str, Span]]:
        attrs: list[tuple[str, Span]] = []
        while self.at("#"):
            start = self.next()
            self.expect("[")
            name = self.ident().text
            if self.eat("("):
                arg = self.ident().text
                self.expect(")")
                name = f"{name}({arg})"
            span = _join(start, self.expect("]"))
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
        if not (t.kind is _IDENT and t.text == "rgpu" and self.peek().is_punct("::")
                and self.peek(2).is_punct("*")):
            raise _ParseError("only `use rgpu::*;` is supported", t.span)
        self.pos += 3
        self.tok = self.toks[self.pos]
        return ast.Use(span=_join(start, self.expect(";")))

    def const_item(self, start: Span) -> ast.Const:
        self.expect("const")
        name = self.ident().text
        self.expect(":")
        ty = self.type_expr()
        if not isinstance(ty, ast.ScalarType):
            raise _ParseError("a `const` must have a scalar type", ty.span)
        self.expect("=")
        value = self.expr()
        return ast.Const(name=name, ty=ty, value=value, span=_join(start, self.expect(";")))

    def static_item(self, start: Span, shared: bool) -> ast.Shared:
        kw = self.expect("static")
        if not shared:
            raise _ParseError("a `static` item must be `#[shared] static mut`", kw.span)
        after = self.tok
        mut = self.eat("mut")
        name = self.ident().text
        self.expect(":")
        ty = self.type_expr()
        if not isinstance(ty, ast.ArrayType):
            raise _ParseError("a `#[shared]` static must have an array type `[T; N]`", ty.span)
        if ty.atomic and mut is not None:
            raise _ParseError("a `#[shared]` static of atomics is `static`, not `static mut`",
                              mut.span)
        if not ty.atomic and mut is None:
            raise self.fail("`mut`", after)
        self.expect("=")
        init = atomic_array_init(self, ty.elem) if ty.atomic else self.expr()
        return ast.Shared(name=name, elem=ty.elem, len=ty.len, init=init, atomic=ty.atomic,
                          span=_join(start, self.expect(";")))

    def fn_item(self, start: Span, attrs: set[str]) -> ast.Fn:
        public = self.eat("pub") is not None
        self.expect("fn")
        name = self.ident().text
        self.expect("(")
        params: list[ast.Param] = []
        while not self.at(")"):
            p_start = self.tok
            mutable = self.eat("mut") is not None
            p_name = self.ident().text
            self.expect(":")
            ty = self.type_expr()
            params.append(ast.Param(name=p_name, ty=ty, mutable=mutable,
                                    span=_join(p_start, ty.span)))
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
                      inline_never="inline(never)" in attrs, span=_join(start, body.span))


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
