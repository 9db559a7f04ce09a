"""Code objects of cases (conformance, corpus, generated) for the decoder's differential
tests: compiled in one child process (`build_cases.py`), linked by ld.lld, cached on disk by
content hash so xdist workers and repeated runs share one build."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import llvmlite

from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.process import run_bounded

_BUILD = Path(__file__).parent / "build_cases.py"
_CACHE = Path(tempfile.gettempdir()) / f"rgpu-test-decode-cases-{os.getuid()}"


def _key(case_toml: str, cpu: str, opt: int) -> str:
    h = hashlib.sha256()
    for part in (case_toml, cpu, str(opt), llvmlite.__version__, _BUILD.read_text()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


def build(plan: list[tuple[str, str, int]]) -> list[Path | str]:
    """For each (case TOML, cpu, opt): the linked code object's path, or the one-line reason
    the case does not compile."""
    _CACHE.mkdir(exist_ok=True)
    paths = [_CACHE / f"{_key(toml, cpu, opt)}.o" for toml, cpu, opt in plan]
    todo = [(job, p) for job, p in zip(plan, paths, strict=True)
            if not p.exists() and not Path(f"{p}.skip").exists()]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            jobs = [{"case": toml, "cpu": cpu, "opt": opt, "out": str(Path(tmp, p.name))}
                    for (toml, cpu, opt), p in todo]
            jobs_file = Path(tmp, "jobs.json")
            jobs_file.write_text(json.dumps(jobs))
            proc = run_bounded([sys.executable, str(_BUILD), str(jobs_file)], timeout=3600)
            if proc.returncode != 0:
                raise RuntimeError(f"build_cases failed ({proc.ended_by}): {proc.stderr[-2000:]}")
            for job, (_, path) in zip(jobs, todo, strict=True):
                for suffix in ("", ".skip"):
                    if Path(job["out"] + suffix).exists():
                        os.replace(job["out"] + suffix, f"{path}{suffix}")
    out: list[Path | str] = []
    for path in paths:
        skip = Path(f"{path}.skip")
        if skip.exists():
            out.append(skip.read_text())
            continue
        hsaco = path.with_suffix(".hsaco")
        if not hsaco.exists():
            linked = link(path.read_bytes())
            if isinstance(linked, LinkFailure):
                raise RuntimeError(f"link failed for {path}: {linked.log}")
            tmp = hsaco.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(linked)
            os.replace(tmp, hsaco)
        out.append(hsaco)
    return out
