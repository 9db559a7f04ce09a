"""The atheris harnesses in `fuzz/`, driven directly (atheris itself is optional).

The front-end harness gets a few hand-made inputs and a seeded stream of random bytes and
mutated kernels; none may crash, and no crash file may appear. The differential harness
gets a few seeded byte strings with `ref` only, and fake pipelines show that a finding or an
exception saves the case before it is raised.
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzz import differential, frontend
from generators import from_seed
from oracles import load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.source import NO_SPAN, Diagnostic, DiagnosticError, SourceFile
from rgpu_fuzz.model.outcome import Ok, Rejected, RejectReason, Trap, TrapKind
from rgpu_fuzz.pipelines.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
HAS_ATHERIS = importlib.util.find_spec("atheris") is not None


@pytest.fixture
def crash_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "crashes"
    monkeypatch.setenv(frontend.CRASH_DIR_ENV, str(folder))
    return folder


def in_hole(hole: str, text: str) -> bytes:
    """The input that splices `text` into the skeleton's `hole`."""
    return bytes([frontend.HOLES.index(hole)]) + text.encode()


# ---------------------------------------------------------------- front end


def test_skeleton_is_a_valid_kernel_with_every_hole() -> None:
    check_source(frontend.SKELETON.format(**frontend.HOLE_DEFAULTS))
    for hole in frontend.HOLES:
        assert "{" + hole + "}" in frontend.SKELETON


def test_splice_fills_the_hole_named_by_the_first_byte() -> None:
    text = frontend.splice(in_hole("expr", "7u32 + 1u32"))
    assert "let v: u32 = 7u32 + 1u32;" in text
    assert frontend.splice(b"") == frontend.SKELETON.format(**frontend.HOLE_DEFAULTS)


HANDMADE: dict[str, bytes] = {
    "empty": b"",
    "nul": b"\x00",
    "invalid-utf8": b"\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc",
    "all-bytes": bytes(range(256)),
    "open-parens": b"(" * 5000,
    "close-braces": b"}" * 5000,
    "unterminated-comment": b"/* " * 200,
    "nested-comments": b"/*" * 300 + b"*/" * 300,
    "huge-literal": b"\x03" + b"9" * 2000 + b"u32",
    "float-overflow": in_hole("expr", "(1e400f64 as u32)"),
    "unicode-ident": in_hole("stmt", "let é: u32 = 1u32;"),
    "tab-and-crlf": in_hole("stmt", "\tlet q: u32 =\r\n 1u32;\r\n"),
    "trailing-garbage": frontend.SKELETON.format(**frontend.HOLE_DEFAULTS).encode() + b"\x80",
    "moderate-nesting": in_hole("expr", "(" * 100 + "1u32" + ")" * 100),
}


@pytest.mark.parametrize("data", HANDMADE.values(), ids=HANDMADE.keys())
def test_handmade_inputs(data: bytes, crash_dir: Path) -> None:
    frontend.TestOneInput(data)
    assert not crash_dir.exists()


DEEP: dict[str, bytes] = {
    "open-braces": b"{" * 5000,  # `{` selects the expression hole
    "parens": in_hole("expr", "(" * 5000 + "1u32" + ")" * 5000),
    "negations": in_hole("expr", "-" * 5000 + "1u32"),
    "blocks": in_hole("stmt", "{" * 5000 + "}" * 5000),
    "ifs": in_hole("stmt", "if true {" * 2000 + "}" * 2000),
    "long-sum": in_hole("expr", "1u32 + " * 5000 + "1u32"),
}


@pytest.mark.parametrize("data", DEEP.values(), ids=DEEP.keys())
def test_deep_nesting_is_a_diagnostic_not_a_recursion_error(data: bytes, crash_dir: Path,
                                                          ) -> None:
    try:
        frontend.TestOneInput(data)
    finally:
        # Whatever happens, a crash must have left its reproducer behind first.
        assert not crash_dir.exists() or len(list(crash_dir.glob("*.rs"))) == 1
    assert not crash_dir.exists()


_ATOMS = ("(", ")", "{", "}", "[", "]", ";", ",", " as ", "u32", "f64", "i8", "usize",
          "0x", "1u32", "-", "!", "<<", ">>=", "==", "let ", "mut ", "if ", "else ", "for ",
          " in ", "..", "unsafe ", "fn ", "#[kernel]", "#[shared]", "pub ", "const ",
          "static ", "&mut [", "sync_threads();", "return", "while ", "loop", "break",
          "f32::from_bits(", ".len()", ".wrapping_add(", "1e400f64", "0.5f32", "'", '"',
          "/*", "*/", "//", "\n", "\t", "é", "\x00", "𝕏", "99999999999999999999999u64",
          "_", "r#", "thread_idx_x()", "TILE", "N")


def _mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 6)):
        i = rng.randint(0, len(text))
        j = min(len(text), i + rng.randint(0, 20))
        match rng.randrange(4):
            case 0:
                text = text[:i] + text[j:]
            case 1:
                text = text[:i] + rng.choice(_ATOMS) + text[i:]
            case 2:
                k = rng.randint(0, len(text))
                text = text[:i] + text[k:k + rng.randint(1, 30)] + text[i:]
            case _:
                text = text[:i] + chr(rng.randrange(32, 127)) + text[i + 1:]
    return text


