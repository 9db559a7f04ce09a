"""The checker, continued (`test_checker.py` has typing and type errors): items, const values,
recursion, the barrier uniformity rules and the method table; one test per diagnostic (message
and place). Expected const values are computed by hand, method signatures and literal ranges
are rustc's."""

from __future__ import annotations

import pytest

from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.methods import METHODS, assoc_const_value, method_signature
from rgpu_fuzz.lang.source import DiagnosticError
from rgpu_fuzz.lang.types import ArrayTy
from rgpu_fuzz.model.scalars import Scalar
from tests.unit.test_checker import errors, expect_error, kernel, ok

# ------------------------------------------------------------------ items


def test_kernel_must_be_pub() -> None:
    expect_error("use rgpu::*;\n#[kernel]\nfn k() {}\n", "a `#[kernel]` function must be `pub`",
                 2, 1)


def test_kernel_returns_unit() -> None:
    expect_error("use rgpu::*;\n#[kernel]\npub fn k() -> u32 { 1u32 }\n",
                 "a `#[kernel]` function must return `()`", 3, 15)


def test_kernel_parameter_types() -> None:
    expect_error("use rgpu::*;\n#[kernel]\npub fn k(a: [u32; 4]) {}\n",
                 "kernel parameters must be scalars or slices", 3, 13)
    expect_error(kernel("", "fn h(a: &[u32]) {}\n"),
                 "helper function parameters must be scalars, found `&[u32]`", 5, 9)


def test_at_least_one_kernel_and_the_prelude_import() -> None:
    expect_error("use rgpu::*;\nfn h() {}\n", "no `#[kernel]` function in this file", 1, 1)
    expect_error("#[kernel]\npub fn k() {}\n", "missing `use rgpu::*;`", 1, 1)


def test_duplicate_names() -> None:
    d = expect_error(kernel("", "fn h() {}\nconst h: u32 = 1u32;\n"),
                     "the name `h` is defined multiple times", 6, 1)
    assert "previous definition at t.rs:5:1" in d.notes[0]
    expect_error(kernel("", "fn h(a: u32, a: u32) {}\n"),
                 "identifier `a` is bound more than once", 5, 14)


def test_calling_a_kernel() -> None:
    expect_error(kernel("", "fn h() { k(); }\n"), "kernel `k` cannot be called", 5, 10)


def test_break_outside_loop() -> None:
    expect_error(kernel("    break;\n"), "`break` outside of a loop", 4, 5)
    expect_error(kernel("    continue;\n"), "`continue` outside of a loop", 4, 5)


def test_shared_access_needs_unsafe() -> None:
    items = "#[shared]\nstatic mut S: [u32; 8] = [0u32; 8];\n"
    expect_error(kernel("    let a = S[0usize];\n", items),
                 "use of mutable static is unsafe and requires unsafe block", 4, 13)
    ok(kernel("    let a = unsafe { S[0usize] };\n    unsafe { S[1usize] = a; }\n", items))
    expect_error(kernel("    let a = unsafe { S };\n", items), "`S` is a shared array", 4, 22)


def test_shared_length_from_const() -> None:
    m = ok(kernel("", "const L: usize = 16;\n#[shared]\nstatic mut S: [i8; L] = [0i8; L];\n"))
    assert m.shared == {"S": ArrayTy(Scalar.I8, 16)}


def test_barrier_only_in_kernels() -> None:
    expect_error(kernel("", "fn h() { sync_threads(); }\n"),
                 "`sync_threads()` can only be called in a kernel", 5, 10)


# ------------------------------------------------------------------ consts


def test_const_values_computed_with_run_time_semantics() -> None:
    m = ok(kernel("", "const G: u32 = A >> 28;\n"
                      "const A: u32 = 0xFFFF_FFFEu32 + 1u32;\n"
                      "const B: i32 = -7i32 / 2i32;\n"
                      "const C: i32 = -7i32 % 2i32;\n"
                      "const D: u8 = 300u32 as u8;\n"
                      "const E: f32 = 0.1;\n"
                      "const F: i32 = i32::MIN >> 31u32;\n"
                      "const H: f32 = f32::from_bits(0x7f80_0000u32);\n"
                      "const I: i64 = (1i64 << 40) | 5;\n"
                      "const J: bool = false && (1u32 / 0u32 == 0u32);\n"
                      "const K: f64 = -2.5f32 as f64;\n"))
    assert m.consts == {
        "G": 15, "A": 0xFFFF_FFFF, "B": -3, "C": -1, "D": 44,
        "E": 13421773 / 2**27,  # 0.1 rounded to binary32: 0x3DCCCCCD
        "F": -1, "H": float("inf"), "I": 1099511627781, "J": False, "K": -2.5,
    }
    assert m.const_types["D"] is Scalar.U8


