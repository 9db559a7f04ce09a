"""Atheris harness: bytes as user input to `rgpu-fuzz check` and `rgpu-fuzz run --pipelines ref`.

The contract under test is the command line's (README "Cases"):
whatever a user hands in, `check` exits 0 or 1 (diagnostics) or 2 (unreadable), `run` exits
0 (agree), 1 (a finding) or 2 (one line on stderr: a bad case), and neither prints a
traceback (exit 70) or runs past the documented limits (docs/language.md "Limits"; libFuzzer's
`-timeout` is the hang detector). Each input becomes a case file, chosen by its first byte:
* **raw** — the rest of the input is the case TOML as written;
* **kernel** — the rest fills a hole of a valid kernel (`frontend.splice`), in a case whose
  launch and arguments fit it, so most inputs reach the checker and the interpreter;
* **shape** — the rest replaces the `[launch]` and `[[args]]` of a valid case, so launch
  sizes, argument types, initialisers and bit patterns are what gets fuzzed.
Kernel texts are also run through `check` as a `.rs` file.

Before an exception leaves `TestOneInput`, the file that caused it is written to the crash
folder (`$RGPU_FUZZ_CRASH_DIR`, default `fuzz/crashes/`) as `<sha256 prefix>.toml` or `.rs`;
replay it with `rgpu-fuzz run fuzz/crashes/<name>.toml --pipelines ref`.

Run (atheris is optional, `pip install atheris`):
    python fuzz/cases.py --write-seeds fuzz/seeds/cases
    python fuzz/cases.py -timeout=60 -max_len=8192 -dict=fuzz/cases.dict \
        -max_total_time=1800 fuzz/seeds/cases

`$RGPU_FUZZ_REF` names the arbiter spec (default `ref`). This module imports atheris only in
`main`, so tests call `TestOneInput` directly.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import frontend

CRASH_DIR_ENV = "RGPU_FUZZ_CRASH_DIR"
REF_ENV = "RGPU_FUZZ_REF"
DEFAULT_CRASH_DIR = Path(__file__).resolve().parent / "crashes"

CASE_HEAD = """\
format = "rgpu-case/1"
entry = "k"
kernel = '''
{kernel}'''
"""

SHAPE = """\
[launch]
grid = [2, 1, 1]
block = [64, 1, 1]

[[args]]
name = "a"
buffer = "u32"
len = 128
init = { random = 1, dist = "edges" }

[[args]]
name = "b"
buffer = "f32"
len = 128
init = { random = 2, dist = "edges" }

[[args]]
name = "out"
buffer = "u32"
len = 128
init = { fill = 0 }

[[args]]
name = "fout"
buffer = "f32"
len = 128
init = { random = 3, dist = "edges" }

