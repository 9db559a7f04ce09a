"""`rgpu-fuzz report campaign DIR --html/--md`: built from a real small campaign (the seeded
`xor` → `or` bug of rgpu_fuzz/bench/seeded/miscompile.py, llvm-cpu and the amdgpu-sim simulator),
then checked against independent sources: the store read through its own API, the case
count asked for on the command line, the language features of the same seeds generated
again here, and AMD's ISA (every wave ends in `s_endpgm`).

Seeds 20..27 in chunks of 2: seed 22 generates a kernel whose first `xor` sees overlapping
bits, so the campaign has a bucket (found when the test was written; the generator is
deterministic per seed)."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from campaigns.report.gather import collect
from campaigns.stats import (
    STATS_FILE,
    STATS_OWNER_ENV,
    SimOpcodeCapture,
    read_chunk_stats,
)
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.cli import main
from rgpu_fuzz.lang.features import FEATURES, case_features
from rgpu_fuzz.pipelines.amdgpu_sim import STATS_ENV
from tests.toolchain import debian_binary
from triage.store import FindingStore

MISCOMPILE = seeded_plugin("miscompile.py")
SEED_START, CASES, CHUNK = 20, 8, 2
PIPELINES = "ref,llvm-cpu-xor2or:O0,amdgpu-sim:gfx942:O3"


def _campaign(out: Path, *extra: str) -> None:
    rc = main(["campaign", "--pipelines", PIPELINES, "--plugin", str(MISCOMPILE),
               "--seed-start", str(SEED_START), "--cases", str(CASES), "--chunk", str(CHUNK),
               "--jobs", "1", "--time", "10m", "--out", str(out), "--json", *extra])
    assert rc == 0


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The campaign, started from a process that captured simulator opcodes itself (as one
    that ran a chunk in-process does: tests/unit/test_wire.py, test_amdgpu_sim_batch.py on
    the same xdist worker). Its job processes inherit that `RGPU_SIM_STATS`; before the
    owner check they took it for the user's and recorded no opcodes, whenever the scheduler
    put such a test first on this worker (under load, most landings)."""
    out = tmp_path_factory.mktemp("campaign") / "run"
    with pytest.MonkeyPatch.context() as mp:
        for name in (STATS_ENV, STATS_OWNER_ENV):
            mp.delenv(name, raising=False)
        mp.setattr(SimOpcodeCapture, "_path", None)
        assert SimOpcodeCapture.start().path is not None
        _campaign(out, "--no-reduce")
    return out


