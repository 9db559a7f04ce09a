"""Fixed-verification: a real campaign with the seeded `xor2or` plugin files
buckets; `triage recheck` with the bug taken out of the plugin (the pipeline is plain
`llvm-cpu` again) marks them fixed with the versions that fixed them; with the plugin back
it reopens them as regressions. Real SQLite, real LLVM, real worker processes.

Expected values come from outside the code under test: the plugin's hash from hashlib over
the file, LLVM's version from llvmlite, the host name from `socket`, and which seeds the bug
changes from `test_campaign` (seeds 56..63 hold two kernels the xor → or change alters)."""

from __future__ import annotations

import hashlib
import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from rgpu_fuzz.model.case import Expect, ExpectStatus
from tests.corpus.test_corpus import expectation_marks
from triage.store import BucketStatus, Event, FindingStore

MISCOMPILE = seeded_plugin("miscompile.py")
FIXED = '''"""The seeded xor -> or bug taken out: `llvm-cpu-xor2or` is plain `llvm-cpu` again."""
from rgpu_fuzz.pipelines.llvm_cpu import LlvmCpuPipeline


class XorToOr(LlvmCpuPipeline):
    name = "llvm-cpu-xor2or"
    description = "llvm-cpu; the seeded bug is fixed"
'''


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    assert rc in (0, 1), out.err
    return rc, json.loads(out.out)


