"""The checker on wave functions: their types, where they may stand, and the wave-uniformity
analysis (docs/language.md "Wave operations"). One test per rule, with the message and the
place; expected types are the signatures the language reference gives (rustc's inference
for a generic `T`: the argument's type, or the expected type for an unsuffixed literal).
"""

from __future__ import annotations

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.features import module_features, walk
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.scalars import Scalar
from tests.unit.test_checker import assert_fully_typed, errors, expect_error, kernel, ok


def call_types(src: str) -> dict[str, Scalar]:
    """The type of each wave call of the module, by function name (the last one wins)."""
    m = ok(src)
    assert_fully_typed(m)
    out: dict[str, Scalar] = {}
    for n in walk(m.module):
        if isinstance(n, ast.Call) and n.func in WAVE_FUNCTIONS:
            assert isinstance(n.ty, Scalar)
            out[n.func] = n.ty
    return out


def test_the_prelude_has_exactly_the_wave_functions_the_reference_names() -> None:
    assert set(WAVE_FUNCTIONS) == {
        "wave_size", "lane_id", "read_first_lane", "read_lane", "ballot", "shuffle",
        "shuffle_xor", "shuffle_down", "wave_sum", "wave_min", "wave_max", "wave_and",
        "wave_or", "wave_xor", "wave_prefix_sum", "wave_all", "wave_any"}
    assert {n for n, s in WAVE_FUNCTIONS.items() if not s.collective} == {"wave_size",
                                                                          "lane_id"}


def test_every_wave_function_types_as_the_reference_says() -> None:
    src = kernel(
        "    let i = thread_idx_x() as usize;\n"
        "    let f = inp[i] as f64;\n"
        "    let a = read_first_lane(f);\n"
        "    let b = read_lane(inp[i] as i8, 3u32);\n"
        "    let c = ballot(inp[i] > 3u32);\n"
        "    let d = shuffle(true, inp[i]);\n"
        "    let e = shuffle_xor(inp[i] as f32, 1u32);\n"
        "    let g = shuffle_down(inp[i] as usize, 2u32);\n"
        "    let h = wave_sum(inp[i] as i64);\n"
        "    let j = wave_min(inp[i] as i16);\n"
        "    let l = wave_max(inp[i] as u8);\n"
        "    let m = wave_and(inp[i]);\n"
        "    let o = wave_or(inp[i] as u64);\n"
        "    let p = wave_xor(inp[i] as i32);\n"
        "    let q = wave_prefix_sum(inp[i] as u16);\n"
        "    let r = wave_all(inp[i] == 0u32);\n"
        "    let s = wave_any(inp[i] == 0u32);\n"
        "    out[i] = wave_size() + lane_id();\n")
    assert call_types(src) == {
        "read_first_lane": Scalar.F64, "read_lane": Scalar.I8, "ballot": Scalar.U64,
        "shuffle": Scalar.BOOL, "shuffle_xor": Scalar.F32, "shuffle_down": Scalar.USIZE,
        "wave_sum": Scalar.I64, "wave_min": Scalar.I16, "wave_max": Scalar.U8,
        "wave_and": Scalar.U32, "wave_or": Scalar.U64, "wave_xor": Scalar.I32,
        "wave_prefix_sum": Scalar.U16, "wave_all": Scalar.BOOL, "wave_any": Scalar.BOOL,
        "wave_size": Scalar.U32, "lane_id": Scalar.U32}


def test_an_unsuffixed_literal_takes_the_expected_type() -> None:
    assert call_types(kernel("    let s: i16 = wave_sum(1);\n"
                             "    out[0] = s as u32;\n"))["wave_sum"] is Scalar.I16
    assert call_types(kernel("    let mut s = 0u8;\n    s = wave_max(7);\n"
                             "    out[0] = s as u32;\n"))["wave_max"] is Scalar.U8


def test_an_unsuffixed_literal_without_context_needs_a_suffix() -> None:
    expect_error(kernel("    let s = wave_sum(1);\n"), "type annotations needed", 4, 22)


def test_reductions_take_integers_only() -> None:
    d = expect_error(kernel("    let s = wave_sum(1.5f32);\n"),
                     "`wave_sum` takes an integer type as its first argument, found `f32`",
                     4, 22)
    assert d.span.col == 22
    expect_error(kernel("    let s = wave_or(true);\n"),
                 "`wave_or` takes an integer type", 4, 21)


