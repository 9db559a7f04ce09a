"""Atomics in the language: syntax, printing and typing (docs/language.md "Atomics").

The ordering rules are rustc's `invalid_atomic_ordering` lint; the positions below are the
ones rustc 1.95 printed for the same program on the host, and
`test_ordering_rules_match_rustc` checks them against rustc again where it is installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.features import walk
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.lang.source import DiagnosticError
from rgpu_fuzz.lang.types import ArrayTy, AtomicTy, SliceTy
from rgpu_fuzz.model.scalars import Scalar

GOOD = """use rgpu::*;

#[shared]
static S: [AtomicU32; 64] = [const { AtomicU32::new(0) }; 64];

#[kernel]
pub fn k(a: &[AtomicU32], b: &[AtomicI64], c: &[AtomicU64], d: &[AtomicI32], out: &mut [u32]) {
    let t = thread_idx_x() as usize;
    S[t].store(0, Ordering::Relaxed);
    sync_threads();
    let old = a[0].fetch_add(1, Ordering::AcqRel);
    b[t].fetch_min(-3, Ordering::SeqCst);
    c[t].fetch_xor(1, Ordering::Release);
    d[t].swap(-1, Ordering::Acquire);
    if a[1].compare_exchange(0, t as u32 + 1, Ordering::Relaxed, Ordering::SeqCst).is_err() {
        out[t] = old;
    }
    fence(Ordering::AcqRel);
    out[t] += S[0].load(Ordering::Acquire) + a.len() as u32 + S.len() as u32;
}
"""

BAD_ORDERINGS = """use rgpu::*;

