"""The store and the first hour: readers never write, a file that is
not a store is refused and left alone, one default store path, and every command the tool
prints works when pasted (each test runs the printed command)."""

from __future__ import annotations

import hashlib
import shlex
import sqlite3
from pathlib import Path

import pytest

from rgpu_fuzz.cli import main
from tests.unit.test_cli_triage import FLIPBITS, record_flipbits
from tests.unit.test_cli_triage import workdir as workdir  # the fixture
from triage.store import DEFAULT_STORE, FindingStore, migrate


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def printed_command(out: str, prefix: str = "rgpu-fuzz reproduce ") -> list[str]:
    """The argv of the first `rgpu-fuzz ...` command in `out` that starts with `prefix`."""
    line = next(ln for ln in out.splitlines() if prefix in ln)
    return shlex.split(line[line.index(prefix):])[1:]


@pytest.mark.parametrize("action", [["list"], ["show", "abc"]])
def test_readers_refuse_a_file_that_is_not_a_store_and_leave_it_alone(
        workdir: Path, capsys: pytest.CaptureFixture[str], action: list[str]) -> None:
    empty = workdir / "empty.sqlite"
    empty.write_bytes(b"")
    other = workdir / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    before = digest(other)
    for path, why in ((empty, "an empty file, not a findings store"),
                      (other, "an SQLite file without rgpu-fuzz's tables")):
        assert main(["triage", *action, "--store", str(path)]) == 2
        err = capsys.readouterr().err
        assert why in err and err.count("\n") == 1
    assert empty.read_bytes() == b""                      # no schema written into it
    assert digest(other) == before
    assert main(["reproduce", "abc", "--store", str(other)]) == 2
    assert main(["report", "abc", "--store", str(other)]) == 2
    assert digest(other) == before


