"""Relocatable objects of the decoder's test kernels (`data/decode/*.ll`), compiled by
llvmlite for each target at O0 and O3 in a child process (`tests/amdgcn_emit.py`: LLVM
aborts the process on a fatal error), cached on disk by content hash so xdist workers and
repeated runs share one build."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from functools import cache
from pathlib import Path

import llvmlite

from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.process import run_bounded

DATA = Path(__file__).parent / "data" / "decode"
KERNELS = tuple(sorted(p.stem for p in DATA.glob("*.ll")))
TARGETS = ("gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1200")
OPTS = (0, 3)
_EMIT = Path(__file__).parents[1] / "amdgcn_emit.py"
_CACHE = Path(tempfile.gettempdir()) / f"rgpu-test-decode-{os.getuid()}"


def _key(ir: str, cpu: str, opt: int) -> str:
    h = hashlib.sha256()
    for part in (ir, cpu, str(opt), llvmlite.__version__, _EMIT.read_text()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


@cache
def objects() -> dict[tuple[str, str, int], Path]:
    """(kernel, target, opt) → the relocatable object's path, every one built once."""
    _CACHE.mkdir(exist_ok=True)
    plan = {(name, cpu, opt): _CACHE / f"{_key((DATA / f'{name}.ll').read_text(), cpu, opt)}.o"
            for name in KERNELS for cpu in TARGETS for opt in OPTS}
    todo = [(k, p) for k, p in plan.items() if not p.exists()]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            jobs = [{"ir": str(DATA / f"{n}.ll"), "cpu": c, "opt": o,
                     "out": str(Path(tmp, p.name))} for (n, c, o), p in todo]
            jobs_file = Path(tmp, "jobs.json")
            jobs_file.write_text(json.dumps(jobs))
            proc = run_bounded([sys.executable, str(_EMIT), str(jobs_file)], timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"amdgcn_emit failed ({proc.ended_by}): {proc.stderr[-2000:]}")
            for job, (_, path) in zip(jobs, todo, strict=True):
                os.replace(job["out"], path)  # atomic: concurrent workers write equal bytes
    return plan


def code_object(kernel: str, target: str, opt: int) -> Path:
    """The linked code object (ld.lld) of one test kernel, cached beside its object."""
    obj = objects()[(kernel, target, opt)]
    hsaco = obj.with_suffix(".hsaco")
    if not hsaco.exists():
        linked = link(obj.read_bytes())
        if isinstance(linked, LinkFailure):
            raise RuntimeError(f"link failed for {kernel} {target} O{opt}: {linked.log}")
        tmp = hsaco.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(linked)
        os.replace(tmp, hsaco)
    return hsaco