@pytest.fixture(scope="module")
def report(campaign: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    dest = tmp_path_factory.mktemp("report")
    rc = main(["report", "campaign", str(campaign), "--html", str(dest / "r.html"),
               "--md", str(dest / "r.md")])
    assert rc == 0
    return dest, (dest / "r.html").read_text(encoding="utf-8")


def _value(page: str, key: str) -> str:
    m = re.search(rf'<td data-k="{re.escape(key)}">([^<]*)</td>', page)
    assert m, key
    return html.unescape(m.group(1))


def _svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg\b.*?</svg>", page, re.S)]


def _by_id(svgs: list[ET.Element], ident: str) -> ET.Element:
    for svg in svgs:
        got = svg.find(f".//*[@id='{ident}']")
        if got is not None:
            return got
    raise AssertionError(f"no SVG element {ident}")


def _vertices(group: ET.Element) -> list[tuple[float, float]]:
    path = next(e for e in group.iter() if e.tag.endswith("path") and e.get("d"))
    nums = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
    return list(zip(nums[::2], nums[1::2], strict=True))


def test_totals_and_buckets_equal_the_store(campaign: Path, report: tuple[Path, str]) -> None:
    _, page = report
    with FindingStore(campaign / "findings.sqlite", readonly=True) as store:
        buckets = store.buckets()
        assert buckets, "seed 22 should have found the seeded xor bug"
        assert _value(page, "buckets") == str(len(buckets))
        assert _value(page, "recorded") == str(sum(b.count for b in buckets))
        for b in buckets:
            cell = re.search(rf'data-k="count" data-bucket="{b.id}">(\d+)<', page)
            assert cell and int(cell.group(1)) == b.count
            # the top bucket in full: its best reproducer's kernel and a link to its report
            kernel = re.search(rf'<pre data-k="kernel" data-bucket="{b.id}">(.*?)</pre>',
                               page, re.S)
            assert kernel and html.unescape(kernel.group(1)) == store.case(b.best_case_id or
                                                                           "").kernel
            assert f'href="buckets/{b.id}.md"' in page
            ex = store.examples(b.signature)[0]
            for d in ex.diffs:  # first differing elements, as stored
                assert f"<td>{html.escape(d.buffer)}</td><td class=\"n\">{d.index}</td>" in page
    assert _value(page, "cases") == str(CASES)  # what the command line asked for
    assert "xor2or" in page


def test_bucket_reports_are_written_beside_the_html(campaign: Path,
                                                     report: tuple[Path, str]) -> None:
    dest, _ = report
    with FindingStore(campaign / "findings.sqlite", readonly=True) as store:
        for b in store.buckets():
            text = (dest / "buckets" / f"{b.id}.md").read_text(encoding="utf-8")
            assert f"`{b.signature}`" in text
            assert store.case(b.best_case_id or "").kernel.strip() in text
            assert f"rgpu-fuzz reproduce {b.id} --store {campaign}/findings.sqlite" in text


def test_features_equal_those_of_the_seeds_generated_again(report: tuple[Path, str]) -> None:
    from generators import SeededChoices, generate, load_profile

    profile = load_profile("default")
    want: Counter[str] = Counter()
    for seed in range(SEED_START, SEED_START + CASES):
        want.update(case_features(generate(SeededChoices(seed), profile, seed=seed)))
    _, page = report
    table = re.search(r'<table data-k="features">(.*?)</table>', page, re.S)
    assert table
    rows = re.findall(r"<tr><td>([\w-]+)</td><td>[^<]*</td><td class=\"n\">(\d+)</td>",
                      table.group(1))
    assert {k: int(v) for k, v in rows} == {k: want.get(k, 0) for k in FEATURES}


def test_plots_are_inline_svg_with_the_data_points(report: tuple[Path, str]) -> None:
    _, page = report
    svgs = _svgs(page)
    assert len(svgs) >= 6
    chunks = CASES // CHUNK
    cases = _vertices(_by_id(svgs, "series-cases"))
    assert len(cases) == chunks + 1  # 0 at the start, then one point per chunk
    assert cases[-1][1] < cases[0][1]  # SVG y grows downward: the running total rises
    assert len(_vertices(_by_id(svgs, "series-findings"))) == chunks + 1
    for i in range(len(FEATURES)):
        _by_id(svgs, f"bar-features-{i}")
    _by_id(svgs, "series-opcodes-gfx942")
    # self-contained: no script, no external resource; the only URLs are XML namespace
    # names (identifiers, never fetched)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    urls = re.findall(r'(\S+)="?(https?://[^"\s]*)', page)
    assert urls and all(attr.startswith("xmlns") for attr, _ in urls), urls
    assert not re.search(r"url\((?!#)", page)


def test_opcode_coverage_counts_the_simulated_waves(campaign: Path) -> None:
    data = collect(campaign)
    (cov,) = data.opcodes
    assert cov.target == "gfx942" and 0 < cov.distinct <= len(cov.table)
    assert set(cov.executed) <= cov.table
    sim = next(p for p in data.pipelines if p.label == "amdgpu-sim:gfx942:O3")
    # every wave that finishes executes s_endpgm once (AMD CDNA3 ISA §4.5 "S_ENDPGM")
    assert cov.executed.get("S_ENDPGM", 0) >= sim.statuses.get("ok", 0) > 0


def test_a_process_started_by_a_capturing_one_captures_into_its_own_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's own `RGPU_SIM_STATS` (no owner) is left alone and nothing is captured; the
    setting a real child process inherits from a capturing parent is replaced by the
    child's own file, owned by the child's pid."""
    import os
    import sys

    monkeypatch.setattr(SimOpcodeCapture, "_path", None)
    users = str(tmp_path / "users.jsonl")
    monkeypatch.setenv(STATS_ENV, users)
    monkeypatch.delenv(STATS_OWNER_ENV, raising=False)
    assert SimOpcodeCapture.start().collect() is None
    assert os.environ[STATS_ENV] == users and STATS_OWNER_ENV not in os.environ
    monkeypatch.delenv(STATS_ENV)
    mine = SimOpcodeCapture.start().path
    assert mine is not None and os.environ[STATS_OWNER_ENV] == str(os.getpid())
    child = subprocess.run(
        [sys.executable, "-c", "import os\n"
         "from campaigns.stats import SimOpcodeCapture\n"
         "c = SimOpcodeCapture.start()\n"
         "print(c.path, os.environ['RGPU_SIM_STATS'], os.environ['RGPU_SIM_STATS_OWNER'],"
         " os.getpid())"],
        capture_output=True, text=True, check=True)
    path, env, owner, pid = child.stdout.split()
    assert path == env != str(mine) and owner == pid


def test_markdown_has_the_same_numbers_and_linked_plots(campaign: Path,
                                                         report: tuple[Path, str]) -> None:
    dest, _ = report
    text = (dest / "r.md").read_text(encoding="utf-8")
    with FindingStore(campaign / "findings.sqlite", readonly=True) as store:
        buckets = store.buckets()
    assert f"| buckets | {len(buckets)} |" in text
    assert f"| cases run | {CASES} |" in text
    for b in buckets:
        assert f"| {b.id} | {b.count} |" in text
    for name in re.findall(r"\]\((plots/[\w-]+\.svg)\)", text):
        ET.parse(dest / name)
    assert "](plots/cases-findings.svg)" in text


def test_a_campaign_without_statistics_is_reported_from_the_store(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old"
    shutil.copytree(campaign, old)
    (old / STATS_FILE).unlink()
    assert main(["report", "campaign", str(old), "--html", str(tmp_path / "o.html")]) == 0
    page = (tmp_path / "o.html").read_text(encoding="utf-8")
    assert f"no {STATS_FILE}" in page
    assert _value(page, "cases") == str(CASES)  # from the checkpoint
    with FindingStore(old / "findings.sqlite", readonly=True) as store:
        assert _value(page, "buckets") == str(len(store.buckets()))
    assert 'id="series-cases"' not in page
    capsys.readouterr()
    # a torn last line (a kill mid-write) is skipped and said
    shutil.copy(campaign / STATS_FILE, old / STATS_FILE)
    with open(old / STATS_FILE, "a", encoding="utf-8") as f:
        f.write('{"v": 1, "chunk": 9')
    assert len(read_chunk_stats(old).chunks) == CASES // CHUNK
    assert main(["report", "campaign", str(old), "--md", str(tmp_path / "o.md")]) == 0
    assert "1 unreadable line(s)" in (tmp_path / "o.md").read_text(encoding="utf-8")


def test_a_bucket_a_recheck_reopened_is_flagged_as_a_regression(
        campaign: Path, tmp_path: Path) -> None:
    """A bucket fixed by one recheck run and reopened by the next (what `triage recheck`
    does when a fixed bug comes back) is listed under Regressions, with the fixing time, the
    reopening run and its line, as the store's own history has them; no other bucket is."""
    from triage.store import Event

    run = tmp_path / "run"
    shutil.copytree(campaign, run)
    with FindingStore(run / "findings.sqlite") as store:
        target, *others = store.buckets(order_by="count")
        store.begin_run("recheck", ("ref",), {"LLVM": "22.1"}, "host")
        store.note_recheck(target.signature, Event.FIXED, "all pipelines agree")
        store.begin_run("recheck", ("ref",), {"LLVM": "22.2"}, "host")
        back = store.note_recheck(target.signature, Event.REGRESSED, "reproduces again")
        (entry,) = [h for h in store.history(target.signature) if h.event is Event.REGRESSED]
    assert back.regression and back.fixed_at is not None
    assert main(["report", "campaign", str(run), "--html", str(tmp_path / "r.html"),
                 "--md", str(tmp_path / "r.md")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert _value(page, "regressions") == "1"
    section = page[page.index('<section id="regressions">'):]
    section = section[:section.index("</section>")]
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>")[1])
    assert len(rows) == 1
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", rows[0])]
    assert cells[0] == target.id and cells[4] == entry.run and cells[5] == "reproduces again"
    assert cells[2] == time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(back.fixed_at))
    assert f'Bucket <code>{target.id}</code>' in page and "new (regression)" in page
    assert all(b.id not in section for b in others)
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Regressions (1)" in md and "reproduces again" in md


def test_shards_side_by_side_with_their_merged_store(tmp_path: Path) -> None:
    """`ci/nightly.sh`'s layout: OUT/shard-I-of-N/ campaign directories and a merged store.
    Real shards of a cheap campaign (`flipxor`, tests/unit/test_campaign.py's ref with a bit
    flipped when the kernel has `^`); a bucket report `rgpu-fuzz report` wrote is kept."""
    from tests.unit.test_campaign import FLIPXOR

    plugin = tmp_path / "flipxor.py"
    plugin.write_text(FLIPXOR)
    night = tmp_path / "night"
    shards = [night / f"shard-{i}-of-2" for i in range(2)]
    for i, out in enumerate(shards):
        assert main(["campaign", "--pipelines", "ref,flipxor", "--plugin", str(plugin),
                     "--chunk", "2", "--cases", "4", "--shard", f"{i}/2", "--jobs", "1",
                     "--time", "10m", "--no-reduce", "--out", str(out), "--json"]) == 0
    merged = night / "merged.sqlite"
    assert main(["triage", "merge", "--store", str(merged),
                 *(str(d / "findings.sqlite") for d in shards)]) == 0
    with FindingStore(merged, readonly=True) as store:
        buckets = store.buckets(order_by="count")
    assert buckets, "seeds 0..7 include kernels with ^"
    theirs = night / "buckets" / f"{buckets[0].id}.md"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("# written by rgpu-fuzz report\n")
    assert main(["report", "campaign", str(night), "--store", str(merged),
                 "--html", str(night / "report.html")]) == 0
    page = (night / "report.html").read_text(encoding="utf-8")
    assert _value(page, "cases") == "8"  # 2 shards x --cases 4
    assert _value(page, "sessions") == "2"
    assert "shard 0/2, 1/2" in _value(page, "seeds")
    assert _value(page, "buckets") == str(len(buckets))
    assert _value(page, "recorded") == str(sum(b.count for b in buckets))
    assert theirs.read_text() == "# written by rgpu-fuzz report\n"
    assert f'href="buckets/{buckets[0].id}.md"' in page


@pytest.mark.parametrize("argv, message", [
    (["report", "campaign", "{tmp}/nothing", "--html", "{tmp}/x.html"],
     "no such campaign directory"),
    (["report", "campaign", "{tmp}", "--html", "{tmp}/x.html"], "no findings.sqlite here"),
    (["report", "campaign", "{tmp}", "--store", "{tmp}/m.sqlite", "--md", "{tmp}/x.md"],
     "m.sqlite: no such findings store"),
    (["report", "campaign"], "which campaign?"),
    (["report", "abc123", "--html", "{tmp}/x.html"], "--html belongs to"),
])
def test_bad_input_is_one_line(argv: list[str], message: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_chromium_renders_the_report(tmp_path: Path) -> None:
    """A real browser draws the inline SVG plots: the PNG holds the plots' line colour.
    With reductions on, so the buckets show reduced kernels."""
    import matplotlib.image

    from campaigns.report.plots import LINE

    chromium = debian_binary("chromium", "chromium")
    out = tmp_path / "run"
    _campaign(out, "--reduce-budget", "20s")
    assert main(["report", "campaign", str(out), "--html", str(tmp_path / "r.html")]) == 0
    png = tmp_path / "r.png"
    proc = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--screenshot={png}",
                           "--window-size=1280,6000", (tmp_path / "r.html").as_uri()],
                          capture_output=True, text=True, timeout=300, check=False)
    assert png.is_file(), proc.stderr[-2000:]
    img = matplotlib.image.imread(png)
    assert img.shape[:2] == (6000, 1280)
    rgb = (img[..., :3] * 255).round().astype(int)
    want = [int(LINE[i:i + 2], 16) for i in (1, 3, 5)]
    line_pixels = ((abs(rgb - want)).max(axis=-1) <= 8).sum()
    assert line_pixels > 2000, line_pixels
