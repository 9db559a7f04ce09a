"""The stored expected values still come from the real rustc: rerun it on a few cases.

Also pins the host-program text transformation, which needs no rustc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.pipelines.rustc_program import (
    compile_and_run,
    find_rustc,
    kernel_params,
    rust_kernel_text,
    uses_barrier,
)
from tests.semantics.expected_values import (
    CASES,
    case_names,
    load_expected,
    output_mismatches,
)

# One table of operators, one barrier kernel run on OS threads, one trap.
REPRESENTATIVE = ("int_methods_i32", "shared_reduce", "trap_div_overflow")


def test_every_case_has_current_expected_values() -> None:
    for name in case_names():
        doc = load_expected(name)
        assert doc["case_id"] == load(CASES / f"{name}.toml").id, (
            f"{name}: the case changed; run tests/semantics/regen_expected.py")
        assert ("outputs" in doc) != ("trap" in doc)


@pytest.mark.rustc
@pytest.mark.slow
@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_rustc_still_computes_the_stored_values(name: str, tmp_path: Path) -> None:
    if find_rustc() is None:
        pytest.skip("rustc not found (put it on PATH or set RGPU_RUSTC)")
    case = load(CASES / f"{name}.toml")
    want = load_expected(name)
    got = compile_and_run(case, opt_level=want["opt_level"], workdir=tmp_path)
    assert got.compile_error is None, got.log
    assert got.run_error is None, got.log
    if "trap" in want:
        assert got.trap is not None and str(got.trap) == want["trap"]
    else:
        assert got.outputs is not None
        assert output_mismatches(case, got.outputs, want["outputs"]) == []


def test_attributes_are_removed_and_lines_kept() -> None:
    src = ("use rgpu::*;\n#[shared] static mut T: [u32; 4] = [0u32; 4];\n"
           "fn f(a: u32, b: u32) -> u32 { a + b } // #[kernel] in a comment\n"
           "#[kernel] pub fn k(inp: &[u32], out: &mut [u32], n: u32) { sync_threads(); }\n")
    text = rust_kernel_text(src)
    assert "#[" not in text
    assert "pub fn k(inp: &[u32]" in text and "static mut T" in text
    assert text.count("\n") == src.count("\n")
    assert uses_barrier(src)
    assert [(p.name, str(p.ty), p.kind) for p in kernel_params(src, "k")] == [
        ("inp", "u32", "slice"), ("out", "u32", "mut-slice"), ("n", "u32", "scalar")]
