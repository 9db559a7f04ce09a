"""Kernels as complete host Rust programs, compiled and run by the real rustc.

This is the core of the `rustc-cpu` pipeline and the source of the checked-in expected values
of `tests/semantics`: a compiler nobody here wrote says what each kernel computes.

A program is one file, edition 2021, holding one or more cases (a batch: rustc's start-up
and linking cost more than compiling a small kernel, so many kernels share one crate):
* each kernel, with `#[kernel]` and `#[shared]` removed (not real Rust attributes), sits in
  its own `#[no_implicit_prelude] mod case_<index>_<id>`, so kernel names never meet the
  driver's or std's prelude names (`None`, `Ok`, `main`...) nor another case's items, and
  every case has its own `#[shared]` statics;
* `mod rgpu` inside each implements the GPU prelude from thread-locals the driver sets;
* `main` takes the argument file and the case index (`prog INPUTS [INDEX]`, index 0 by
  default), reads the arguments (`input_bytes`: each parameter in signature order,
  little-endian element bytes, bool as one byte 0/1), runs the blocks in grid order (x
  fastest), and prints one JSON line: `{"outputs": {name: [bits]}}` with the bit pattern of
  every element of every `&mut` buffer, or
  `{"trap": kind, "message": ..., "line": kernel line, "block": [...], "thread": [...]}`.
  One case runs per process, so a trap in one case of a batch loses nothing of the others.

Threads of a block run in order (x fastest) on one OS thread, unless the kernel calls
`sync_threads`: then each runs on its own OS thread and `sync_threads` is a
`std::sync::Barrier` wait. `#[shared]` statics stay `static mut`: blocks run one after
another and the threads of one block share them. The first panic anywhere prints the trap and
exits the process at once, so threads waiting at a barrier never hang the run.

rustc and the program run as subprocesses in their own process group with a timeout; on a
timeout the whole group (rustc's linker included) is killed, so the caller never hangs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rgpu_fuzz.lang.ast import Fn, ScalarType, SliceType
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.lang.printer import print_module
from rgpu_fuzz.lang.source import DiagnosticError
from rgpu_fuzz.model.case import BufferArg, Case, ScalarArg
from rgpu_fuzz.model.inputs import materialise
from rgpu_fuzz.model.outcome import Rejected, RejectReason, TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines import rustc_driver as driver
from rgpu_fuzz.pipelines.frontend import prepare

__all__ = [
    "F16_ENV",
    "F16_FEATURE",
    "RUST_FLAGS",
    "KernelParam",
    "Program",
    "ProgramCase",
    "ProgramError",
    "RustcResult",
    "compile_and_run",
    "find_rustc",
    "host_program",
    "input_bytes",
    "kernel_params",
    "params_of",
    "printed_program_case",
    "program_case",
    "program_source",
    "rust_kernel_text",
    "rustc_version",
    "strip_comments",
    "unit_input_bytes",
    "uses_barrier",
    "uses_f16",
]

RUST_FLAGS: tuple[str, ...] = (
    "--edition", "2021", "-C", "overflow-checks=off", "-C", "debug-assertions=off",
    "-C", "panic=unwind",
)

# Panic messages of Rust's release-mode checks (core::panicking) and the trap each one is.
_TRAP_MESSAGES: tuple[tuple[str, TrapKind], ...] = (
    ("attempt to divide by zero", TrapKind.DIV_BY_ZERO),
    ("attempt to calculate the remainder with a divisor of zero", TrapKind.DIV_BY_ZERO),
    ("attempt to divide with overflow", TrapKind.DIV_OVERFLOW),
    ("attempt to calculate the remainder with overflow", TrapKind.DIV_OVERFLOW),
    ("index out of bounds", TrapKind.OUT_OF_BOUNDS),
    ("min > max, or either was NaN", TrapKind.ASSERT),
)

_ATTRIBUTE = re.compile(r"#\s*\[\s*(?:kernel|shared)\s*\]")


class ProgramError(ValueError):
    """The case cannot be turned into a program: its kernel does not parse, the entry is not
    found, or its arguments do not match the kernel's signature. The pipeline reports it as an
    invalid case."""


@dataclass(frozen=True, slots=True)
class KernelParam:
    """One parameter of the entry point, as its signature spells it."""

    name: str
    ty: Scalar
    kind: str  # "scalar", "slice" (`&[T]`), "mut-slice" (`&mut [T]`), "atomic-slice"


@dataclass(frozen=True, slots=True, kw_only=True)
class RustcResult:
    """What rustc and the program did. Exactly one of `outputs`, `trap`, `compile_error`,
    `run_error` is set.

    `outputs` maps each `&mut` buffer to the bit patterns of its final elements.
    `compile_error` is rustc's normalised first error line; `compiler_crashed` says it was an
    internal compiler error or a signal rather than an ordinary error.
    `run_error` covers a crash, a timeout and a panic that is not one of the traps.
    """

    outputs: dict[str, list[int]] | None = None
    trap: TrapKind | None = None
    trap_message: str = ""
    trap_line: int | None = None
    compile_error: str | None = None
    compiler_crashed: bool = False
    run_error: str | None = None
    timed_out: bool = False
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    source_sha256: str = ""
    binary_sha256: str = ""
    log: str = field(default="", repr=False)

    @property
    def ok(self) -> bool:
        return self.outputs is not None


# ---------------------------------------------------------------- kernel text


def strip_comments(text: str) -> str:
    """`text` with comments replaced by spaces (newlines kept), so positions still match.
    Block comments nest, as in Rust; the language has no strings or chars to skip."""
    out = list(text)
    i, depth, n = 0, 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if depth == 0 and two == "//":
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if two == "/*":
            depth += 1
            out[i] = out[i + 1] = " "
            i += 2
            continue
        if depth and two == "*/":
            depth -= 1
            out[i] = out[i + 1] = " "
            i += 2
            continue
        if depth and text[i] != "\n":
            out[i] = " "
        i += 1
    return "".join(out)


def rust_kernel_text(kernel_source: str) -> str:
    """The kernel as real Rust: attributes `#[kernel]`/`#[shared]` removed wherever they
    stand (the lexer reserves every Rust keyword, so no identifier needs escaping). Lines are
    kept one for one, so a panic's line in the program maps back to the kernel's line."""
    return _ATTRIBUTE.sub("", strip_comments(kernel_source))


def uses_barrier(kernel_source: str) -> bool:
    """Whether the kernel calls `sync_threads` (then threads of a block need OS threads)."""
    return re.search(r"\bsync_threads\s*\(", strip_comments(kernel_source)) is not None


def params_of(kernel: Fn) -> tuple[KernelParam, ...]:
    """The parameters of a parsed (or checked) kernel, as the driver passes them."""
    params = []
    for p in kernel.params:
        match p.ty:
            case SliceType(elem=elem, atomic=True):
                params.append(KernelParam(p.name, elem, "atomic-slice"))
            case SliceType(elem=elem, mutable=mutable):
                params.append(KernelParam(p.name, elem, "mut-slice" if mutable else "slice"))
            case ScalarType(scalar=scalar):
                params.append(KernelParam(p.name, scalar, "scalar"))
            case _:
                raise ProgramError(f"parameter `{p.name}` of `{kernel.name}` is an array")
    return tuple(params)


def kernel_params(kernel_source: str, entry: str) -> tuple[KernelParam, ...]:
    """The entry point's parameters, read by our parser from its signature."""
    try:
        module = parse(kernel_source, "<kernel>")
    except DiagnosticError as e:
        first = e.diagnostics[0].headline() if e.diagnostics else "kernel does not parse"
        raise ProgramError(first) from None
    kernel = next((i for i in module.items if isinstance(i, Fn) and i.name == entry), None)
    if kernel is None:
        raise ProgramError(f"entry point `{entry}` not found in the kernel")
    return params_of(kernel)


