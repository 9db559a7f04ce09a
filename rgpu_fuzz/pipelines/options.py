"""Pipeline options as data: each pipeline declares the options its spec string may carry.

A spec is `name[:option...]` (`llvm-cpu:O3:timeout=30`, `amdgpu-sim:gfx942:O3:llc=PATH`).
Its options are parsed once, when the pipeline is made, against the class's declarations
into an `OptionValues`; a token that no declaration accepts, a value that does not parse or
is out of range, and an option given twice are one-line `PipelineError`s naming the spec.

Six kinds of declaration cover every pipeline so far:

* `OptLevel()`            — `O0`…`O3` (a bare token; `o2` is read as `O2`);
* `Choice(name, choices)` — one bare token out of a fixed set (`gfx942|gfx90a|gfx1100`);
* `KeyChoice(name, choices)` — `name=VALUE`, VALUE out of a fixed set (`isel=dag|global`);
* `Int(name)` / `Float(name)` — `name=NUMBER` with an inclusive range;
* `Flag(name)`            — a bare word that switches something on (`det`);
* `PathOption(name)`      — `name=PATH`, optionally required to exist (`llc=/usr/bin/llc`).

A declaration marked `execution=True` changes how a pipeline is run or checked, not what it
computes (`timeout=`, `det`): it is left out of the pipeline's label, so outcomes and
signatures of `llvm-cpu:O2:timeout=30` and `llvm-cpu:O2` bucket together.
"""

from __future__ import annotations

import abc
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from rgpu_fuzz.model.errors import RgpuError

T = TypeVar("T")


class PipelineError(RgpuError):
    """A spec, option or plugin the user gave cannot be used; `str()` is one line."""


