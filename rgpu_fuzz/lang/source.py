"""Source text, spans and rustc-style diagnostics.

Every AST node carries a `Span`; every error the front end reports is a `Diagnostic` that
renders as `file:line:col: error: message`, then the source line and a caret, like rustc.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rgpu_fuzz.model.errors import RgpuError


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of source text: offsets, plus the 1-based line/column of its start."""

    start: int
    end: int
    line: int
    col: int

    def to(self, other: Span) -> Span:
        """The span from the start of `self` to the end of `other`."""
        return Span(self.start, max(self.end, other.end), self.line, self.col)


NO_SPAN = Span(0, 0, 0, 0)
"""For nodes built by a generator or reducer rather than parsed from text."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A named source text; `name` appears in diagnostics (a path, or `<case abc123>`)."""

    name: str
    text: str

    def line_around(self, offset: int) -> str:
        """The line that holds `offset`, found in time proportional to the line (not the
        file, so rendering every diagnostic of a large file stays linear)."""
        start = self.text.rfind("\n", 0, offset) + 1
        end = self.text.find("\n", offset)
        return self.text[start:] if end < 0 else self.text[start:end]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One error at one place. `render` gives the rustc-like text users see."""

    message: str
    span: Span
    file: SourceFile
    notes: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        return f"{self.file.name}:{self.span.line}:{self.span.col}"

    def headline(self) -> str:
        """The one-line form: `file:line:col: error: message`."""
        return f"{self.location}: error: {self.message}"

    def render(self) -> str:
        """Headline, the source line, a caret (with tildes over the span on that line), notes."""
        out = [self.headline()]
        if self.span.line > 0:
            src = self.file.line_around(self.span.start)
            gutter = str(self.span.line)
            pad = " " * len(gutter)
            line_start = self.span.start - (self.span.col - 1)
            line_end = line_start + len(src)
            width = max(1, min(self.span.end, line_end) - self.span.start)
            out.append(f"{pad} |")
            out.append(f"{gutter} | {src}")
            out.append(f"{pad} | {' ' * (self.span.col - 1)}^{'~' * (width - 1)}")
        out.extend(f"  = note: {n}" for n in self.notes)
        return "\n".join(out)


@dataclass(eq=False)
class DiagnosticError(RgpuError):
    """Raised by the front end when a program is not in the language; carries every error found."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)
