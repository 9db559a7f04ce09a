"""`rgpu-fuzz campaign`: small campaigns end to end (summary, cases on disk, store,
checkpoint), resuming, a kill -9 in the middle, shards, and resuming with other settings.

The fast tests use `flipxor`, a plugin pipeline written into the test's directory: `ref`
with one output bit flipped whenever the kernel text contains `^`, a miscompilation that
costs no LLVM time. The seeded-bug LLVM pipeline (`rgpu_fuzz/bench/seeded/miscompile.py`)
runs in one test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from campaigns.executors import LocalExecutor
from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from triage.store import EXAMPLES_PER_BUCKET, FindingStore

MISCOMPILE = seeded_plugin("miscompile.py")

FLIPXOR = textwrap.dedent('''
    """A broken pipeline for campaign tests: ref, with bit 0 of the first output element
    flipped whenever the kernel text contains `^`."""
    from dataclasses import replace

    from rgpu_fuzz.model.outcome import Buffer, Ok
    from rgpu_fuzz.model.scalars import from_bits
    from rgpu_fuzz.pipelines.ref import RefPipeline


    class FlipOnXor(RefPipeline):
        name = "flipxor"
        description = "ref, but bit 0 of the first output element flips when the kernel has ^"

        def _run(self, case):
            outcome = super()._run(case)
            if "^" not in case.kernel or not isinstance(outcome, Ok) or not outcome.outputs:
                return outcome
            name, buf = next(iter(outcome.outputs.items()))
            bits = buf.bits()
            if len(bits) == 0:
                return outcome
            bits[0] ^= 1
            outputs = dict(outcome.outputs, **{name: Buffer(buf.ty, from_bits(bits, buf.ty))})
            return replace(outcome, outputs=outputs)
''')


@pytest.fixture
def flipxor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "flipxor.py"
    path.write_text(FLIPXOR)
    return path


def campaign_args(out: Path, plugin: Path, *extra: str,
                  pipelines: str = "ref,flipxor") -> list[str]:
    return ["campaign", "--pipelines", pipelines, "--plugin", str(plugin), "--chunk", "4",
            "--jobs", "1", "--time", "10m", "--no-reduce", "--out", str(out), "--json", *extra]


def run_campaign(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    rc = main(args)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out)  # type: ignore[no-any-return]


def checkpoint(out: Path) -> dict[str, Any]:
    return json.loads((out / "checkpoint.json").read_text())  # type: ignore[no-any-return]


def case_ids(out: Path) -> set[str]:
    return {p.stem for p in (out / "cases").glob("*.toml")}


def assert_cases_stored(out: Path) -> None:
    """Every case written to OUT/cases/ is in the store as an example of some bucket, or
    was counted in a bucket that already keeps its EXAMPLES_PER_BUCKET smallest (unreduced
    findings are bucketed by bug key too, so a bucket counts many cases); callers check the
    counts add up to the cases."""
    ids = case_ids(out)
    with FindingStore(out / "findings.sqlite") as store:
        kept = {e.case_id: b.signature for b in store.buckets()
                for e in store.examples(b.signature)}
        full = [b for b in store.buckets()
                if len(store.examples(b.signature)) == EXAMPLES_PER_BUCKET]
        assert set(kept) <= ids
        for case_id in ids - set(kept):
            assert full, case_id
    assert not list((out / "pending").glob("*.toml"))


def total_count(out: Path) -> int:
    with FindingStore(out / "findings.sqlite") as store:
        return sum(b.count for b in store.buckets())


# ------------------------------------------------------------------ small campaigns

def test_small_campaign(tmp_path: Path, flipxor: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    data = run_campaign(capsys, campaign_args(out, flipxor, "--cases", "16"))
    assert data["cases"] == 16 and data["chunks"] == 4
    assert data["harness_errors"] == 0 and not data["invalid_cases"]
    assert data["findings"] > 0
    assert data["cases_with_findings"] == len(case_ids(out))
    assert set(data["pipelines"]) == {"ref", "flipxor"}
    assert sum(p["statuses"].get("ok", 0) for p in data["pipelines"].values()) > 0
    assert_cases_stored(out)
    # unreduced: one count per case with a finding
    assert total_count(out) == data["cases_with_findings"]
    assert sum(b["count"] for b in data["buckets"]) == data["cases_with_findings"]
    for case_id in case_ids(out):
        case = casefile.load(out / "cases" / f"{case_id}.toml")
        assert "^" in case.kernel                           # only those flip
        assert case.provenance.seed in range(16)
    cp = checkpoint(out)
    assert cp["done"] == [0, 1, 2, 3]
    assert cp["totals"] == {"cases": 16, "findings": data["findings"]}
    assert data["resumed_totals"] == cp["totals"]


def test_small_campaign_finds_the_seeded_llvm_bug(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # seeds 48..63 hold two kernels the xor -> or miscompilation changes (59 and 62)
    out = tmp_path / "out"
    data = run_campaign(capsys, campaign_args(out, MISCOMPILE, "--cases", "16",
                                              "--seed-start", "48",
                                              pipelines="ref,llvm-cpu-xor2or:O0"))
    assert data["cases"] == 16
    assert data["findings"] > 0
    assert data["cases_with_findings"] == len(case_ids(out))
    # unreduced, and still bucketed by the operation the plugin breaks (docs/triage.md)
    assert all(b["signature"].startswith("wrong-code|llvm-cpu-xor2or:O0|probe=xor:")
               for b in data["buckets"])
    assert_cases_stored(out)
    assert checkpoint(out)["done"] == [0, 1, 2, 3]


def test_campaign_reduces_and_buckets(tmp_path: Path, flipxor: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """With reduction, findings of the one `^` bug share buckets instead of one per case."""
    out = tmp_path / "out"
    args = [a for a in campaign_args(out, flipxor, "--cases", "16") if a != "--no-reduce"]
    data = run_campaign(capsys, [*args, "--reduce-budget", "30s"])
    assert data["cases_with_findings"] >= 3
    assert data["reductions"] and all(r["reproduced"] for r in data["reductions"])
    assert all(r["lines_after"] < r["lines_before"] for r in data["reductions"])
    assert 1 <= len(data["buckets"]) < data["cases_with_findings"]
    assert total_count(out) == data["cases_with_findings"]
    assert not list((out / "pending").glob("*.toml"))
    with FindingStore(out / "findings.sqlite") as store:
        for bucket in store.buckets():
            assert bucket.count >= 1 and bucket.best_case_id is not None
            best = store.case(bucket.best_case_id)
            assert "^" in best.kernel
            assert (out / "reduced" / f"{bucket.id}.toml").exists()


def planted_reducer_bug(job: object) -> object:
    raise ValueError("reducer bug planted by test_campaign")


def crashing_runner(payload: bytes) -> bytes:
    """Runs in the worker process in place of `run_encoded`: the same entry, with the reducer
    replaced there by one that raises (a harness bug in the reducer), so the traceback
    comes back the way a real one would (a `JobError` on the wire)."""
    import campaigns.executors.base as worker_side

    worker_side.reduce_finding = planted_reducer_bug  # type: ignore[assignment]
    return worker_side.run_encoded(payload)


def test_a_crashing_reduction_loses_nothing(tmp_path: Path, flipxor: Path) -> None:
    out = tmp_path / "out"
    config = CampaignConfig(out=out, setup=Setup(("ref", "flipxor"), "default", "default",
                                                 (str(flipxor),)),
                            chunk=4, time_s=600, max_cases=8, jobs=1)
    campaign = Campaign(config, executor=LocalExecutor(1, runner=crashing_runner))
    try:
        data = campaign.run().data
    finally:
        campaign.close()
    assert data["cases_with_findings"] > 0
    errors = sorted((out / "harness-errors").glob("reduce-*.txt"))
    assert data["harness_errors"] == len(errors) >= 1
    assert "reducer bug planted by test_campaign" in errors[0].read_text()
    assert_cases_stored(out)
    assert total_count(out) == data["cases_with_findings"] == len(case_ids(out))


# ------------------------------------------------------------------ resuming

def test_resume_skips_finished_chunks(tmp_path: Path, flipxor: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    first = run_campaign(capsys, campaign_args(out, flipxor, "--cases", "8"))
    assert first["cases"] == 8 and checkpoint(out)["done"] == [0, 1]
    found_first = case_ids(out)

    second = run_campaign(capsys, campaign_args(out, flipxor, "--cases", "16"))
    assert second["cases"] == 8 and second["chunks"] == 2     # chunks 2 and 3 only
    cp = checkpoint(out)
    assert cp["done"] == [0, 1, 2, 3]
    totals = second["resumed_totals"]
    assert totals == cp["totals"]
    assert totals["cases"] == first["cases"] + second["cases"] == 16
    assert totals["findings"] == first["findings"] + second["findings"]
    assert found_first <= case_ids(out)
    assert len(case_ids(out)) == first["cases_with_findings"] + second["cases_with_findings"]
    assert_cases_stored(out)
    assert total_count(out) == len(case_ids(out))

    # the same command once more: nothing is left to do
    third = run_campaign(capsys, campaign_args(out, flipxor, "--cases", "16"))
    assert third["cases"] == 0 and checkpoint(out) == cp


def test_rerunning_a_recorded_but_unmarked_chunk_counts_nothing_twice(
        tmp_path: Path, flipxor: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kill after a chunk's findings are stored but before its checkpoint is written: the
    restart re-runs that chunk, and must not count its cases a second time."""
    out = tmp_path / "out"
    data = run_campaign(capsys, campaign_args(out, flipxor, "--cases", "8"))
    assert data["cases_with_findings"] > 0
    before = total_count(out)
    cp = checkpoint(out)
    cp["done"] = [c for c in cp["done"] if c != 1]
    cp["totals"] = {"cases": 4, "findings": 0}
    (out / "checkpoint.json").write_text(json.dumps(cp))
    run_campaign(capsys, campaign_args(out, flipxor, "--cases", "8"))
    assert checkpoint(out)["done"] == [0, 1]
    assert total_count(out) == before == len(case_ids(out))