@pytest.mark.parametrize(("body", "message", "col"), [
    ("    let s = ballot(1u32);\n", "mismatched types: expected `bool`, found `u32`", 20),
    ("    let s = read_lane(1u32, 2u64);\n", "mismatched types: expected `u32`", 29),
    ("    let s = shuffle(1u32);\n", "this function takes 2 arguments but 1 argument was", 13),
    ("    let s = lane_id(1u32);\n", "this function takes 0 arguments but 1 argument was", 13),
])
def test_argument_types_and_counts(body: str, message: str, col: int) -> None:
    expect_error(kernel(body), message, 4, col)


def test_a_wave_function_name_cannot_be_redefined() -> None:
    expect_error(kernel("", "fn ballot(x: u32) -> u32 { x }\n"),
                 "the name `ballot` is defined multiple times", 5, 1)


def test_collective_calls_only_in_kernels_but_lane_id_anywhere() -> None:
    expect_error(kernel("    out[0] = h(1u32);\n", "fn h(x: u32) -> u32 { wave_or(x) }\n"),
                 "`wave_or` can only be called in a kernel", 6, 23)
    ok(kernel("    let i = thread_idx_x() as usize;\n    out[i] = h(1u32);\n",
              "fn h(x: u32) -> u32 { x + lane_id() + wave_size() }\n"))


@pytest.mark.parametrize(("body", "col"), [
    ("    out[0] = wave_sum(1u32) + 1u32;\n", 14),
    ("    if wave_any(true) { out[0] = 1u32; }\n", 8),
    ("    let s = { let t = wave_sum(1u32); t };\n", 23),
    ("    let s = wave_sum(wave_max(1u32));\n", 22),
    ("    wave_all(true);\n", 5),
])
def test_a_collective_call_is_the_value_of_a_let_or_an_assignment(body: str, col: int) -> None:
    expect_error(kernel(body), "must be the value of a `let` or an assignment", 4, col)


def test_statement_level_places_are_accepted() -> None:
    m = ok(kernel("    let i = thread_idx_x() as usize;\n"
                  "    let mut s = wave_sum(inp[i]);\n"
                  "    s += wave_max(inp[i]);\n"
                  "    out[i] = shuffle(s, inp[i]);\n"
                  "    for j in 0u32..4u32 { s = shuffle_down(s, j); }\n"
                  "    let mut u = wave_max(inp[i]);\n"
                  "    while u > 10u32 { u = wave_min(u / 2u32); }\n"
                  "    loop { out[i] = read_first_lane(s); break; }\n"))
    assert m.uses_waves == frozenset({"k"})
    assert ok(kernel("    out[0] = lane_id();\n")).uses_waves == frozenset()


def test_wave_divergent_control_is_a_located_error() -> None:
    d = expect_error(kernel("    let i = thread_idx_x() as usize;\n"
                            "    if inp[i] > 3u32 {\n"
                            "        let s = wave_sum(inp[i]);\n"
                            "        out[i] = s;\n"
                            "    }\n"),
                     "`wave_sum` in possibly wave-divergent control flow", 6, 17)
    assert any("`inp[i] > 3u32` at t.rs:5:8 may differ between the lanes of a wave" in n
               for n in d.notes)


@pytest.mark.parametrize("cond", [
    "lane_id() < 4u32",
    "thread_idx_x() / wave_size() == 1u32 && inp[0] == 0u32",
    "thread_idx_y() / wave_size() == 0u32",
    "thread_idx_x() / 32u32 == 0u32",
    "thread_idx_x() % wave_size() == 0u32",
    "shuffle(1u32, 0u32) == 1u32",
])
def test_conditions_that_may_differ_within_a_wave(cond: str) -> None:
    src = kernel("    let i = thread_idx_x() as usize;\n"
                 f"    let c = {cond};\n"
                 "    if c {\n"
                 "        let s = wave_or(inp[i]);\n"
                 "        out[i] = s;\n"
                 "    }\n")
    if "shuffle" in cond:  # a collective call inside a condition is misplaced as well
        assert any("must be the value" in d.message for d in errors(src))
    else:
        expect_error(src, "`wave_or` in possibly wave-divergent control flow", 7, 17)


