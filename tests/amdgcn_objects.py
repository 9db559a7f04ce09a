"""Test code objects, built in child processes (LLVM aborts on fatal errors), linked with
ld.lld through `rgpu_fuzz.codeobj.link`, and cached on disk by content hash so xdist workers
and repeated runs share one build:

* `build_all()`: the hand-written amdgcn kernels in `tests/data/amdgcn/` (`amdgcn_emit.py`,
  llvmlite directly) for each target and opt level;
* `build_cases(paths)`: case files through our amdgcn lowering (`lowered_emit.py`,
  `gpu_build.build_gpu`); the cache key covers the lowering's and toolchain's sources.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import llvmlite

from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.process import run_bounded

DATA = Path(__file__).parent / "data" / "amdgcn"
KERNEL_FILES = tuple(sorted(p.stem for p in DATA.glob("*.ll")))
TARGETS = ("gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1200")
OPTS = (0, 3)
_EMIT = Path(__file__).parent / "amdgcn_emit.py"
_LOWERED_EMIT = Path(__file__).parent / "lowered_emit.py"
_ROOT = Path(__file__).resolve().parents[1]
_CACHE = Path(tempfile.gettempdir()) / f"rgpu-test-codeobj-{os.getuid()}"


@dataclass(frozen=True)
class Crashed:
    """LLVM aborted while emitting this one (the first error line)."""

    name: str
    cpu: str
    opt: int
    error: str

    @property
    def label(self) -> str:
        return f"{self.name}-{self.cpu}-O{self.opt}"


@dataclass(frozen=True)
class Built:
    """One test code object: its name, the relocatable object and the linked code object."""

    name: str
    cpu: str
    opt: int
    obj: bytes
    hsaco: bytes

    @property
    def label(self) -> str:
        return f"{self.name}-{self.cpu}-O{self.opt}"


def _key(ir: str, cpu: str, opt: int) -> str:
    h = hashlib.sha256()
    for part in (ir, cpu, str(opt), llvmlite.__version__, _EMIT.read_text()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def _emit(todo: list[tuple[str, str, int, Path]],
          script: Path = _EMIT, source_key: str = "ir",
          source: Any = None) -> list[tuple[str, str, int, Path]]:
    """Emit `todo` in one child; when LLVM aborts on a job, record it as crashed and return
    the jobs after it (the emitter writes outputs in order, so the first missing one died)."""
    source = source or (lambda n: str(DATA / f"{n}.ll"))
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [{source_key: source(n), "cpu": c, "opt": o,
                 "out": str(Path(tmp, out.name))} for n, c, o, out in todo]
        jobs_file = Path(tmp, "jobs.json")
        jobs_file.write_text(json.dumps(jobs))
        proc = run_bounded([sys.executable, str(script), str(jobs_file)], timeout=900,
                           cwd=_ROOT)
        done = 0
        for job, (_n, _c, _o, out) in zip(jobs, todo, strict=True):
            if Path(job["out"] + ".outcome").exists():
                os.replace(job["out"] + ".outcome", out.with_suffix(".outcome"))
            elif Path(job["out"]).exists():
                os.replace(job["out"], out)  # atomic: concurrent workers write equal bytes
            else:
                break
            done += 1
        if proc.returncode == 0:
            return []
        if proc.returncode is None or proc.returncode > 0 or done == len(todo):
            raise RuntimeError(f"amdgcn_emit failed ({proc.ended_by}): {proc.stderr[-2000:]}")
        first = next((ln for ln in proc.stderr.splitlines() if "ERROR" in ln), proc.ended_by)
        todo[done][3].with_suffix(".crash").write_text(first)
        return todo[done + 1:]


@contextmanager
def _locked() -> Iterator[None]:
    """One builder at a time (xdist workers collect in parallel): the others wait, then
    find everything in the cache."""
    _CACHE.mkdir(exist_ok=True)
    with (_CACHE / "lock").open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


@cache
def build_all() -> tuple[Built | Crashed, ...]:
    """Every kernel file × target × opt level, built once (one child process for all)."""
    _CACHE.mkdir(exist_ok=True)
    plan = []
    for name in KERNEL_FILES:
        ir = (DATA / f"{name}.ll").read_text()
        for cpu in TARGETS:
            for opt in OPTS:
                plan.append((name, cpu, opt, _CACHE / f"{_key(ir, cpu, opt)}.o"))
    with _locked():
        todo = [p for p in plan
                if not p[3].exists() and not p[3].with_suffix(".crash").exists()]
        while todo:
            todo = _emit(todo)
    built: list[Built | Crashed] = []
    for name, cpu, opt, obj_path in plan:
        if (crash := obj_path.with_suffix(".crash")).exists():
            built.append(Crashed(name, cpu, opt, crash.read_text()))
            continue
        built.append(_linked(name, cpu, opt, obj_path))
    return tuple(built)


@dataclass(frozen=True)
class NotCompiled:
    """The lowering's outcome for a case that does not compile (Unsupported, CompileCrash)."""

    name: str
    cpu: str
    opt: int
    outcome: str

    @property
    def label(self) -> str:
        return f"{self.name}-{self.cpu}-O{self.opt}"


