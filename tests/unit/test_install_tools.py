"""The install step before pytest (tests/install_tools.py) and the skip summary
(tests/conftest.py): one installer at a time, an install that apt could do and did not is an
error, and the end of a run says what was skipped and why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.install_tools import (
    Verdict,
    apt_verdict,
    dpkg_installed,
    install_apt,
    install_lock,
    main,
    pip_verdict,
)

ROOT = Path(__file__).parents[2]
needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian system")

HOLDER = """
import sys, time
from pathlib import Path
from tests.install_tools import install_lock
lock, log = Path(sys.argv[1]), Path(sys.argv[2])
with install_lock(lock):
    with log.open("a") as f:
        f.write(f"in {time.monotonic()}\\n")
    time.sleep(0.5)
    with log.open("a") as f:
        f.write(f"out {time.monotonic()}\\n")
"""


def test_two_installers_hold_the_lock_one_after_the_other(tmp_path: Path) -> None:
    """Two processes started together: the second enters only after the first left (the
    xdist workers' race on dpkg's lock)."""
    lock, log = tmp_path / "tools.lock", tmp_path / "log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(log)], env=env)
             for _ in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    events = [line.split() for line in log.read_text().splitlines()]
    assert [e[0] for e in events] == ["in", "out", "in", "out"]
    assert float(events[2][1]) >= float(events[1][1])


def test_the_lock_is_free_again_after_its_holder_left(tmp_path: Path) -> None:
    with install_lock(tmp_path / "l"):
        pass
    start = time.monotonic()
    with install_lock(tmp_path / "l"):
        assert time.monotonic() - start < 1.0


@pytest.mark.parametrize(("update_ok", "candidate", "rc", "verdict"), [
    (True, True, 0, Verdict.INSTALLED),
    (True, True, 100, Verdict.FAILED),  # the archive answered and has it: an error
    (False, True, 100, Verdict.UNAVAILABLE),  # offline: the list is stale, the fetch failed
    (True, False, 100, Verdict.UNAVAILABLE),  # the archive does not carry it (not Debian 12+)
])
def test_a_failed_apt_install_is_an_error_only_where_apt_could_do_it(
        update_ok: bool, candidate: bool, rc: int, verdict: Verdict) -> None:
    assert apt_verdict(update_ok=update_ok, candidate=candidate, install_rc=rc) is verdict


@pytest.mark.parametrize(("rc", "output", "verdict"), [
    (0, "", Verdict.INSTALLED),
    (1, "WARNING: Retrying ... NewConnectionError('Failed to establish a new connection') "
        "ERROR: No matching distribution found for nvidia-cuda-nvcc", Verdict.UNAVAILABLE),
    (1, "ERROR: Could not find a version that satisfies the requirement nvidia-cuda-nvcc",
     Verdict.UNAVAILABLE),
    (1, "ERROR: Could not install packages due to an OSError: [Errno 28] No space left",
     Verdict.FAILED),
])
def test_a_failed_pip_install_is_an_error_unless_pypi_cannot_provide_it(
        rc: int, output: str, verdict: Verdict) -> None:
    """The messages are pip 24's own (an offline index, a platform without a wheel, a full
    disk)."""
    assert pip_verdict(rc, output) is verdict


@needs_dpkg
def test_what_dpkg_has_is_present_and_costs_no_apt_run() -> None:
    """`dpkg` itself is installed wherever dpkg-query runs."""
    assert dpkg_installed("dpkg")
    assert not dpkg_installed("rgpu-fuzz-no-such-package")
    start = time.monotonic()
    assert [r.verdict for r in install_apt(["dpkg"])] == [Verdict.PRESENT]
    assert time.monotonic() - start < 5.0


@needs_dpkg
def test_the_step_is_a_quiet_no_op_when_everything_is_there(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`make fuzz`'s step (llvm-22) a second time: exit 0, nothing installed, nothing said."""
    if not dpkg_installed("llvm-22"):
        pytest.skip("llvm-22 is not installed here")
    assert main(["fuzz"]) == 0
    assert capsys.readouterr() == ("", "")


@needs_dpkg
def test_a_package_the_archive_does_not_carry_is_unavailable_not_an_error() -> None:
    """The real apt (its `apt-get update` and `apt-cache show`): the tests needing such a
    package skip with the reason."""
    (result,) = install_apt(["rgpu-fuzz-no-such-package"])
    assert result.verdict is Verdict.UNAVAILABLE, result
    assert result.why


SKIPPING = """
import pytest

@pytest.mark.skip(reason="tool A missing")
def test_a(): pass

@pytest.mark.skip(reason="tool A missing")
def test_b(): pass

def test_c(): pytest.skip("tool B missing")

def test_d(): pass
"""


def test_the_run_ends_with_one_line_of_skips_by_reason(tmp_path: Path) -> None:
    """A real pytest run with tests/conftest.py's hook, under xdist as `make test` runs it:
    the line counts each reason once, the commonest first, and is written to the file."""
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    out = tmp_path / "skips.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RGPU_SKIP_SUMMARY": str(out)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "2",
                           "-q", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    line = "skip summary: 3 skipped: 2× tool A missing; 1× tool B missing"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert line in proc.stdout.splitlines()
    assert out.read_text() == line + "\n"