def _inputs(seed: int, count: int) -> Iterator[bytes]:
    """Random bytes, mutated whole kernels and mutated hole fillings, from one seed."""
    rng = random.Random(seed)
    kernels = frontend.seed_texts() + [from_seed(s).kernel for s in range(4)]
    fillings = [*frontend.HOLE_DEFAULTS.values(), "x", "1u32 + y", "let z: u32 = 2u32;"]
    for _ in range(count):
        match rng.randrange(3):
            case 0:
                yield rng.randbytes(rng.randint(0, 200))
            case 1:
                yield _mutate(rng.choice(kernels), rng).encode()
            case _:
                filling = _mutate(rng.choice(fillings), rng)
                yield bytes([rng.randrange(256)]) + filling.encode()


@pytest.mark.parametrize("seed", range(3))
def test_random_and_mutated_inputs_do_not_crash(seed: int, crash_dir: Path) -> None:
    for data in _inputs(seed, 100):
        frontend.TestOneInput(data)
    assert not crash_dir.exists()


def test_a_crash_saves_the_text_before_propagating(crash_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    class Exploding:
        @staticmethod
        def check_source(text: str, filename: str) -> None:
            raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(frontend, "_front_end", lambda: Exploding)
    with pytest.raises(RecursionError):
        frontend.TestOneInput(b"fn f() {}")
    (saved,) = crash_dir.glob("*.rs")
    assert saved.read_text(encoding="utf-8") == "fn f() {}"


def test_a_diagnostic_outside_the_text_is_a_crash(crash_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    class Misplaced:
        @staticmethod
        def check_source(text: str, filename: str) -> None:
            raise DiagnosticError([Diagnostic("lost", NO_SPAN, SourceFile(filename, text))])

    monkeypatch.setattr(frontend, "_front_end", lambda: Misplaced)
    with pytest.raises(frontend.FrontendBug, match="line outside the text"):
        frontend.TestOneInput(b"x")
    assert len(list(crash_dir.glob("*.rs"))) == 1


# ---------------------------------------------------------------- differential


@pytest.mark.parametrize("provider", ["atheris-if-installed", "stand-in"])
def test_differential_harness_on_seeded_inputs(provider: str, crash_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(differential.PIPELINES_ENV, "ref")
    if provider == "stand-in":
        monkeypatch.setattr(differential, "_provider", differential.BytesProvider)
    rng = random.Random(7)
    for size in (0, 1, 8, 16, 64, 128, 256, 512, 1024, 4096):
        differential.TestOneInput(rng.randbytes(size))
    assert not crash_dir.exists()


def test_bytes_provider_stays_in_range() -> None:
    p = differential.BytesProvider(bytes(range(256)) * 4)
    for lo, hi in [(0, 0), (0, 1), (-5, 5), (0, 255), (0, 256), (3, 10**12)]:
        assert lo <= p.ConsumeIntInRange(lo, hi) <= hi
    assert 0.0 <= p.ConsumeProbability() < 1.0
    assert 0 <= p.ConsumeUInt(3) < 2**24
    empty = differential.BytesProvider(b"")
    assert (empty.ConsumeIntInRange(4, 9), empty.ConsumeUInt(8)) == (4, 0)


class _Fake:
    """A duck-typed pipeline: a label and a canned outcome (or exception)."""

    def __init__(self, label: str, result: object) -> None:
        self.label = label
        self._result = result

    def run(self, case: object, features: object = None) -> object:
        if isinstance(self._result, BaseException):
            raise self._result
        return self._result


def _ref_ok(case: object) -> object:
    (ref,) = Registry().create_all(["ref"])
    outcome = ref.run(case)
    assert isinstance(outcome, Ok)
    return outcome


@pytest.mark.parametrize("kind", ["rejected", "arbiter-trap", "exception"])
def test_a_finding_saves_the_case_before_raising(kind: str, crash_dir: Path) -> None:
    case = from_seed(3)
    ok = _ref_ok(case)
    pipelines = {
        "rejected": [_Fake("ref", ok),
                     _Fake("fake", Rejected(reason=RejectReason.STEP_BUDGET))],
        "arbiter-trap": [_Fake("ref", Trap(kind=TrapKind.DIV_BY_ZERO)),
                         _Fake("fake", Trap(kind=TrapKind.DIV_BY_ZERO))],
        "exception": [_Fake("ref", ok), _Fake("fake", RuntimeError("harness bug"))],
    }[kind]
    expected = RuntimeError if kind == "exception" else differential.DifferentialFinding
    with pytest.raises(expected):
        differential.run_one(case, pipelines, load_policy("default"))
    saved = crash_dir / f"{case.id}.toml"
    assert casefile.load(saved) == case


def test_agreeing_pipelines_save_nothing(crash_dir: Path) -> None:
    case = from_seed(3)
    ok = _ref_ok(case)
    differential.run_one(case, [_Fake("ref", ok), _Fake("twin", ok)], load_policy("default"))
    assert not crash_dir.exists()


# ---------------------------------------------------------------- under atheris


@pytest.mark.slow
@pytest.mark.skipif(not HAS_ATHERIS, reason="atheris is not installed (pip install atheris)")
@pytest.mark.parametrize(("script", "runs"), [("frontend.py", 200), ("differential.py", 20)])
def test_harness_runs_under_atheris(script: str, runs: int, tmp_path: Path) -> None:
    env = dict(os.environ, RGPU_FUZZ_CRASH_DIR=str(tmp_path / "crashes"),
               RGPU_FUZZ_PIPELINES="ref")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "fuzz" / script), f"-runs={runs}", "-max_len=1024"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"Done {runs} runs" in proc.stderr
    assert not (tmp_path / "crashes").exists()
