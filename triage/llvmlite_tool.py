"""`llc` and `opt` with llvmlite's LLVM, for the version matrix of an upstream report
(`triage.upstream`): the same RUN line then runs on the LLVM the fuzzer itself uses
(llvmlite 0.50 is LLVM 22.1.0, Debian's llc-22 is 22.1.8; they can differ).

    python -m triage.llvmlite_tool llc -O1 -mtriple=... -mcpu=... [FILE] [-o OUT]
    python -m triage.llvmlite_tool opt -O2 [-S | -disable-output] [FILE] [-o OUT]

Only what llvmlite can do the way the real tool does it: llc's code generation at -O<n>
(asm or `-filetype=obj`, no IR passes, like llc) and a short list of LLVM library options
(`-print-after=...`, `-filter-print-funcs=...`) set with `llvm.set_option`, and
`-global-isel` as the emission's instruction selector,
which ignores names it does not know; opt's `default<O<n>>` pipeline. Anything else (llc's
own flags such as `-asm-show-inst`, an opt pass list, another option) exits 3 after writing
the option to `$RGPU_NA_MARK`, so the matrix reports "n/a" instead of a failure. Run in a
child process: LLVM aborts on fatal errors.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

NOT_APPLICABLE = 3
# LLVM library options known to act through llvm.set_option, which ignores an option name
# it does not know without a word: anything else is "n/a", never silently dropped.
_LIBRARY_OPTIONS = ("-print-after", "-print-before", "-filter-print-funcs",
                    "-verify-machineinstrs", "-amdgpu-")
_LLC_OWN_FLAGS = ("-asm-show-inst", "-asm-verbose", "-show-mc-encoding", "-stop-after",
                  "-start-after", "-stop-before", "-start-before", "-run-pass", "-x")


@dataclass
class Invocation:
    """The parsed command line of one `llc` or `opt` call."""

    tool: str
    level: int = 2
    triple: str = ""
    cpu: str = ""
    features: str = ""
    obj: bool = False
    text_ir: bool = False
    no_output: bool = False
    passes: str = ""
    source: str = "-"
    out: str = "-"
    llvm_options: list[str] = field(default_factory=list)
    global_isel: bool = False
    """`-global-isel`: the emission's selector (`toolchain.Target.isel`). Not a library
    option: `toolchain.selected_isel` sets `-global-isel` itself around every emission, so
    one set here beforehand would be undone (SelectionDAG) before the code is generated."""


def _not_applicable(why: str) -> int:
    """Record why llvmlite cannot run this (the matrix's "n/a") and exit 3."""
    mark = os.environ.get("RGPU_NA_MARK")
    if mark:
        with open(mark, "a") as f:
            f.write(why + "\n")
    print(f"llvmlite_tool: not applicable: {why}", file=sys.stderr)
    return NOT_APPLICABLE


def parse_args(tool: str, argv: list[str]) -> Invocation | str:
    """The invocation, or the first option llvmlite cannot honour (a string)."""
    inv = Invocation(tool, level=2 if tool == "llc" else 0)
    args = iter(argv)
    for a in args:
        if a == "-o":
            inv.out = next(args, "-")
        elif m := re.fullmatch(r"-O([0-3])", a):
            inv.level = int(m.group(1))
        elif a.startswith(("-mtriple=", "--mtriple=")):
            inv.triple = a.split("=", 1)[1]
        elif a.startswith(("-mcpu=", "--mcpu=")):
            inv.cpu = a.split("=", 1)[1]
        elif a.startswith(("-mattr=", "--mattr=")):
            inv.features = a.split("=", 1)[1]
        elif a == "-filetype=obj":
            inv.obj = True
        elif a == "-filetype=asm":
            inv.obj = False
        elif m := re.fullmatch(r"--?global-isel(?:=(\w+))?", a):
            inv.global_isel = m.group(1) in (None, "1", "true")
        elif a == "-S":
            inv.text_ir = True
        elif a == "-disable-output":
            inv.no_output = True
        elif a.startswith("-passes="):
            inv.passes = a.split("=", 1)[1]
        elif a.split("=", 1)[0] in _LLC_OWN_FLAGS:
            return a
        elif a.startswith("-") and a != "-":
            if tool == "opt" or not a.startswith(_LIBRARY_OPTIONS):
                return a
            inv.llvm_options.append(a)
        else:
            inv.source = a
    if tool == "opt" and inv.passes:
        m = re.fullmatch(r"default<O([0-3])>", inv.passes)
        if m is None:
            return f"-passes={inv.passes}"
        inv.level = int(m.group(1))
    return inv


def _read(source: str) -> str:
    return sys.stdin.read() if source == "-" else Path(source).read_text()


def _write(out: str, data: bytes) -> None:
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        Path(out).write_bytes(data)


def run(inv: Invocation) -> int:
    """Do what llc or opt would do with `inv`; 1 with LLVM's message when it fails."""
    import llvmlite.binding as llvm

    from rgpu_fuzz.pipelines.toolchain import Isel, LlvmError, Target, emit_module, parse

    for opt in inv.llvm_options:
        try:
            llvm.set_option("llc", opt)
        except Exception as e:  # set_option raises what LLVM reports
            return _not_applicable(f"{opt} ({e})")
    text = _read(inv.source)
    try:
        mod = parse(text)
        triple = inv.triple or mod.triple
        target = Target(triple, inv.cpu, inv.features,
                        isel=Isel.GLOBAL if inv.global_isel else Isel.DAG)
        if inv.tool == "opt":
            from rgpu_fuzz.pipelines.toolchain import optimised_module

            mod = optimised_module(text, target, inv.level) if inv.level else mod
            if not inv.no_output:
                _write(inv.out, str(mod).encode())
            return 0
        from rgpu_fuzz.pipelines.toolchain import OutputKind

        kind = OutputKind.OBJECT if inv.obj else OutputKind.ASSEMBLY
        _write(inv.out, emit_module(mod, target, inv.level, kind))
    except LlvmError as e:
        print(f"llvmlite_tool: {e.stage}: {e.message}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("llc", "opt"):
        print("usage: python -m triage.llvmlite_tool llc|opt ARGS...",
              file=sys.stderr)
        return 2
    parsed = parse_args(argv[0], argv[1:])
    if isinstance(parsed, str):
        return _not_applicable(parsed)
    return run(parsed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
