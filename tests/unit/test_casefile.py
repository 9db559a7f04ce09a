"""Case files (README "Cases"): validation messages name the field; canonical text round-trips."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.casefile import CaseError
from rgpu_fuzz.model.case import BufferArg, Dist, Random, ScalarArg, Values
from rgpu_fuzz.model.inputs import argument_values, edge_bits, materialise
from rgpu_fuzz.model.scalars import Scalar

HEADER = 'format = "rgpu-case/1"\nentry = "k"\nkernel = "use rgpu::*;"\n'


def case_text(args: str, launch: str = "[launch]\ngrid = [1]\nblock = [4]\n") -> str:
    return HEADER + launch + args


def error_of(text: str) -> str:
    with pytest.raises(CaseError) as e:
        casefile.loads(text, "c.toml")
    return str(e.value)


def test_buffer_len_must_be_positive() -> None:
    msg = error_of(case_text('[[args]]\nname = "a"\nbuffer = "u32"\nlen = 0\n'))
    assert msg == 'c.toml: args[0].len: must be > 0 and <= 16777216 (docs/language.md "Limits")'


def test_third_arg_is_named_by_index() -> None:
    args = ""
    for i, ln in enumerate((1, 2, -3)):
        args += f'[[args]]\nname = "a{i}"\nbuffer = "u8"\nlen = {ln}\n'
    assert error_of(case_text(args)).startswith("c.toml: args[2].len:")


def test_unknown_type_lists_the_valid_ones() -> None:
    msg = error_of(case_text('[[args]]\nname = "a"\nbuffer = "u128"\nlen = 1\n'))
    assert msg.startswith('c.toml: args[0].buffer: unknown type "u128"')
    assert "usize" in msg


def test_value_out_of_range_for_type() -> None:
    msg = error_of(case_text('[[args]]\nname = "n"\nscalar = "i8"\nvalue = 128\n'))
    assert msg == "c.toml: args[0].value: 128 is out of range for i8 (-128..=127)"


def test_values_count_must_match_len() -> None:
    text = case_text('[[args]]\nname = "a"\nbuffer = "u8"\nlen = 3\ninit = { values = [1, 2] }\n')
    assert error_of(text) == "c.toml: args[0].init.values: has 2 values but len is 3"


def test_toml_syntax_error_has_line_and_column() -> None:
    msg = error_of(HEADER + "[launch\n")
    assert msg.startswith("c.toml:4:")
    assert "invalid TOML" in msg


def test_wrong_format_string() -> None:
    assert error_of('format = "rgpu-case/2"\n') == (
        'c.toml: format: expected "rgpu-case/1", found "rgpu-case/2"')


def test_id_mismatch_is_refused_with_the_right_id() -> None:
    good = casefile.loads(case_text(""))
    msg = error_of('id = "000000000000"\n' + case_text(""))
    assert f'its id is "{good.id}"' in msg


def test_float_bit_patterns_survive_round_trip() -> None:
    # 0x7fc00001 is a quiet NaN with a payload; 0x80000000 is -0.0; 0x00000001 the smallest
    # subnormal (IEEE 754 binary32 encodings).
    text = case_text('[[args]]\nname = "a"\nbuffer = "f32"\nlen = 4\n'
                     'init = { values = ["0x7fc00001", -0.0, "0x00000001", 1.5] }\n')
    case = casefile.loads(text)
    arg = case.args[0]
    assert isinstance(arg, BufferArg)
    assert arg.init == Values((0x7FC00001, 0x80000000, 0x00000001, 0x3FC00000))
    again = casefile.loads(casefile.dumps(case))
    assert again == case
    assert casefile.dumps(again) == casefile.dumps(case)
    arr = materialise(arg)
    assert arr.view(np.uint32)[0] == 0x7FC00001
    assert math.copysign(1.0, float(arr[1])) == -1.0


def test_signed_scalar_is_stored_as_twos_complement() -> None:
    case = casefile.loads(case_text('[[args]]\nname = "n"\nscalar = "i16"\nvalue = -2\n'))
    arg = case.args[0]
    assert isinstance(arg, ScalarArg) and arg.bits == 0xFFFE
    assert argument_values(case.args)["n"] == np.int16(-2)


def test_id_ignores_provenance_and_expect() -> None:
    base = case_text("")
    a = casefile.loads(base)
    b = casefile.loads(base + '[expect]\nstatus = "agree"\n[provenance]\ngenerator = "x"\n')
    assert a.id == b.id


def test_random_init_is_reproducible_and_seed_sensitive() -> None:
    a = BufferArg(name="a", elem=Scalar.U32, len=64, init=Random(7, Dist.UNIFORM))
    b = BufferArg(name="a", elem=Scalar.U32, len=64, init=Random(8, Dist.UNIFORM))
    assert np.array_equal(materialise(a), materialise(a))
    assert not np.array_equal(materialise(a), materialise(b))


def test_edges_distribution_hits_special_floats() -> None:
    arg = BufferArg(name="a", elem=Scalar.F32, len=2000, init=Random(1, Dist.EDGES))
    vals = materialise(arg)
    assert np.isnan(vals).any()
    assert np.isposinf(vals).any() and np.isneginf(vals).any()
    bits = vals.view(np.uint32)
    assert (bits == 0x80000000).any()            # -0.0
    assert ((bits & 0x7F800000) == 0).any()      # a subnormal or zero exponent
    # every edge value of binary32 listed by edge_bits is a valid 32-bit pattern
    assert all(0 <= b < 1 << 32 for b in edge_bits(Scalar.F32))
    assert struct.pack("<I", 0x7F800000) in {struct.pack("<I", b) for b in edge_bits(Scalar.F32)}


def test_edges_for_signed_ints_include_min_and_max() -> None:
    edges = set(edge_bits(Scalar.I32))
    assert 0x80000000 in edges and 0x7FFFFFFF in edges and 0xFFFFFFFF in edges


def test_missing_file_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CaseError) as e:
        casefile.load(tmp_path / "nope.toml")
    assert "cannot read" in str(e.value) and "\n" not in str(e.value)
