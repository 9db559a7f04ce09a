"""One bug, one bucket without reduction: `campaign --no-reduce` buckets wrong code by bug key
(docs/triage.md), where it used to give each finding a bucket of its own (`ops=` of the whole
kernel: 85 findings, 85 buckets in a 40-second campaign of the seeded `xor2or` bug).

Real campaigns: the CLI, two worker processes, real LLVM, a real SQLite store. The seeded bug
is rgpu_fuzz/bench/seeded/miscompile.py: the first `xor` instruction of the lowered IR
becomes `or`, so
by LangRef every wrong value comes from an `xor` — of integers (`^`, integer `!`) or of
`bool` (`^`, `!`): at most two keys, `xor:int` and `xor:bool` (type classes stay apart).
Seeds 256..327 hold 9 kernels it miscompiles (found by a 40-second campaign from seed 0:
259, 272, 273, 284, 286, 292 below seed 296, and 301, 315, 322 after), each holding other
operations as well.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oracles import kernel_operations
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from rgpu_fuzz.lang.features import case_module
from triage.store import FindingStore

MISCOMPILE = seeded_plugin("miscompile.py")
SPEC = "llvm-cpu-xor2or:O0"
KEYS = {f"wrong-code|{SPEC}|probe=xor:int", f"wrong-code|{SPEC}|probe=xor:bool"}


def campaign(capsys: pytest.CaptureFixture[str], out: Path, cases: int) -> dict[str, Any]:
    capsys.readouterr()
    rc = main(["campaign", "--pipelines", f"ref,{SPEC}", "--plugin", str(MISCOMPILE),
               "--seed-start", "256", "--chunk", "8", "--cases", str(cases), "--jobs", "2",
               "--no-reduce", "--time", "10m", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out)  # type: ignore[no-any-return]


def kernels_operations(out: Path) -> set[tuple[str, ...]]:
    """The operation sets of the stored cases' whole kernels: what `ops=` keyed on before."""
    found = set()
    for path in (out / "cases").glob("*.toml"):
        module = case_module(casefile.load(path))
        assert module is not None
        found.add(tuple(kernel_operations(module)))
    return found


def test_an_unreduced_campaign_puts_one_seeded_bug_in_at_most_two_buckets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    first = campaign(capsys, out, 40)
    assert first["cases"] == 40 and first["cases_with_findings"] >= 5
    assert not first["reductions"]
    assert len(kernels_operations(out)) == first["cases_with_findings"]  # ops=: one each
    signatures = {b["signature"] for b in first["buckets"]}
    assert signatures <= KEYS and 1 <= len(signatures) <= 2
    assert sum(b["count"] for b in first["buckets"]) == first["cases_with_findings"]

    # a second campaign into the same store (the next seeds): still the same keys
    second = campaign(capsys, out, 72)
    assert second["cases"] == 32 and second["cases_with_findings"] >= 2
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        buckets = store.buckets()
        assert len(store.runs("campaign")) == 2
    assert {str(b.signature) for b in buckets} <= KEYS and 1 <= len(buckets) <= 2
    assert sum(b.count for b in buckets) == (first["cases_with_findings"]
                                            + second["cases_with_findings"])
    assert len(kernels_operations(out)) == sum(b.count for b in buckets)