class _Malformed(ValueError):
    """A token a declaration claims but cannot read; the message says what is expected."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Option(abc.ABC, Generic[T]):
    """One declared option: which tokens it claims, how it reads them, its default."""

    name: str
    help: str = ""
    execution: bool = False
    """Changes how the pipeline runs, not what it computes: not part of the label."""

    @property
    @abc.abstractmethod
    def default(self) -> T: ...

    @abc.abstractmethod
    def claims(self, token: str) -> bool:
        """Whether `token` is meant for this option (it may still be malformed)."""

    @abc.abstractmethod
    def read(self, token: str) -> T:
        """The value of a claimed token; raises `_Malformed` with what was expected."""

    @abc.abstractmethod
    def render(self, value: T) -> str:
        """The canonical token for `value` (labels print this)."""

    @property
    @abc.abstractmethod
    def syntax(self) -> str:
        """How the option is written, for help texts and errors (`steps=INT`)."""

    def describe(self) -> str:
        """`syntax: help (default ...)`, one entry of `rgpu-fuzz pipelines`."""
        dflt = self.default
        shown = "" if dflt is None or dflt is False else f" (default {self._show(dflt)})"
        return f"{self.syntax}: {self.help}{shown}" if self.help else f"{self.syntax}{shown}"

    def _show(self, value: T) -> str:
        return self.render(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class OptLevel(Option[int]):
    """An optimisation level `O<n>`, n in `levels`; the value is n."""

    name: str = "opt"
    help: str = "optimisation level"
    levels: tuple[int, ...] = (0, 1, 2, 3)
    level: int = 2

    @property
    def default(self) -> int:
        return self.level

    def claims(self, token: str) -> bool:
        return len(token) >= 2 and token[0] in "Oo" and token[1:].isdigit()

    def read(self, token: str) -> int:
        n = int(token[1:])
        if n not in self.levels:
            raise _Malformed(f"optimisation level {token} is not one of {self.syntax}")
        return n

    def render(self, value: int) -> str:
        return f"O{value}"

    @property
    def syntax(self) -> str:
        return "|".join(f"O{n}" for n in self.levels)


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice(Option[str]):
    """One bare token out of `choices` (a target such as `gfx942`)."""

    choices: tuple[str, ...]
    choice: str | None = None
    """The default; None means the first of `choices`."""

    @property
    def default(self) -> str:
        return self.choice if self.choice is not None else self.choices[0]

    def claims(self, token: str) -> bool:
        return token in self.choices

    def read(self, token: str) -> str:
        return token

    def render(self, value: str) -> str:
        return value

    @property
    def syntax(self) -> str:
        return "|".join(self.choices)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Keyed(Option[T]):
    """An option written `name=VALUE`."""

    def claims(self, token: str) -> bool:
        return token.partition("=")[0] == self.name

    def _show(self, value: T) -> str:
        return self.render(value).partition("=")[2]

    def value_text(self, token: str) -> str:
        key, eq, value = token.partition("=")
        if not eq or not value:
            raise _Malformed(f"\"{key}\" needs a value: {self.syntax}")
        return value


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyChoice(_Keyed[str]):
    """`name=VALUE` with VALUE one of `choices` (`isel=global`): a setting whose values
    are words, written with its name (a bare `global` would say nothing)."""

    choices: tuple[str, ...]
    choice: str | None = None
    """The default; None means the first of `choices`."""

    @property
    def default(self) -> str:
        return self.choice if self.choice is not None else self.choices[0]

    def read(self, token: str) -> str:
        text = self.value_text(token)
        if text not in self.choices:
            raise _Malformed(f"{self.name}={text}: expected one of {self.syntax}")
        return text

    def render(self, value: str) -> str:
        return f"{self.name}={value}"

    @property
    def syntax(self) -> str:
        return f"{self.name}={'|'.join(self.choices)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Int(_Keyed[int]):
    """`name=INT` with `min <= value <= max`."""

    value: int
    min: int = 0
    max: int | None = None

    @property
    def default(self) -> int:
        return self.value

    def read(self, token: str) -> int:
        text = self.value_text(token)
        try:
            n = int(text.replace("_", ""), 0)
        except ValueError:
            raise _Malformed(f"{self.name}={text}: expected an integer ({self.syntax})") from None
        if n < self.min or (self.max is not None and n > self.max):
            raise _Malformed(f"{self.name}={text}: out of range ({self.syntax})")
        return n

    def render(self, value: int) -> str:
        return f"{self.name}={value}"

    @property
    def syntax(self) -> str:
        hi = "" if self.max is None else str(self.max)
        return f"{self.name}=INT in {self.min}..{hi}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Float(_Keyed[float]):
    """`name=NUMBER` with `min < value <= max` (finite; `min` itself excluded, so a timeout
    of 0 is refused)."""

    value: float
    min: float = 0.0
    max: float = 1e6

    @property
    def default(self) -> float:
        return self.value

    def read(self, token: str) -> float:
        text = self.value_text(token)
        try:
            x = float(text)
        except ValueError:
            raise _Malformed(f"{self.name}={text}: expected a number ({self.syntax})") from None
        if not (math.isfinite(x) and self.min < x <= self.max):
            raise _Malformed(f"{self.name}={text}: out of range ({self.syntax})")
        return x

    def render(self, value: float) -> str:
        return f"{self.name}={value:g}"

    @property
    def syntax(self) -> str:
        return f"{self.name}=NUMBER in ({self.min:g}, {self.max:g}]"


@dataclass(frozen=True, slots=True, kw_only=True)
class Flag(Option[bool]):
    """A bare word that switches something on; absent means off."""

    @property
    def default(self) -> bool:
        return False

    def claims(self, token: str) -> bool:
        return token.partition("=")[0] == self.name

    def read(self, token: str) -> bool:
        if token != self.name:
            raise _Malformed(f"\"{self.name}\" takes no value")
        return True

    def render(self, value: bool) -> str:
        return self.name

    @property
    def syntax(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class PathOption(_Keyed["str | None"]):
    """`name=PATH`; with `must_exist`, the file must exist (and be executable with
    `executable`) when the pipeline is made, so a typo is an error, not a crash per case."""

    must_exist: bool = True
    executable: bool = False

    @property
    def default(self) -> str | None:
        return None

    def read(self, token: str) -> str | None:
        path = self.value_text(token)
        if self.must_exist and not os.path.exists(path):
            raise _Malformed(f"{self.name}={path}: no such file")
        if self.executable and not os.access(path, os.X_OK):
            raise _Malformed(f"{self.name}={path}: not executable")
        return path

    def render(self, value: str | None) -> str:
        return f"{self.name}={value}"

    @property
    def syntax(self) -> str:
        return f"{self.name}=PATH"


@dataclass(frozen=True, slots=True)
class OptionValues:
    """The typed result of parsing a spec's options: every declared option's value (its
    default when not given) and which were given. Read a value with `values[DECLARATION]`
    (typed) or `values["name"]`."""

    declared: tuple[Option[Any], ...]
    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    given: frozenset[str] = frozenset()

    def __getitem__(self, key: Option[T] | str) -> Any:
        name = key if isinstance(key, str) else key.name
        return self.values[name]

    def get(self, decl: Option[T]) -> T:
        """The value of `decl`, typed as the declaration's value."""
        value: T = self.values[decl.name]
        return value

    def tokens(self, *, execution: bool = True) -> tuple[str, ...]:
        """The given options in declaration order, canonically written; without
        execution settings when `execution` is False (the label)."""
        return tuple(d.render(self.values[d.name]) for d in self.declared
                     if d.name in self.given and (execution or not d.execution))


def parse_options(spec_text: str, tokens: Iterable[str],
                  declared: tuple[Option[Any], ...]) -> OptionValues:
    """Read `tokens` against `declared`; a `PipelineError` naming `spec_text` on the first
    token that is unknown, malformed, out of range or repeated."""
    values: dict[str, Any] = {d.name: d.default for d in declared}
    given: set[str] = set()
    for token in tokens:
        decl = next((d for d in declared if d.claims(token)), None)
        if decl is None:
            raise PipelineError(f"{spec_text}: unknown option \"{token}\" "
                                f"({options_help(declared) or 'this pipeline takes none'})")
        if decl.name in given:
            raise PipelineError(f"{spec_text}: option \"{decl.name}\" given twice")
        try:
            values[decl.name] = decl.read(token)
        except _Malformed as e:
            raise PipelineError(f"{spec_text}: {e}") from None
        given.add(decl.name)
    return OptionValues(declared, MappingProxyType(values), frozenset(given))


def options_help(declared: Iterable[Option[Any]]) -> str:
    """Every declaration's syntax, `; `-separated (errors and `rgpu-fuzz pipelines`)."""
    return "; ".join(d.describe() for d in declared)


__all__ = ["Choice", "Flag", "Float", "Int", "KeyChoice", "OptLevel", "Option", "OptionValues",
           "PathOption", "PipelineError", "options_help", "parse_options"]