def _matched_args(case: Case, params: tuple[KernelParam, ...]) -> list[BufferArg | ScalarArg]:
    names = {p.name for p in params}
    extra = [a.name for a in case.args if a.name not in names]
    if extra:
        raise ProgramError(f"arguments {extra} are not parameters of `{case.entry}`")
    matched: list[BufferArg | ScalarArg] = []
    for p in params:
        arg = case.arg(p.name)
        if arg is None:
            raise ProgramError(f"no argument for parameter `{p.name}`")
        if isinstance(arg, BufferArg) != (p.kind != "scalar"):
            want = "a scalar" if p.kind == "scalar" else "a slice"
            raise ProgramError(f"argument `{p.name}` does not match parameter `{p.name}`, "
                               f"which is {want}")
        elem = arg.elem if isinstance(arg, BufferArg) else arg.ty
        if elem is not p.ty:
            raise ProgramError(f"argument `{p.name}` is {elem} but the parameter is {p.ty}")
        matched.append(arg)
    return matched


@dataclass(frozen=True, slots=True)
class ProgramCase:
    """One case as a program holds it: the kernel text compiled (the case's own, or the
    canonical printed one) and the entry's parameters, each matched by an argument."""

    case: Case
    kernel_source: str
    params: tuple[KernelParam, ...]
    args: tuple[BufferArg | ScalarArg, ...]


