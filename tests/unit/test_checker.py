"""The checker: typed trees, const values, and one test per diagnostic (message and place).

Expected types follow rustc's rules; expected const values are computed by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import CheckedModule, check_source
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.methods import METHODS, assoc_const_value, method_signature
from rgpu_fuzz.lang.source import Diagnostic, DiagnosticError
from rgpu_fuzz.lang.types import NEVER, UNIT, ArrayTy, SliceTy
from rgpu_fuzz.model.scalars import Scalar

HEADER = "use rgpu::*;\n#[kernel]\npub fn k(out: &mut [u32], inp: &[u32], n: u32) {\n"
"""Kernel bodies given to `kernel()` start on line 4."""

DESIGN_EXAMPLE = (Path(__file__).parents[2] / "examples" / "kernel.rs").read_text()
"""The docs/language.md example kernel, verbatim."""


def kernel(body: str, items: str = "") -> str:
    return HEADER + body + "}\n" + items


def ok(src: str) -> CheckedModule:
    return check_source(src, "t.rs")


def errors(src: str) -> list[Diagnostic]:
    with pytest.raises(DiagnosticError) as info:
        check_source(src, "t.rs")
    return info.value.diagnostics


def expect_error(src: str, message: str, line: int, col: int) -> Diagnostic:
    diags = errors(src)
    for d in diags:
        if message in d.message and (d.span.line, d.span.col) == (line, col):
            return d
    shown = "\n".join(d.headline() for d in diags)
    raise AssertionError(f"no `{message}` at {line}:{col}; got:\n{shown}")


EXPR_TYPES = (ast.IntLit, ast.FloatLit, ast.BoolLit, ast.Name, ast.Unary, ast.Binary,
              ast.Cast, ast.Index, ast.MethodCall, ast.Call, ast.AssocCall, ast.AssocConst,
              ast.ArrayRepeat, ast.ArrayList, ast.If, ast.BlockExpr)


def assert_fully_typed(m: CheckedModule) -> None:
    for n in walk(m.module):
        if isinstance(n, EXPR_TYPES):
            assert isinstance(n.ty, Scalar | ArrayTy | SliceTy) or n.ty in (UNIT, NEVER), n
        if isinstance(n, ast.Name):
            assert n.kind is not None, n
            assert (n.binding is not None) == (n.kind is ast.NameKind.LOCAL), n
        if isinstance(n, ast.Let | ast.For | ast.Param):
            assert n.binding is not None, n


def find(m: CheckedModule | ast.Fn, kind: type, pred=lambda n: True) -> list:
    root = m.module if isinstance(m, CheckedModule) else m
    return [n for n in walk(root) if isinstance(n, kind) and pred(n)]


# ------------------------------------------------------------------ whole programs


def test_design_example_checks_cleanly() -> None:
    m = ok(DESIGN_EXAMPLE)
    assert_fully_typed(m)
    assert m.kernels == ("k",)
    assert m.consts == {"N": 64}
    assert m.shared == {"TILE": ArrayTy(Scalar.F32, 64)}
    assert m.uses_barrier == frozenset({"k"})
    # 5 params + tid, gid, acc, i
    assert m.bindings == {"mix": 2, "k": 9}
    tile = find(m, ast.Name, lambda n: n.ident == "TILE")
    assert tile and all(n.kind is ast.NameKind.SHARED for n in tile)
    (rot,) = find(m, ast.MethodCall, lambda n: n.method == "rotate_left")
    assert rot.args[0].ty is Scalar.U32 and rot.ty is Scalar.U32
    (fma,) = find(m, ast.MethodCall, lambda n: n.method == "mul_add")
    assert fma.ty is Scalar.F32


def test_items_resolve_regardless_of_order() -> None:
    src = kernel("    out[0usize] = helper(A);\n",
                 "fn helper(x: u32) -> u32 { x + B }\nconst A: u32 = B * 2u32;\n"
                 "const B: u32 = 3u32;\n")
    m = ok(src)
    assert m.consts == {"A": 6, "B": 3}


# ------------------------------------------------------------------ literal inference


def test_literal_takes_the_other_operands_type() -> None:
    m = ok(kernel("    let x: u8 = 7u8;\n    let y = x + 1;\n    let z = 2 * x;\n"))
    lits = find(m, ast.IntLit, lambda n: n.suffix is None)
    assert [lit.ty for lit in lits] == [Scalar.U8, Scalar.U8]
    lets = find(m, ast.Let)
    assert lets[1].init.ty is Scalar.U8 and lets[2].init.ty is Scalar.U8


def test_shift_amount_literal_is_i32_and_lhs_follows_annotation() -> None:
    m = ok(kernel("    let a: u64 = 3u64;\n    let b = a << 40;\n    let c: u64 = 1 << n;\n"))
    shifts = find(m, ast.Binary, lambda b: b.op is ast.BinOp.SHL)
    assert shifts[0].rhs.ty is Scalar.I32 and shifts[0].ty is Scalar.U64
    assert shifts[1].lhs.ty is Scalar.U64 and shifts[1].rhs.ty is Scalar.U32


def test_expected_type_reaches_if_branches_blocks_arrays_and_args() -> None:
    src = kernel(
        "    let v: i16 = if n > 2u32 { 1 } else { -2 };\n"
        "    let w: f64 = { 0.5 };\n"
        "    let a: [u8; 3] = [1, 2, 3];\n"
        "    let r: [i64; 4] = [7; 4];\n"
        "    out[0usize] = n.max(3);\n"
        "    out[1usize] = h(4);\n",
        "fn h(x: u32) -> u32 { x }\n")
    m = ok(src)
    assert_fully_typed(m)
    k = m.fns["k"]
    by_line: dict[int, list[Scalar]] = {}
    for lit in find(k, ast.IntLit, lambda n: n.suffix is None):
        by_line.setdefault(lit.span.line, []).append(lit.ty)
    assert by_line == {4: [Scalar.I16, Scalar.I16], 6: [Scalar.U8] * 3,
                       7: [Scalar.I64, Scalar.USIZE], 8: [Scalar.U32], 9: [Scalar.U32]}
    (half,) = find(k, ast.FloatLit)
    assert half.ty is Scalar.F64
    arrays = find(k, ast.ArrayList)
    assert arrays[0].ty == ArrayTy(Scalar.U8, 3)
    assert all(e.ty is Scalar.U8 for e in arrays[0].elems)
    assert find(k, ast.ArrayRepeat)[0].ty == ArrayTy(Scalar.I64, 4)


def test_negated_literal_is_range_checked_as_a_whole() -> None:
    m = ok(kernel("    let a: i8 = -128;\n    let b = -128i8;\n"))
    assert all(lit.ty is Scalar.I8 for lit in find(m, ast.IntLit, lambda n: n.value == 128))
    expect_error(kernel("    let a = 128i8;\n"), "literal out of range for `i8`", 4, 13)
    expect_error(kernel("    let a: u8 = 256;\n"), "literal out of range for `u8`", 4, 17)
    expect_error(kernel("    let a: i8 = -129;\n"), "literal out of range for `i8`", 4, 18)


def test_literal_under_cast_takes_the_target_type() -> None:
    m = ok(kernel("    let a = 300 as u16;\n    let b = 2.5 as f32;\n"))
    assert find(m, ast.IntLit)[0].ty is Scalar.U16
    assert find(m, ast.FloatLit)[0].ty is Scalar.F32


def test_cannot_infer_type() -> None:
    expect_error(kernel("    let x = 1;\n"), "cannot infer type", 4, 13)
    expect_error(kernel("    let b = 1 == 2;\n"), "cannot infer type", 4, 13)
    expect_error(kernel("    let f = 1 as f32;\n"), "cannot infer type", 4, 13)


def test_integer_literal_never_becomes_a_float() -> None:
    expect_error(kernel("    let f: f32 = 1;\n"), "expected `f32`, found integer", 4, 18)
    expect_error(kernel("    let x: u32 = 1.5;\n"),
                 "expected `u32`, found floating-point number", 4, 18)


def test_method_on_ambiguous_literal() -> None:
    expect_error(kernel("    let x = 1.max(2u32);\n"),
                 "can't call method `max` on ambiguous numeric type `{integer}`", 4, 13)


# ------------------------------------------------------------------ scopes and bindings


def test_shadowing_and_binding_numbers() -> None:
    src = kernel("    let x: u32 = 1u32;\n"
                 "    let x: u64 = x as u64 + 1;\n"
                 "    { let x: i8 = 2i8; out[0usize] = x as u32; }\n"
                 "    out[1usize] = x as u32;\n")
    m = ok(src)
    k = m.fns["k"]
    lets = find(k, ast.Let)
    assert [let.binding for let in lets] == [3, 4, 5]  # params out, inp, n are 0..2
    uses = find(k, ast.Name, lambda n: n.ident == "x")
    # the second let's initialiser still sees the first x; then each use sees the innermost
    assert [(u.binding, u.ty) for u in uses] == [(3, Scalar.U32), (5, Scalar.I8),
                                                 (4, Scalar.U64)]
    assert m.bindings["k"] == 6
    params = k.params
    assert [p.binding for p in params] == [0, 1, 2]


def test_block_scope_ends_at_the_brace() -> None:
    expect_error(kernel("    { let y: u32 = 1u32; }\n    out[0usize] = y;\n"),
                 "cannot find value `y` in this scope", 5, 19)


def test_for_variable_has_range_type() -> None:
    m = ok(kernel("    for i in 0..n { out[i as usize] = i; }\n"))
    (loop,) = find(m, ast.For)
    assert loop.start.ty is Scalar.U32 and loop.binding == 3
    expect_error(kernel("    for i in 0.0f32..1.0f32 { }\n"),
                 "`for` ranges must have an integer type", 4, 14)


# ------------------------------------------------------------------ `!` and returns


def test_diverging_statements_type_as_never() -> None:
    m = ok(kernel("", "fn f(x: u32) -> u32 { if x > 3u32 { return 1u32; } x }\n"
                      "fn g() -> u32 { return 2u32; }\n"
                      "fn h(x: u32) -> u32 { loop { if x > 1u32 { return x; } } }\n"
                      "fn j(x: u32) -> u32 {\n"
                      "    if x > 1u32 { return 1u32; } else { return 2u32; }\n"
                      "}\n"))
    assert m.fns["g"].body.stmts[0] == ast.Return(value=ast.IntLit(value=2, suffix=Scalar.U32))
    (ifx,) = find(m.fns["j"], ast.If)
    assert ifx.ty is NEVER


def test_missing_tail() -> None:
    d = expect_error(kernel("", "fn f(x: u32) -> u32 { let y = x; }\n"),
                     "mismatched types: expected `u32`, found `()`", 5, 17)
    assert "implicitly returns" in d.notes[0]


def test_loop_with_break_does_not_diverge() -> None:
    expect_error(kernel("", "fn f() -> u32 { loop { break; } }\n"),
                 "expected `u32`, found `()`", 5, 11)


def test_return_value_types() -> None:
    expect_error(kernel("", "fn f() -> u32 { return; }\n"),
                 "mismatched types: expected `u32`, found `()`", 5, 17)
    expect_error(kernel("", "fn f() -> u32 { return 1i64; }\n"),
                 "mismatched types: expected `u32`, found `i64`", 5, 24)


# ------------------------------------------------------------------ type errors


def test_mismatched_operands() -> None:
    expect_error(kernel("    let a: i64 = 1i64;\n    let b = n + a;\n"),
                 "mismatched types: expected `u32`, found `i64`", 5, 17)


def test_unknown_names() -> None:
    expect_error(kernel("    out[0usize] = zz;\n"), "cannot find value `zz` in this scope", 4, 19)
    expect_error(kernel("    nope(1u32);\n"), "cannot find function `nope` in this scope", 4, 5)
    expect_error(kernel("    let f = n.sqrt();\n"),
                 "no method named `sqrt` found for type `u32`", 4, 13)
    expect_error(kernel("    let f = u32::from_bits(1u32);\n"),
                 "no function or associated item named `from_bits` found for type `u32`", 4, 13)
    expect_error(kernel("    let f = f32::MAX;\n"),
                 "no associated item named `MAX` found for type `f32`", 4, 13)


def test_unsigned_negation() -> None:
    d = expect_error(kernel("    let a = -1u32;\n"),
                     "cannot apply unary operator `-` to type `u32`", 4, 13)
    assert d.notes == ("unsigned values cannot be negated",)
    expect_error(kernel("    let a: u32 = -1;\n"),
                 "cannot apply unary operator `-` to type `u32`", 4, 18)


def test_operator_operand_types() -> None:
    expect_error(kernel("    let a = true + false;\n"),
                 "binary operation `+` cannot be applied to type `bool`", 4, 13)
    expect_error(kernel("    let a = !1.5f32;\n"),
                 "cannot apply unary operator `!` to type `f32`", 4, 13)
    expect_error(kernel("    let a = n && true;\n"), "expected `bool`, found `u32`", 4, 13)


def test_cast_rules() -> None:
    m = ok(kernel("    let a = true as u8;\n    let b = -1.5f64 as u32;\n"))
    assert find(m, ast.Cast)[0].ty is Scalar.U8
    expect_error(kernel("    let a = true as f32;\n"), "casting `bool` as `f32` is invalid", 4, 13)
    expect_error(kernel("    let a = n as bool;\n"), "cannot cast `u32` as `bool`", 4, 13)


def test_if_conditions_and_branches() -> None:
    expect_error(kernel("    if n { }\n"), "mismatched types: expected `bool`, found `u32`", 4, 8)
    expect_error(kernel("    let a: u32 = if n > 1u32 { 1u32 };\n"),
                 "`if` may be missing an `else` clause", 4, 18)
    expect_error(kernel("    let a = if n > 1u32 { 1u32 } else { 2i64 };\n"),
                 "`if` and `else` have incompatible types: expected `u32`, found `i64`", 4, 41)


def test_statement_if_must_be_unit() -> None:
    expect_error(kernel("    if n > 1u32 { 1u32 } else { 2u32 }\n    out[0usize] = 1u32;\n"),
                 "mismatched types: expected `()`, found `u32`", 4, 19)


def test_indexing_rules() -> None:
    expect_error(kernel("    out[n] = 1u32;\n"), "the type `[u32]` cannot be indexed by `u32`",
                 4, 9)
    expect_error(kernel("    let a = n[0usize];\n"), "cannot index into a value of type `u32`",
                 4, 13)
    m = ok(kernel("    let a: [f32; 4] = [0.0f32; 4];\n    let l = a.len() + inp.len();\n"))
    assert find(m, ast.MethodCall)[0].ty is Scalar.USIZE


def test_buffer_used_as_a_value() -> None:
    expect_error(kernel("    let b = inp;\n"), "`inp` is a buffer", 4, 13)


def test_array_length_rules() -> None:
    expect_error(kernel("    let a: [u32; 0] = [0u32; 0];\n"), "array length must be at least 1",
                 4, 18)
    expect_error(kernel("    let a = [0u32; n];\n"),
                 "array length must be an integer literal or a `usize` const", 4, 20)


def test_method_argument_count_and_types() -> None:
    expect_error(kernel("    let a = n.rotate_left();\n"),
                 "this method takes 1 argument but 0 arguments were supplied", 4, 13)
    expect_error(kernel("    let a = n.rotate_left(1u8);\n"), "expected `u32`, found `u8`", 4, 27)
    expect_error(kernel("    let a = 1.0f32.to_bits() + 1u64;\n"),
                 "expected `u32`, found `u64`", 4, 32)


def test_call_argument_count() -> None:
    expect_error(kernel("    let a = h(1u32, 2u32);\n", "fn h(x: u32) -> u32 { x }\n"),
                 "this function takes 1 argument but 2 arguments were supplied", 4, 13)


def test_errors_do_not_cascade() -> None:
    diags = errors(kernel("    let x = zz + 1u32;\n    let y: u32 = x * 2;\n"))
    assert [d.message for d in diags] == ["cannot find value `zz` in this scope"]


def test_errors_of_every_function_are_reported() -> None:
    diags = errors(kernel("    let a: u32 = true;\n", "fn h() -> u8 { 1u16 }\n"))
    assert [(d.span.line, d.span.col) for d in diags] == [(4, 18), (6, 16)]


# ------------------------------------------------------------------ mutability


def test_assign_to_immutable_let() -> None:
    expect_error(kernel("    let x: u32 = 1u32;\n    x = 2u32;\n"),
                 "cannot assign twice to immutable variable `x`", 5, 5)


def test_assign_to_immutable_param() -> None:
    expect_error(kernel("    n = 2u32;\n"), "cannot assign to immutable argument `n`", 4, 5)
    ok(kernel("", "fn h(mut x: u32) -> u32 { x += 1; x }\n"))


def test_assign_to_element_of_immutable_array() -> None:
    expect_error(kernel("    let a: [u32; 2] = [0u32; 2];\n    a[0usize] = 1u32;\n"),
                 "cannot assign to `a[_]`, as `a` is not declared as mutable", 5, 5)


def test_assign_to_element_of_shared_slice() -> None:
    expect_error(kernel("    inp[0usize] = 1u32;\n"),
                 "cannot assign to `inp[_]`, which is behind a `&` reference", 4, 5)


def test_assign_to_const() -> None:
    expect_error(kernel("    C = 2u32;\n", "const C: u32 = 1u32;\n"),
                 "invalid left-hand side of assignment", 4, 5)


def test_compound_assignment_types() -> None:
    m = ok(kernel("    let mut x: u16 = 1u16;\n    x += 1;\n    x <<= 3;\n"))
    assigns = find(m, ast.Assign)
    assert assigns[0].value.ty is Scalar.U16 and assigns[1].value.ty is Scalar.I32
    expect_error(kernel("    let mut b = true;\n    b += true;\n"),
                 "`+=` cannot be applied to type `bool`", 5, 5)


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