def test_kill_9_loses_nothing(tmp_path: Path, flipxor: Path) -> None:
    out = tmp_path / "out"
    exe = Path(sys.executable).with_name("rgpu-fuzz")
    assert exe.exists(), exe
    chunks = 16
    cmd = [str(exe), *campaign_args(out, flipxor, "--cases", str(4 * chunks))]
    env = dict(os.environ, COLUMNS="200")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        done: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                done = checkpoint(out)["done"]
            except (FileNotFoundError, json.JSONDecodeError):
                done = []
            if len(done) >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the campaign ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)       # the campaign and its workers, at once
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    killed_at = checkpoint(out)["done"]
    assert 2 <= len(killed_at) < chunks
    found_before = case_ids(out)

    rerun = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    cp = checkpoint(out)
    assert cp["done"] == list(range(chunks))       # each chunk once, none missing
    assert cp["totals"]["cases"] == 4 * chunks     # no chunk counted twice
    assert summary["cases"] == 4 * (chunks - len(killed_at))
    assert found_before <= case_ids(out)
    assert_cases_stored(out)
    assert total_count(out) == len(case_ids(out))


def test_resume_with_other_settings_is_one_line(tmp_path: Path, flipxor: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    run_campaign(capsys, campaign_args(out, flipxor, "--cases", "4"))
    cp = checkpoint(out)
    rc = main(campaign_args(out, flipxor, "--cases", "8", pipelines="ref"))
    err = capsys.readouterr().err
    assert rc == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("rgpu-fuzz campaign: error: ") and "settings" in lines[0]
    assert "Traceback" not in err
    assert checkpoint(out) == cp                       # untouched


# ------------------------------------------------------------------ shards

def _campaign(tmp_path: Path, shard: tuple[int, int], name: str) -> Campaign:
    config = CampaignConfig(out=tmp_path / name, setup=Setup(("ref",), "default", "default"),
                            seed_start=1000, chunk=5, shard=shard)
    return Campaign(config)


def _seeds(c: Campaign, chunks: set[int]) -> list[int]:
    return [s for i in sorted(chunks) for s in c.seeds(i)]


def test_shards_split_the_seeds(tmp_path: Path) -> None:
    whole = _campaign(tmp_path, (0, 1), "whole")
    even = _campaign(tmp_path, (0, 2), "even")
    odd = _campaign(tmp_path, (1, 2), "odd")
    try:
        first = set(islice(whole.chunk_indices(), 10))
        assert first == set(range(10))
        mine = {c for c in islice(even.chunk_indices(), 10) if c < 10}
        theirs = {c for c in islice(odd.chunk_indices(), 10) if c < 10}
        assert mine == {0, 2, 4, 6, 8} and theirs == {1, 3, 5, 7, 9}
        a, b = _seeds(even, mine), _seeds(odd, theirs)
        assert not set(a) & set(b)
        assert sorted(a + b) == _seeds(whole, first) == list(range(1000, 1050))
        assert even.seeds(3) == odd.seeds(3) == whole.seeds(3) == tuple(range(1015, 1020))
        # finished chunks are skipped, the shard's order kept
        odd.checkpoint.done = {1, 5}
        assert list(islice(odd.chunk_indices(), 4)) == [3, 7, 9, 11]
    finally:
        for c in (whole, even, odd):
            c.close()
