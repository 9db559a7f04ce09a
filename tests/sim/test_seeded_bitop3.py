"""The seeded gfx950 bug (rgpu_fuzz/bench/seeded/bitop3_swap.py): a code-object hook swaps
bits 0 and 7 of the first `v_bitop3`'s truth table. The hook's effect is checked on the
decoded table (a swap worked by hand), and a short campaign on generated seed 425 (whose
gfx950 O3 code has one `v_bitop3_b16`, found by decoding the 500 odd seeds of 0..999) finds
it as wrong code and reduces it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generators import from_seed
from rgpu_fuzz import casefile
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.bench.seeded.bitop3_swap import swap_bitop3_bits
from rgpu_fuzz.cli import main
from rgpu_fuzz.codeobj import read_code_object
from rgpu_fuzz.sim.isa import decode_code_object
from tests.sim.case_objects import build

SEED = 425


def _tables(code_object: bytes) -> list[int]:
    return [i.modifiers["bitop3"] for i in decode_code_object(read_code_object(code_object))
            if i.opcode.startswith("V_BITOP3_")]


def _swap07(table: int) -> int:
    """Bits 0 and 7 exchanged, the others kept (by hand: 0x96 -> 0x17)."""
    return (table & 0x7E) | (table & 1) << 7 | (table >> 7 & 1)


def test_hook_swaps_table_bits_0_and_7() -> None:
    assert _swap07(0x96) == 0x17
    (path,) = build([(casefile.dumps(from_seed(SEED)), "gfx950", 3)])
    assert isinstance(path, Path), path
    original = path.read_bytes()
    before = _tables(original)
    assert before, "seed 425 at O3 has a v_bitop3 on gfx950"
    after = _tables(swap_bitop3_bits(original))
    assert after == [_swap07(before[0]), *before[1:]]
    gfx942 = build([(casefile.dumps(from_seed(SEED)), "gfx942", 3)])[0]
    assert isinstance(gfx942, Path)
    assert swap_bitop3_bits(gfx942.read_bytes()) == gfx942.read_bytes()   # gfx950 only


@pytest.mark.slow
def test_campaign_finds_and_reduces_the_swapped_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RGPU_FUZZ_STORE", raising=False)
    out = tmp_path / "campaign"
    rc = main(["campaign", "--pipelines", "ref,amdgpu-sim-bitop3swap:gfx950:O3",
               "--plugin", str(seeded_plugin("bitop3_swap.py")), "--cases", "1",
               "--seed-start", str(SEED), "--chunk", "1", "--jobs", "1", "--time", "10m",
               "--reduce-budget", "120s", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["cases_with_findings"] == 1 and summary["harness_errors"] == 0
    (bucket,) = summary["buckets"]
    assert bucket["signature"].startswith("wrong-code|amdgpu-sim-bitop3swap:gfx950:O3|")
    (red,) = summary["reductions"]
    # the reduction is time-bound (9 lines in 80 s alone, 19 in 120 s beside other work)
    assert red["reproduced"] and red["lines_after"] <= 25
    assert 2 * red["lines_after"] < red["lines_before"]
    reduced = casefile.load(out / "reduced" / f"{bucket['id']}.toml")
    (path,) = build([(casefile.dumps(reduced), "gfx950", 3)])
    assert isinstance(path, Path) and _tables(path.read_bytes()), \
        "the reduced kernel still has the v_bitop3 the hook breaks"