def test_const_overflow_is_an_error_as_in_rustc() -> None:
    # rustc always builds consts with overflow checks: `u32::MAX + 2` does not wrap in a const
    expect_error(kernel("", "const A: u32 = 0xFFFF_FFFFu32 + 2u32;\n"),
                 "evaluation of constant value failed: attempt to add with overflow", 5, 16)
    expect_error(kernel("", "const S: u32 = 1u32 << 32;\n"),
                 "attempt to shift left with overflow", 5, 16)


def test_const_trap_is_an_error() -> None:
    expect_error(kernel("", "const Z: u32 = 0u32;\nconst A: u32 = 7u32 / Z;\n"),
                 "evaluation of constant value failed: attempt to divide by zero", 6, 16)
    expect_error(kernel("", "const A: i8 = i8::MIN % -1i8;\n"),
                 "attempt to calculate the remainder with overflow", 5, 15)


def test_const_expression_restriction() -> None:
    expect_error(kernel("", "const A: u32 = thread_idx_x();\n"),
                 "cannot call non-const fn `thread_idx_x` in constants", 5, 16)
    expect_error(kernel("", "const A: u32 = 2u32.max(3u32);\n"),
                 "method calls are not allowed in constant expressions", 5, 16)


def test_const_cycle() -> None:
    expect_error(kernel("", "const A: u32 = B;\nconst B: u32 = A + 1u32;\n"),
                 "cycle detected when evaluating constant `A`: A -> B -> A", 5, 1)


# ------------------------------------------------------------------ recursion


def test_direct_recursion() -> None:
    expect_error(kernel("", "fn f(x: u32) -> u32 { f(x) }\n"),
                 "recursion is not allowed: f -> f", 5, 23)


def test_mutual_recursion_reports_the_cycle() -> None:
    diags = errors(kernel("", "fn f(x: u32) -> u32 { g(x) + 1u32 }\n"
                              "fn g(x: u32) -> u32 { if x > 0u32 { f(x - 1u32) } else { 0u32 } }\n"
                              "fn ok1(x: u32) -> u32 { f(x) }\n"))
    assert [(d.message, d.span.line, d.span.col) for d in diags] == [
        ("recursion is not allowed: f -> g -> f", 5, 23)]


# ------------------------------------------------------------------ uniformity


def test_barrier_in_uniform_loop_is_accepted() -> None:
    m = ok(kernel("    let m = n * 2u32;\n"
                  "    for i in 0u32..m { sync_threads(); }\n"
                  "    if block_idx_x() == 0u32 && inp.len() > 4usize { sync_threads(); }\n"
                  "    let mut j = 0u32;\n"
                  "    while j < n { sync_threads(); j += 1; }\n"))
    assert m.uses_barrier == frozenset({"k"})


def test_barrier_under_thread_dependent_condition() -> None:
    d = expect_error(kernel("    if thread_idx_x() < 4u32 {\n        sync_threads();\n    }\n"),
                     "`sync_threads()` in possibly divergent control flow", 5, 9)
    assert "`thread_idx_x() < 4u32` at t.rs:4:8" in d.notes[0]


def test_barrier_after_divergent_return() -> None:
    d = expect_error(kernel("    if thread_idx_x() == 0u32 { return; }\n    sync_threads();\n"),
                     "`sync_threads()` in possibly divergent control flow", 5, 5)
    assert "returned at t.rs:4:33" in d.notes[0]
    ok(kernel("    if n == 0u32 { return; }\n    sync_threads();\n"))


