"""Literal values and literal ASTs: f32 literals are rounded once, straight from the decimal."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.literals import float_bits, float_literal, float_literal_value, int_literal
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_expr
from rgpu_fuzz.model.scalars import Scalar

F32, F64 = Scalar.F32, Scalar.F64


def f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


@pytest.mark.parametrize(("text", "expected"), [
    ("16777217", 16777216.0),            # 2**24 + 1: halfway, ties to the even 2**24
    ("16777219", 16777220.0),            # 2**24 + 3: halfway, ties to the even 2**24 + 4
    ("1.5", 1.5),
    ("1e-45", 2.0**-149),                # nearest to 1e-45 is the smallest subnormal
    ("7.01e-46", 2.0**-149),             # above half of it (2**-150 = 7.0065e-46): rounds up
    ("7.006e-46", 0.0),                  # below half of it: rounds to zero
    ("3.4028235e38", (2 - 2.0**-23) * 2.0**127),
    ("3.5e38", math.inf),                # above the largest finite f32
    ("340282356779733661637539395458142568448", math.inf),  # exactly halfway to 2**128
    ("1_000.25", 1000.25),
    ("0.0", 0.0),
])
def test_f32_decimal_is_rounded_correctly(text: str, expected: float) -> None:
    assert float_literal_value(text, F32) == expected


def test_f32_bits_of_one_tenth() -> None:
    assert f32_bits(float_literal_value("0.1", F32)) == 0x3DCCCCCD


def test_f32_is_not_double_rounded() -> None:
    # 1 + 2**-24 is exactly halfway between the f32 values 1 and 1 + 2**-23. The decimal below
    # is 1 + 2**-24 + 1e-30: above halfway, so it rounds up to 1 + 2**-23 in f32. Rounded to
    # f64 first, the 1e-30 is lost (an f64 ulp at 1 is 2**-52, about 2.2e-16), leaving exactly
    # the halfway point, which then ties to even: 1.0. The direct result must be 1 + 2**-23.
    text = "1.000000059604644775390625000001"
    via_f64 = float(np.float32(float(text)))
    assert via_f64 == 1.0
    assert float_literal_value(text, F32) == 1 + 2.0**-23


def test_f64_values() -> None:
    assert float_literal_value("0.1", F64) == 0.1
    assert float_literal_value("5e-324", F64) == 2.0**-1074
    assert float_literal_value("2e-324", F64) == 0.0
    assert float_literal_value("1.8e308", F64) == math.inf
    assert float_literal_value("2.5e-3", F64) == 0.0025


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[0-9]{1,20}(\.[0-9]{1,20})?(e[+-]?[0-9]{1,3})?", fullmatch=True))
def test_f64_agrees_with_pythons_correctly_rounded_float(text: str) -> None:
    assert float_literal_value(text, F64) == float(text)


def test_bad_text_and_type_are_refused() -> None:
    with pytest.raises(ValueError):
        float_literal_value("1.0f32", F32)
    with pytest.raises(ValueError):
        float_literal_value("1.0", Scalar.U32)


@pytest.mark.parametrize(("value", "ty", "text"), [
    (0.1, F64, "0.1f64"),
    (float_literal_value("0.1", F32), F32, "0.1f32"),
    (16777216.0, F32, "16777216.0f32"),
    (2.0**-149, F32, "1e-45f32"),
    (-0.0, F32, "-0.0f32"),
    (-2.5, F64, "-2.5f64"),
    (1e16, F64, "1e16f64"),
    (1e-5, F64, "1e-5f64"),
    (3.4028234663852886e38, F32, "3.4028235e38f32"),
    (math.inf, F32, "f32::from_bits(0x7f800000u32)"),
    (-math.inf, F64, "f64::from_bits(0xfff0000000000000u64)"),
])
def test_float_literal_text(value: float, ty: Scalar, text: str) -> None:
    assert print_expr(float_literal(value, ty)) == text


def test_nan_becomes_from_bits_of_a_nan() -> None:
    e = float_literal(math.nan, F32)
    assert isinstance(e, ast.AssocCall) and e.scalar is F32 and e.name == "from_bits"
    [arg] = e.args
    assert isinstance(arg, ast.IntLit) and arg.suffix is Scalar.U32
    assert (arg.value >> 23) & 0xFF == 0xFF and arg.value & 0x7FFFFF != 0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_f32_round_trips_through_its_literal(bits: int) -> None:
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    e = float_literal(value, F32)
    lit = e.operand if isinstance(e, ast.Unary) else e
    if isinstance(lit, ast.FloatLit):
        sign = -1.0 if isinstance(e, ast.Unary) else 1.0
        assert math.copysign(float_literal_value(lit.text, F32), sign) == value
        assert float_bits(math.copysign(float_literal_value(lit.text, F32), sign), F32) == bits
    else:
        assert isinstance(lit, ast.AssocCall) and not math.isfinite(value)
    assert print_expr(parse(f"fn f() {{ let v = {print_expr(e)}; }}").items[0]  # type: ignore
                      .body.stmts[0].init) == print_expr(e)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_f64_round_trips_through_its_literal(value: float) -> None:
    e = float_literal(value, F64)
    lit = e.operand if isinstance(e, ast.Unary) else e
    assert isinstance(lit, ast.FloatLit) and lit.suffix is F64
    assert math.copysign(float_literal_value(lit.text, F64), -1.0 if e is not lit else 1.0) \
        == value
    assert repr(value).lstrip("-").replace("e+", "e").startswith(lit.text.split("e")[0])


def test_int_literal() -> None:
    assert int_literal(5, Scalar.U8) == ast.IntLit(value=5, suffix=Scalar.U8)
    assert int_literal(-128, Scalar.I8) == ast.Unary(
        op=ast.UnOp.NEG, operand=ast.IntLit(value=128, suffix=Scalar.I8))
    assert print_expr(int_literal(-(2**63), Scalar.I64)) == "-0x8000000000000000i64"
    assert print_expr(int_literal(2**64 - 1, Scalar.USIZE)) == "0xffffffffffffffffusize"
    for bad in ((256, Scalar.U8), (-1, Scalar.U32), (-129, Scalar.I8), (1, Scalar.F32)):
        with pytest.raises(ValueError):
            int_literal(*bad)