def program_case(case: Case, kernel_source: str | None = None,
                 kernel: Fn | None = None) -> ProgramCase:
    """`case` ready for a program; `kernel` (the checked entry) saves parsing the text again."""
    text = case.kernel if kernel_source is None else kernel_source
    params = params_of(kernel) if kernel is not None else kernel_params(text, case.entry)
    return ProgramCase(case, text, params, tuple(_matched_args(case, params)))


def printed_program_case(case: Case) -> ProgramCase | Rejected:
    """`case` with its canonical printed kernel (what every rustc pipeline compiles, so the
    printer is under test too), or why the case is not a valid test."""
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return prepared
    checked, kernel = prepared
    try:
        return program_case(case, print_module(checked.module), kernel)
    except ProgramError as e:
        return Rejected(reason=RejectReason.INVALID_CASE, detail=str(e))


# ---------------------------------------------------------------- program text

@dataclass(frozen=True, slots=True)
class Program:
    """A program's Rust source and, for each case, the program lines `[first, end)` its
    kernel occupies (a trap's or an error's line maps back to a case and a kernel line)."""

    source: str
    kernel_lines: tuple[tuple[int, int], ...]

    def case_at(self, line: int) -> int | None:
        """The index of the case whose kernel holds program line `line`, if any."""
        return next((i for i, (a, b) in enumerate(self.kernel_lines) if a <= line < b), None)


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def _runner(index: int, module: str, unit: ProgramCase, first: int, end: int) -> str:
    reads, shares, call, outputs = [], [], [], []
    for p, a in zip(unit.params, unit.args, strict=True):
        v = f"arg_{p.name}"
        if isinstance(a, ScalarArg):
            reads.append(f"    let {v}: {p.ty} = rd.scalar::<{p.ty}>();")
            call.append(v)
        elif p.kind == "slice":
            reads.append(f"    let {v}: Vec<{p.ty}> = rd.vec::<{p.ty}>({a.len});")
            shares.append(f"    let {v}: &[{p.ty}] = &{v};")
            call.append(v)
        else:
            reads.append(f"    let mut {v}: Vec<{p.ty}> = rd.vec::<{p.ty}>({a.len});")
            shares.append(f"    let {v}_ptr = Shared({v}.as_mut_ptr(), {v}.len());")
            call.append(f"{v}_ptr.slice()" if p.kind == "mut-slice" else atomic_view(v, p.ty))
            outputs.append(f"    outs.push(format!(\"{{}}: {{}}\", json_str(\"{p.name}\"), "
                           f"bits_json(&{v})));")
    launch = unit.case.launch
    return _fill(driver.RUNNER, INDEX=str(index), ARG_READS="\n".join(reads),
                 ARG_SHARES="\n".join(shares), FIRST=str(first), END=str(end), MODULE=module,
                 ENTRY=unit.case.entry, CALL_ARGS=", ".join(call),
                 BLOCK_DIM=str(list(launch.block)), GRID_DIM=str(list(launch.grid)),
                 THREADED="true" if uses_barrier(unit.kernel_source) else "false",
                 OUTPUTS="\n".join(outputs))


def atomic_view(v: str, elem: Scalar) -> str:
    """`&[AtomicU32]` over a `Vec<u32>`'s memory: AtomicU32 "has the same in-memory
    representation as the underlying integer type" (core::sync::atomic docs), and `Vec<u64>`
    is 8-aligned like AtomicU64 on the hosts we run."""
    atomic = f"::std::sync::atomic::Atomic{elem.value.upper()}"
    return f"unsafe {{ &*({v}_ptr.slice() as *mut [{elem}] as *const [{atomic}]) }}"


F16_FEATURE = "#![feature(f16)]\n"
"""The crate attribute `f16` needs in rustc 1.95 (unstable: rust-lang/rust#116909), and
with it `RUSTC_BOOTSTRAP=1` (`F16_ENV`); only a program whose kernels use `f16` gets it,
so every other program is the stable Rust it always was."""

F16_ENV: dict[str, str] = {"RUSTC_BOOTSTRAP": "1"}


def uses_f16(units: Sequence[ProgramCase]) -> bool:
    """Whether a kernel or an argument of `units` has the type `f16`."""
    return any(re.search(r"\bf16\b", u.kernel_source) or any(p.ty is Scalar.F16 for p in u.params)
               for u in units)


