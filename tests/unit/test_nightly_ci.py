"""`ci/nightly.sh` end to end with a budget of seconds: two shards of a real campaign with the
seeded `xor2or` plugin, the merge, the recheck, the reports and the history store; then the
next nights: the bug taken out of the plugin (recheck: fixed, carried in the history) and put
back (recheck: regressed, exit 1).

Independent expectations: seeds 56..63 hold the two kernels the xor → or change alters
(`test_campaign`), shard 1/2 runs seeds 64..71 (chunk c runs seeds 56 + 8c.., shard i takes
c % 2 == i), and the exit status policy is the one ci/README.md states."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.unit.test_recheck import FIXED, MISCOMPILE
from triage.store import BucketStatus, FindingStore

NIGHTLY = Path(__file__).resolve().parents[2] / "ci" / "nightly.sh"


def nightly(tmp_path: Path, *step: str, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RGPU_FUZZ": f"{sys.executable} -m rgpu_fuzz",
           "NIGHTLY_OUT": str(tmp_path / "out"), "NIGHTLY_TIME": "60s",
           "NIGHTLY_SHARDS": "2", "NIGHTLY_JOBS": "1", "NIGHTLY_CASES": "8",
           "NIGHTLY_SEED": "56", "NIGHTLY_REDUCE_BUDGET": "0",
           "NIGHTLY_PIPELINES": "ref,llvm-cpu-xor2or:O0",
           "NIGHTLY_PLUGINS": str(tmp_path / "plugin.py"),
           "NIGHTLY_HISTORY": str(tmp_path / "history" / "findings.sqlite"), **settings}
    return subprocess.run(["bash", str(NIGHTLY), *step], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)


def test_nightly_runs_end_to_end_and_follows_fixes(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_bytes(MISCOMPILE.read_bytes())
    out = tmp_path / "out"
    first = nightly(tmp_path, NIGHTLY_REPORTS="2")
    assert first.returncode == 0, first.stderr[-3000:]

    shards = {d.name: json.loads((d / "summary.json").read_text())
              for d in sorted(out.glob("shard-*"))}
    assert set(shards) == {"shard-0-of-2", "shard-1-of-2"}
    assert [s["config"]["shard"] for s in shards.values()] == [[0, 2], [1, 2]]
    assert all(s["cases"] == 8 for s in shards.values())
    assert shards["shard-0-of-2"]["findings"] == 2          # seeds 59 and 62
    assert shards["shard-1-of-2"]["findings"] == 0          # seeds 64..71

    merged = out / "merged" / "findings.sqlite"
    assert not (out / "merged" / "findings.sqlite-wal").exists()  # one file, for an artefact
    with FindingStore(merged, readonly=True) as store:
        buckets = store.buckets()
        runs = store.runs()
    # seeds 59 and 62, one bug: one bucket by bug key, though the shards do not reduce
    assert [(str(b.signature), b.count) for b in buckets] == [
        ("wrong-code|llvm-cpu-xor2or:O0|probe=xor:int", 2)]
    assert sorted(r.kind for r in runs) == ["campaign", "campaign", "recheck"]
    assert sorted(r.settings.get("shard", [0, 0])[0] for r in runs
                  if r.kind == "campaign") == [0, 1]

    recheck = json.loads((out / "recheck.json").read_text())
    assert recheck["summary"]["reproduces"] == 1
    report = (out / "nightly.md").read_text()
    assert "| shard-0-of-2 | 8 |" in report and "1 reproduces" in report
    for b in buckets:
        assert f"[{b.id}](buckets/{b.id}.md)" in report
        assert "## Kernel" in (out / "buckets" / f"{b.id}.md").read_text()
    assert {b.id for b in buckets} <= set((out / "buckets.txt").read_text().split())
    # the campaign report of the joined shards: both shards' 16 cases, both buckets
    joined = json.loads((out / "merged" / "checkpoint.json").read_text())
    assert joined["totals"]["cases"] == 16 and joined["done"] == [0, 1]
    html = (out / "report" / "index.html").read_text()
    assert all(b.id in html for b in buckets) and "<svg" in html
    assert "[report/index.html](report/index.html)" in report

    # the next night: the bug is out of the plugin; the history remembers the fix
    plugin.write_text(FIXED)
    second = nightly(tmp_path, "finish", NIGHTLY_REPORTS="0")
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads((out / "recheck.json").read_text())["summary"]["fixed"] == 1
    assert "### Fixed since the last run" in (out / "nightly.md").read_text()
    with FindingStore(tmp_path / "history" / "findings.sqlite", readonly=True) as history:
        assert {b.status for b in history.buckets()} == {BucketStatus.FIXED}

    # and the night after: the bug is back, a regression, the run fails
    plugin.write_bytes(MISCOMPILE.read_bytes())
    third = nightly(tmp_path, "finish", NIGHTLY_REPORTS="0")
    assert third.returncode == 1, third.stderr[-3000:]
    assert "a fixed bucket came back" in third.stderr
    assert json.loads((out / "recheck.json").read_text())["summary"]["regressed"] == 1
    text = (out / "nightly.md").read_text()
    assert "### Regressions" in text and "new (regression)" in text


def test_nightly_refuses_a_bad_shard_in_one_line(tmp_path: Path) -> None:
    proc = nightly(tmp_path, "shard", "3/2")
    assert proc.returncode == 2
    assert proc.stderr.strip() == 'ci/nightly.sh: error: shard: need 0 <= I < N, got 3/2'


def test_the_workflow_runs_every_shard_of_its_matrix_and_then_finish() -> None:
    import yaml

    flow = yaml.safe_load((NIGHTLY.parent / "github" / "nightly.yml").read_text())
    shard, finish = flow["jobs"]["shard"], flow["jobs"]["finish"]
    matrix = shard["strategy"]["matrix"]["shard"]
    runs = [s["run"] for s in shard["steps"] if "run" in s]
    (command,) = [r for r in runs if "nightly.sh" in r]
    total = int(command.rsplit("/", 1)[1])
    assert command == "ci/nightly.sh shard ${{ matrix.shard }}/" + str(total)
    assert matrix == list(range(total))
    assert finish["needs"] == "shard" and finish["if"] == "always()"
    assert "ci/nightly.sh finish" in [s.get("run") for s in finish["steps"]]
    out = flow["env"]["NIGHTLY_OUT"]
    uploaded = [s["with"]["path"] for s in shard["steps"]
                if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploaded == [f"{out}/shard-*/"]
    triggers = flow.get("on") or flow[True]  # YAML 1.1 reads a bare `on` as true
    assert triggers["schedule"] and "NIGHTLY_SEED" in flow["env"]
