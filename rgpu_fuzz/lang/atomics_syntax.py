"""The syntax of atomics (docs/language.md "Atomics"): their type names, `Ordering::X`, and
the initialiser of a `#[shared]` static of atomics.

Kept out of parser.py so the parser only hooks in; it needs nothing from the checker, so the
checker's rules (lang/atomics.py) can import the parser's tables without a cycle.
"""

from __future__ import annotations

from typing import Protocol

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.lexer import Token
from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.model.scalars import Scalar

ATOMIC_TYPE_NAMES: dict[str, Scalar] = {
    "AtomicU32": Scalar.U32, "AtomicI32": Scalar.I32,
    "AtomicU64": Scalar.U64, "AtomicI64": Scalar.I64,
}
"""core::sync::atomic's integer types the language has, with their value types (float
atomics are not Rust's, and 8/16-bit ones have no native GPU form)."""

ORDERINGS: dict[str, ast.AtomicOrdering] = {o.value: o for o in ast.AtomicOrdering}


class _Parser(Protocol):
    tok: Token

    def next(self) -> Token: ...
    def expect(self, text: str) -> Token: ...
    def ident(self) -> Token: ...
    def expr(self) -> ast.Expr: ...
    def error(self, message: str, span: Span) -> Exception: ...


def _span(first: Token, last: Token) -> Span:
    return Span(first.start, max(first.end, last.end), first.line, first.col)


def ordering_lit(p: _Parser, first: Token) -> ast.OrderingLit:
    """`Ordering::Name`, `Ordering` already consumed and `::` current."""
    p.expect("::")
    name = p.ident()
    if name.text not in ORDERINGS:
        raise p.error(f"no variant named `{name.text}` in `Ordering` (expected one of "
                      f"{', '.join(ORDERINGS)})", name.span)
    return ast.OrderingLit(ordering=ORDERINGS[name.text], span=_span(first, name))


def atomic_array_init(p: _Parser, elem: Scalar) -> ast.ArrayRepeat:
    """`[const { AtomicU32::new(v) }; N]`, the one initialiser a static of atomics has (Rust
    has no `Copy` for atomics, so `[AtomicU32::new(0); N]` is refused by rustc, E0277)."""
    start = p.expect("[")
    p.expect("const")
    p.expect("{")
    ty = p.ident()
    if ATOMIC_TYPE_NAMES.get(ty.text) is not elem:
        want = f"Atomic{elem.value.upper()}"
        raise p.error(f"expected `{want}::new(..)` for an array of `{want}`", ty.span)
    p.expect("::")
    new = p.ident()
    if new.text != "new":
        raise p.error(f"expected `new`, found `{new.text}`", new.span)
    p.expect("(")
    value = p.expr()
    p.expect(")")
    p.expect("}")
    p.expect(";")
    length = p.expr()
    return ast.ArrayRepeat(value=value, len=length, span=_span(start, p.expect("]")))
