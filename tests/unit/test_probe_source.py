"""Probe answers are filed under a fingerprint that includes a digest of rgpu-fuzz's own
source: the git revision alone missed uncommitted edits, so a store answered
probes with what an earlier, different lowering had computed."""

from __future__ import annotations

import shutil
from pathlib import Path

from campaigns.executors import LocalExecutor
from campaigns.orchestrate import Campaign, CampaignConfig
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.registry import Registry
from tests.unit.test_campaign_probes import FPTOSI, KEY, SETUP, run
from triage.bugkey import ProbeAnswer, copy_op
from triage.store import FindingStore, probe_toolchain
from triage.toolchains import PACKAGE, collect, source_digest


def test_the_digest_follows_every_source_file_and_nothing_else(tmp_path: Path) -> None:
    tree = tmp_path / "pkg"
    shutil.copytree(PACKAGE / "lower", tree / "lower",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "linked").symlink_to(tree / "lower", target_is_directory=True)
    first = source_digest(tree)
    (tree / "lower" / "__pycache__").mkdir(exist_ok=True)
    (tree / "lower" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"compiled")
    assert source_digest(tree) == first             # compiled files are not source
    module = next(iter(sorted((tree / "lower").glob("*.py"))))
    module.write_text(module.read_text() + "\n# an uncommitted edit\n")
    edited = source_digest(tree)
    assert edited != first
    (tree / "linked").unlink()                      # a linked directory (as triage/) counts
    assert source_digest(tree) != edited


def test_answers_filed_under_another_source_are_not_reused(tmp_path: Path) -> None:
    """Planted answers say every copy is broken on the seeded pipeline (were they used, the
    key would be `probe=copy:...`). Filed under this source's fingerprint they are used;
    filed under an edited source's they are not, and the probes give the true key."""
    reg = Registry()
    reg.load_plugin(FPTOSI)
    versions = collect(SETUP.pipelines, reg)
    planted = [ProbeAnswer("llvm-cpu-fptosi:O0", copy_op(t), True) for t in Scalar]
    assert probe_toolchain(versions, "default") == probe_toolchain(
        versions, "default", source=source_digest())
    for name, source, bucket in (("same", source_digest(), "probe=copy:"),
                                 ("edited", "0123456789abcdef", KEY)):
        out = tmp_path / name
        out.mkdir()
        with FindingStore(out / "findings.sqlite") as store:
            store.record_probes(probe_toolchain(versions, "default", source=source), planted)
        summary = run(out)
        (got,) = [b["signature"] for b in summary["buckets"]]
        assert bucket in got, (name, got)


def test_a_shard_takes_the_answers_of_the_history_store(tmp_path: Path) -> None:
    """`--probes-from` (ci/nightly.sh passes NIGHTLY_HISTORY): answers the history holds
    for this toolchain are known from the start and kept in the shard's own store."""
    reg = Registry()
    reg.load_plugin(FPTOSI)
    toolchain = probe_toolchain(collect(SETUP.pipelines, reg), "default")
    planted = [ProbeAnswer("llvm-cpu-fptosi:O0", copy_op(t), True) for t in Scalar]
    history = tmp_path / "history.sqlite"
    with FindingStore(history) as store:
        store.record_probes(toolchain, planted)
    out = tmp_path / "shard"
    campaign = Campaign(CampaignConfig(out=out, setup=SETUP, seed_start=40, chunk=4,
                                       max_cases=4, time_s=300, jobs=1, reduce_budget_s=3,
                                       probes_from=history), executor=LocalExecutor(1))
    try:
        (got,) = [b["signature"] for b in campaign.run().data["buckets"]]
    finally:
        campaign.close()
    assert "probe=copy:" in got
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        assert set(planted) <= set(store.probe_answers(toolchain))
