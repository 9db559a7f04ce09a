"""Debian LLVM tools for tests that compare with LLVM's own output (BRIEF: tests install what
they need). `debian_llvm_tool("llc", 19)` gives `/usr/lib/llvm-19/bin/llc`, running
`apt-get install -y llvm-19` once when it is missing, and skips the test with the reason
only when apt cannot provide it."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest


@cache
def _apt_install(package: str) -> str | None:
    """None when installed, else why not (one line)."""
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if not shutil.which("apt-get"):
        return "apt-get not found"
    for cmd in ([*sudo, "apt-get", "update", "-qq"],
                [*sudo, "apt-get", "install", "-y", "-qq", package]):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"{' '.join(cmd)}: {e}"
        if proc.returncode != 0:
            return f"{' '.join(cmd)}: {(proc.stderr or proc.stdout).strip()[-200:]}"
    return None


def debian_llvm_tool(tool: str, major: int) -> str:
    """The path of Debian's `llvm-<major>` tool `tool`, installing the package if needed."""
    path = Path(f"/usr/lib/llvm-{major}/bin/{tool}")
    if not path.exists():
        why = _apt_install(f"llvm-{major}")
        if why is not None or not path.exists():
            pytest.skip(f"{path} unavailable: {why or 'not in the package'}")
    return str(path)


@cache
def _pip_install(requirement: str) -> str | None:
    """None when `pip install requirement` into this interpreter succeeded, else why not."""
    import sys

    cmd = [sys.executable, "-m", "pip", "install", "--quiet", requirement]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{' '.join(cmd)}: {e}"
    if proc.returncode != 0:
        return f"{' '.join(cmd)}: {(proc.stderr or proc.stdout).strip()[-200:]}"
    return None


def pypi_ptxas() -> str:
    """NVIDIA's ptxas from the `nvidia-cuda-nvcc` wheel, installed into this environment when
    missing (never a `ptxas` on PATH); skips with the reason when PyPI cannot provide it."""
    import fcntl
    import importlib
    import sys

    from rgpu_fuzz.pipelines.nvptx_gpu import find_ptxas

    found = find_ptxas()
    if found is None:
        # one pip at a time per environment: xdist workers ask at the same moment
        with open(Path(sys.prefix) / ".rgpu-ptxas.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            importlib.invalidate_caches()
            why = None if find_ptxas() else _pip_install("nvidia-cuda-nvcc")
        importlib.invalidate_caches()
        found = find_ptxas()
        if found is None:
            pytest.skip(f"ptxas unavailable: {why or 'not in nvidia-cuda-nvcc'}")
    return found


def debian_binary(binary: str, package: str) -> str:
    """The path of `binary` on PATH, running `apt-get install -y <package>` once when it is
    missing (e.g. `debian_binary("chromium", "chromium")`); skips with the reason when apt
    cannot provide it."""
    found = shutil.which(binary)
    if found is None:
        why = _apt_install(package)
        found = shutil.which(binary)
        if found is None:
            pytest.skip(f"{binary} unavailable: {why or f'not in Debian package {package}'}")
    return found