def test_taint_flows_through_locals_and_buffers() -> None:
    expect_error(kernel("    let t = thread_idx_x();\n    let mut m = 0u32;\n"
                        "    if n > 2u32 { m = t; }\n    if m == 0u32 { sync_threads(); }\n"),
                 "possibly divergent", 7, 20)
    expect_error(kernel("    if inp[0usize] == 0u32 { sync_threads(); }\n"),
                 "possibly divergent", 4, 30)
    expect_error(kernel("    let v = h(thread_idx_x());\n"
                        "    for i in 0u32..v { sync_threads(); }\n",
                        "fn h(x: u32) -> u32 { x }\n"), "possibly divergent", 5, 24)


def test_divergent_break_makes_the_loop_divergent() -> None:
    d = expect_error(kernel("    loop {\n        sync_threads();\n"
                            "        if thread_idx_x() > 3u32 { break; }\n    }\n"),
                     "possibly divergent", 5, 9)
    assert "`break` at t.rs:6:36" in d.notes[0]
    ok(kernel("    loop {\n        sync_threads();\n        if n > 3u32 { break; }\n    }\n"))


def test_barrier_must_be_a_statement() -> None:
    d = expect_error(kernel("    let v = { sync_threads(); 1u32 };\n"),
                     "`sync_threads()` must be a statement of its own", 4, 15)
    assert "not inside an expression" in d.notes[0]
    expect_error(kernel("    while n > { sync_threads(); 1u32 } { }\n"),
                 "`sync_threads()` must be a statement of its own", 4, 17)
    ok(kernel("    unsafe { { sync_threads(); } }\n"
              "    if n > 1u32 { sync_threads() } else if n > 2u32 { loop { sync_threads(); } }\n"))


def test_helper_reading_thread_index_is_not_uniform() -> None:
    expect_error(kernel("    if h() == 0u32 { sync_threads(); }\n",
                        "fn h() -> u32 { thread_idx_x() }\n"), "possibly divergent", 4, 22)
    ok(kernel("    if h() == 0u32 { sync_threads(); }\n", "fn h() -> u32 { block_idx_y() }\n"))


# ------------------------------------------------------------------ the method table


def test_method_table_matches_the_reference() -> None:
    assert method_signature("to_bits", Scalar.F64).result is Scalar.U64
    rot = method_signature("rotate_left", Scalar.I8)
    assert rot is not None and rot.params == (Scalar.U32,) and rot.result is Scalar.I8
    assert method_signature("abs", Scalar.U32) is None
    assert method_signature("sqrt", Scalar.I32) is None
    fma = method_signature("mul_add", Scalar.F32)
    assert fma is not None and fma.params == (Scalar.F32, Scalar.F32)
    assert method_signature("count_ones", Scalar.U64).result is Scalar.U32
    assert "len" not in METHODS
    assert assoc_const_value(Scalar.I16, "MIN") == -32768
    assert assoc_const_value(Scalar.F32, "MAX") is None


@pytest.mark.parametrize(("expr", "ok"), [
    ("-2147483648i32", True),        # one `-`: the literal counts as negated
    ("--2147483648i32", False),      # rustc: literal out of range for `i32`
    ("-(-2147483648i32)", False),    # parentheses are not nodes in rustc's HIR
    ("---2147483648i32", True),      # the third `-` counts again
    ("-(2147483648i32)", True),
    ("--2147483648", False),         # unsuffixed, typed i32 by the target
])
def test_negated_literal_ranges_follow_rustc(expr: str, ok: bool) -> None:
    """rustc's overflowing_literals lint (deny by default) counts a literal as negated only
    under a `-` that is not itself the operand of a counting `-`; checked against rustc 1.95
    by hand on these six expressions."""
    src = f"use rgpu::*;\n#[kernel]\npub fn k(out: &mut [i32]) {{\n    out[0usize] = {expr};\n}}\n"
    if ok:
        check_source(src)
    else:
        with pytest.raises(DiagnosticError, match="literal out of range for `i32`"):
            check_source(src)


def test_barrier_in_an_expression_next_to_a_statement_barrier() -> None:
    """The placement check skips its walk when every barrier the body checker counted is a
    statement; one statement barrier must not hide one inside an expression."""
    expect_error(kernel("    sync_threads();\n    let v = { sync_threads(); 1u32 };\n"),
                 "`sync_threads()` must be a statement of its own", 5, 15)
