"""Lexer: source text to tokens (docs/language.md "Lexical structure").

Numeric literals are decoded here once: an integer token carries its value and suffix, a
float token its normalised text and suffix, so later stages never re-read digits. Every
lexical error in a file is collected; `tokenize` raises one `DiagnosticError` with all of them.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import NamedTuple

from rgpu_fuzz.lang.source import Diagnostic, DiagnosticError, SourceFile, Span
from rgpu_fuzz.model.scalars import Scalar


class TokenKind(StrEnum):
    IDENT = "identifier"
    KEYWORD = "keyword"
    INT = "integer literal"
    FLOAT = "float literal"
    PUNCT = "punctuation"
    EOF = "end of file"


LANGUAGE_KEYWORDS: frozenset[str] = frozenset(
    "as break const continue else false fn for if in let loop mut pub return static true "
    "unsafe use while".split()
)
"""The keywords of the kernel language (docs/language.md)."""

KEYWORDS: frozenset[str] = LANGUAGE_KEYWORDS | frozenset(
    "crate enum extern impl match mod move ref self Self struct super trait type where "
    "async await dyn abstract become box do final macro override priv typeof unsized virtual "
    "yield try".split()
)
"""Every word Rust reserves (2021 edition). The rest are not used by the language but are
still refused as identifiers, so that every parsed program prints back as valid Rust."""

PUNCTUATION: tuple[str, ...] = (
    "<<=", ">>=", "..=",
    "::", "->", "==", "!=", "<=", ">=", "<<", ">>", "&&", "||", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", "..",
    "(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "<", ">", "+", "-", "*", "/", "%", "&",
    "|", "^", "!", ".", "#",
)
"""Longest first, so that the first match is the longest (maximal munch)."""

INT_SUFFIXES: frozenset[str] = frozenset(s.value for s in Scalar if s.is_int)
FLOAT_SUFFIXES: frozenset[str] = frozenset(("f16", "f32", "f64"))
_SCALARS: dict[str, Scalar] = {s.value: s for s in Scalar}

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN_RE = re.compile(
    r"(?:[ \t\r\n]+|//[^\n]*)*"
    r"(?:(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<int>(?P<digits>[0-9][0-9_]*)(?P<suffix>[A-Za-z_][A-Za-z0-9_]*)?)"
    r"|(?P<block>/\*)"
    "|(?P<punct>" + "|".join(re.escape(p) for p in PUNCTUATION) + ")"
    r"|(?P<end>\Z)"
    r"|(?P<other>.))",
    re.DOTALL,
)
"""The trivia before a token (white space, line comments), then the token: a word, a decimal
integer with its suffix, the start of a block comment, punctuation (tried in `PUNCTUATION`'s
order: the first that matches is the longest), the end of the text, or any other character.
It always matches, so the scan is one match per token."""

_RADIX_NAMES = {16: "hexadecimal", 8: "octal", 2: "binary"}
_INT_LIMIT = 1 << 128


def is_identifier(name: str) -> bool:
    """True when `name` can name a variable, function or item (not a keyword, not `_`)."""
    return bool(_IDENT_RE.fullmatch(name)) and name not in KEYWORDS and name != "_"


class Token(NamedTuple):
    """One token: its kind, its text, where it starts and ends (offsets, and the 1-based
    line and column of its start). `value` is the integer value (INT) or the normalised text
    (FLOAT); `suffix` is the literal's type suffix, if any.

    A named tuple rather than a frozen dataclass: a case has ~450 tokens, lexed in the
    campaign's process and again in each worker, and a tuple is made four times as fast.
    The `Span` is made only for the tokens that need one."""

    kind: TokenKind
    text: str
    start: int
    end: int
    line: int
    col: int
    value: int | str | None = None
    suffix: Scalar | None = None

    @property
    def span(self) -> Span:
        return Span(self.start, self.end, self.line, self.col)

    def is_punct(self, text: str) -> bool:
        return self.kind is TokenKind.PUNCT and self.text == text

    def is_keyword(self, text: str) -> bool:
        return self.kind is TokenKind.KEYWORD and self.text == text

    def describe(self) -> str:
        """How diagnostics name this token, as rustc does: "`;`", "keyword `let`"."""
        if self.kind is TokenKind.EOF:
            return "end of file"
        if self.kind is TokenKind.KEYWORD:
            return f"keyword `{self.text}`"
        return f"`{self.text}`"


class _Lexer:
    def __init__(self, src: SourceFile) -> None:
        self.src = src
        self.text = src.text
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.tokens: list[Token] = []
        self.errors: list[Diagnostic] = []

    def here(self) -> tuple[int, int, int]:
        return self.pos, self.line, self.pos - self.line_start + 1

    def error(self, message: str, start: int, end: int, line: int, col: int) -> None:
        self.errors.append(Diagnostic(message, Span(start, end, line, col), self.src))

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.text[i] if i < len(self.text) else ""

    def advance(self, n: int = 1) -> None:
        end = self.pos + n
        newlines = self.text.count("\n", self.pos, end)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.pos, end) + 1
        self.pos = end

    def run(self) -> list[Token]:
        """One match of `_TOKEN_RE` per token (with the trivia before it); the rare rest
        (block comments, radix and float literals, errors) goes the character-wise way."""
        text, tokens, match = self.text, self.tokens, _TOKEN_RE.match
        new, append, count, rfind = tuple.__new__, tokens.append, text.count, text.rfind
        ident, keyword, punct, int_ = TokenKind.IDENT, TokenKind.KEYWORD, TokenKind.PUNCT, \
            TokenKind.INT
        scalars, int_suffixes = _SCALARS, INT_SUFFIXES
        pos, line, line_start = 0, 1, 0
        while True:
            m = match(text, pos)
            assert m is not None  # the last alternatives match any character and the end
            group = m.lastgroup or ""  # never None: every alternative is a named group
            start = m.start(group)
            if start != pos and (newlines := count("\n", pos, start)):
                line += newlines
                line_start = rfind("\n", pos, start) + 1
            end = m.end()
            if group == "word":
                word = m[group]
                append(new(Token, (keyword if word in KEYWORDS else ident, word, start, end,
                                   line, start - line_start + 1, None, None)))
                pos = end
                continue
            if group == "punct":
                append(new(Token, (punct, m[group], start, end, line, start - line_start + 1,
                                   None, None)))
                pos = end
                continue
            if group == "int":
                # The common decimal integer (`42`, `1_000u32`); anything else (a radix
                # prefix, a float, a bad suffix, a huge value) goes to `number`.
                suffix = m["suffix"]
                if (suffix is None or suffix in int_suffixes) and text[end:end + 1] != ".":
                    value = int(m["digits"].replace("_", ""))
                    if value < _INT_LIMIT:
                        append(new(Token, (int_, m[group], start, end, line,
                                           start - line_start + 1, value,
                                           None if suffix is None else scalars[suffix])))
                        pos = end
                        continue
            elif group == "end":
                append(new(Token, (TokenKind.EOF, "", start, start, line,
                                   start - line_start + 1, None, None)))
                return tokens
            self.pos, self.line, self.line_start = start, line, line_start
            if group == "block":
                self.block_comment()
            elif group == "int":
                self.number()
            else:
                self.advance()
                self.error(f"unknown start of token: {text[start]}", start, self.pos,
                           line, start - line_start + 1)
            pos, line, line_start = self.pos, self.line, self.line_start

    def block_comment(self) -> None:
        start, line, col = self.here()
        depth = 0
        while self.pos < len(self.text):
            if self.text.startswith("/*", self.pos):
                depth += 1
                self.advance(2)
            elif self.text.startswith("*/", self.pos):
                depth -= 1
                self.advance(2)
                if depth == 0:
                    return
            else:
                self.advance()
        self.error("unterminated block comment", start, start + 2, line, col)

    def eat_digits(self, allowed: str) -> str:
        """Eats digits of `allowed` and underscores; returns them without underscores."""
        out = []
        while (c := self.peek()) and (c in allowed or c == "_"):
            if c != "_":
                out.append(c)
            self.advance()
        return "".join(out)

    def number(self) -> None:
        start, line, col = self.here()
        radix = 10
        if self.peek() == "0" and self.peek(1) in ("x", "o", "b"):
            radix = {"x": 16, "o": 8, "b": 2}[self.peek(1)]
        if radix != 10:
            self.advance(2)
            # Like rustc: any decimal digit is eaten and then rejected if out of the radix.
            digits = self.eat_digits("0123456789abcdefABCDEF" if radix == 16 else "0123456789")
            suffix = self.suffix()
            end = self.pos
            if not digits:
                self.error("no valid digits found for number", start, end, line, col)
                value = 0
            elif any(int(d, 16) >= radix for d in digits):
                self.error(f"invalid digit for a base {radix} literal", start, end, line, col)
                value = 0
            else:
                value = int(digits, radix)
            if suffix in FLOAT_SUFFIXES:
                self.error(f"{_RADIX_NAMES[radix]} float literal is not supported",
                           start, end, line, col)
                suffix = ""
            self.int_token(value, suffix, start, line, col)
            return

        int_part = self.eat_digits("0123456789")
        frac: str | None = None
        exp: str | None = None
        if self.peek() == "." and not (self.peek(1) == "." or _starts_ident(self.peek(1))):
            self.advance()
            frac = self.eat_digits("0123456789") if self.peek().isdigit() else ""
        if self.peek() in ("e", "E"):
            self.advance()
            sign = ""
            if self.peek() in ("+", "-"):
                sign = self.peek()
                self.advance()
            exp_digits = self.eat_digits("0123456789")
            if not exp_digits:
                self.error("expected at least one digit in exponent", start, self.pos, line, col)
                exp_digits = "0"
            exp = sign + exp_digits
        suffix = self.suffix()
        end = self.pos
        if frac is None and exp is None and suffix not in FLOAT_SUFFIXES:
            self.int_token(int(int_part), suffix, start, line, col)
            return
        text = int_part + "." + (frac or "0") if frac is not None or exp is None else int_part
        if exp is not None:
            text += "e" + exp
        if suffix and suffix not in FLOAT_SUFFIXES:
            self.error(f"invalid suffix `{suffix}` for float literal", start, end, line, col)
            suffix = ""
        self.tokens.append(Token(TokenKind.FLOAT, self.text[start:end], start, end, line, col,
                                 text, Scalar(suffix) if suffix else None))

    def suffix(self) -> str:
        m = _IDENT_RE.match(self.text, self.pos)
        if m is None:
            return ""
        self.advance(len(m.group()))
        return m.group()

    def int_token(self, value: int, suffix: str, start: int, line: int, col: int) -> None:
        end = self.pos
        if suffix and suffix not in INT_SUFFIXES:
            self.error(f"invalid suffix `{suffix}` for number literal", start, end, line, col)
            suffix = ""
        if value >= _INT_LIMIT:
            self.error("integer literal is too large", start, end, line, col)
            value = 0
        self.tokens.append(Token(TokenKind.INT, self.text[start:end], start, end, line, col,
                                 value, Scalar(suffix) if suffix else None))


def _starts_ident(c: str) -> bool:
    return c != "" and c.isascii() and (c.isalpha() or c == "_")


def tokenize(src: SourceFile) -> list[Token]:
    """The tokens of `src`, ending with one EOF token. Raises `DiagnosticError` carrying every
    lexical error (unterminated comment, unknown character, bad suffix, bad number)."""
    lexer = _Lexer(src)
    tokens = lexer.run()
    if lexer.errors:
        raise DiagnosticError(lexer.errors)
    return tokens
