"""The checker: typed trees, const values, and one test per diagnostic (message and place).

Expected types follow rustc's rules; expected const values are computed by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import CheckedModule, check_source
from rgpu_fuzz.lang.features import walk
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


def test_pow_exponent_must_be_a_literal_and_f16_types_as_rust() -> None:
    """docs/language.md "Method table": `pow`'s exponent is an integer literal; `abs_diff`
    of a signed type gives its unsigned type (Rust's `Self::Unsigned`); `f16` literals,
    `to_bits` (u16) and `from_bits` type as rustc types them."""
    expect_error(kernel("    out[0] = n.pow(n);\n"),
                 "the exponent of `pow` must be an integer literal", 4, 20)
    ok(kernel("    out[0] = n.pow(3) + n.wrapping_pow(0u32);\n"))
    ok(kernel("    let d: u16 = (n as i16).abs_diff(-3);\n"
              "    let h: f16 = 1.5f16.mul_add(f16::from_bits(d), 0.25);\n"
              "    out[0] = h.to_bits() as u32 + h.clamp(-1.0, 1.0).is_nan() as u32;\n"))
    expect_error(kernel("    let d: i16 = (n as i16).abs_diff(3);\n    out[0] = d as u32;\n"),
                 "mismatched types", 4, 19)
