"""Test code objects: the hand-written amdgcn kernels in `tests/data/amdgcn/` compiled by
llvmlite (in a child process, `amdgcn_emit.py`) for each target and opt level and linked with
ld.lld through `rgpu_fuzz.codeobj.link`. Results are cached on disk by content hash, so the
xdist workers and repeated runs share one build.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import llvmlite

from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.process import run_bounded

DATA = Path(__file__).parent / "data" / "amdgcn"
KERNEL_FILES = tuple(sorted(p.stem for p in DATA.glob("*.ll")))
TARGETS = ("gfx942", "gfx90a", "gfx1100")
OPTS = (0, 3)
_EMIT = Path(__file__).parent / "amdgcn_emit.py"
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


def _emit(todo: list[tuple[str, str, int, Path]]) -> list[tuple[str, str, int, Path]]:
    """Emit `todo` in one child; when LLVM aborts on a job, record it as crashed and return
    the jobs after it (the emitter writes outputs in order, so the first missing one died)."""
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [{"ir": str(DATA / f"{n}.ll"), "cpu": c, "opt": o,
                 "out": str(Path(tmp, out.name))} for n, c, o, out in todo]
        jobs_file = Path(tmp, "jobs.json")
        jobs_file.write_text(json.dumps(jobs))
        proc = run_bounded([sys.executable, str(_EMIT), str(jobs_file)], timeout=300)
        done = 0
        for job, (_n, _c, _o, out) in zip(jobs, todo, strict=True):
            if not Path(job["out"]).exists():
                break
            os.replace(job["out"], out)  # atomic: concurrent workers write equal bytes
            done += 1
        if proc.returncode == 0:
            return []
        if proc.returncode is None or proc.returncode > 0 or done == len(todo):
            raise RuntimeError(f"amdgcn_emit failed ({proc.ended_by}): {proc.stderr[-2000:]}")
        first = next((ln for ln in proc.stderr.splitlines() if "ERROR" in ln), proc.ended_by)
        todo[done][3].with_suffix(".crash").write_text(first)
        return todo[done + 1:]


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
    todo = [p for p in plan if not p[3].exists() and not p[3].with_suffix(".crash").exists()]
    while todo:
        todo = _emit(todo)
    built: list[Built | Crashed] = []
    for name, cpu, opt, obj_path in plan:
        if (crash := obj_path.with_suffix(".crash")).exists():
            built.append(Crashed(name, cpu, opt, crash.read_text()))
            continue
        obj = obj_path.read_bytes()
        hsaco_path = obj_path.with_suffix(".hsaco")
        if not hsaco_path.exists():
            linked = link(obj)
            if isinstance(linked, LinkFailure):
                raise RuntimeError(f"link failed for {name} {cpu} O{opt}: {linked.log}")
            tmp_path = hsaco_path.with_suffix(f".{os.getpid()}.tmp")
            tmp_path.write_bytes(linked)
            os.replace(tmp_path, hsaco_path)
        built.append(Built(name, cpu, opt, obj, hsaco_path.read_bytes()))
    return tuple(built)
