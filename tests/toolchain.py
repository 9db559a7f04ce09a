"""External tools for tests that compare with real tools' output. `make test` installs them
before pytest starts (`tests/install_tools.py`); this is the fallback for a bare `pytest`:
`debian_llvm_tool("llc", 19)` gives `/usr/lib/llvm-19/bin/llc`, running `apt-get install
llvm-19` when it is missing, one installer at a time on the machine. The test skips with the
reason only when the tool cannot be had here, and fails when apt answered and the install
still failed."""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path
from typing import NoReturn

import pytest

from tests.install_tools import LOCK, Result, Verdict, install_apt, install_lock, install_pip

STEP_RAN = "RGPU_TOOLS_STEP"
"""Set by `make test` once `python -m tests.install_tools test` has run: a tool still missing
then could not be had, and the tests skip at once instead of asking apt again."""


@cache
def _install(kind: str, package: str) -> Result:
    """Install `package` (`kind` "apt" or "pip") when missing, one installer at a time on the
    machine (`install_tools.LOCK`: xdist workers ask at the same moment). Under xdist a
    verdict other than installed is kept for the rest of the run in a file beside the lock,
    so the other workers do not ask apt again."""
    if os.environ.get(STEP_RAN):
        return Result(package, Verdict.UNAVAILABLE, "the install step before pytest "
                      "(python -m tests.install_tools) could not install it; see its output")
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    memo = LOCK.with_name(f"{LOCK.stem}-{run}-{package}.verdict") if run else None
    with install_lock():
        if memo is not None and memo.exists():
            verdict, _, why = memo.read_text().partition(" ")
            return Result(package, Verdict(verdict), why)
        (result,) = install_apt([package]) if kind == "apt" else install_pip([package])
        if memo is not None and result.verdict in (Verdict.UNAVAILABLE, Verdict.FAILED):
            memo.write_text(f"{result.verdict.value} {result.why}")
    return result


def _skip_or_fail(what: str, result: Result, missing: str) -> NoReturn:
    """Skip when `what` cannot be had here; fail when it could and its install failed."""
    why = result.why or missing
    if result.verdict is Verdict.FAILED:
        pytest.fail(f"{what}: installing {result.package} failed: {why}", pytrace=False)
    pytest.skip(f"{what} unavailable: {why}")


def debian_llvm_tool(tool: str, major: int) -> str:
    """The path of Debian's `llvm-<major>` tool `tool`, installing the package if needed."""
    path = Path(f"/usr/lib/llvm-{major}/bin/{tool}")
    if not path.exists():
        result = _install("apt", f"llvm-{major}")
        if not path.exists():
            _skip_or_fail(str(path), result, "not in the package")
    return str(path)


def pypi_ptxas() -> str:
    """NVIDIA's ptxas from the `nvidia-cuda-nvcc` wheel, installed into this environment when
    missing (never a `ptxas` on PATH); skips with the reason when PyPI cannot provide it."""
    import importlib

    from rgpu_fuzz.pipelines.nvptx_gpu import find_ptxas

    found = find_ptxas()
    if found is None:
        result = _install("pip", "nvidia-cuda-nvcc")
        importlib.invalidate_caches()
        found = find_ptxas()
        if found is None:
            _skip_or_fail("ptxas", result, "not in nvidia-cuda-nvcc")
    return found


def debian_binary(binary: str, package: str) -> str:
    """The path of `binary` on PATH, running `apt-get install -y <package>` once when it is
    missing (e.g. `debian_binary("chromium", "chromium")`); skips with the reason when apt
    cannot provide it."""
    found = shutil.which(binary)
    if found is None:
        result = _install("apt", package)
        found = shutil.which(binary)
        if found is None:
            _skip_or_fail(binary, result, f"not in Debian package {package}")
    return found
