"""The oracle's one unforgivable error is `agree` for different outputs.

For random generated cases (Hypothesis drives the grammar generator) a pipeline that runs
the reference interpreter and flips one bit of one output element must never be judged to
agree: not against `ref` (plain or with options), and not against an identical pipeline
when no arbiter runs. The bit is chosen so that the flipped value is different under the
comparison rules of docs/design.md §5 (a NaN flipped to another NaN is not a difference; a zero
flipped to the other zero is compared with `zero_sign = "strict"`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from generators import cases
from oracles import Policy, ZeroSign, judge
from rgpu_fuzz.lang.features import case_features, case_module
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Buffer, Ok
from rgpu_fuzz.model.scalars import Scalar, from_bits
from rgpu_fuzz.pipelines.ref import RefPipeline

STRICT = Policy(name="strict", zero_sign=ZeroSign.STRICT)


def flip_one_bit(ok: Ok, draw: st.DrawFn) -> Ok:
    """`ok` with one bit of one element flipped; for a NaN, a bit of its exponent (so it
    is no longer NaN), since NaN payloads are unspecified and compare equal."""
    names = sorted(n for n, b in ok.outputs.items() if len(b.values))
    assume(names)
    name = draw(st.sampled_from(names))
    buf = ok.outputs[name]
    i = draw(st.integers(0, len(buf.values) - 1))
    bits = buf.bits()
    width = 1 if buf.ty is Scalar.BOOL else buf.ty.bits
    if buf.ty.is_float and np.isnan(buf.values[i]):
        exponent_low = {32: 23, 64: 52}[width]
        bit = draw(st.integers(exponent_low, width - 2))
    else:
        bit = draw(st.integers(0, width - 1))
    bits[i] ^= 1 << bit
    outputs = dict(ok.outputs)
    outputs[name] = Buffer(buf.ty, from_bits(bits, buf.ty))
    return replace(ok, outputs=outputs)


REF = RefPipeline("ref:steps=200000")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(), st.data())
def test_one_flipped_bit_is_never_agree(case: Case, data: st.DataObject) -> None:
    good = REF.run(case, case_features(case))
    assume(isinstance(good, Ok))
    assert isinstance(good, Ok)
    bad = flip_one_bit(good, data.draw)
    module = case_module(case)
    for outcomes in ({"ref": good, "flipped": bad},
                     {"ref:steps=200000": good, "flipped:O0": bad},      # arbiter by name
                     {"flipped": bad, "ref:steps=5": good},               # arbiter not first
                     {"interp-a": good, "flipped": bad},                  # no arbiter at all
                     {"interp-a": good, "interp-b": good, "flipped": bad}):
        verdict = judge(case, outcomes, STRICT, module)
        assert not verdict.agree, outcomes.keys()
        assert any(p.startswith("flipped") for f in verdict.findings for p in f.pipelines)