#[kernel]
pub fn k(a: &[AtomicU32], out: &mut [u32]) {
    let x = a[0].load(Ordering::Release);
    let y = a[0].load(Ordering::AcqRel);
    a[0].store(1, Ordering::Acquire);
    a[0].store(1, Ordering::AcqRel);
    let z = a[0].compare_exchange(0, 1, Ordering::SeqCst, Ordering::Release).is_ok();
    let w = a[0].compare_exchange(0, 1, Ordering::SeqCst, Ordering::AcqRel).is_ok();
    let v = a[0].compare_exchange(0, 1, Ordering::Relaxed, Ordering::SeqCst).is_ok();
    fence(Ordering::Relaxed);
    out[0] = x + y + z as u32 + w as u32 + v as u32;
}
"""
RUSTC_POSITIONS = [(5, 23), (6, 23), (7, 19), (8, 19), (9, 59), (10, 59), (12, 11)]
"""Where rustc 1.95 reports the seven `invalid_atomic_ordering` errors of BAD_ORDERINGS."""


def errors(src: str) -> list[tuple[int, int, str]]:
    with pytest.raises(DiagnosticError) as e:
        check_source(src)
    return [(d.span.line, d.span.col, d.message) for d in e.value.diagnostics]


def test_round_trip_and_types() -> None:
    m = parse(GOOD)
    assert print_module(m) == GOOD
    assert parse(print_module(m)) == m
    checked = check_source(GOOD)
    kernel = checked.fns["k"]
    assert checked.shared["S"] == ArrayTy(Scalar.U32, 64, atomic=True)
    receivers = [n.receiver for n in walk(kernel) if isinstance(n, ast.MethodCall)
                 and isinstance(n.receiver, ast.Index)]
    assert {str(r.ty) for r in receivers} == {"AtomicU32", "AtomicI64", "AtomicU64",
                                               "AtomicI32"}
    assert all(isinstance(r.ty, AtomicTy) for r in receivers)
    slices = [p.ty for p in kernel.params if isinstance(p.ty, ast.SliceType)]
    assert [s.atomic for s in slices] == [True, True, True, True, False]
    assert str(SliceTy(Scalar.U32, True, True)) == "&[AtomicU32]"


def test_ordering_rules_at_rustcs_positions() -> None:
    got = errors(BAD_ORDERINGS)
    assert [(line, col) for line, col, _ in got] == RUSTC_POSITIONS
    assert [m for _, _, m in got] == [
        "atomic loads cannot have `Release` or `AcqRel` ordering"] * 2 + [
        "atomic stores cannot have `Acquire` or `AcqRel` ordering"] * 2 + [
        "`compare_exchange`'s failure ordering may not be `Release` or `AcqRel`, since a "
        "failed `compare_exchange` does not result in a write"] * 2 + [
        "memory fences cannot have `Relaxed` ordering"]


@pytest.mark.skipif(shutil.which("rustc") is None, reason="needs rustc")
def test_ordering_rules_match_rustc(tmp_path: Path) -> None:
    """The same program as real Rust (std's atomics in place of the prelude, on the same
    line): rustc reports an error at exactly the positions our checker does."""
    src = BAD_ORDERINGS.replace("use rgpu::*;", "use std::sync::atomic::*;").replace(
        "#[kernel]", "")
    path = tmp_path / "bad.rs"
    path.write_text(src)
    run = subprocess.run(["rustc", "--crate-type=lib", "--edition", "2021", str(path),
                          "-o", str(tmp_path / "bad.rlib")],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode != 0
    where = [(int(a), int(b)) for a, b in re.findall(r"--> .*bad\.rs:(\d+):(\d+)", run.stderr)]
    assert where == RUSTC_POSITIONS, run.stderr


@pytest.mark.parametrize(("body", "message", "line", "col"), [
    ("a[0] = 1;", "cannot assign to an element of `&[AtomicU32]`", 5, 5),
    ("let x = a[0] + 1;", "`AtomicU32` is not a value", 5, 13),
    ("let x = Ordering::Relaxed;", "an `Ordering` is only an argument", 5, 13),
    ("let x = a[0].compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst);",
     "the `Result` of `compare_exchange` is used only through", 5, 13),
    ("a[0].fetch_add(1u64, Ordering::SeqCst);", "mismatched types: expected `u32`", 5, 20),
    ("a[0].fetch_add(1, 2u32);", "mismatched types: expected `Ordering`", 5, 23),
    ("a[0].fetch_nand(1, Ordering::SeqCst);", "no method named `fetch_nand`", 5, 5),
    ("a[0].load();", "this method takes 1 argument but 0 arguments were supplied", 5, 5),
])
def test_atomic_elements_are_not_plain_values(body: str, message: str, line: int,
                                              col: int) -> None:
    """A plain access to an atomic element is a type error (rustc: E0308/E0369/E0070), so a
    plain access can never race with an atomic one on the same element."""
    src = f"use rgpu::*;\n\n#[kernel]\npub fn k(a: &[AtomicU32]) {{\n    {body}\n}}\n"
    got = errors(src)
    assert got[0][:2] == (line, col) and message in got[0][2], got


@pytest.mark.parametrize(("text", "message"), [
    ("#[kernel]\npub fn k(a: &mut [AtomicU32]) {}",
     "an atomic buffer is `&[Atomic..]`, not `&mut`"),
    ("#[shared]\nstatic mut S: [AtomicU32; 4] = [const { AtomicU32::new(0) }; 4];",
     "a `#[shared]` static of atomics is `static`, not `static mut`"),
    ("#[shared]\nstatic S: [AtomicU32; 4] = [const { AtomicI32::new(0) }; 4];",
     "expected `AtomicU32::new(..)`"),
    ("#[shared]\nstatic S: [u32; 4] = [0u32; 4];", "expected `mut`"),
    ("#[kernel]\npub fn k() { let x = Ordering::Weak; }", "no variant named `Weak`"),
])
def test_atomic_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(DiagnosticError) as e:
        parse("use rgpu::*;\n\n" + text + "\n")
    assert message in str(e.value)


def test_shared_atomics_need_no_unsafe_and_length_must_match() -> None:
    ok = """use rgpu::*;

#[shared]
static S: [AtomicI32; 8] = [const { AtomicI32::new(-1) }; 8];

#[kernel]
pub fn k() {
    S[0].fetch_add(1, Ordering::Relaxed);
}
"""
    check_source(ok)
    bad = ok.replace("; 8] = [const", "; 8] = [const").replace("}; 8]", "}; 4]")
    assert "expected an array with a size of 8, found one with a size of 4" in \
        errors(bad)[0][2]
