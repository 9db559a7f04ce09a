"""`lang.ast.evolve` against `dataclasses.replace` (the standard library is the reference):
the same fields, including those outside equality (`span`, `ty`, `binding`), on every node
class a parsed kernel holds; an unknown field is an error in both."""

from __future__ import annotations

import dataclasses

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.ast import evolve
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.source import NO_SPAN
from rgpu_fuzz.model.scalars import Scalar

SRC = """use rgpu::*;
const K: u32 = 3;
fn h(x: u32) -> u32 { if x > K { x } else { K - x } }
#[kernel]
pub fn k(a: &mut [u32], n: u32) {
    let i = thread_idx_x() as usize;
    let mut t = [0u32; 4];
    for j in 0u32..n { t[(j & 3u32) as usize] += h(j); }
    while n > 2u32 { break; }
    a[i] = t[i % 4usize].wrapping_mul(2u32);
}
"""


def _all_fields(n: object) -> dict[str, object]:
    return {f.name: getattr(n, f.name) for f in dataclasses.fields(n)}  # type: ignore[arg-type]


def test_evolve_copies_what_replace_copies() -> None:
    nodes = [n for n in walk(parse(SRC, "t.rs")) if dataclasses.is_dataclass(n)]
    assert len({type(n) for n in nodes}) >= 15
    for n in nodes:
        names = {f.name for f in dataclasses.fields(n)}  # type: ignore[arg-type]
        change = {"ty": Scalar.U32} if "ty" in names else {"span": NO_SPAN}
        got, want = evolve(n, **change), dataclasses.replace(n, **change)  # type: ignore[type-var]
        assert type(got) is type(want)
        assert _all_fields(got) == _all_fields(want)
        assert _all_fields(n) == _all_fields(dataclasses.replace(n))  # the original is intact


def test_evolve_rejects_an_unknown_field() -> None:
    node = ast.BoolLit(value=True)
    with pytest.raises(TypeError):
        dataclasses.replace(node, colour=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        evolve(node, colour=1)
