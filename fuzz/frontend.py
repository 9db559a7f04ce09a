"""Atheris harness: raw bytes against the front end (lexer, parser, checker).

The contract under test: for *any* text, `check_source` either returns a checked module or
raises `DiagnosticError` whose diagnostics point inside the text and render. Anything else —
an `IndexError`, a `RecursionError` from deep nesting, an assertion, a diagnostic at line 0
or past the end of the text — is a front-end bug.

Each input is tried twice:
* **raw** — the bytes decoded as UTF-8 (invalid sequences replaced), which mostly exercises
  the lexer and the parser's error recovery;
* **spliced** — the first byte picks a hole in a valid kernel skeleton (an item, a helper
  body, a statement, an expression, a type, a condition) and the rest of the input fills it,
  so most inputs get through the parser into the checker.

Before an exception leaves `TestOneInput`, the text that caused it is written to the crash
folder (`$RGPU_FUZZ_CRASH_DIR`, default `fuzz/crashes/`) as `<sha256 prefix>.rs`; replay it
with `rgpu-fuzz check fuzz/crashes/<name>.rs`. atheris itself also keeps the raw input.

Run (atheris is optional, `pip install atheris`):
    python fuzz/frontend.py -max_len=4096 fuzz/seeds/frontend
    python fuzz/frontend.py --write-seeds fuzz/seeds/frontend   # valid kernels to start from

This module imports atheris only in `main`, so tests call `TestOneInput` directly.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CRASH_DIR_ENV = "RGPU_FUZZ_CRASH_DIR"
DEFAULT_CRASH_DIR = Path(__file__).resolve().parent / "crashes"

SKELETON = """\
use rgpu::*;

const N: usize = 64;
{item}
#[inline(never)]
fn mix(x: u32, y: u32) -> u32 {{
    {helper}
}}

#[shared]
static mut TILE: [u32; 64] = [0u32; 64];

#[kernel]
pub fn k(a: &[u32], b: &[f32], out: &mut [u32], fout: &mut [f32], n: u32) {{
    let tid: u32 = thread_idx_x();
    let gid: u32 = block_idx_x() * block_dim_x() + tid;
    {stmt}
    let v: u32 = {expr};
    let w: {ty} = 1u32;
    unsafe {{ TILE[tid as usize] = v; }}
    sync_threads();
    if {cond} {{
        out[gid as usize] = mix(v, w) ^ unsafe {{ TILE[((tid + 1u32) % 64u32) as usize] }};
        fout[gid as usize] = b[(gid as usize) % b.len()].mul_add(2.0f32, -0.5f32);
    }}
}}
"""
"""A valid kernel (docs/language.md's example, trimmed) with one hole per syntactic category."""

HOLE_DEFAULTS: dict[str, str] = {
    "item": "",
    "helper": "x.rotate_left(5) ^ y.wrapping_mul(0x9e37_79b9u32)",
    "stmt": "",
    "expr": "a[(gid as usize) % a.len()]",
    "ty": "u32",
    "cond": "gid < n",
}
"""What fills each hole when the input does not: the skeleton with these checks cleanly."""

HOLES: tuple[str, ...] = tuple(HOLE_DEFAULTS)


class FrontendBug(AssertionError):
    """A diagnostic that breaks the front end's contract (bad location, render failed)."""


def crash_dir() -> Path:
    """Where crash reproducers go: `$RGPU_FUZZ_CRASH_DIR`, else `fuzz/crashes/`."""
    env = os.environ.get(CRASH_DIR_ENV)
    return Path(env) if env else DEFAULT_CRASH_DIR


def save_crash_text(text: str) -> Path:
    """Write `text` as `<sha256[:16]>.rs` in the crash folder (idempotent); returns the path."""
    folder = crash_dir()
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = folder / f"{digest}.rs"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def splice(data: bytes) -> str:
    """The skeleton with the hole named by `data[0]` filled by the rest of `data`."""
    if not data:
        return SKELETON.format(**HOLE_DEFAULTS)
    hole = HOLES[data[0] % len(HOLES)]
    fills = dict(HOLE_DEFAULTS)
    fills[hole] = data[1:].decode("utf-8", errors="replace")
    return SKELETON.format(**fills)


def _front_end() -> ModuleType:
    """The checker module, imported on first use (so `main` can instrument it first)."""
    from rgpu_fuzz.lang import checker

    return checker


def _check_diagnostics(err: Any, text: str) -> None:
    """Every diagnostic of a `DiagnosticError` points inside `text` and renders."""
    if not err.diagnostics:
        raise FrontendBug("DiagnosticError without diagnostics")
    lines = text.split("\n")
    for d in err.diagnostics:
        s = d.span
        where = f"{d.message!r} at {s}"
        if not 0 <= s.start <= s.end <= len(text):
            raise FrontendBug(f"span offsets outside the text ({len(text)} chars): {where}")
        if not 1 <= s.line <= len(lines):
            raise FrontendBug(f"line outside the text ({len(lines)} lines): {where}")
        if not 1 <= s.col <= len(lines[s.line - 1]) + 1:
            raise FrontendBug(f"column outside line {s.line}: {where}")
        if d.file.text != text:
            raise FrontendBug(f"diagnostic refers to another text: {where}")
        rendered = d.render()
        if not rendered.startswith(d.headline()):
            raise FrontendBug(f"render() does not start with the headline: {where}")
    str(err)  # the form the CLI prints


def check_text(text: str) -> None:
    """Check one text; a clean result or a well-formed `DiagnosticError` is a pass. Any other
    exception (including `RecursionError` and `FrontendBug`) propagates, after the text is
    saved to the crash folder."""
    checker = _front_end()
    from rgpu_fuzz.lang.source import DiagnosticError

    try:
        try:
            checker.check_source(text, "<fuzz>")
        except DiagnosticError as e:
            _check_diagnostics(e, text)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt | SystemExit):
            raise
        save_crash_text(text)
        raise


def TestOneInput(data: bytes) -> None:  # the name atheris expects
    """The atheris entry point: the raw text, then the spliced kernel."""
    check_text(data.decode("utf-8", errors="replace"))
    check_text(splice(data))


def seed_texts() -> list[str]:
    """Valid kernels to start fuzzing from: the corpus, the design example, the skeleton."""
    root = Path(__file__).resolve().parent.parent
    texts = [SKELETON.format(**HOLE_DEFAULTS)]
    example = root / "examples" / "kernel.rs"
    if example.is_file():
        texts.append(example.read_text(encoding="utf-8"))
    from rgpu_fuzz import casefile

    for path in sorted((root / "corpus").glob("*.toml")):
        texts.append(casefile.load(path).kernel)
    return texts


def write_seeds(folder: Path) -> int:
    """Write `seed_texts()` as files into `folder` (a libFuzzer corpus directory)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = seed_texts()
    for text in texts:
        raw = text.encode("utf-8")
        (folder / hashlib.sha256(raw).hexdigest()[:16]).write_bytes(raw)
    return len(texts)


def main(argv: list[str] | None = None) -> None:
    """`python fuzz/frontend.py [libFuzzer flags] [CORPUS_DIR...]`, or `--write-seeds DIR`."""
    args = list(sys.argv if argv is None else argv)
    if len(args) >= 3 and args[1] == "--write-seeds":
        print(f"wrote {write_seeds(Path(args[2]))} seed kernels to {args[2]}")
        return
    import atheris

    with atheris.instrument_imports(include=["rgpu_fuzz"]):
        _front_end()  # lexer, parser, checker: instrumented before the first input
    atheris.Setup(args, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
