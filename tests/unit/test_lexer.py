"""Lexer: token kinds, literal decoding and normalisation, every lexical diagnostic."""

from __future__ import annotations

import pytest

from rgpu_fuzz.lang.lexer import Token, TokenKind, is_identifier, tokenize
from rgpu_fuzz.lang.source import DiagnosticError, SourceFile
from rgpu_fuzz.model.scalars import Scalar


def lex(text: str) -> list[Token]:
    return tokenize(SourceFile("t.rs", text))[:-1]


def kinds_texts(text: str) -> list[tuple[TokenKind, str]]:
    return [(t.kind, t.text) for t in lex(text)]


def errors(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(DiagnosticError) as exc:
        tokenize(SourceFile("t.rs", text))
    return [(d.span.line, d.span.col, d.message) for d in exc.value.diagnostics]


def test_identifiers_keywords_and_reserved_words() -> None:
    assert kinds_texts("let x_1 match _ u32") == [
        (TokenKind.KEYWORD, "let"), (TokenKind.IDENT, "x_1"), (TokenKind.KEYWORD, "match"),
        (TokenKind.IDENT, "_"), (TokenKind.IDENT, "u32")]
    assert is_identifier("acc") and is_identifier("_t") and is_identifier("u32")
    assert not is_identifier("_") and not is_identifier("struct") and not is_identifier("1a")


def test_punctuation_is_maximal_munch() -> None:
    assert [t.text for t in lex("a<<=b>>=c..=d::e->f&&g||h!=i..j<k")] == [
        "a", "<<=", "b", ">>=", "c", "..=", "d", "::", "e", "->", "f", "&&", "g", "||", "h",
        "!=", "i", "..", "j", "<", "k"]


def test_comments_are_skipped_and_block_comments_nest() -> None:
    assert [t.text for t in lex("a // b\n/* c /* d */ e */ f")] == ["a", "f"]


def test_spans_have_one_based_line_and_column() -> None:
    toks = lex("fn\n  foo")
    assert (toks[1].span.line, toks[1].span.col, toks[1].span.start, toks[1].span.end) == (
        2, 3, 5, 8)


@pytest.mark.parametrize(("text", "value", "suffix"), [
    ("123", 123, None),
    ("0x7F", 127, None),
    ("0o17", 15, None),
    ("0b101", 5, None),
    ("0x9e37_79b9u32", 0x9E3779B9, Scalar.U32),
    ("1_000i64", 1000, Scalar.I64),
    ("7usize", 7, Scalar.USIZE),
    ("0xffu8", 255, Scalar.U8),
    ("0x1f32", 0x1F32, None),   # `f32` is hex digits here, as in Rust
])
def test_integer_literals(text: str, value: int, suffix: Scalar | None) -> None:
    [tok] = lex(text)
    assert (tok.kind, tok.value, tok.suffix) == (TokenKind.INT, value, suffix)


@pytest.mark.parametrize(("text", "norm", "suffix"), [
    ("1.5", "1.5", None),
    ("1.", "1.0", None),
    ("1e10", "1e10", None),
    ("2.5E-3", "2.5e-3", None),
    ("1_000.25", "1000.25", None),
    ("2f32", "2.0", Scalar.F32),
    ("0.5f64", "0.5", Scalar.F64),
    ("1e+5f32", "1e+5", Scalar.F32),
    ("3.0e1_0", "3.0e10", None),
])
def test_float_literals_are_normalised(text: str, norm: str, suffix: Scalar | None) -> None:
    [tok] = lex(text)
    assert (tok.kind, tok.value, tok.suffix, tok.text) == (TokenKind.FLOAT, norm, suffix, text)


def test_dot_after_integer_is_not_a_float_before_ident_or_dot() -> None:
    assert kinds_texts("1.max(2)")[:3] == [
        (TokenKind.INT, "1"), (TokenKind.PUNCT, "."), (TokenKind.IDENT, "max")]
    assert kinds_texts("0..4") == [
        (TokenKind.INT, "0"), (TokenKind.PUNCT, ".."), (TokenKind.INT, "4")]
    assert kinds_texts("1.0.sqrt()")[:2] == [(TokenKind.FLOAT, "1.0"), (TokenKind.PUNCT, ".")]
    assert kinds_texts("1.)") == [(TokenKind.FLOAT, "1."), (TokenKind.PUNCT, ")")]


def test_eof_token_closes_the_stream() -> None:
    toks = tokenize(SourceFile("t.rs", "a\n"))
    assert toks[-1].kind is TokenKind.EOF and (toks[-1].span.line, toks[-1].span.col) == (2, 1)


def test_unterminated_block_comment() -> None:
    assert errors("a\n  /* x /* y */ z") == [(2, 3, "unterminated block comment")]


def test_unknown_characters_are_all_reported() -> None:
    assert errors("let $x = 1;\n@") == [
        (1, 5, "unknown start of token: $"), (2, 1, "unknown start of token: @")]


def test_bad_suffixes() -> None:
    assert errors("1u7 + 1.5u32") == [
        (1, 1, "invalid suffix `u7` for number literal"),
        (1, 7, "invalid suffix `u32` for float literal")]


def test_bad_numbers() -> None:
    assert errors("0x;") == [(1, 1, "no valid digits found for number")]
    assert errors(" 0b102") == [(1, 2, "invalid digit for a base 2 literal")]
    assert errors("0o8") == [(1, 1, "invalid digit for a base 8 literal")]
    assert errors("1e+;") == [(1, 1, "expected at least one digit in exponent")]
    assert errors("0b1f32") == [(1, 1, "binary float literal is not supported")]
    assert errors(str(1 << 128)) == [(1, 1, "integer literal is too large")]


def test_positions_after_comments_and_line_ends() -> None:
    """Line and column of each token after block comments spanning lines, CRLF, line
    comments and tabs (offsets counted by hand: `b` follows the comment's newline at 6, so
    its line starts at 7; `c` follows `\r\n` at 14-15)."""
    toks = tokenize(SourceFile("t.rs", "a /* x\n y */ b\r\n  c // d\n\te\n// end"))
    assert [(t.text, t.span.line, t.span.col, t.span.start, t.span.end) for t in toks] == [
        ("a", 1, 1, 0, 1), ("b", 2, 7, 13, 14), ("c", 3, 3, 18, 19), ("e", 4, 2, 26, 27),
        ("", 5, 7, 34, 34)]
    assert toks[-1].kind is TokenKind.EOF


def test_positions_and_values_of_literals_after_line_ends() -> None:
    """Decimal integers take the one-match path, radix and float literals the character-wise
    one; both keep counting lines (offsets by hand)."""
    toks = lex("x\n  0x1F + 12u8\n3.5f32 1_0.max")
    assert [(t.kind, t.value, t.suffix, t.span.line, t.span.col, t.span.start) for t in toks] == [
        (TokenKind.IDENT, None, None, 1, 1, 0),
        (TokenKind.INT, 31, None, 2, 3, 4),
        (TokenKind.PUNCT, None, None, 2, 8, 9),
        (TokenKind.INT, 12, Scalar.U8, 2, 10, 11),
        (TokenKind.FLOAT, "3.5", Scalar.F32, 3, 1, 16),
        (TokenKind.INT, 10, None, 3, 8, 23),
        (TokenKind.PUNCT, None, None, 3, 11, 26),
        (TokenKind.IDENT, None, None, 3, 12, 27)]


def test_errors_after_line_ends_keep_their_place() -> None:
    assert errors("a\n\n   1u3 $") == [
        (3, 4, "invalid suffix `u3` for number literal"), (3, 8, "unknown start of token: $")]
