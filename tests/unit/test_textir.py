"""`lower.textir` writes the IR text llvmlite's builder writes, byte for byte.

The expected text is llvmlite 0.50's own `str(module)` (`llvmlite.ir`, an independent
implementation of the same builder API) for the same lowering calls: each side runs in a
child process with `RGPU_LOWER_IR` choosing the builder (`lower.irapi` chooses once per
process). Kernels: the conformance kernels (`tests/semantics/cases`), the corpus, and
generated cases of the `default`, `barriers` and `floats` profiles; targets: the host (the
IR `llvm-cpu` optimises at every level: the level is not an input of the lowering), amdgcn
and nvptx. The default run checks 30 kernels; the slow one all conformance kernels, the
corpus and 500 generated cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generators import SeededChoices, generate, load_profile
from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Case
from tests.semantics.expected_values import CASES, case_names

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("host", "amdgcn", "nvptx")


def _generated(profile: str, first: int, n: int) -> list[Case]:
    p = load_profile(profile)
    return [generate(SeededChoices(s), p, seed=s) for s in range(first, first + n)]


def _lower(backend: str, jobs: list[dict[str, str]]) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "tests.textir_lowering"], cwd=ROOT,
                         input=json.dumps(jobs), capture_output=True, text=True, check=False,
                         env=dict(os.environ, RGPU_LOWER_IR=backend))
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    builder = {"text": "rgpu_fuzz.lower.textir.builder", "llvmlite": "llvmlite.ir.builder"}[backend]
    assert (got["backend"], got["builder"]) == (backend, builder)
    return got["texts"]  # type: ignore[no-any-return]


def _assert_identical(cases: list[Case]) -> None:
    jobs = [{"kernel": c.kernel, "entry": c.entry, "target": t} for c in cases
            for t in TARGETS]
    text, llvmlite = _lower("text", jobs), _lower("llvmlite", jobs)
    lowered = sum(not t.startswith("LowerError") for t in llvmlite)
    assert lowered >= len(jobs) * 9 // 10, "most kernels lower on every target"
    differ = [(j["entry"], j["target"], j["kernel"]) for j, a, b
              in zip(jobs, text, llvmlite, strict=True) if a != b]
    assert differ == []


def _without_atomics(names: list[str]) -> list[str]:
    """The conformance cases llvmlite's builder can lower: it writes no `syncscope`, so the
    lowering refuses atomics there (docs/design.md: the text IR builder is the default)."""
    return [n for n in names
            if "Atomic" not in (k := casefile.load(CASES / f"{n}.toml").kernel)
            and "fence(" not in k]


def test_text_equals_llvmlite_on_30_kernels() -> None:
    names = _without_atomics(case_names())
    cases = [casefile.load(CASES / f"{n}.toml") for n in names[::len(names) // 8][:8]]
    cases += [casefile.load(p) for p in sorted((ROOT / "corpus").glob("*.toml"))][:4]
    cases += (_generated("default", 5_550_000, 6) + _generated("barriers", 1_000, 6)
              + _generated("floats", 2_000, 6))
    assert len(cases) == 30
    _assert_identical(cases)


@pytest.mark.slow
def test_text_equals_llvmlite_on_the_conformance_kernels_corpus_and_500_cases() -> None:
    cases = [casefile.load(CASES / f"{n}.toml") for n in _without_atomics(case_names())]
    cases += [casefile.load(p) for p in sorted((ROOT / "corpus").glob("*.toml"))]
    cases += (_generated("default", 5_550_000, 250) + _generated("barriers", 1_000, 150)
              + _generated("floats", 2_000, 100))
    _assert_identical(cases)


def _build(ir: Any) -> str:
    """One module through the builder API of `ir` (llvmlite.ir or textir), with names and
    operations the lowering rarely or never produces: colliding and odd names, every
    arithmetic, comparison and cast method, atomics, metadata with escaped characters."""
    m = ir.Module(name="odd")
    m.triple = "x86_64-unknown-linux-gnu"
    i32, i1, f32, f64 = ir.IntType(32), ir.IntType(1), ir.FloatType(), ir.DoubleType()
    ptr, gptr = ir.PointerType(), ir.PointerType(addrspace=1)
    g = ir.GlobalVariable(m, ir.ArrayType(i32, 4), name="g.1", addrspace=3)
    g.linkage = "internal"
    g.initializer = ir.Constant(ir.ArrayType(i32, 4), ir.Undefined)
    g.align = 16
    g.type = ir.PointerType(addrspace=3)
    decl = ir.Function(m, ir.FunctionType(f32, [f32, f32]), name="llvm.minnum.f32")
    fn = ir.Function(m, ir.FunctionType(i32, [i32, i32, f32, f64, ptr, gptr]), name="f")
    fn.linkage = "internal"
    fn.calling_convention = "fastcc"
    for attr in ("noinline", "cold"):
        fn.attributes.add(attr)
    set.add(fn.attributes, '"denormal-fp-math"="ieee,ieee"')
    a, c, x, y, p, q = fn.args
    a.name, c.name, x.name = "a", "a", 'we"ird\\'
    p.add_attribute("noalias")
    blocks = [fn.append_basic_block(n) for n in ("entry", "ok", "ok", "9x", 'q"t', "")]
    b = ir.IRBuilder(blocks[0])
    v = a
    for op in ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "and_", "or_", "xor",
               "shl", "lshr", "ashr"):
        v = getattr(b, op)(v, c)
    w = x
    for op in ("fadd", "fsub", "fmul", "fdiv", "frem"):
        w = getattr(b, op)(w, x)
    w = b.fneg(b.call(decl, [w, ir.Constant(f32, None)]))
    flags = [b.icmp_signed(o, v, a) for o in ("==", "!=", "<", "<=", ">", ">=")]
    flags += [b.icmp_unsigned(o, v, ir.Constant(i32, 7)) for o in ("<", ">=")]
    flags += [b.fcmp_ordered(o, w, x) for o in ("==", "<", "ord", "uno")]
    flags += [b.fcmp_unordered(o, w, x) for o in ("!=", ">", "uno")]
    v = b.select(flags[3], v, ir.Constant(i32, -5))
    d = b.fpext(w, f64)
    d = b.fadd(d, y)
    w = b.fptrunc(d, f32)
    v = b.add(v, b.bitcast(w, i32))
    v = b.add(v, b.trunc(b.sext(v, ir.IntType(64)), i32))
    v = b.add(v, b.zext(flags[-1], i32))
    w = b.fadd(b.sitofp(v, f32), b.uitofp(v, f32))
    v = b.add(v, b.zext(b.trunc(v, i32), i32))  # same type: no instruction
    at = b.gep(p, [ir.Constant(ir.IntType(64), 2), v], source_etype=i32)
    b.store(b.load(at, typ=i32), at)
    pair = b.cmpxchg(q, ir.Constant(i32, 0), v, "monotonic", "monotonic")
    b.fence("release", "workgroup")
    b.fence("acquire")
    b.cbranch(b.extract_value(pair, 1), blocks[1], blocks[2])
    for blk in blocks[1:5]:
        b.position_at_end(blk)
        b.branch(blocks[5])
    b.position_at_end(blocks[5])
    with b.goto_entry_block():
        b.position_at_start(blocks[0])
        b.load(p, typ=ir.IntType(8))
    b.ret(v)
    void = ir.Function(m, ir.FunctionType(ir.VoidType(), []), name="v")
    b = ir.IRBuilder(void.append_basic_block())
    b.call(void, [])
    b.unreachable()
    m.add_named_metadata("flags", [ir.Constant(i32, 1), "a \"b\"\n\\", ir.Constant(i1, 0)])
    m.add_named_metadata("flags", [ir.Constant(i32, 1), "a \"b\"\n\\", ir.Constant(i1, 0)])
    m.add_named_metadata("other", ["x"])
    return str(m)


def test_the_builder_api_writes_what_llvmlite_writes() -> None:
    import llvmlite.ir

    from rgpu_fuzz.lower import textir

    assert _build(textir) == _build(llvmlite.ir)


def test_name_scope_dedups_as_llvmlite_does() -> None:
    import random

    from llvmlite.ir._utils import NameScope

    from rgpu_fuzz.lower.textir import NameScope as TextScope

    rng = random.Random(7)
    pool = ["", "", "", "a", "a.1", "a.2", ".1", ".3", "ok", "ok.1", "x.1.1"]
    ours, theirs = TextScope(), NameScope()
    for _ in range(3000):
        name = rng.choice(pool)
        assert ours.register(name) == theirs.register(name, deduplicate=True), name


def test_an_unknown_builder_is_one_line_and_exit_2() -> None:
    out = subprocess.run([sys.executable, "-c", "import rgpu_fuzz.lower"], cwd=ROOT,
                         capture_output=True, text=True, check=False,
                         env=dict(os.environ, RGPU_LOWER_IR="llvm"))
    assert (out.returncode, out.stderr) == (
        2, "rgpu-fuzz: error: RGPU_LOWER_IR=llvm: expected one of text, llvmlite\n")
