"""Reports LLVM maintainers can act on: which LLVMs and instruction selectors reproduce a bug.

A reproducer is a `.ll` file in LLVM's test style (`; RUN:` lines piping `llc` or `opt` into
`FileCheck`, or `not --crash ...`); its CHECK lines pin the wrong code, so a RUN line that
passes means "the bug is there". `version_matrix` runs every RUN line once per LLVM variant:

* `llvmlite` - llvmlite's LLVM (0.50: 22.1.0), the one the fuzzer compiles with, through
  `triage.llvmlite_tool` in a child process;
* `llc-22`, `llc-19` - Debian's llvm-22 and llvm-19 tools;
* `gisel` - llc-22 with `-global-isel` (a RUN line without llc is not applicable).

FileCheck and `not` are llvm-22's in every variant: only the compiler under test changes. The
tools are put first on PATH through wrapper scripts in a temporary folder, and the line runs in
bash with `pipefail`, as lit runs it. A variant whose tool cannot do what the line asks
(llvmlite and `-asm-show-inst`, an opt pass list) is "n/a", not "no".

`matrix_lines` renders the result as the comment block each docs/llvm-bugs file carries in its
header; `write_matrix` replaces that block in place
(`python -m triage.upstream matrix FILE.ll [--write]`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path

from rgpu_fuzz.checkout import checkout
from rgpu_fuzz.process import run_bounded

MATRIX_BEGIN = "; Version matrix"
MATRIX_END = "; (end of matrix)"


class Repro(StrEnum):
    YES = "yes"
    NO = "no"
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class Variant:
    """One LLVM under test: a name for the matrix, its version, and how to call its tools
    (`llc`/`opt` -> argv prefix; None: this variant cannot run that tool)."""

    name: str
    version: str
    llc: tuple[str, ...] | None
    opt: tuple[str, ...] | None


@dataclass(frozen=True)
class RunLine:
    index: int       # 1-based, as the file's header refers to "RUN 2"
    line: int        # line number of its first `; RUN:` in the file
    command: str     # continuations joined, `%s` not yet substituted


@dataclass(frozen=True)
class Cell:
    run: RunLine
    variant: Variant
    result: Repro
    detail: str      # the last lines of output when the line did not pass, or why n/a


@dataclass(frozen=True)
class Matrix:
    path: Path
    variants: tuple[Variant, ...]
    cells: tuple[Cell, ...]

    def result(self, run_index: int, variant: str) -> Repro:
        return next(c.result for c in self.cells
                    if c.run.index == run_index and c.variant.name == variant)


def run_lines(text: str) -> list[RunLine]:
    """The RUN lines of a lit test, with `\\` continuations joined (lit's rule)."""
    out: list[RunLine] = []
    pending: list[str] = []
    start = 0
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*;\s*RUN:(.*)$", line)
        if m is None:
            continue
        part = m.group(1).strip()
        if not pending:
            start = n
        if part.endswith("\\"):
            pending.append(part[:-1].strip())
            continue
        pending.append(part)
        out.append(RunLine(len(out) + 1, start, " ".join(p for p in pending if p)))
        pending = []
    return out


def _tool(major: int, name: str) -> Path:
    return Path(f"/usr/lib/llvm-{major}/bin/{name}")


@cache
def _version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    except OSError:
        return "missing"
    m = re.search(r"LLVM version (\S+)", out)
    return m.group(1) if m else "?"


@cache
def _llvmlite_version() -> str:
    import llvmlite
    import llvmlite.binding as llvm

    return f"{llvmlite.__version__} (LLVM {'.'.join(map(str, llvm.llvm_version_info))})"


def debian_variant(major: int) -> Variant | None:
    """Debian's llvm-<major> llc and opt, or None when its llc is not installed."""
    llc, opt = _tool(major, "llc"), _tool(major, "opt")
    if not llc.exists():
        return None
    return Variant(f"llc-{major}", _version(str(llc)), (str(llc),),
                   (str(opt),) if opt.exists() else None)


def default_variants() -> tuple[Variant, ...]:
    """llvmlite, Debian llc-22, Debian llc-19, llc-22 -global-isel (the ones installed)."""
    lite = (sys.executable, "-m", "triage.llvmlite_tool")
    out = [Variant("llvmlite", _llvmlite_version(), (*lite, "llc"), (*lite, "opt"))]
    out += [v for v in (debian_variant(22), debian_variant(19)) if v is not None]
    if _tool(22, "llc").exists():
        out.append(Variant("gisel", f"llc-22 {_version(str(_tool(22, 'llc')))} -global-isel",
                           (str(_tool(22, "llc")), "-global-isel"), None))
    return tuple(out)


def _wrapper(folder: Path, name: str, argv: tuple[str, ...] | None) -> None:
    """`folder/name`: runs `argv "$@"`, or records "n/a" and exits 3 when argv is None."""
    path = folder / name
    if argv is None:
        body = f'echo "{name}" >> "$RGPU_NA_MARK"; exit 3\n'
    else:
        body = "exec " + " ".join(_quote(a) for a in argv) + ' "$@"\n'
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def substitute(command: str, source: Path, check_file: Path | None = None) -> str:
    """lit's `%s` in `command`: `source`, except in FileCheck's arguments when the CHECK
    lines live in another file (`check_file`: the reproducer whose CHECK lines judge a
    reduction candidate that has none)."""
    if check_file is not None:
        command = re.sub(r"(FileCheck\b[^|]*?)%s", lambda m: m.group(1) + _quote(
            str(check_file.resolve())), command)
    return command.replace("%s", _quote(str(source.resolve())))


def run_line(run: RunLine, source: Path, variant: Variant, timeout: float = 300,
             check_file: Path | None = None) -> Cell:
    """Run one RUN line with `variant`'s llc/opt first on PATH (CHECK lines from
    `check_file` when given, else from `source`)."""
    source = source.resolve()
    uses = {t for t in ("llc", "opt") if re.search(rf"(^|[|\s]){t}\s", run.command)}
    if ("llc" in uses and variant.llc is None) or ("opt" in uses and variant.opt is None):
        return Cell(run, variant, Repro.NOT_APPLICABLE, "no such tool in this variant")
    with tempfile.TemporaryDirectory(prefix="rgpu-matrix-") as tmp:
        folder = Path(tmp)
        _wrapper(folder, "llc", variant.llc)
        _wrapper(folder, "opt", variant.opt)
        for name in ("FileCheck", "not", "count"):
            _wrapper(folder, name, (str(_tool(22, name)),))
        mark = folder / "na"
        env = dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ.get('PATH', '')}",
                   RGPU_NA_MARK=str(mark), PYTHONPATH=str(checkout() or ""))
        command = substitute(run.command, source, check_file)
        proc = run_bounded(["bash", "-o", "pipefail", "-c", command], timeout=timeout,
                           env=env, cwd=source.parent)
        if mark.exists():
            return Cell(run, variant, Repro.NOT_APPLICABLE, mark.read_text().strip())
        if proc.returncode == 0:
            return Cell(run, variant, Repro.YES, "")
        tail = "\n".join((proc.stderr or proc.stdout or proc.ended_by).splitlines()[-6:])
        return Cell(run, variant, Repro.NO, tail)


