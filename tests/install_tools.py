"""Install the external tools the tests (or `make fuzz`) use, once, before pytest starts.

Why a separate step: when every pytest-xdist worker installed a missing Debian package on its
first use, the workers ran `apt-get install` at the same moment, all but one lost dpkg's lock
and their tests skipped. `make test` runs `python -m tests.install_tools test` first: one
process, holding `LOCK` (the same lock `tests/toolchain.py`'s runtime fallback takes), that
installs what is missing and leaves alone what is there (a no-op on a second run).

Exit status: 0 when every tool is there or cannot be had here (no apt-get, not root and no
password-less sudo, an unreachable archive, a package the archive does not carry, a wheel
PyPI has no build of for this platform): the tests that need it then skip and say why. 1 when
the archive (or PyPI) is reachable and the install still failed: a broken install is an
error, not a quiet skip.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

APT: dict[str, tuple[str, ...]] = {
    # llvm-22: llc / llvm-mc / llvm-objdump / llvm-readelf (tests.toolchain.debian_llvm_tool);
    # llvm-19: the LLVM before the lane-VGPR bug (tests/sim/test_llvm_bug_lane_vgpr.py);
    # chromium: the HTML report's rendering (tests/unit/test_campaign_report.py);
    # cvise: the C-Vise wiring (tests/unit/test_cvise.py).
    "test": ("llvm-22", "llvm-19", "chromium", "cvise"),
    # llvm-22's llc: the known-bug recheck of a campaign (triage/known_bugs.toml).
    "fuzz": ("llvm-22",),
}
"""`make` target → the Debian packages it uses."""

PIP: dict[str, tuple[str, ...]] = {
    # NVIDIA's ptxas validates our PTX without a GPU (tests/unit/test_nvptx.py).
    "test": ("nvidia-cuda-nvcc",),
    "fuzz": (),
}
"""`make` target → the wheels it uses beyond pyproject's `dev` extra."""

LOCK = Path(tempfile.gettempdir()) / "rgpu-fuzz-tools.lock"
"""One installer at a time on this machine (this step and every test worker)."""

APT_TIMEOUT_S = 1800
DPKG_LOCK_WAIT_S = 600
"""apt-get waits this long for dpkg's lock held by someone else (unattended-upgrades)."""


class Verdict(Enum):
    """What one tool's install came to."""

    PRESENT = "present"
    INSTALLED = "installed"
    UNAVAILABLE = "unavailable"
    """cannot be had here: the tests that need it skip with the reason."""
    FAILED = "failed"
    """could be had and the install failed: an error."""


@dataclass(frozen=True)
class Result:
    """One package's verdict and, unless present or installed, why (one line)."""

    package: str
    verdict: Verdict
    why: str = ""


@contextmanager
def install_lock(path: Path = LOCK) -> Iterator[None]:
    """Hold `path` (fcntl, so it is released when the holder dies)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _run(cmd: Sequence[str], timeout: float = APT_TIMEOUT_S) -> tuple[int, str]:
    """Exit status and the output (stderr, else stdout), on one line, the last 300 characters
    when the status is not 0."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout,
                              check=False, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, f"{' '.join(cmd)}: {e}"
    if proc.returncode == 0:
        return 0, proc.stdout.strip()
    return proc.returncode, " ".join((proc.stderr.strip() or proc.stdout.strip()).split())[-300:]


def dpkg_installed(package: str) -> bool:
    """Whether dpkg has `package` installed (`dpkg-query` status `install ok installed`)."""
    if shutil.which("dpkg-query") is None:
        return False
    rc, status = _run(["dpkg-query", "-W", "-f=${Status}", package], timeout=60)
    return rc == 0 and status == "install ok installed"


