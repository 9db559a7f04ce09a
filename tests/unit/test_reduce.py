"""The reducer (docs/design.md §2 "Reduce") with synthetic interestingness tests on a hand-written
kernel: it shrinks to a few lines, only ever accepts kernels that check, is deterministic
(also in parallel), and never tests one candidate twice."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.case import BufferArg, Case, Dist, Fill, Launch, Random, ScalarArg, Values
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.ref import RefPipeline
from triage.reduce import case_key, measure, reduce_case

KERNEL = """\
use rgpu::*;

const SCALE: u32 = 3u32;

fn mix(x: u32, y: u32) -> u32 {
    x.rotate_left(5u32) ^ y.wrapping_mul(0x9e37_79b9u32)
}

fn unused(z: i32) -> i32 {
    z + 1i32
}

#[kernel]
pub fn k(a: &[u32], b: &[f32], out: &mut [u32], fout: &mut [f32], n: u32) {
    let tid: u32 = thread_idx_x();
    let gid: u32 = block_idx_x() * block_dim_x() + tid;
    let mut acc: u32 = 7u32;
    for i in 0u32..4u32 {
        acc = acc + mix(a[((gid + i) as usize) % a.len()], i);
    }
    let mut f: f32 = b[(gid as usize) % b.len()];
    if f > 0.5f32 {
        f = f * 2.0f32;
    } else {
        f = f - 1.25f32;
    }
    let mut j: u32 = 0u32;
    while j < 3u32 {
        acc ^= j;
        j += 1u32;
    }
    let m: u32 = (acc | 1u32) * SCALE;
    if gid < n {
        out[gid as usize] = m * 5u32;
        fout[gid as usize] = f.mul_add(2.0f32, -0.5f32);
    }
}
"""

CASE = Case(
    entry="k", kernel=KERNEL, launch=Launch(grid=(2, 1, 1), block=(4, 1, 1)),
    args=(
        BufferArg(name="a", elem=Scalar.U32, len=16, init=Random(7, Dist.EDGES)),
        BufferArg(name="b", elem=Scalar.F32, len=8, init=Random(8)),
        BufferArg(name="out", elem=Scalar.U32, len=8, init=Fill(0)),
        BufferArg(name="fout", elem=Scalar.F32, len=8, init=Fill(0)),
        ScalarArg(name="n", ty=Scalar.U32, bits=8),
    ),
)

REF = RefPipeline(PipelineSpec.parse("ref:steps=20000"))  # loops cut short: fast tests


def _writes_product_to_out(module: ast.Module) -> bool:
    return any(isinstance(n, ast.Assign) and isinstance(n.target, ast.Index)
               and isinstance(n.target.base, ast.Name) and n.target.base.ident == "out"
               and any(isinstance(m, ast.Binary) and m.op is ast.BinOp.MUL for m in walk(n.value))
               for n in walk(module))


class Recorder:
    """An interestingness test that records every case it is asked about."""

    def __init__(self, test: Callable[[Case], bool]) -> None:
        self.test = test
        self.seen: list[Case] = []
        self._lock = threading.Lock()

    def __call__(self, case: Case) -> bool:
        with self._lock:
            self.seen.append(case)
        return self.test(case)


def odd_product(case: Case) -> bool:
    """A `*` whose result is written to `out`, and ref's `out[0]` is odd."""
    if not _writes_product_to_out(parse(case.kernel, "<t>")):
        return False
    outcome = REF.run(case)
    return (isinstance(outcome, Ok) and "out" in outcome.outputs
            and len(outcome.outputs["out"].values) > 0
            and int(outcome.outputs["out"].values[0]) % 2 == 1)


def has_wrapping_mul(case: Case) -> bool:
    return "wrapping_mul" in case.kernel and isinstance(REF.run(case), Ok)


def test_the_example_is_interesting() -> None:
    assert len(KERNEL.splitlines()) >= 35
    assert odd_product(CASE) and has_wrapping_mul(CASE)


def test_reduces_to_a_few_lines_and_every_tested_kernel_checks() -> None:
    test = Recorder(odd_product)
    accepted: list[Case] = []
    r = reduce_case(CASE, test, budget_s=60, on_accept=lambda c, _p: accepted.append(c))
    assert r.interesting_at_start and not r.out_of_time
    assert r.lines_after <= 6, r.case.kernel
    assert r.size_after < r.size_before
    assert odd_product(r.case)
    # the launch, buffers and inputs went down too
    assert r.case.launch == Launch()
    assert all(a.len == 1 for a in r.case.args if isinstance(a, BufferArg))
    assert [a.name for a in r.case.args] == ["out"]
    for case in test.seen + accepted:
        check_source(case.kernel)
    sizes = [measure(c) for c in accepted]
    assert all(b < a for a, b in itertools.pairwise(sizes))
    assert r.accepted == len(accepted) and r.tried >= r.accepted
    assert {p.name for p in r.passes if p.accepted} >= {"shrink-launch", "remove-stmts"}
    assert r.case.provenance.parent == CASE.id


def test_wrapping_mul_is_kept_through_rewrites() -> None:
    r = reduce_case(CASE, has_wrapping_mul, budget_s=60)
    assert "wrapping_mul" in r.case.kernel
    assert r.lines_after <= 8, r.case.kernel
    assert "mix" not in r.case.kernel  # inlined or renamed


def test_result_is_deterministic_and_independent_of_jobs() -> None:
    one = reduce_case(CASE, odd_product, budget_s=60)
    again = reduce_case(CASE, odd_product, budget_s=60)
    parallel = reduce_case(CASE, odd_product, budget_s=60, jobs=4)
    assert case_key(one.case) == case_key(again.case) == case_key(parallel.case)
    assert one.case.kernel == parallel.case.kernel


def test_no_candidate_is_tested_twice_and_the_cache_is_reused() -> None:
    cache: dict[str, bool] = {}
    test = Recorder(odd_product)
    first = reduce_case(CASE, test, budget_s=60, cache=cache)
    keys = [case_key(c) for c in test.seen]
    assert len(keys) == len(set(keys))
    assert first.cache_hits > 0
    again = Recorder(odd_product)
    second = reduce_case(CASE, again, budget_s=60, cache=cache)
    assert again.seen == []
    assert second.case.kernel == first.case.kernel


def test_an_uninteresting_case_is_returned_unchanged() -> None:
    r = reduce_case(CASE, lambda c: False, budget_s=10)
    assert not r.interesting_at_start
    assert r.case is CASE and r.tried == 0


def test_out_of_budget_returns_the_best_so_far() -> None:
    r = reduce_case(CASE, odd_product, budget_s=0.0)
    assert r.out_of_time
    assert r.case == CASE


@pytest.mark.parametrize("before, after", [
    (Random(1), Values((5,) * 4)),
    (Values((5, 0, 0, 0)), Values((1, 0, 0, 0))),
    (Values((1, 0, 0, 0)), Fill(0)),
])
def test_inputs_order_random_above_values_above_zeros(before: object, after: object) -> None:
    def case(init: object) -> Case:
        arg = BufferArg(name="out", elem=Scalar.U32, len=4, init=init)  # type: ignore[arg-type]
        return Case(entry="k", kernel=KERNEL, launch=Launch(), args=(arg,))

    assert measure(case(after)) < measure(case(before))