def version_matrix(source: Path, variants: tuple[Variant, ...] | None = None,
                   runs: list[RunLine] | None = None) -> Matrix:
    """Every RUN line of `source` (or `runs`, for a predicate that is not in the file) on
    every variant."""
    variants = variants or default_variants()
    runs = runs if runs is not None else run_lines(source.read_text())
    cells = tuple(run_line(r, source, v) for r in runs for v in variants)
    return Matrix(source, variants, cells)


def predicate_run(llc_args: str, check_prefix: str = "CHECK") -> RunLine:
    """A RUN line for `llc llc_args < %s | FileCheck --check-prefix=P %s`: the matrix of an
    llc command line and the CHECK lines of the file, without a RUN line in it."""
    return RunLine(1, 0, f"llc {llc_args} < %s | FileCheck --check-prefix={check_prefix} %s")


def matrix_lines(matrix: Matrix) -> list[str]:
    """The header block: one line per RUN line, `yes` where its CHECK lines match."""
    lines = [f"{MATRIX_BEGIN} (python -m triage.upstream matrix; yes = the RUN "
             "line passes, so the bug is there):",
             ";   " + "; ".join(f"{v.name} = {v.version}" for v in matrix.variants)
             + " (llc-N: Debian llvm-N's llc and opt)"]
    for run in sorted({c.run for c in matrix.cells}, key=lambda r: r.index):
        row = [c for c in matrix.cells if c.run == run]
        lines.append(f";   RUN {run.index}: "
                     + ", ".join(f"{c.variant.name} {c.result}" for c in row))
    lines.append(MATRIX_END)
    return lines


def write_matrix(path: Path, matrix: Matrix) -> None:
    """Replace the file's matrix block (or add one after the leading RUN/REQUIRES lines)."""
    text = path.read_text().splitlines()
    block = matrix_lines(matrix)
    if MATRIX_BEGIN in "\n".join(text):
        start = next(i for i, ln in enumerate(text) if ln.startswith(MATRIX_BEGIN))
        end = next(i for i, ln in enumerate(text) if ln.startswith(MATRIX_END))
        text[start:end + 1] = block
    else:
        at = 0
        while at < len(text) and re.match(r"\s*;\s*(RUN|REQUIRES|UNSUPPORTED):", text[at]):
            at += 1
        text[at:at] = [";", *block]
    path.write_text("\n".join(text) + "\n")


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m triage.upstream")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("matrix", help="which LLVMs reproduce each RUN line of a reproducer")
    m.add_argument("files", nargs="+", type=Path)
    m.add_argument("--write", action="store_true", help="update the header block in place")
    args = ap.parse_args(argv)
    for f in args.files:
        if not f.is_file():
            print(f"error: {f}: no such file", file=sys.stderr)
            return 2
        if not run_lines(f.read_text()):
            print(f"error: {f}: no RUN lines", file=sys.stderr)
            return 2
        mx = version_matrix(f)
        print(f"{f}:")
        print("\n".join(matrix_lines(mx)))
        for c in mx.cells:
            if c.result is not Repro.YES and c.detail:
                print(f"  RUN {c.run.index} {c.variant.name}: {c.detail.splitlines()[-1]}")
        if args.write:
            write_matrix(f, mx)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
