"""Link a relocatable AMDGPU object into a shared code object with `ld.lld`, as the ROCm
toolchain does (`ld.lld -shared`; AMDGPUUsage "Code Object"): the loader wants ET_DYN with
resolved R_AMDGPU_REL64 descriptor entry offsets and a dynamic symbol table.

`ld.lld` comes from the `ziglang` wheel (a dependency, so it is always there) or from PATH.
A link failure is a value (`LinkFailure`), never an exception: a bad object is a finding.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rgpu_fuzz.process import run_bounded

__all__ = ["LinkFailure", "find_ld_lld", "link"]

LINK_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkFailure:
    """`ld.lld` refused or crashed: `ended_by` (`exit 1`, `SIGSEGV`, `timeout`), the first
    error line (for a signature) and the whole log."""

    ended_by: str
    first_line: str
    log: str


def find_ld_lld(explicit: str | None = None) -> tuple[str, ...] | None:
    """The command that runs ld.lld: `explicit` if given, else the ziglang wheel's, else
    `ld.lld` / `ld.lld-22` on PATH; None when there is none."""
    if explicit:
        return (explicit,)
    spec = importlib.util.find_spec("ziglang")
    if spec is not None and spec.origin is not None:
        # the wheel's `zig` binary itself: `python -m ziglang` only execs it, and a Python
        # start-up per link would double the cost of linking a small kernel
        zig = Path(spec.origin).with_name("zig")
        if os.access(zig, os.X_OK):
            return (str(zig), "ld.lld")
        return (sys.executable, "-m", "ziglang", "ld.lld")
    for name in ("ld.lld", "ld.lld-22"):
        if found := shutil.which(name):
            return (found,)
    return None


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def link(obj: bytes, *, ld_lld: str | None = None,
         timeout: float = LINK_TIMEOUT_S) -> bytes | LinkFailure:
    """Link `obj` (an ET_REL AMDGPU object) into a shared code object's bytes."""
    cmd = find_ld_lld(ld_lld)
    if cmd is None:
        return LinkFailure(ended_by="missing", first_line="ld.lld not found (pip install "
                           "ziglang, or put ld.lld on PATH)", log="")
    with tempfile.TemporaryDirectory(prefix="rgpu-link-") as tmp:
        src, out = Path(tmp, "k.o"), Path(tmp, "k.hsaco")
        src.write_bytes(obj)
        proc = run_bounded([*cmd, "-shared", "--no-undefined", "-o", str(out), str(src)],
                           timeout=timeout, cwd=Path(tmp))
        log = (proc.stdout + proc.stderr).replace(tmp, "<tmp>")
        if proc.returncode != 0 or not out.exists():
            return LinkFailure(ended_by=proc.ended_by, first_line=_first_error(log) or
                               proc.ended_by, log=log)
        return out.read_bytes()