def _lowering_key() -> str:
    h = hashlib.sha256()
    for folder in ("rgpu_fuzz/lower", "rgpu_fuzz/lang", "rgpu_fuzz/model"):
        for p in sorted((_ROOT / folder).rglob("*.py")):
            h.update(p.read_bytes())
    for p in ("rgpu_fuzz/pipelines/gpu_build.py", "rgpu_fuzz/pipelines/toolchain.py",
              "rgpu_fuzz/pipelines/llvm_stages.py", "tests/lowered_emit.py"):
        h.update((_ROOT / p).read_bytes())
    h.update(llvmlite.__version__.encode())
    return h.hexdigest()


@cache
def build_cases(paths: tuple[Path, ...], cpus: tuple[str, ...] = TARGETS,
                opts: tuple[int, ...] = OPTS) -> tuple[Built | Crashed | NotCompiled, ...]:
    """Every case file × cpu × opt through our lowering, linked; one child for all."""
    _CACHE.mkdir(exist_ok=True)
    lowering = _lowering_key()
    plan = []
    for path in paths:
        key_src = lowering + path.read_text()
        for cpu in cpus:
            for opt in opts:
                plan.append((str(path), cpu, opt, _CACHE / f"case-{_key(key_src, cpu, opt)}.o"))
    with _locked():
        todo = [p for p in plan if not p[3].exists()
                and not p[3].with_suffix(".crash").exists()
                and not p[3].with_suffix(".outcome").exists()]
        while todo:
            todo = _emit(todo, _LOWERED_EMIT, "case", lambda n: n)
    out: list[Built | Crashed | NotCompiled] = []
    for name, cpu, opt, obj_path in plan:
        stem = Path(name).stem
        if (crash := obj_path.with_suffix(".crash")).exists():
            out.append(Crashed(stem, cpu, opt, crash.read_text()))
        elif (outcome := obj_path.with_suffix(".outcome")).exists():
            out.append(NotCompiled(stem, cpu, opt, outcome.read_text()))
        else:
            out.append(_linked(stem, cpu, opt, obj_path))
    return tuple(out)


def _linked(name: str, cpu: str, opt: int, obj_path: Path) -> Built:
    obj = obj_path.read_bytes()
    hsaco_path = obj_path.with_suffix(".hsaco")
    if not hsaco_path.exists():
        linked = link(obj)
        if isinstance(linked, LinkFailure):
            raise RuntimeError(f"link failed for {name} {cpu} O{opt}: {linked.log}")
        tmp_path = hsaco_path.with_suffix(f".{os.getpid()}.tmp")
        tmp_path.write_bytes(linked)
        os.replace(tmp_path, hsaco_path)
    return Built(name, cpu, opt, obj, hsaco_path.read_bytes())
