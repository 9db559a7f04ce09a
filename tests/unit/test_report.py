"""The Markdown issue report (docs/design.md §2 "File")."""

from __future__ import annotations

import numpy as np

from oracles import Policy, ZeroSign, judge
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Random, ScalarArg, Values
from rgpu_fuzz.model.outcome import Buffer, Ok, Stats
from rgpu_fuzz.model.scalars import Scalar
from triage.report import collect_versions, render_report

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[f32], out: &mut [f32], n: u32) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] * 2.0f32;
}
"""
CASE = Case(entry="k", kernel=KERNEL, launch=Launch(grid=(1, 1, 1), block=(2, 1, 1)), args=(
    BufferArg(name="a", elem=Scalar.F32, len=2, init=Values((0x3F800000, 0x40000000))),
    BufferArg(name="out", elem=Scalar.F32, len=2, init=Fill(0)),
    ScalarArg(name="n", ty=Scalar.U32, bits=2)))


def f32(*bits: int) -> Ok:
    values = np.array(bits, dtype=np.uint32).view(np.float32)
    return Ok(outputs={"out": Buffer(Scalar.F32, values)},
              stats=Stats(seconds={"total": 0.25}, artefacts={"llvm-ir": "c0ffee" * 10}))


def report() -> str:
    outcomes = {"ref": f32(0x40000000, 0x40800000), "llvm-cpu:O3": f32(0x40000000, 0x40800001)}
    verdict = judge(CASE, outcomes, Policy(name="t", zero_sign=ZeroSign.STRICT))
    return render_report(CASE, outcomes, verdict, versions={"rgpu-fuzz": "0.1.0"})


def test_title_names_kind_and_pipelines() -> None:
    first = report().splitlines()[0]
    assert first == f"# wrong-code: ref, llvm-cpu:O3 (case {CASE.id})"


def test_contains_the_kernel_in_a_rust_block() -> None:
    text = report()
    assert "```rust\n" + KERNEL.rstrip() + "\n```" in text


def test_diff_row_has_values_and_hex_bits() -> None:
    text = report()
    assert "| `out` | 1 | 4.0 | `0x40800000` | 4.000000476837158 | `0x40800001` |" in text
    assert "| buffer | index | ref | bits | llvm-cpu:O3 | bits |" in text
    assert "1 in all" in text


def test_inputs_launch_outcomes_and_commands() -> None:
    text = report()
    assert "- `a: [f32; 2]` = [1.0, 2.0]" in text
    assert "- `out: [f32; 2]` filled with 0.0 (`0x00000000`)" in text
    assert "- `n: u32` = 2 (`0x00000002`)" in text
    assert "grid = [1, 1, 1], block = [2, 1, 1]" in text
    assert "| `llvm-cpu:O3` | ok | – | 0.2500 | llvm-ir `c0ffeec0ffeec0ff` |" in text
    assert f"rgpu-fuzz reproduce {CASE.id}\n" in text
    assert f"rgpu-fuzz run {CASE.id}.toml --pipelines ref,llvm-cpu:O3" in text
    assert "<details><summary>case file</summary>" in text
    assert f'id = "{CASE.id}"' in text
    assert "- rgpu-fuzz: 0.1.0" in text


def test_signature_pipes_are_escaped_only_in_tables() -> None:
    assert "- signature: `wrong-code|llvm-cpu:O3|ops=" in report()


def test_seeded_inputs_are_named_not_expanded() -> None:
    case = Case(entry="k", kernel=KERNEL, launch=Launch(), args=(
        BufferArg(name="a", elem=Scalar.U8, len=1000, init=Random(7)),))
    outcomes = {"ref": f32(0)}
    text = render_report(case, outcomes, judge(case, outcomes, Policy(name="t")), versions={})
    assert "- `a: [u8; 1000]` random, seed 7, dist `uniform`" in text
    assert text.startswith("# agree: ref")


def test_versions_are_collected() -> None:
    versions = collect_versions()
    assert {"rgpu-fuzz", "python", "numpy", "llvmlite", "rustc"} <= set(versions)
