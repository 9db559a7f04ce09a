"""Knock-outs (`triage/knockout.py`) and the bug key of an unreduced kernel with several
broken families (`BugKeys.key(..., attribute=True)`).

Expected values are computed by hand from the language's rules (docs/language.md: integer
operations wrap, `<<` masks its amount to the width) and, for the seeded bug, from its
transformation (rgpu_fuzz/bench/seeded/miscompile.py rewrites the *first* `xor` of the lowered IR to
`or`; LangRef: `!x` is `xor x, -1`), never read from the code under test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from oracles import judge, load_policy
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.case import BufferArg, Case, Launch, Values
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from triage.bugkey import BugKeys, typed_op
from triage.knockout import knock_out

MISCOMPILE = seeded_plugin("miscompile.py")
SPEC = "llvm-cpu-xor2or:O0"

ALL = """use rgpu::*;

#[kernel]
pub fn k(a: &[u8], b: &[u8], n: &[u32], p: &[bool], q: &[bool], o1: &mut [u8], o2: &mut [u8],
         o3: &mut [bool], o4: &mut [bool], o5: &mut [u8], o6: &mut [u8]) {
    let i: usize = thread_idx_x() as usize;
    o1[i] = a[i] ^ b[i];
    o2[i] = !a[i];
    o3[i] = p[i] ^ q[i];
    o4[i] = !p[i];
    o5[i] = a[i] << n[i];
    let mut x: u8 = a[i];
    x ^= b[i];
    x <<= n[i];
    o6[i] = x;
}
"""


def _buf(name: str, elem: Scalar, bits: list[int]) -> BufferArg:
    return BufferArg(name=name, elem=elem, len=len(bits), init=Values(tuple(bits)))


def _all_case() -> Case:
    zeros = [0, 0, 0, 0]
    args = [_buf("a", Scalar.U8, [0b1100, 0xFF, 0, 0x81]),
            _buf("b", Scalar.U8, [0b1010, 0x0F, 0, 0x01]),
            _buf("n", Scalar.U32, [1, 9, 0, 7]),
            _buf("p", Scalar.BOOL, [1, 1, 0, 0]), _buf("q", Scalar.BOOL, [1, 0, 1, 0]),
            _buf("o1", Scalar.U8, zeros), _buf("o2", Scalar.U8, zeros),
            _buf("o3", Scalar.BOOL, zeros), _buf("o4", Scalar.BOOL, zeros),
            _buf("o5", Scalar.U8, zeros), _buf("o6", Scalar.U8, zeros)]
    return Case(entry="k", kernel=ALL, launch=Launch(block=(4, 1, 1)), args=tuple(args))


# by hand: a ^ b, !a (0xff - a), p ^ q, !p, a << (n & 7) and (a ^ b) << (n & 7), all mod 2^8
EXPECTED = {"o1": [6, 0xF0, 0, 0x80], "o2": [0xF3, 0x00, 0xFF, 0x7E],
            "o3": [False, True, True, False], "o4": [False, False, True, True],
            "o5": [24, 0xFE, 0, 0x80], "o6": [12, 0xE0, 0, 0]}


def _ref_outputs(case: Case) -> dict[str, list[int | bool]]:
    ref = Registry().create("ref")
    got = run_case(case, [ref])[ref.label]
    assert isinstance(got, Ok), got
    return {name: np.asarray(got.outputs[name].values).tolist() for name in EXPECTED}


def test_the_hand_values_are_the_kernels() -> None:
    assert _ref_outputs(_all_case()) == EXPECTED


def test_equivalents_knock_out_xor_not_and_shl_and_compute_the_same() -> None:
    case = _all_case()
    out = knock_out(case, frozenset({"xor:int", "xor:bool", "shl:int"}), typed_op)
    assert out is not None
    body = out.kernel.split("{", 1)[1]
    assert "^" not in body and "<<" not in body and not re.search(r"!(?!=)", body), body
    assert _ref_outputs(out) == EXPECTED


def test_only_the_named_families_are_knocked_out() -> None:
    out = knock_out(_all_case(), frozenset({"xor:bool"}), typed_op)
    assert out is not None
    assert "a[i] ^ b[i]" in out.kernel and "!a[i]" in out.kernel and "<<" in out.kernel
    assert "p[i] ^ q[i]" not in out.kernel and "!p[i]" not in out.kernel
    assert _ref_outputs(out) == EXPECTED


def test_an_equivalent_using_a_broken_family_is_not_taken() -> None:
    # `!a` → `0xff - a` would add a `sub`: with `sub:int` broken too, `!a` becomes `a`
    out = knock_out(_all_case(), frozenset({"xor:int"}), typed_op,
                    avoid=frozenset({"sub:int"}))
    assert out is not None and "!a[i]" not in out.kernel
    got = _ref_outputs(out)
    assert got["o2"] == [0b1100, 0xFF, 0, 0x81]           # a itself
    assert got["o1"] == [0b1100, 0xFF, 0, 0x81]           # a ^ b → a


TWO = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], b: &[u32], out: &mut [u32]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] ^ b[i];
    let c: bool = !(a[i] > b[i]);
}
"""


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry()
    reg.load_plugin(MISCOMPILE)
    return reg


