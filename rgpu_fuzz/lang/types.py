"""Semantic types of the kernel language (docs/language.md "Types").

The checker annotates every expression with one of these; the interpreter and the lowering
read them and never re-derive a type.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

from rgpu_fuzz.model.scalars import Scalar


@dataclass(frozen=True, slots=True)
class ArrayTy:
    """A local (private-memory) or shared array `[elem; len]` with its length resolved."""

    elem: Scalar
    len: int

    def __str__(self) -> str:
        return f"[{self.elem}; {self.len}]"


@dataclass(frozen=True, slots=True)
class SliceTy:
    """A kernel buffer parameter, `&[elem]` or `&mut [elem]` (global memory)."""

    elem: Scalar
    mutable: bool

    def __str__(self) -> str:
        return f"&mut [{self.elem}]" if self.mutable else f"&[{self.elem}]"


class Special(Enum):
    """`()` and `!` (the type of `return`, `break`, `continue` and a `loop` without `break`)."""

    UNIT = "()"
    NEVER = "!"

    def __str__(self) -> str:
        return self.value


UNIT = Special.UNIT
NEVER = Special.NEVER

Type: TypeAlias = Scalar | ArrayTy | SliceTy | Special