def program_source(units: Sequence[ProgramCase]) -> Program:
    """One program running any of `units`, chosen by the index on its command line."""
    half = uses_f16(units)
    head = (F16_FEATURE if half else "") + driver.HEAD
    parts = [head]
    line = head.count("\n") + 1
    ranges: list[tuple[int, int]] = []
    for i, unit in enumerate(units):
        head = _fill(driver.CASE_HEAD, MODULE=f"case_{i}_{unit.case.id}", ID=unit.case.id)
        body = rust_kernel_text(unit.kernel_source)
        if not body.endswith("\n"):
            body += "\n"
        first = line + head.count("\n")
        end = first + body.count("\n")
        ranges.append((first, end))
        parts += [head, body, "}\n\n"]
        line = end + 2
    trap_table = ", ".join(f'("{msg}", "{kind}")' for msg, kind in _TRAP_MESSAGES)
    parts.append(driver.DRIVER.replace("TRAP_TABLE", trap_table))
    if half:
        parts.append(driver.F16_ELEM)
    parts += [_runner(i, f"case_{i}_{u.case.id}", u, *ranges[i]) for i, u in enumerate(units)]
    arms = "\n".join(f"        {i} => run_{i}(&mut rd)," for i in range(len(units)))
    parts.append(_fill(driver.MAIN, ARMS=arms))
    return Program("".join(parts), tuple(ranges))


def host_program(case: Case, kernel_source: str) -> str:
    """The complete Rust program that runs `kernel_source` with `case`'s launch and
    arguments (read at run time from the file `input_bytes(case, ...)` writes)."""
    return program_source([program_case(case, kernel_source)]).source


def unit_input_bytes(unit: ProgramCase) -> bytes:
    """The argument file the program reads for `unit`: each parameter in signature order, as
    little-endian element bytes (bool: one byte, 0 or 1)."""
    chunks = []
    for p, a in zip(unit.params, unit.args, strict=True):
        if isinstance(a, ScalarArg):
            width = 1 if p.ty is Scalar.BOOL else p.ty.bits // 8
            chunks.append(a.bits.to_bytes(width, "little"))
            continue
        values = materialise(a)
        if p.ty is Scalar.BOOL:
            chunks.append(values.astype(np.uint8).tobytes())
        else:
            chunks.append(values.astype(values.dtype.newbyteorder("<")).tobytes())
    return b"".join(chunks)


def input_bytes(case: Case, kernel_source: str) -> bytes:
    """`unit_input_bytes` of `case` with `kernel_source`."""
    return unit_input_bytes(program_case(case, kernel_source))


# ---------------------------------------------------------------- compiling and running


def find_rustc() -> str | None:
    """The rustc to use: `$RGPU_RUSTC` (when set, and only it, even if it does not exist),
    else `rustc` on PATH, else `~/.cargo/bin/rustc`."""
    if env := os.environ.get("RGPU_RUSTC"):
        return env
    if found := shutil.which("rustc"):
        return found
    cargo = Path.home() / ".cargo" / "bin" / "rustc"
    return str(cargo) if cargo.is_file() else None


def rustc_version(rustc: str | None = None) -> str:
    """`rustc --version` (e.g. "rustc 1.95.0 (59807616e 2026-04-14)")."""
    exe = rustc or find_rustc()
    if exe is None:
        raise FileNotFoundError("rustc not found (set RGPU_RUSTC or put rustc on PATH)")
    return subprocess.run([exe, "--version"], capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def compile_and_run(case: Case, *, opt_level: int = 2, workdir: Path,
                    kernel_source: str | None = None, rustc: str | None = None,
                    compile_timeout: float = 300.0, run_timeout: float = 60.0) -> RustcResult:
    """Compile `case` (its own kernel text unless `kernel_source` is given) with rustc at
    `opt_level`, run it in `workdir`, and read back what it computed."""
    from rgpu_fuzz.pipelines.rustc_batch import compile_batch

    exe = rustc or find_rustc()
    if exe is None:
        raise FileNotFoundError("rustc not found (set RGPU_RUSTC or put rustc on PATH)")
    unit = program_case(case, kernel_source)
    [result] = compile_batch([unit], rustc=exe, opt_level=opt_level, workdir=workdir,
                             compile_timeout_s=compile_timeout, run_timeout_s=run_timeout)
    build, run = result.build, result.run
    common = {"compile_seconds": build.seconds, "source_sha256": build.source_sha256,
              "binary_sha256": build.binary_sha256}
    if run is None:
        return RustcResult(compile_error=build.signature, log=build.log,
                           compiler_crashed=build.failure == "crash",
                           timed_out=build.failure == "timeout", **common)  # type: ignore[arg-type]
    common.update(run_seconds=run.seconds, log=run.log)
    if run.outputs is not None:
        return RustcResult(outputs=run.outputs, **common)  # type: ignore[arg-type]
    if run.trap is not None:
        return RustcResult(trap=run.trap, trap_message=run.trap_message,
                           trap_line=run.trap_line, **common)  # type: ignore[arg-type]
    error = f"timeout after {run_timeout:g}s" if run.timed_out else str(run.crash)
    return RustcResult(run_error=error, timed_out=run.timed_out, **common)  # type: ignore[arg-type]
