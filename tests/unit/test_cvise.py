"""C-Vise wiring (triage/cvise.py): the interestingness script must mean exactly what our
reducer's `signature_predicate` means, and a short C-Vise run must hand back a kernel that
still shows the seeded bug. Skipped with a reason where C-Vise is not installed."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from oracles import Signature, load_policy
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.registry import Registry
from triage.cvise import (
    KERNEL_FILE,
    cvise_available,
    reduce_with_cvise,
    write_interestingness_test,
)
from triage.reduce import signature_predicate

PLUGIN = seeded_plugin("miscompile.py")
PIPELINES = ("ref", "llvm-cpu-xor2or")
SIGNATURE = Signature.parse("wrong-code|llvm-cpu-xor2or|ops=^")

# One xor that sees overlapping bits (so `or` differs) plus dead weight C-Vise can delete.
KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    let unused: u32 = a[t] + 1u32;
    let also_unused: u32 = unused * 3u32;
    out[t] = a[t] ^ 0x0fu32;
}
"""
CASE = Case(entry="k", kernel=KERNEL, launch=Launch(block=(4, 1, 1)), args=(
    BufferArg(name="a", elem=Scalar.U32, len=4, init=Values((0xFF, 0x01, 0x10, 0x0F))),
    BufferArg(name="out", elem=Scalar.U32, len=4, init=Fill(0))))


def test_unavailable_is_a_clean_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    got = reduce_with_cvise(CASE, SIGNATURE, PIPELINES, load_policy("default"), budget_s=1,
                            plugins=[PLUGIN])
    assert not got.available and "not installed" in got.detail
    assert got.kernel == KERNEL


def test_script_exits_0_iff_the_predicate_holds(tmp_path: Path) -> None:
    script = write_interestingness_test(tmp_path, CASE, SIGNATURE, PIPELINES,
                                        load_policy("default"), plugins=[PLUGIN])
    kernel = tmp_path / KERNEL_FILE

    def run_with(text: str) -> int:
        kernel.write_text(text, encoding="utf-8")
        return subprocess.run([str(script)], cwd=tmp_path, timeout=120).returncode

    assert run_with(KERNEL) == 0
    assert run_with("") == 1
    assert run_with(KERNEL.replace("^", "&")) == 1        # the bug is gone: not interesting
    assert run_with(KERNEL.replace("{", "(", 1)) == 1      # does not parse


@pytest.mark.skipif(not cvise_available(), reason="cvise not installed (apt-get install cvise)")
def test_short_cvise_run_keeps_the_bug() -> None:
    policy = load_policy("default")
    got = reduce_with_cvise(CASE, SIGNATURE, PIPELINES, policy, budget_s=8,
                            plugins=[PLUGIN])
    assert got.available and got.interesting and got.harness_errors == 0, got.detail
    assert got.tokens_after <= got.tokens_before
    registry = Registry()
    registry.load_plugin(PLUGIN)
    holds = signature_predicate(SIGNATURE, PIPELINES, policy, registry=registry)
    assert holds(replace(CASE, kernel=got.kernel))
