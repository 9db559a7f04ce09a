"""Compile many cases into one rustc program and run each case in its own process.

rustc's start-up and linking cost far more than compiling one small kernel (about a second
against tens of milliseconds), so `compile_batch` puts a batch of cases into one crate
(`rustc_program.program_source`), compiles it once, then runs the binary once per case with
that case's index and argument file. A case that traps or crashes ends only its own process.

Invariants:
* one bad case never poisons a batch: a batch that fails to compile (error, internal compiler
  error, signal, timeout) is split: the cases rustc's error lines point into are compiled
  alone and the rest together again; when the errors point nowhere useful, the batch is
  halved; a case that fails alone gets that failure as its own result;
* every case's result is what it would get compiled alone, except timings and artefact
  hashes, which name the program it actually ran in;
* every subprocess runs in its own process group with a timeout, and on a timeout the whole
  group is killed (rustc's linker included), so the caller never hangs; work files live in a
  temporary directory removed afterwards unless the caller passes its own `workdir`.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from rgpu_fuzz.model.outcome import TrapKind
from rgpu_fuzz.pipelines.rustc_program import (
    F16_ENV,
    F16_FEATURE,
    RUST_FLAGS,
    Program,
    ProgramCase,
    program_source,
    unit_input_bytes,
)
from rgpu_fuzz.process import run_bounded

__all__ = [
    "Build",
    "Builder",
    "BuiltCase",
    "CaseResult",
    "CaseRun",
    "build_batch",
    "build_program",
    "compile_batch",
    "compile_timeout",
    "first_error_line",
    "run_case",
]

COMPILE_TIMEOUT = 120.0
COMPILE_TIMEOUT_PER_CASE = 10.0
RUN_TIMEOUT = 60.0
_ERROR_AT = re.compile(r"^\s*--> .*?:(\d+):\d+\s*$", re.MULTILINE)


def compile_timeout(cases: int, base: float = COMPILE_TIMEOUT) -> float:
    """The compile time limit of a program of `cases` cases: a batch gets more time."""
    return base + COMPILE_TIMEOUT_PER_CASE * max(0, cases - 1)


# ---------------------------------------------------------------- compiling


@dataclass(frozen=True, slots=True, kw_only=True)
class Build:
    """One rustc invocation on one program. `failure` is None (the binary exists), `error`
    (rustc rejected the program), `crash` (internal compiler error, LLVM fatal error or
    signal), `timeout`, or `link` (the linker refused rustc's object: `rustc-amdgpu`);
    `signature` is the normalised first error line."""

    binary: Path | None
    program: Program
    cases: int
    seconds: float
    source_sha256: str
    binary_sha256: str = ""
    failure: str | None = None
    signature: str = ""
    log: str = field(default="", repr=False)


_LOCATION = re.compile(r"(\.rs):\d+:\d+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")


def _normalise(line: str, workdir: Path) -> str:
    line = line.replace(str(workdir), "<dir>")
    return _HEX.sub("0x…", _LOCATION.sub(r"\1", line)).strip()


def first_error_line(stderr: str, workdir: Path) -> str:
    """The normalised first error line (docs/design.md §5 signatures): paths, source positions
    and addresses removed, so the same bug in two cases has one signature."""
    lines = stderr.splitlines()
    for ln in lines:
        if "LLVM ERROR:" in ln:  # an LLVM fatal error inside rustc (it then aborts)
            return _normalise(ln[ln.index("LLVM ERROR:"):], workdir)
    for i, ln in enumerate(lines):
        if "panicked at" in ln:  # an ICE: the panic message is on the next line
            message = lines[i + 1] if i + 1 < len(lines) else ""
            return _normalise(f"{ln.strip()} {message.strip()}", workdir)
    for ln in lines:
        if ln.startswith("error"):
            return _normalise(ln, workdir)
    return _normalise(lines[0], workdir) if lines else "rustc failed"


def build_program(units: Sequence[ProgramCase], workdir: Path, *, rustc: str, opt_level: int,
                  timeout: float) -> Build:
    """Write the program of `units` into `workdir` and compile it."""
    program = program_source(units)
    workdir.mkdir(parents=True, exist_ok=True)
    src, binary = workdir / "prog.rs", workdir / "prog"
    src.write_text(program.source, encoding="utf-8")
    digest = hashlib.sha256(program.source.encode()).hexdigest()
    cmd = [rustc, *RUST_FLAGS, "-C", f"opt-level={opt_level}", "-o", str(binary), str(src)]
    env = F16_ENV if program.source.startswith(F16_FEATURE) else None
    proc = run_bounded(cmd, timeout=timeout, cwd=workdir, env=env)
    common = {"program": program, "cases": len(units), "seconds": proc.seconds,
              "source_sha256": digest, "log": proc.stderr}
    if proc.returncode is None:
        return Build(binary=None, failure="timeout", signature=f"rustc timed out after "
                     f"{timeout:g}s", **common)  # type: ignore[arg-type]
    if proc.returncode < 0:
        return Build(binary=None, failure="crash", signature=f"rustc killed by {proc.ended_by}",
                     **common)  # type: ignore[arg-type]
    if proc.returncode != 0:
        ice = "panicked at" in proc.stderr or "internal compiler error" in proc.stderr
        return Build(binary=None, failure="crash" if ice else "error",
                     signature=first_error_line(proc.stderr, workdir),
                     **common)  # type: ignore[arg-type]
    binary_sha = hashlib.sha256(binary.read_bytes()).hexdigest()
    return Build(binary=binary, binary_sha256=binary_sha, **common)  # type: ignore[arg-type]


# ---------------------------------------------------------------- running


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseRun:
    """What one run of a compiled case did: exactly one of `outputs`, `trap`, `crash` is set,
    or `timed_out`. `crash` is `SIGSEGV`, `exit 101`, `panic` (a panic that is no trap) or
    `unreadable output`."""

    outputs: dict[str, list[int]] | None = None
    trap: TrapKind | None = None
    trap_message: str = ""
    trap_line: int | None = None
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    crash: str | None = None
    timed_out: bool = False
    seconds: float = 0.0
    log: str = field(default="", repr=False)


def _triple(value: object) -> tuple[int, int, int] | None:
    if isinstance(value, list) and len(value) == 3:
        return (int(value[0]), int(value[1]), int(value[2]))
    return None


def run_case(build: Build, index: int, unit: ProgramCase, workdir: Path, *,
             timeout: float = RUN_TIMEOUT) -> CaseRun:
    """Run case `index` of a built program on `unit`'s arguments."""
    assert build.binary is not None, "run_case needs a successful build"
    inputs = workdir / f"inputs-{index}.bin"
    inputs.write_bytes(unit_input_bytes(unit))
    proc = run_bounded([str(build.binary), str(inputs), str(index)], timeout=timeout,
                       cwd=workdir)
    log = proc.stderr
    if proc.returncode is None:
        return CaseRun(timed_out=True, seconds=proc.seconds, log=log)
    if proc.returncode != 0:
        return CaseRun(crash=proc.ended_by, seconds=proc.seconds, log=log)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return CaseRun(crash="unreadable output", seconds=proc.seconds,
                       log=f"stdout: {proc.stdout[:2000]!r}\n{log}")
    if "outputs" in doc:
        return CaseRun(outputs={k: [int(x) for x in v] for k, v in doc["outputs"].items()},
                       seconds=proc.seconds, log=log)
    message = str(doc.get("message", ""))
    kind = doc.get("trap")
    if kind in {k.value for k in TrapKind}:
        return CaseRun(trap=TrapKind(kind), trap_message=message, trap_line=doc.get("line"),
                       block=_triple(doc.get("block")), thread=_triple(doc.get("thread")),
                       seconds=proc.seconds, log=log)
    return CaseRun(crash="panic", seconds=proc.seconds, log=f"panic: {message}\n{log}")


# ---------------------------------------------------------------- batches


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """One case of a batch: the build it ended in (a successful one, or its own failed one),
    its run when that build succeeded, and its share of all compile time spent on it."""

    build: Build
    run: CaseRun | None
    compile_seconds: float


def _blamed(build: Build) -> set[int]:
    """The cases whose kernel lines rustc's error messages point into."""
    found = (build.program.case_at(int(m)) for m in _ERROR_AT.findall(build.log))
    return {i for i in found if i is not None}


Builder = Callable[[Sequence[ProgramCase], Path, float], Build]
"""Compiles the program of some cases in a directory within a time limit (`build_program`
with its rustc and opt level bound; `rustc-amdgpu` passes its own code-object builder)."""


@dataclass(frozen=True, slots=True)
class BuiltCase:
    """Where one case of a batch ended up: the build holding it (successful, or its own
    failed one), its index in that build's program, the build's directory, and its share of
    all compile seconds spent on it."""

    build: Build
    index: int
    workdir: Path
    compile_seconds: float


class _Batch:
    """State of one `build_batch` call: where to build next, and each case's share of
    the compile seconds spent so far."""

    def __init__(self, units: Sequence[ProgramCase], root: Path, builder: Builder,
                 timeout: float) -> None:
        self.units, self.root, self.builder, self.timeout = units, root, builder, timeout
        self.spent = [0.0] * len(units)
        self.builds: dict[int, tuple[Build, int, Path]] = {}  # case -> build, index, dir
        self._next_dir = 0

    def compile(self, members: list[int]) -> None:
        workdir = self.root / f"build-{self._next_dir}"
        self._next_dir += 1
        workdir.mkdir(parents=True, exist_ok=True)
        build = self.builder([self.units[i] for i in members], workdir,
                             compile_timeout(len(members), self.timeout))
        for i in members:
            self.spent[i] += build.seconds / len(members)
        if build.failure is None or len(members) == 1:
            for index, i in enumerate(members):
                self.builds[i] = (build, index, workdir)
            return
        blamed = sorted(members[k] for k in _blamed(build)) if build.failure == "error" else []
        if blamed and len(blamed) < len(members):
            groups = [[i] for i in blamed] + [[i for i in members if i not in blamed]]
        else:
            half = len(members) // 2
            groups = [members[:half], members[half:]]
        for group in groups:
            self.compile(group)


def build_batch(units: Sequence[ProgramCase], builder: Builder, *, root: Path,
                timeout: float = COMPILE_TIMEOUT) -> list[BuiltCase]:
    """Compile `units` as one program under `root`, splitting it while it does not compile
    (see the module docstring); one `BuiltCase` per unit, in order."""
    if not units:
        return []
    batch = _Batch(units, root, builder, timeout)
    batch.compile(list(range(len(units))))
    return [BuiltCase(*batch.builds[i], batch.spent[i]) for i in range(len(units))]


def compile_batch(units: Sequence[ProgramCase], *, rustc: str, opt_level: int = 2,
                  workdir: Path | None = None, compile_timeout_s: float = COMPILE_TIMEOUT,
                  run_timeout_s: float = RUN_TIMEOUT) -> list[CaseResult]:
    """Compile `units` as one program (splitting it when it does not compile) and run each
    case; one result per unit, in order."""
    if not units:
        return []
    with tempfile.TemporaryDirectory(prefix="rgpu-rustc-") as tmp:
        root = workdir if workdir is not None else Path(tmp)
        builder = partial(_build_host, rustc=rustc, opt_level=opt_level)
        results = []
        for unit, built in zip(units, build_batch(units, builder, root=root,
                                                  timeout=compile_timeout_s), strict=True):
            run = (run_case(built.build, built.index, unit, built.workdir,
                            timeout=run_timeout_s)
                   if built.build.failure is None else None)
            results.append(CaseResult(build=built.build, run=run,
                                      compile_seconds=built.compile_seconds))
        return results


def _build_host(units: Sequence[ProgramCase], workdir: Path, timeout: float, *, rustc: str,
                opt_level: int) -> Build:
    return build_program(units, workdir, rustc=rustc, opt_level=opt_level, timeout=timeout)
