"""A campaign killed with SIGKILL while it reduces: the same command, run again, finishes the
interrupted reductions (they used to stay unreduced for good).

The campaign runs in a child process whose reducer hangs (a module on PYTHONPATH replaces
`reduce_finding`), so the kill lands while a reduction is in flight; the rerun reduces for
real. `flipxor` is `ref` with one output bit flipped when the kernel contains `^`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.unit.test_campaign import FLIPXOR
from triage.store import FindingStore

HANGING_REDUCER = textwrap.dedent('''
    import time


    def reduce_finding(job):
        time.sleep(3600)
''')

RUN_WITH_HANGING_REDUCER = textwrap.dedent('''
    import sys

    import hanging_reducer
    import campaigns.orchestrate as campaign
    from rgpu_fuzz.cli import main

    if __name__ == "__main__":  # spawned workers import this file too
        campaign.reduce_finding = hanging_reducer.reduce_finding
        sys.exit(main(sys.argv[1:]))
''')


def test_resume_finishes_reductions_a_kill_interrupted(tmp_path: Path) -> None:
    (tmp_path / "flipxor.py").write_text(FLIPXOR)
    (tmp_path / "hanging_reducer.py").write_text(HANGING_REDUCER)
    (tmp_path / "run_hanging.py").write_text(RUN_WITH_HANGING_REDUCER)
    out = tmp_path / "out"
    args = ["campaign", "--pipelines", "ref,flipxor", "--plugin", str(tmp_path / "flipxor.py"),
            "--chunk", "4", "--jobs", "1", "--time", "10m", "--cases", "8",
            "--reduce-budget", "30s", "--out", str(out), "--json"]
    env = dict(os.environ, COLUMNS="200",
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, str(tmp_path / "run_hanging.py"), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if list((out / "reducing").glob("*.json")):
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the campaign ended before a reduction started"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        unreduced = [b.id for b in store.buckets()
                     if not (out / "reduced" / f"{b.id}.toml").exists()]
    interrupted = list((out / "reducing").glob("*.json"))
    assert interrupted, "nothing was being reduced when the campaign was killed"

    rerun = subprocess.run([sys.executable, "-m", "rgpu_fuzz", *args], capture_output=True,
                           text=True, env=env, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert len(summary["reductions"]) >= len(interrupted)
    assert all(r["reproduced"] for r in summary["reductions"])
    assert not list((out / "reducing").glob("*.json"))
    assert not list((out / "pending").glob("*.toml"))
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        buckets = store.buckets()
        assert buckets
        for b in buckets:  # every bucket reduced, those left unreduced by the kill included
            assert (out / "reduced" / f"{b.id}.toml").exists(), (b.id, unreduced)
            assert str(b.signature).startswith(("wrong-code|flipxor|ops=",
                                                "wrong-code|flipxor|probe="))
