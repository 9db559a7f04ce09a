"""The culprit pass of a finding: which pass of LLVM's code generation makes the output
wrong, found by rerunning the case with passes left out, not by reading the code.

Wrong code (and trap mismatches, run crashes), on a pipeline whose code generation an
external llc can do (`llc=`; llvmlite's own LLVM is replaced by Debian's llc of the same
major version, 22):

1. the case runs once with an llc that records its input and arguments (`llc_passes.py
   record=`) and must still be wrong with that llc;
2. *OptBisect* (LLVM's `-opt-bisect-limit=N`, "Using -opt-bisect-limit to debug
   optimization errors" in LLVM's docs): only the first N optional passes run, IR passes of
   code generation and machine passes alike, numbered as llc prints them with
   `-opt-bisect-limit=-1`. When N = 0 is right, a binary search finds the smallest N that is
   wrong: pass number N is the first pass after which the output is wrong;
3. when the output is wrong with no optional pass at all (at -O0 most passes are required),
   each machine pass after instruction selection that changes the MIR (`-stop-before=P` and
   `-stop-after=P` differ) is left out in turn (`-stop-before=P`, then `-start-after=P` on
   that MIR: `llc_passes.py skip=`); the passes whose absence makes the output right are
   named. That is a weaker statement than 2 (a required pass left out may also hide the bug
   by accident), so the report says which test found the pass.

A compile crash: the innermost `Running pass '...'` line of LLVM's stack dump in the
pipeline's log; without one (a fatal error prints none), the last pass llc starts before it
fails (`-debug-pass=Executions`), on the input the recording llc kept.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rgpu_fuzz.model.outcome import CompileCrash, Outcome
from rgpu_fuzz.pipelines.base import PipelineSpec
from triage.trials import Trials

LLC_22 = "/usr/lib/llvm-22/bin/llc"
MAX_SKIPS = 80
"""Machine passes tried one by one in step 3 at most (each one compile and run)."""

_BISECT = re.compile(r"BISECT: running pass \((\d+)\) (\S+) on (\w+)")
_RUNNING = re.compile(r"Running pass '([^']+)' on (?:function|module) ")
_EXECUTING = re.compile(r"Executing Pass '([^']+)' on Function")


@dataclass(frozen=True)
class Culprit:
    """The result of the search. `passes`: the passes found (argument names, one for
    OptBisect; for the skip test every pass whose absence makes the output right; a crash's
    pass by the description LLVM prints); `method`: `opt-bisect`, `skip`, `crash-stack`,
    `crash-trace` or `` when none was found; `detail`: one line saying how."""

    passes: tuple[str, ...]
    method: str
    detail: str

    @property
    def name(self) -> str:
        return " or ".join(self.passes) if self.passes else "unknown"

    def line(self) -> str:
        return f"culprit pass: {self.name} ({self.detail})"


def crash_pass(log: str) -> str | None:
    """The pass of the innermost `Running pass 'NAME' on function|module` line of an LLVM
    stack dump (legacy pass manager, as llc's code generation prints it; a module pass such
    as LLVM 19's 'Function register usage analysis' runs on the module), or None. The pass
    managers themselves ('Function Pass Manager', 'CallGraph Pass Manager') only hold the
    pass that crashed."""
    found = [n for n in _RUNNING.findall(log) if not n.endswith("Pass Manager")]
    return found[-1] if found else None


def executing_pass(llc: str, args: list[str], source: Path) -> str | None:
    """The last pass llc starts before it fails (`-debug-pass=Executions` prints each
    pass as it starts; a fatal error such as GlobalISel's "unable to legalize" prints no
    stack dump), or None when llc does not fail."""
    proc = subprocess.run([llc, *args, "-debug-pass=Executions", "-o", os.devnull,
                           str(source)], capture_output=True, text=True, timeout=300,
                          check=False)
    found = _EXECUTING.findall(proc.stderr)
    return found[-1] if proc.returncode != 0 and found else None


def bisect_passes(llc: str, args: list[str], source: Path) -> list[tuple[int, str]]:
    """The optional passes OptBisect numbers for this compile: (number, argument name)."""
    proc = subprocess.run([llc, *args, "-opt-bisect-limit=-1", "-o", os.devnull, str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    return [(int(n), name) for n, name, _ in _BISECT.findall(proc.stderr)]


def machine_passes(llc: str, args: list[str], source: Path) -> list[str]:
    """The code generation pass arguments after instruction selection, in order, from
    `-debug-pass=Arguments` (its first `Pass Arguments:` line is the codegen pipeline)."""
    proc = subprocess.run([llc, *args, "-debug-pass=Arguments", "-o", os.devnull, str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("Pass Arguments:")),
                "")
    names = [a.lstrip("-") for a in line.split()[2:]]
    return names[names.index("finalize-isel") + 1:] if "finalize-isel" in names else []


def with_instances(names: list[str]) -> list[str]:
    """`P` for a pass's first run, `P,K` for its run K (0-based, llc's `-stop-after=P,K`)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n},{k}")
    return out