def test_an_unreduced_kernel_is_keyed_by_the_family_it_shows(registry: Registry) -> None:
    """The integer `^` is the module's first `xor`, so the seeded bug computes `a | b`
    (3 | 1 = 3, where 3 ^ 1 = 2); the `bool` `!` after it is broken alone as well (its own
    probe is the first `xor` of its kernel) but its value reaches no output. With the integer
    `^` knocked out the `!` becomes the first `xor` and still no output differs; with the
    `!` knocked out the `^` still is: the key is `xor:int` alone."""
    args = (_buf("a", Scalar.U32, [3, 5, 6, 0]), _buf("b", Scalar.U32, [1, 4, 2, 7]),
            _buf("out", Scalar.U32, [0, 0, 0, 0]))
    case = Case(entry="k", kernel=TWO, launch=Launch(block=(4, 1, 1)), args=args)
    ref, bad = registry.create("ref"), registry.create(SPEC)
    verdict = judge(case, run_case(case, [ref, bad]), load_policy("default"), case_module(case))
    (finding,) = verdict.findings
    keys = BugKeys([ref, bad], load_policy("default"))
    assert str(keys.key(finding.signature, case)) == f"wrong-code|{SPEC}|probe=xor:bool+xor:int"
    assert str(keys.key(finding.signature, case, attribute=True)) == \
        f"wrong-code|{SPEC}|probe=xor:int"


SIGNED_SHL = """use rgpu::*;

#[kernel]
pub fn k(x: &[i32], n: &[i64], o: &mut [i32]) {
    let i: usize = thread_idx_x() as usize;
    o[i] = x[i] << n[i];
}
"""


def test_the_shift_equivalent_masks_a_signed_wide_amount_like_shl() -> None:
    """By hand (`<<` masks the amount to `n & 31`, docs/language.md; values mod 2^32 read as
    i32): 1 << 31 = i32::MIN; 3 << 31 = 2^32 + 2^31 → i32::MIN; -1 << 1 = -2; 5 << 0 = 5."""
    minus_one = (1 << 64) - 1
    args = (_buf("x", Scalar.I32, [1, 3, (1 << 32) - 1, 5]),
            _buf("n", Scalar.I64, [minus_one, 31, 33, 0]),
            _buf("o", Scalar.I32, [0, 0, 0, 0]))
    case = Case(entry="k", kernel=SIGNED_SHL, launch=Launch(block=(4, 1, 1)), args=args)
    out = knock_out(case, frozenset({"shl:int"}), typed_op)
    assert out is not None and "<<" not in out.kernel and "rotate_left(n[i] as u32)" in out.kernel
    ref = Registry().create("ref")
    for kernel in (case, out):
        got = run_case(kernel, [ref])[ref.label]
        assert isinstance(got, Ok), got
        assert np.asarray(got.outputs["o"].values).tolist() == [-2**31, -2**31, -2, 5]
