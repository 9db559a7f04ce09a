"""The campaign's "done when", end to end through `rgpu_fuzz.cli.main`: a deliberately
broken compiler (`llvm-cpu-xor2or`, rgpu_fuzz/bench/seeded/miscompile.py: the first `xor` of
the LLVM IR becomes `or`) is found by a campaign, reduced to a few lines, bucketed, filed as
Markdown, promoted into a corpus, and `reproduce` exits 1 on the broken compiler and 0 on
the good one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from rgpu_fuzz.model.case import ExpectStatus
from triage.store import FindingStore

pytestmark = pytest.mark.slow

MISCOMPILE = str(seeded_plugin("miscompile.py"))
BROKEN = "ref,llvm-cpu-xor2or:O0"
GOOD = "ref,llvm-cpu:O0"
# Seeds 256..287 hold five kernels the miscompilation changes (259, 272, 273, 284, 286),
# four of them through `!` (an `xor` with all ones in the IR), one through `^`.
SEED_START, CASES = 256, 32


def test_a_broken_compiler_is_found_reduced_bucketed_filed_and_reproduced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)                 # no default store or corpus to fall back on
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("RGPU_FUZZ_STORE", raising=False)
    out = tmp_path / "campaign"
    store_path = out / "findings.sqlite"

    # --- found
    rc = main(["campaign", "--pipelines", BROKEN, "--plugin", MISCOMPILE,
               "--cases", str(CASES), "--seed-start", str(SEED_START), "--chunk", "4",
               "--jobs", "1", "--time", "10m", "--reduce-budget", "60s",
               "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["cases"] == CASES
    assert summary["harness_errors"] == 0
    assert summary["cases_with_findings"] >= 2
    assert len(list((out / "cases").glob("*.toml"))) == summary["cases_with_findings"]
    assert not list((out / "pending").glob("*.toml"))

    # --- reduced and bucketed
    assert summary["reductions"] and all(r["reproduced"] for r in summary["reductions"])
    buckets = summary["buckets"]
    assert buckets and all(b["count"] >= 1 for b in buckets)
    assert len(buckets) < summary["cases_with_findings"]
    assert sum(b["count"] for b in buckets) == summary["cases_with_findings"]
    with FindingStore(store_path) as store:
        for b in store.buckets():
            assert str(b.signature).startswith(("wrong-code|llvm-cpu-xor2or:O0|ops=",
                                           "wrong-code|llvm-cpu-xor2or:O0|probe="))
            assert b.best_case_id is not None
            best = store.case(b.best_case_id)
            lines = best.kernel.strip().splitlines()
            assert len(lines) <= 12, best.kernel
            assert (out / "reduced" / f"{b.id}.toml").exists()
        top = store.buckets(order_by="count")[0]
        kernel = store.case(top.best_case_id).kernel  # type: ignore[arg-type]

    # --- filed
    md = tmp_path / "issue.md"
    assert main(["report", top.id, "--store", str(store_path), "--plugin", MISCOMPILE,
                 "--out", str(md)]) == 0
    text = md.read_text()
    body = [ln for ln in kernel.strip().splitlines() if ln.strip()]
    assert all(ln in text for ln in body)
    assert f"rgpu-fuzz reproduce {top.best_case_id}" in text
    assert "llvm-cpu-xor2or:O0" in text

    # --- reproduced from the store by bucket id: the bucket's own bug (a bug-keyed bucket's
    # reproducer never shows its `probe=` key as its own signature; recheck's rule decides)
    capsys.readouterr()
    assert main(["reproduce", top.id, "--store", str(store_path), "--plugin", MISCOMPILE,
                 "--no-record"]) == 1
    assert "did not reproduce" not in capsys.readouterr().out

    # --- promoted
    corpus = tmp_path / "corpus"
    # a known divergence on a --plugin pipeline is refused: the corpus test cannot load it
    assert main(["triage", "promote", top.id, "--store", str(store_path),
                 "--corpus", str(corpus), "--issue", "https://example.invalid/1"]) == 2
    assert "from a --plugin file" in capsys.readouterr().err
    assert main(["triage", "promote", top.id, "--store", str(store_path),
                 "--corpus", str(corpus), "--expect", "agree"]) == 0
    (promoted,) = corpus.glob("*.toml")
    case = casefile.load(promoted)
    assert case.id == promoted.stem == top.best_case_id
    assert case.expect is not None
    assert case.expect.status is ExpectStatus.AGREE

    # --- reproduced on the broken compiler, not on the good one
    capsys.readouterr()
    assert main(["reproduce", case.id, "--corpus", str(corpus), "--pipelines", BROKEN,
                 "--plugin", MISCOMPILE]) == 1
    assert main(["reproduce", case.id, "--corpus", str(corpus), "--pipelines", GOOD]) == 0
