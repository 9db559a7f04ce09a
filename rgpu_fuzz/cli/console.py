"""The one way the CLI makes a rich `Console`.

Emoji codes are off: pipeline labels and kernel text are full of `:name:` runs, and rich
would render `llvm-cpu:O2:llc=...` as `llvm-cpu🅾llc=...` (`:o2:` is an emoji code), so a
label printed in a table would no longer be the label a user can paste back.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

__all__ = ["make_console"]


def make_console(**options: Any) -> Console:
    """A `Console` with emoji replacement off; `options` go to `Console` unchanged."""
    return Console(emoji=False, **options)