@pytest.mark.parametrize("cond", [
    "thread_idx_x() / wave_size() == 1u32",
    "block_idx_x() == 0u32",
    "n > wave_size()",
])
def test_wave_uniform_but_not_block_uniform_conditions_are_accepted(cond: str) -> None:
    ok(kernel("    let i = thread_idx_x() as usize;\n"
              f"    if {cond} {{\n"
              "        let s = wave_or(inp[i]);\n"
              "        out[i] = s;\n"
              "    }\n"))


def test_uniform_results_make_wave_uniform_conditions() -> None:
    ok(kernel("    let i = thread_idx_x() as usize;\n"
              "    let b = ballot(inp[i] > 3u32);\n"
              "    let m = wave_max(inp[i]);\n"
              "    let f = read_lane(inp[i], 0u32);\n"
              "    let mut go = wave_any(inp[i] > 0u32);\n"
              "    while go && b != 0u64 {\n"
              "        let r = read_lane(inp[i], m % wave_size());\n"
              "        out[i] = r + f;\n"
              "        go = wave_all(false);\n"
              "    }\n"))


def test_a_ballot_is_not_block_uniform_for_a_barrier() -> None:
    expect_error(kernel("    let i = thread_idx_x() as usize;\n"
                        "    let b = ballot(inp[i] > 3u32);\n"
                        "    if b == 0u64 {\n"
                        "        sync_threads();\n"
                        "    }\n"),
                 "`sync_threads()` in possibly divergent control flow", 7, 9)


@pytest.mark.parametrize(("call", "col"), [
    ("read_lane(inp[i], lane_id())", 31),
    ("shuffle_xor(inp[i], inp[i])", 33),
    ("shuffle_down(inp[i], thread_idx_x())", 34),
])
def test_lane_mask_and_delta_must_be_wave_uniform(call: str, col: int) -> None:
    expect_error(kernel("    let i = thread_idx_x() as usize;\n"
                        f"    let s = {call};\n"
                        "    out[i] = s;\n"),
                 "may differ between the lanes of a wave", 5, col)


def test_a_local_assigned_under_divergent_control_is_not_wave_uniform() -> None:
    expect_error(kernel("    let i = thread_idx_x() as usize;\n"
                        "    let mut d = 1u32;\n"
                        "    if lane_id() == 0u32 { d = 2u32; }\n"
                        "    let s = shuffle_down(inp[i], d);\n"
                        "    out[i] = s;\n"),
                 "the argument `d` of `shuffle_down` may differ", 7, 34)


def test_after_a_lane_divergent_return_wave_operations_are_rejected() -> None:
    expect_error(kernel("    let i = thread_idx_x() as usize;\n"
                        "    if lane_id() == 3u32 { return; }\n"
                        "    let s = wave_sum(inp[i]);\n"
                        "    out[i] = s;\n"),
                 "`wave_sum` in possibly wave-divergent control flow", 6, 13)


def test_lane_id_makes_a_helper_varying() -> None:
    expect_error(kernel("    let i = thread_idx_x() as usize;\n"
                        "    let s = read_lane(inp[i], h(0u32));\n"
                        "    out[i] = s;\n",
                        "fn h(x: u32) -> u32 { x + lane_id() }\n"),
                 "the argument `h(0u32)` of `read_lane` may differ", 5, 31)


def test_the_check_names_the_file_line_and_column() -> None:
    src = kernel("    let i = thread_idx_x() as usize;\n"
                 "    if inp[i] == 0u32 { let s = ballot(true); out[i] = s as u32; }\n")
    with pytest.raises(Exception) as info:
        check_source(src, "waves.rs")
    assert "waves.rs:5:33: error: `ballot` in possibly wave-divergent control flow" \
        in str(info.value)


def test_any_wave_function_is_the_wave_feature() -> None:
    """Pipelines that do not declare `wave` answer `Unsupported` for such kernels."""
    assert "wave" in module_features(parse(kernel("    out[0] = lane_id();\n")))
    assert "wave" not in module_features(parse(kernel("    out[0] = thread_idx_x();\n")))