[[args]]
name = "n"
scalar = "u32"
value = 128
"""
"""Launch and arguments that fit `frontend.SKELETON` (64 threads fill its 64-element TILE)."""

MODES = ("raw", "kernel", "shape")


class CliBug(AssertionError):
    """A command broke its contract: a traceback, an unknown exit code, or a long error."""


def crash_dir() -> Path:
    env = os.environ.get(CRASH_DIR_ENV)
    return Path(env) if env else DEFAULT_CRASH_DIR


def save_crash(text: str, suffix: str) -> Path:
    """Write `text` as `<sha256[:16]><suffix>` in the crash folder; returns the path."""
    folder = crash_dir()
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = folder / f"{digest}{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def case_text(data: bytes) -> tuple[str, str | None]:
    """The case file for `data` and, in kernel mode, the kernel text (else None)."""
    if not data:
        return CASE_HEAD.format(kernel=frontend.splice(b"")) + "\n" + SHAPE, None
    mode = MODES[data[0] % len(MODES)]
    rest = data[1:]
    if mode == "raw":
        return rest.decode("utf-8", errors="replace"), None
    if mode == "kernel":
        kernel = frontend.splice(rest).replace("'''", "''")
        return CASE_HEAD.format(kernel=kernel) + "\n" + SHAPE, kernel
    shape = rest.decode("utf-8", errors="replace")
    return CASE_HEAD.format(kernel=frontend.splice(b"")) + "\n" + shape, None


def _cli(argv: list[str]) -> tuple[int, str]:
    """`rgpu-fuzz ARGV` in this process: its exit code and stderr."""
    from rgpu_fuzz import cli

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, err.getvalue()


def _expect(command: str, rc: int, err: str, allowed: tuple[int, ...]) -> None:
    if rc not in allowed:
        raise CliBug(f"`{command}` exited {rc}:\n{err[-4000:]}")
    if rc == 2 and err.count("\n") != 1:
        raise CliBug(f"`{command}` exited 2 with {err.count(chr(10))} lines:\n{err[-4000:]}")


def run_one(text: str, kernel: str | None) -> None:
    """`run CASE --pipelines ref --json`, and `check KERNEL.rs` for a kernel; raises `CliBug`
    (after saving the input) when either breaks the contract."""
    ref = os.environ.get(REF_ENV, "ref")
    with tempfile.TemporaryDirectory(prefix="rgpu-fuzz-cases-") as tmp:
        case_path = Path(tmp) / "case.toml"
        case_path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            rc, err = _cli(["run", str(case_path), "--pipelines", ref, "--json"])
            _expect("run", rc, err, (0, 1, 2))
            if kernel is not None:
                rs = Path(tmp) / "kernel.rs"
                rs.write_text(kernel, encoding="utf-8", errors="surrogatepass")
                rc, err = _cli(["check", str(rs)])
                _expect("check", rc, err, (0, 1))
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt | SystemExit):
                raise
            save_crash(text, ".toml")
            raise


def TestOneInput(data: bytes) -> None:  # the name atheris expects
    """The atheris entry point."""
    text, kernel = case_text(data)
    run_one(text, kernel)


EDGE_KERNEL_HOLES: tuple[tuple[str, str], ...] = (
    ("stmt", "let mut big: [u32; 4096] = [0u32; 4096]; big[4095] = 1u32;"),
    ("item", "#[shared]\nstatic mut BIG: [u64; 8000] = [0u64; 8000];"),
    ("item", "const S: f32 = f32::from_bits(0x7f80_0001u32);\nconst T: f32 = -S;"),
    ("stmt", "let mut i: u32 = 0u32; while i < 1000u32 { i = i + 1u32; }"),
    ("expr", "(" * 120 + "7u32" + ")" * 120),
    ("helper", "let mut acc: u32 = x; for j in 0u32..y { acc = acc ^ j; } acc"),
)
"""Kernel holes at the documented limits, for mutations to push past them."""

EDGE_SHAPES: tuple[str, ...] = (
    SHAPE.replace("grid = [2, 1, 1]", "grid = [65536, 64, 1]").replace(
        "block = [64, 1, 1]", "block = [1, 1, 1]"),
    SHAPE.replace("len = 128", "len = 1048576", 1),
    SHAPE + "[extra]\nx = " + "[" * 30 + "]" * 30 + "\n",
)
"""Launches and arguments at the documented limits."""


def seed_inputs() -> list[bytes]:
    """Inputs to start from: every corpus and semantics case raw, the skeleton in each mode,
    and kernels and shapes at the documented limits."""
    root = Path(__file__).resolve().parent.parent
    seeds = [b"", bytes([MODES.index("shape")]) + SHAPE.encode()]
    seeds += [bytes([MODES.index("shape")]) + s.encode() for s in EDGE_SHAPES]
    for hole, text in EDGE_KERNEL_HOLES:
        index = frontend.HOLES.index(hole)
        prefix = next(c for c in range(32, 127) if c % len(frontend.HOLES) == index)
        seeds.append(bytes([MODES.index("kernel"), prefix]) + text.encode())
    for folder in (root / "corpus", root / "tests" / "semantics" / "cases"):
        for path in sorted(folder.glob("*.toml")):
            seeds.append(bytes([MODES.index("raw")]) + path.read_bytes())
    seeds += [bytes([MODES.index("kernel")]) + t.encode() for t in frontend.seed_texts()[:1]]
    return seeds


def write_seeds(folder: Path) -> int:
    """Write `seed_inputs()` into `folder` (a libFuzzer corpus directory)."""
    folder.mkdir(parents=True, exist_ok=True)
    seeds = seed_inputs()
    for raw in seeds:
        (folder / hashlib.sha256(raw).hexdigest()[:16]).write_bytes(raw)
    return len(seeds)


def main(argv: list[str] | None = None) -> None:
    """`python fuzz/cases.py [libFuzzer flags] [CORPUS_DIR...]`, or `--write-seeds DIR`."""
    args = list(sys.argv if argv is None else argv)
    if len(args) >= 3 and args[1] == "--write-seeds":
        print(f"wrote {write_seeds(Path(args[2]))} seed inputs to {args[2]}")
        return
    import atheris

    with atheris.instrument_imports(include=["rgpu_fuzz"]):
        from rgpu_fuzz import cli

        for name in cli.COMMANDS:  # imports every command module, instrumented
            cli.build_parser(name)
        import rgpu_fuzz.interp
        import rgpu_fuzz.pipelines.ref  # noqa: F401
    atheris.Setup(args, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
