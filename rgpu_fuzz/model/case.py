"""A Case: one test (docs/design.md §2, README "Cases"), as plain frozen data.

Numbers inside a case are kept as *bit patterns* of their element type (two's complement for
signed integers, IEEE bits for floats, 0/1 for bool): a NaN payload, a `-0.0` or a
subnormal survives every round trip through TOML, the store and the pipelines unchanged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

from rgpu_fuzz.model.scalars import Scalar

FORMAT = "rgpu-case/1"


class Dist(StrEnum):
    """Distributions of seeded random initialisers (README "Cases")."""

    UNIFORM = "uniform"  # uniform over all bit patterns of the type
    EDGES = "edges"      # half edge values (0, ±1, MIN, MAX, ±0, ±inf, NaN...), half uniform


@dataclass(frozen=True, slots=True)
class Fill:
    """Every element is the same value."""

    bits: int


@dataclass(frozen=True, slots=True)
class Values:
    """Explicit elements; the buffer's `len` is the number of values."""

    bits: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Random:
    """Reproducible random contents: the same seed and dist give the same bits everywhere."""

    seed: int
    dist: Dist = Dist.UNIFORM


Init: TypeAlias = Fill | Values | Random


@dataclass(frozen=True, slots=True, kw_only=True)
class BufferArg:
    """A slice parameter (`&[T]` / `&mut [T]`) and its initial contents."""

    name: str
    elem: Scalar
    len: int
    init: Init


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalarArg:
    """A scalar parameter passed by value."""

    name: str
    ty: Scalar
    bits: int


Arg: TypeAlias = BufferArg | ScalarArg


@dataclass(frozen=True, slots=True, kw_only=True)
class Launch:
    """Grid (number of blocks) and block (threads per block), each 3-D."""

    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)

    @property
    def dims(self) -> tuple[int, int, int, int, int, int]:
        """Grid x, y, z then block x, y, z: the one order every executor passes them in."""
        return (*self.grid, *self.block)

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


class ExpectStatus(StrEnum):
    AGREE = "agree"
    KNOWN_DIVERGENCE = "known-divergence"


@dataclass(frozen=True, slots=True, kw_only=True)
class Expect:
    """What a corpus case is expected to do: agree everywhere, or diverge on named pipelines
    for a reason tracked upstream (`issue`)."""

    status: ExpectStatus = ExpectStatus.AGREE
    pipelines: tuple[str, ...] = ()
    issue: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Where a case came from: which generator and seed, or which case it was reduced from."""

    generator: str = ""
    seed: int | None = None
    profile: str = ""
    parent: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One test. Its `id` hashes only what determines the computation (entry, kernel, launch,
    arguments), so promoting a case into the corpus or annotating it keeps its id."""

    entry: str
    kernel: str
    launch: Launch
    args: tuple[Arg, ...]
    expect: Expect | None = None
    provenance: Provenance = field(default_factory=Provenance)
    pipelines: tuple[str, ...] = ()  # the pipelines a finding was recorded on, for `reproduce`
    # The id, hashed on first access: `functools.cached_property` needs an instance `__dict__`,
    # which slots remove. Lazy rather than in `__post_init__`: cases built by `replace` and never
    # asked for their id (reducer candidates) hash nothing. Not compared, not in `repr`;
    # `replace` resets it, since init=False fields are not copied.
    _id: str = field(default="", init=False, repr=False, compare=False)

    @property
    def id(self) -> str:
        """sha256 of `identity_text()`, first 12 hex digits (README "Cases")."""
        if not self._id:
            object.__setattr__(
                self, "_id", hashlib.sha256(self.identity_text().encode()).hexdigest()[:12])
        return self._id

    def identity_text(self) -> str:
        """The canonical text the id is computed from (stable, documented in README "Cases")."""
        lines = [f"entry={self.entry}", f"grid={list(self.launch.grid)}",
                 f"block={list(self.launch.block)}"]
        for a in self.args:
            match a:
                case BufferArg(name=n, elem=e, len=ln, init=init):
                    lines.append(f"buffer {n}: {e}[{ln}] = {_init_text(init)}")
                case ScalarArg(name=n, ty=t, bits=b):
                    lines.append(f"scalar {n}: {t} = {b:#x}")
        lines.append("kernel:")
        lines.append(self.kernel)
        return "\n".join(lines)

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)


def _init_text(init: Init) -> str:
    match init:
        case Fill(bits=b):
            return f"fill {b:#x}"
        case Values(bits=bs):
            return "values " + ",".join(f"{b:#x}" for b in bs)
        case Random(seed=s, dist=d):
            return f"random {s} {d}"
