"""Kernel features (lang/features.py): what a kernel uses, read off hand-written kernels,
and the walk every later stage shares."""

from __future__ import annotations

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.features import children, module_features, walk
from rgpu_fuzz.lang.parser import parse

KERNEL = """use rgpu::*;

#[shared]
static mut tile: [f32; 4] = [0.0f32; 4];

#[inline(never)]
fn twice(x: u32) -> u32 {
    x * 2u32
}

#[kernel]
pub fn k(out: &mut [u32], n: u32) {
    let i = thread_idx_x() as usize;
    for j in 0u32..n {
        out[i] = twice(j);
    }
    sync_threads();
    let a = [1u64; 2];
    out[i] = 1.5f64.mul_add(2.0, 3.0) as u32 + a[0usize] as u32;
}
"""


def test_features_of_a_hand_written_kernel() -> None:
    # shared: the static; barrier: sync_threads(); f32: the `0.0f32` literal; f64: the
    # `1.5f64` receiver; i64: `1u64`; local-array: `[1u64; 2]`; helper and inline-never:
    # `twice`; loop: the `for`; mul-add: the method.
    check_source(KERNEL)  # a kernel in the language
    assert module_features(parse(KERNEL)) == {
        "shared", "barrier", "f32", "f64", "i64", "local-array", "helper", "inline-never",
        "loop", "mul-add"}


def test_a_plain_kernel_has_no_features() -> None:
    src = "use rgpu::*;\n#[kernel]\npub fn k(out: &mut [u32]) {\n    out[0usize] = 1u32;\n}\n"
    assert module_features(parse(src)) == frozenset()


def test_walk_is_depth_first_in_source_order() -> None:
    m = parse("fn f() {\n    let v = (a + b) * c;\n    g(d, e[1]);\n}")
    names = [n.ident for n in walk(m) if isinstance(n, ast.Name)]
    assert names == ["a", "b", "c", "d", "e"]
    kinds = [type(n).__name__ for n in walk(m)][:8]
    assert kinds == ["Module", "Fn", "Block", "Let", "Binary", "Binary", "Name", "Name"]


def test_children_of_each_node_shape() -> None:
    m = parse("fn f() {\n    if c { 1 } else if d { 2 } else { 3 }\n}")
    block = m.items[0].body  # type: ignore[union-attr]
    if_ = block.tail
    assert isinstance(if_, ast.If)
    # cond, then, and the else-if (an optional node); no span, no enum, no string
    assert children(if_) == [if_.cond, if_.then, if_.else_]
    assert children(block) == [if_]  # no statements (a tuple), the tail
    assert children(if_.cond) == []
    assert children(ast.Break()) == []


def test_declared_types_count() -> None:
    """A scalar named only in a declared type counts: parameter types (`&mut [f64]`, `i64`),
    a `let` annotation (`[f32; 2]`: also a local array) and a `#[shared]` element type
    (`u64`). The walk leaves out fields named `ty` (the checker's annotation on
    expressions), so these were missed before."""
    src = ("use rgpu::*;\n#[shared]\nstatic mut s: [u64; 2] = [0; 2];\n#[kernel]\n"
           "pub fn k(out: &mut [f64], x: i64) {\n    let a: [f32; 2] = [0.0; 2];\n"
           "    out[0usize] = 1.0;\n}\n")
    check_source(src)
    assert module_features(parse(src)) == {"shared", "f64", "i64", "f32", "local-array"}
    scalar_let = "use rgpu::*;\n#[kernel]\npub fn k(out: &mut [u32]) {\n    let y: u64 = 1;\n}\n"
    assert module_features(parse(scalar_let)) == {"i64"}