def test_a_campaign_refuses_an_unrelated_sqlite_file(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    conn = sqlite3.connect(out / "findings.sqlite")
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    before = digest(out / "findings.sqlite")
    assert main(["campaign", "--out", str(out), "--time", "5s", "--jobs", "1",
                 "--pipelines", "ref"]) == 2
    assert "without rgpu-fuzz's tables" in capsys.readouterr().err
    assert digest(out / "findings.sqlite") == before


def test_listing_never_writes_even_an_older_store(workdir: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A version-1 store is read through an upgraded copy in memory; the file (which could
    sit on a read-only disk) keeps its bytes, and is not given a WAL or a newer schema."""
    store = workdir / "old.sqlite"
    bid = record_flipbits(store)
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    v1 = workdir / "v1.sqlite"
    src, dst = sqlite3.connect(store), sqlite3.connect(v1)
    migrate(dst, upto=1)
    for table in ("cases", "examples", "outcomes"):
        for row in src.execute(f"SELECT * FROM {table}"):
            dst.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)
    for row in src.execute("SELECT signature, id, kind, pipelines, first_seen, last_seen, "
                           "count, status, best_case_id, best_tokens, best_chars FROM buckets"):
        dst.execute("INSERT INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
    dst.commit()
    src.close()
    dst.close()
    before = digest(v1)
    assert main(["triage", "list", "--store", str(v1)]) == 0
    assert "flipbits" in capsys.readouterr().out
    assert main(["triage", "show", bid, "--store", str(v1)]) == 0
    assert "wrong-code|flipbits" in capsys.readouterr().out
    assert digest(v1) == before
    assert not v1.with_name("v1.sqlite-wal").exists()


def test_campaign_and_readers_share_one_default_store(workdir: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    assert DEFAULT_STORE == Path("runs/campaign/findings.sqlite")
    args = ["campaign", "--pipelines", "ref,flipbits", "--plugin", "flipbits.py", "--cases",
            "8", "--chunk", "4", "--jobs", "1", "--no-reduce", "--time", "5m"]
    assert main(args) == 0
    capsys.readouterr()
    assert (workdir / DEFAULT_STORE).is_file()
    assert main(["triage", "list"]) == 0                   # no --store: the campaign's store
    assert "flipbits" in capsys.readouterr().out


def test_triage_show_prints_a_reproduce_command_that_works_pasted(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The store is not the default one and the pipeline comes from a plugin: the printed
    command names both, and the plugin was recorded by the campaign, so it works as is."""
    args = ["campaign", "--pipelines", "ref,flipbits", "--plugin", "flipbits.py", "--cases",
            "4", "--chunk", "4", "--jobs", "1", "--no-reduce", "--time", "5m",
            "--out", "night"]
    assert main(args) == 0
    capsys.readouterr()
    with FindingStore("night/findings.sqlite", readonly=True) as store:
        (bucket, *_) = store.buckets()
    assert main(["triage", "show", bucket.id, "--store", "night/findings.sqlite"]) == 0
    argv = printed_command(capsys.readouterr().out)
    assert argv[:2] == ["reproduce", bucket.id]
    assert "--store" in argv and "--plugin" in argv
    assert main(argv) == 1                                # still diverges
    assert "still diverges" in capsys.readouterr().out


def test_reproduce_and_report_of_a_plugin_bucket_need_no_plugin_option(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["campaign", "--pipelines", "ref,flipbits", "--plugin", "flipbits.py", "--cases",
            "4", "--chunk", "4", "--jobs", "1", "--no-reduce", "--time", "5m"]
    assert main(args) == 0
    capsys.readouterr()
    with FindingStore(DEFAULT_STORE, readonly=True) as store:
        (bucket, *_) = store.buckets()
    assert main(["reproduce", bucket.id]) == 1
    assert "still diverges" in capsys.readouterr().out
    assert main(["report", bucket.id, "--out", "issue.md"]) == 0
    text = (workdir / "issue.md").read_text()
    for prefix in ("rgpu-fuzz reproduce ", "rgpu-fuzz run "):
        argv = printed_command(text, prefix)
        assert "--plugin" in argv
        if argv[0] == "run":  # the report says to save the case file under this name
            case_toml = text.split("```toml\n")[-1].split("```")[0]
            (workdir / argv[1]).write_text(case_toml)
        assert main(argv) == 1, argv
        capsys.readouterr()
    # a plugin file that changed since the campaign is not loaded silently
    (workdir / "flipbits.py").write_text(FLIPBITS + "\n# edited\n")
    assert main(["reproduce", bucket.id]) == 2
    err = capsys.readouterr().err
    assert "has changed since it was recorded: pass --plugin" in err and err.count("\n") == 1


def test_corpus_known_divergence_on_an_unregistered_pipeline_is_skipped_not_fixed(
        tmp_path: Path) -> None:
    """Such a case used to run without its pipeline, agree, and fail as XPASS(strict): a
    fix. It is skipped with the reason instead."""
    from dataclasses import replace

    from rgpu_fuzz import casefile
    from rgpu_fuzz.model.case import Expect, ExpectStatus
    from tests.corpus.test_corpus import check_case
    from tests.unit.test_cli_triage import CASE

    path = casefile.save(replace(CASE, expect=Expect(
        status=ExpectStatus.KNOWN_DIVERGENCE, pipelines=("flipbits",),
        issue="https://example.org/1")), tmp_path / f"{CASE.id}.toml")
    with pytest.raises(pytest.skip.Exception, match="divergence is on flipbits, not registered"):
        check_case(path)


def test_pytest_corpus_collects_one_test_per_case() -> None:
    """`pytest corpus`, the command the README gives, collects the corpus (it used to collect
    nothing and exit 5)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "corpus"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    ids = {p.stem for p in (root / "corpus").glob("*.toml")}
    collected = {line.rsplit("::", 1)[-1] for line in run.stdout.splitlines() if "::" in line}
    assert ids and ids == collected


def test_triage_list_shows_the_signature_ops_on_one_line_when_piped(
        workdir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a pipe (no terminal, no COLUMNS) rich used to cut lines at 80 columns and the
    table hid the signature; now each bucket is one line with its `ops=`."""
    monkeypatch.delenv("COLUMNS")
    store = workdir / "f.sqlite"
    bid = record_flipbits(store)
    assert main(["triage", "list", "--store", str(store)]) == 0
    (row,) = [ln for ln in capsys.readouterr().out.splitlines() if bid in ln]
    assert "flipbits|ops=add" in row and "wrong-code" in row