def sha16(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@pytest.fixture
def campaign(tmp_path: Path) -> tuple[Path, Path]:
    """A small real campaign: seeds 56..63 through `ref` and the seeded plugin, unreduced."""
    root = tmp_path / "recheck"
    root.mkdir()
    plugin = root / "plugin.py"
    plugin.write_bytes(MISCOMPILE.read_bytes())
    out = root / "out"
    rc = main(["campaign", "--pipelines", "ref,llvm-cpu-xor2or:O0", "--plugin", str(plugin),
               "--chunk", "8", "--cases", "8", "--seed-start", "56", "--jobs", "1",
               "--no-reduce", "--time", "10m", "--out", str(out), "--json"])
    assert rc == 0
    return plugin, out / "findings.sqlite"


def test_a_campaign_records_its_run_with_versions(campaign: tuple[Path, Path]) -> None:
    plugin, store_path = campaign
    with FindingStore(store_path, readonly=True) as store:
        (run,) = store.runs("campaign")
        buckets = store.buckets()
    assert run.ended is not None and run.ended >= run.started
    assert run.pipelines == ("ref", "llvm-cpu-xor2or:O0")
    assert run.host.startswith(socket.gethostname())
    llvm_version = ".".join(str(v) for v in llvm.llvm_version_info)
    assert run.versions["llvm"].startswith(f"LLVM {llvm_version} ")
    assert run.versions["plugin llvm-cpu-xor2or"].endswith(f"sha256:{sha16(plugin)}")
    assert run.settings["seed_start"] == 56
    # seeds 59 and 62, one bug: one bucket by bug key, though the findings are unreduced
    assert [(str(b.signature), b.count) for b in buckets] == [
        ("wrong-code|llvm-cpu-xor2or:O0|probe=xor:int", 2)]
    assert all(b.first_run == b.last_run == run.id for b in buckets)


def test_recheck_marks_fixed_then_reopens_as_regression(
        campaign: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    plugin, store_path = campaign
    store = str(store_path)
    buggy = plugin.read_bytes()
    corpus = tmp_path / "corpus"

    # still broken: every bucket reproduces, nothing moves, exit 0
    rc, first = cli(capsys, "triage", "recheck", "--store", store, "--json")
    assert rc == 0 and first["summary"]["reproduces"] == 1
    assert {b["status"] for b in first["buckets"]} == {"new"}
    # promote one bucket's reproducer as a strict xfail, as `triage promote` would
    with FindingStore(store_path, readonly=True) as s:
        bucket = s.buckets()[0]
        case = s.case(bucket.best_case_id or "")
    corpus.mkdir()
    casefile.save(replace(case, expect=Expect(status=ExpectStatus.KNOWN_DIVERGENCE,
                                              pipelines=("llvm-cpu-xor2or:O0",),
                                              issue="https://tracker/1")),
                  corpus / f"{case.id}.toml")
    assert expectation_marks(casefile.load(corpus / f"{case.id}.toml"))   # strict xfail

    # the bug is taken out of the plugin: a file changed since it was recorded is not
    # loaded by itself (triage/plugins.py: the one rule of every rerun); skipped, not fixed
    plugin.write_text(FIXED)
    rc, changed = cli(capsys, "triage", "recheck", "--store", store, "--json")
    assert rc == 0 and changed["summary"]["skipped"] == 1
    assert all(f"pass --plugin {plugin}" in b["detail"] for b in changed["buckets"])
    # passed as --plugin, it is today's pipeline: fixed, with the versions that fixed it
    # (in 2 worker processes: `--jobs` must see and record exactly what one process does)
    rc, fixed = cli(capsys, "triage", "recheck", "--store", store, "--corpus", str(corpus),
                    "--jobs", "2", "--json", "--plugin", str(plugin))
    assert rc == 0 and fixed["summary"] == {"reproduces": 0, "fixed": 1, "regressed": 0,
                                            "changed": 0, "skipped": 0}
    run_id = fixed["run"]["id"]
    key = "plugin llvm-cpu-xor2or"
    for b in fixed["buckets"]:
        assert (b["before"], b["status"], b["fixed_run"]) == ("new", "fixed", run_id)
        old, new = b["versions_changed"][key]
        assert old.endswith(f"sha256:{hashlib.sha256(buggy).hexdigest()[:16]}")
        assert new.endswith(f"sha256:{sha16(plugin)}")
        assert set(b["versions_changed"]) <= {key, "rgpu-fuzz"}
    assert fixed["run"]["versions"][key].endswith(sha16(plugin))
    # the corpus case is listed (rerun on its own and agreeing) but not rewritten
    (listed,) = fixed["corpus"]
    assert listed["bucket"] == bucket.id and not listed["written"]
    assert expectation_marks(casefile.load(corpus / f"{case.id}.toml"))
    rc, _ = cli(capsys, "triage", "recheck", bucket.id, "--store", store, "--corpus",
                str(corpus), "--update-corpus", "--json", "--plugin", str(plugin))
    updated = casefile.load(corpus / f"{case.id}.toml")
    assert updated.expect is not None and updated.expect.status is ExpectStatus.AGREE
    assert updated.expect.issue == "https://tracker/1"
    assert not expectation_marks(updated)                                 # no longer xfail

    # still fixed on the next night: the run that fixed it keeps the credit
    rc, again = cli(capsys, "triage", "recheck", "--store", store, "--json", "--plugin",
                    str(plugin))
    assert rc == 0 and {b["fixed_run"] for b in again["buckets"]} == {run_id}

    # the plugin file is gone: skipped, never taken for fixed or open
    plugin.unlink()
    rc, gone = cli(capsys, "triage", "recheck", "--store", store, "--json")
    assert rc == 0 and gone["summary"]["skipped"] == 1
    assert all("gone" in b["detail"] and b["status"] == "fixed" for b in gone["buckets"])

    # the bug comes back: reopened as a regression, exit 1
    plugin.write_bytes(buggy)
    rc, back = cli(capsys, "triage", "recheck", "--store", store, "--json")
    assert rc == 1 and back["summary"]["regressed"] == 1
    for b in back["buckets"]:
        assert (b["before"], b["status"], b["regression"]) == ("fixed", "new", True)
        assert b["versions_changed"][key][1].endswith(sha16(plugin))
    with FindingStore(store_path, readonly=True) as s:
        events = [h.event for h in s.history(bucket.signature)]
        assert events[0] is Event.REPRODUCES and Event.FIXED in events
        assert events[-1] is Event.REGRESSED
        assert s.bucket(bucket.id).status is BucketStatus.NEW
    capsys.readouterr()
    assert main(["triage", "list", "--store", store]) == 0
    assert "new (regression)" in capsys.readouterr().out
