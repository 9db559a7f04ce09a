"""Debian `llvm-22` for differential tests (one shared session fixture, BRIEF "Environment").

The tools are installed with apt-get when missing (`apt-get update` once, then
`apt-get install -y llvm-22`, under a file lock so xdist workers do it once); a test skips
with the reason only when that fails (no apt, no network, not root).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from rgpu_fuzz.process import run_bounded

LLVM22 = Path("/usr/lib/llvm-22/bin")
_TOOLS = ("llvm-readelf", "llvm-objdump", "llc", "llvm-mc")


def _present() -> bool:
    return all((LLVM22 / t).exists() for t in _TOOLS)


def _install() -> str | None:
    """Install llvm-22; the reason it could not, or None."""
    if shutil.which("apt-get") is None:
        return "apt-get not found (not a Debian system)"
    lock = Path(tempfile.gettempdir(), "rgpu-apt-llvm22.lock")
    with lock.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        if _present():
            return None
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        update = run_bounded(["apt-get", "update"], timeout=600, env=env)
        if update.returncode != 0:
            return f"apt-get update failed ({update.ended_by}): {update.stderr.strip()[-200:]}"
        install = run_bounded(["apt-get", "install", "-y", "llvm-22"], timeout=900, env=env)
        if install.returncode != 0 or not _present():
            return (f"apt-get install llvm-22 failed ({install.ended_by}): "
                    f"{install.stderr.strip()[-200:]}")
    return None


@pytest.fixture(scope="session")
def llvm22() -> Path:
    """The directory holding Debian's llvm-22 tools (installed here when missing)."""
    if not _present():
        if os.environ.get("RGPU_NO_APT"):
            pytest.skip("llvm-22 missing and RGPU_NO_APT is set")
        reason = _install()
        if reason is not None:
            pytest.skip(f"llvm-22 unavailable: {reason}")
    return LLVM22