def changing_passes(llc: str, args: list[str], source: Path, names: list[str]) -> list[str]:
    """The passes of `names` whose MIR before and after differ (analyses and passes with
    nothing to do here are left out; a pass llc cannot stop at is left out too)."""
    out = []
    with tempfile.TemporaryDirectory(prefix="rgpu-culprit-") as tmp:
        for p in with_instances(names):
            mir = []
            for where in ("before", "after"):
                path = Path(tmp, f"{where}.mir")
                proc = subprocess.run([llc, *args, f"-stop-{where}={p}", "-o", str(path),
                                       str(source)], capture_output=True, timeout=120,
                                      check=False)
                mir.append(path.read_text() if proc.returncode == 0 and path.exists() else None)
            if mir[0] is not None and mir[1] is not None and mir[0] != mir[1]:
                out.append(p)
    return out


class Search:
    """The culprit search of one case on one spec (the arbiter's outcome from `trials`)."""

    def __init__(self, trials: Trials, spec: str) -> None:
        self.trials = trials
        parsed = PipelineSpec.parse(spec)
        given = next((o.split("=", 1)[1] for o in parsed.options if o.startswith("llc=")),
                     None)
        self.llc = given or LLC_22
        self.base = str(PipelineSpec(parsed.name, tuple(
            o for o in parsed.options if not o.startswith("llc="))))
        self._dir = Path(tempfile.mkdtemp(prefix="rgpu-culprit-"))
        self._count = 0

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def _wrapper(self, mode: str) -> str:
        self._count += 1
        path = self._dir / f"llc-{self._count}"
        script = Path(__file__).with_name("llc_passes.py")
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "{self.llc}" '
                        f'"{mode}" "$@"\n')
        path.chmod(0o755)
        return str(path)

    def wrong(self, mode: str) -> bool | None:
        """Whether the case is wrong with llc in `mode` (None: no answer, e.g. llc failed)."""
        trial = self.trials.run(f"{self.base}:llc={self._wrapper(mode)}")
        return None if trial.agrees is None else not trial.agrees

    def run(self) -> Culprit:
        record = self._dir / "record"
        first = self.trials.run(f"{self.base}:llc={self._wrapper(f'record={record}')}")
        if isinstance(first.outcome, CompileCrash) and (record / "args.json").exists():
            args = json.loads((record / "args.json").read_text())
            name = executing_pass(self.llc, args, record / "in.ll")
            if name is not None:
                return Culprit((name,), "crash-trace", (
                    f"the last pass {Path(self.llc).name} -debug-pass=Executions starts "
                    "before it fails"))
        if first.agrees is None:
            return Culprit((), "", f"no search: {first.why[:120]}")
        if first.agrees:
            return Culprit((), "", f"no search: right with {self.llc}")
        args = json.loads((record / "args.json").read_text())
        source = record / "in.ll"
        numbered = bisect_passes(self.llc, args, source)
        if numbered and self.wrong("bisect=0") is False:
            found = self._bisect(len(numbered), lambda n: self.wrong(f"bisect={n}"))
            if found is not None:
                name = dict(numbered)[found]
                return Culprit((name,), "opt-bisect", (
                    f"llc -opt-bisect-limit: wrong after optional pass {found} of "
                    f"{len(numbered)}, {name}; right with the {found - 1} before it"))
        candidates = changing_passes(self.llc, args, source, machine_passes(self.llc, args, source))
        fixers = [p for p in candidates[:MAX_SKIPS] if self.wrong(f"skip={p}") is False]
        if fixers:
            return Culprit(tuple(fixers), "skip", (
                f"wrong with every optional pass left out; right when llc runs without "
                f"{' or without '.join(fixers)} (-stop-before/-start-after around MIR; "
                f"{min(len(candidates), MAX_SKIPS)} MIR-changing machine passes tried)"))
        return Culprit((), "", (f"wrong with no optional pass, and no single machine pass "
                                f"of {len(candidates)} left out makes it right"))

    @staticmethod
    def _bisect(total: int, wrong: Callable[[int], bool | None]) -> int | None:
        """The smallest N in 1..total with wrong(N), given wrong(0) is False and wrong(total)
        is True (None when a step has no answer)."""
        lo, hi = 0, total
        while hi - lo > 1:
            mid = (lo + hi) // 2
            w = wrong(mid)
            if w is None:
                return None
            lo, hi = (lo, mid) if w else (mid, hi)
        return hi


def find_culprit(trials: Trials, spec: str, outcome: Outcome | None = None) -> Culprit:
    """The culprit pass of the finding of `spec` on `trials.case`; `outcome` is the spec's
    outcome when known (a compile crash's log names the pass)."""
    if isinstance(outcome, CompileCrash):
        name = crash_pass(outcome.log)
        if name is not None:
            return Culprit((name,), "crash-stack", "the innermost pass of LLVM's stack dump")
    search = Search(trials, spec)
    try:
        return search.run()
    finally:
        search.close()


__all__ = ["Culprit", "bisect_passes", "crash_pass", "find_culprit", "machine_passes"]