def _root_prefix() -> list[str] | None:
    """[] as root, ["sudo", "-n"] with password-less sudo, else None."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and _run(["sudo", "-n", "true"], timeout=30)[0] == 0:
        return ["sudo", "-n"]
    return None


def has_candidate(package: str) -> bool:
    """Whether the apt archive knows a version of `package` (`apt-cache show`)."""
    rc, _ = _run(["apt-cache", "show", "--no-all-versions", package], timeout=120)
    return rc == 0


def apt_verdict(*, update_ok: bool, candidate: bool, install_rc: int) -> Verdict:
    """The rule (module docstring): a failed install is an error only where the archive
    answered (`apt-get update` succeeded) and carries the package."""
    if install_rc == 0:
        return Verdict.INSTALLED
    if not update_ok or not candidate:
        return Verdict.UNAVAILABLE
    return Verdict.FAILED


def install_apt(packages: Sequence[str]) -> list[Result]:
    """Install the missing ones of `packages` (the caller holds the lock)."""
    missing = [p for p in packages if not dpkg_installed(p)]
    out = [Result(p, Verdict.PRESENT) for p in packages if p not in missing]
    if not missing:
        return out
    if shutil.which("apt-get") is None or shutil.which("dpkg-query") is None:
        return out + [Result(p, Verdict.UNAVAILABLE, "not a Debian system (no apt-get)")
                      for p in missing]
    prefix = _root_prefix()
    if prefix is None:
        return out + [Result(p, Verdict.UNAVAILABLE, f"not root and no password-less sudo: "
                             f"run `sudo apt-get install {p}`") for p in missing]
    wait = f"DPkg::Lock::Timeout={DPKG_LOCK_WAIT_S}"
    update_rc, update_why = _run([*prefix, "apt-get", "-o", wait, "update", "-qq"])
    for package in missing:
        candidate = has_candidate(package)
        if not candidate:
            out.append(Result(package, Verdict.UNAVAILABLE,
                              f"apt has no package {package}"
                              + ("" if update_rc == 0 else f" (apt-get update: {update_why})")))
            continue
        rc, why = _run([*prefix, "apt-get", "-o", wait, "install", "-y", "-qq", package])
        verdict = apt_verdict(update_ok=update_rc == 0, candidate=candidate, install_rc=rc)
        if verdict is Verdict.UNAVAILABLE:
            why = f"archive unreachable (apt-get update: {update_why}); install: {why}"
        out.append(Result(package, verdict, "" if verdict is Verdict.INSTALLED else why))
    return out


OFFLINE = ("NewConnectionError", "Failed to establish a new connection",
           "Temporary failure in name resolution", "Network is unreachable",
           "ProxyError", "ConnectTimeoutError")
NO_BUILD = ("No matching distribution found", "Could not find a version that satisfies")


def pip_verdict(rc: int, output: str) -> Verdict:
    """A failed pip install is unavailable when PyPI did not answer or has no wheel for this
    platform; any other failure (a broken environment, a full disk) is an error."""
    if rc == 0:
        return Verdict.INSTALLED
    if any(s in output for s in OFFLINE) or any(s in output for s in NO_BUILD):
        return Verdict.UNAVAILABLE
    return Verdict.FAILED


def _pip_present(requirement: str) -> bool:
    if requirement == "nvidia-cuda-nvcc":
        from rgpu_fuzz.pipelines.nvptx_gpu import find_ptxas

        importlib.invalidate_caches()
        return find_ptxas() is not None
    return importlib.util.find_spec(requirement.replace("-", "_")) is not None


def install_pip(requirements: Sequence[str]) -> list[Result]:
    """pip-install the missing ones of `requirements` into this interpreter's environment."""
    out = []
    for req in requirements:
        if _pip_present(req):
            out.append(Result(req, Verdict.PRESENT))
            continue
        try:
            proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", req],
                                  capture_output=True, text=True, timeout=APT_TIMEOUT_S,
                                  check=False)
            rc, text = proc.returncode, proc.stdout + proc.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            rc, text = 127, str(e)
        verdict = pip_verdict(rc, text)
        if verdict is Verdict.INSTALLED and not _pip_present(req):
            verdict, text = Verdict.FAILED, f"pip installed {req} but it is not importable"
        out.append(Result(req, verdict, "" if verdict is Verdict.INSTALLED
                          else " ".join(text.split())[-300:]))
    return out


def install(target: str) -> list[Result]:
    """Everything `target` ("test" or "fuzz") uses, under the lock."""
    with install_lock():
        return install_apt(APT[target]) + install_pip(PIP[target])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.install_tools",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=sorted(APT))
    args = parser.parse_args(argv)
    results = install(args.target)
    for r in results:
        if r.verdict is Verdict.INSTALLED:
            print(f"tools: installed {r.package}")
        elif r.verdict is not Verdict.PRESENT:
            print(f"tools: {r.package} {r.verdict.value}: {r.why}", file=sys.stderr)
    failed = [r.package for r in results if r.verdict is Verdict.FAILED]
    if failed:
        print(f"tools: could not install {', '.join(failed)} although the archive answered",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
