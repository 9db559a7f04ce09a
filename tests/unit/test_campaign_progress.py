"""The campaign's progress line: redrawn in place on a terminal (a real pty), plain periodic
lines otherwise. Expected figures are worked out by hand from the `Progress` given."""

from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from campaigns.orchestrate import Progress
from rgpu_fuzz.cli import main
from rgpu_fuzz.cli.progress import ProgressLine, format_duration, format_progress

ERASE = "\x1b[K"  # ECMA-48 EL: erase to the end of the line


def progress(cases: int = 120, elapsed: float = 60.0, left: float | None = 540.0) -> Progress:
    return Progress(elapsed_s=elapsed, cases=cases, cases_per_s=cases / elapsed, findings=7,
                    buckets=3, reductions_running=0, left_s=left)


def test_the_line_says_cases_rate_findings_buckets_and_time_left() -> None:
    assert format_progress(progress()) == \
        "campaign 1m00s: 120 cases, 2.00 cases/s, 7 findings, 3 buckets, 9m00s left"
    assert format_progress(progress(left=None)).endswith("? left")
    assert [format_duration(s) for s in (0.4, 59.6, 61, 3599, 3600, 7322)] == \
        ["0s", "1m00s", "1m01s", "59m59s", "1h00m", "2h02m"]


def test_not_a_terminal_gives_plain_lines_every_so_often() -> None:
    out = io.StringIO()
    line = ProgressLine(out, every_s=3600.0)
    assert not line.tty
    line.update(progress(cases=10))
    line.update(progress(cases=20))          # within `every_s`: not shown
    line.close(progress(cases=30))           # the last figures always are
    lines = out.getvalue().splitlines()
    assert [re.search(r"(\d+) cases", ln).group(1) for ln in lines] == ["10", "30"]  # type: ignore[union-attr]
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_a_terminal_gets_one_line_redrawn_in_place() -> None:
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            line = ProgressLine(tty)
            assert line.tty
            line.update(progress(cases=10))
            line.update(progress(cases=20), force=True)
            line.close()
        got = b""
        while select.select([master], [], [], 0.5)[0]:  # all of it, however the pty splits it
            got += os.read(master, 65536)
        shown = got.decode()
    finally:
        os.close(master)
        os.close(slave)
    assert "\n" not in shown
    assert shown == (f"\r{format_progress(progress(cases=10))}{ERASE}"
                     f"\r{format_progress(progress(cases=20))}{ERASE}\r{ERASE}")


def read_until_exit(fd: int, proc: subprocess.Popen[bytes], limit_s: float) -> str:
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed its end
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks).decode(errors="replace")


def test_campaign_redraws_its_line_on_a_terminal(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("rgpu-fuzz")
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [str(exe), "campaign", "--pipelines", "ref", "--jobs", "1", "--chunk", "2",
         "--time", "4s", "--no-reduce", "--out", str(tmp_path / "out")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    try:
        shown = read_until_exit(master, proc, 120)
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    # several redraws of one line, each "\r<line>\x1b[K", no newline between them; erased at
    # the end so the summary (stdout) starts on a clean line
    draws = re.findall(r"\r(campaign [^\r\n\x1b]*)\x1b\[K", shown)
    assert len(draws) >= 2, shown
    assert all(re.fullmatch(r"campaign \d+s: \d+ cases, [\d.]+ cases/s, \d+ findings, "
                            r"\d+ buckets, \d+s left( \(\d+ reducing\))?", d) for d in draws)
    first, last = shown.index("\rcampaign"), shown.rindex(ERASE)
    assert "\n" not in shown[first:last]
    assert shown.endswith(f"\r{ERASE}") or shown[last + len(ERASE):].strip() == ""


def test_campaign_writes_plain_lines_when_not_on_a_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["campaign", "--pipelines", "ref", "--jobs", "1", "--chunk", "4", "--cases", "8",
               "--no-reduce", "--progress-every", "1s", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith("campaign ")]
    assert lines, err
    assert re.fullmatch(r"campaign \d+s: 8 cases, [\d.]+ cases/s, 0 findings, 0 buckets, "
                        r"\d+s left", lines[-1])
    assert "\r" not in err and "\x1b" not in err
