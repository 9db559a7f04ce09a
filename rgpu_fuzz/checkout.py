"""The source checkout this `rgpu_fuzz` runs from, if it runs from one.

Benchmarks that compare with a baseline revision, `report --upstream` and the recorded
revision need the repository around the package (its `.git`, `docs/llvm-bugs`): an
installed wheel has none. (Library code never reads `tests/`: the seeded-bug plugins the
benchmarks use are in the package, `rgpu_fuzz/bench/seeded/`.) This is the one place that
finds it, by the package's own location and the `pyproject.toml` that names the
distribution, so no module counts parent directories of its own file."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import rgpu_fuzz
from rgpu_fuzz.model.errors import RgpuError

DISTRIBUTION = "rgpu-fuzz"


@cache
def checkout() -> Path | None:
    """The repository root holding the imported `rgpu_fuzz` package (beside a
    `pyproject.toml` of the `rgpu-fuzz` distribution), or None for an installed package."""
    package = Path(rgpu_fuzz.__file__ or ".").resolve().parent
    root = package.parent
    try:
        meta = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return root if meta.get("project", {}).get("name") == DISTRIBUTION else None


def in_checkout(*parts: str) -> Path:
    """A path inside the source checkout; a `NoCheckout` error when there is none."""
    root = checkout()
    if root is None:
        raise NoCheckout(f"{'/'.join(parts)} is part of the rgpu-fuzz source checkout, which "
                         "this installed package is not run from")
    return root.joinpath(*parts)


class NoCheckout(RgpuError):
    """What was asked needs the source checkout; `str()` is the one line to print."""


__all__ = ["DISTRIBUTION", "NoCheckout", "checkout", "in_checkout"]
