"""The campaign's progress line: cases, cases/s, findings, buckets, time left.

On a terminal it is one line redrawn in place (carriage return, then erase to the end of the
line: ECMA-48 §8.3.41 EL), at most twice a second, and erased when the campaign ends so the
summary starts on a clean line. Elsewhere (a log file, CI, a pipe) it is a plain line every
`every_s` seconds and one at the end: a log keeps the history, and has no control codes.
It goes to stderr: stdout carries the summary (and `--json`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # the command line imports triage lazily (start-up stays fast)
    from campaigns.orchestrate import Progress

REDRAW_S = 0.5
"""Least seconds between two redraws on a terminal."""


def format_duration(seconds: float) -> str:
    """`42s`, `3m05s`, `1h02m`."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def format_progress(p: Progress) -> str:
    """The line itself (no control codes)."""
    left = "?" if p.left_s is None else format_duration(p.left_s)
    line = (f"campaign {format_duration(p.elapsed_s)}: {p.cases} cases, "
            f"{p.cases_per_s:.2f} cases/s, {p.findings} findings, {p.buckets} buckets, "
            f"{left} left")
    if p.reductions_running:
        line += f" ({p.reductions_running} reducing)"
    return line


class ProgressLine:
    """Shows `Progress` on `stream`: redrawn in place when `stream` is a terminal, else a
    plain line every `every_s` seconds."""

    def __init__(self, stream: TextIO, *, every_s: float = 30.0,
                 tty: bool | None = None) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.every_s = REDRAW_S if self.tty else every_s
        self._last: float | None = None
        self._shown = ""

    def update(self, progress: Progress, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and self._last is not None and now - self._last < self.every_s:
            return
        self._last = now
        line = format_progress(progress)
        if self.tty:
            self.stream.write(f"\r{line}\x1b[K")
        else:
            self.stream.write(line + "\n")
        self._shown = line
        self.stream.flush()

    def close(self, progress: Progress | None = None) -> None:
        """The last figures as a plain line (not on a terminal); on a terminal the line is
        erased, since the summary that follows says the same."""
        if self.tty:
            if self._shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
        elif progress is not None:
            self.update(progress, force=True)
