"""The lexer's and parser's positions on generated kernels, checked against the text itself:
tokens and the trivia between them make up the text, each token's line and column are its
offset's (newlines counted by `str.count`, not by the lexer's bookkeeping), and each node
the parser builds spans text that starts and ends with its own first and last tokens.
50 cases in the default run, 1,000 in the slow one."""

from __future__ import annotations

import re

import pytest

from generators import SeededChoices, generate, load_profile
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.lexer import TokenKind, tokenize
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.source import SourceFile

_TRIVIA = re.compile(r"(?:[ \t\r\n]+|//[^\n]*)*")


def _check_case(seed: int, profile: str) -> None:
    text = generate(SeededChoices(seed), load_profile(profile), seed=seed).kernel
    tokens = tokenize(SourceFile("k.rs", text))
    pos = 0
    for t in tokens:
        gap = text[pos:t.start]
        assert _TRIVIA.fullmatch(gap), (seed, pos, gap)
        assert text[t.start:t.end] == t.text
        line = text.count("\n", 0, t.start) + 1
        col = t.start - (text.rfind("\n", 0, t.start) + 1) + 1
        assert (t.line, t.col) == (line, col), (seed, t)
        pos = t.end
    assert tokens[-1].kind is TokenKind.EOF and pos == len(text)
    starts = {t.start: t for t in tokens}
    ends = {t.end for t in tokens}
    for n in walk(parse(text, "k.rs")):
        span = n.span  # type: ignore[attr-defined]
        if isinstance(n, ast.Module):
            assert (span.start, span.end) == (0, len(text))
            continue
        first = starts[span.start]  # every node starts at a token...
        assert (span.line, span.col) == (first.line, first.col)
        assert span.end in ends, (seed, n)  # ...and ends at one


@pytest.mark.parametrize("profile", ["default", "barriers"])
def test_positions_on_generated_kernels(profile: str) -> None:
    for seed in range(25):
        _check_case(9_100_000 + seed, profile)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["default", "barriers", "floats", "memory"])
def test_positions_on_many_generated_kernels(profile: str) -> None:
    for seed in range(250):
        _check_case(9_200_000 + seed, profile)
