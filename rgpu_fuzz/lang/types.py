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
    atomic: bool = False
    """`[AtomicU32; N]`: a `#[shared]` static of atomics (lang/atomics.py)."""

    def __str__(self) -> str:
        return f"[{elem_text(self.elem, self.atomic)}; {self.len}]"


@dataclass(frozen=True, slots=True)
class SliceTy:
    """A kernel buffer parameter, `&[elem]` or `&mut [elem]` (global memory)."""

    elem: Scalar
    mutable: bool
    atomic: bool = False
    """`&[AtomicU32]`: written through atomic methods only; `mutable` is True for it (its
    final contents are an output, as a `&mut` buffer's)."""

    def __str__(self) -> str:
        if self.atomic:
            return f"&[{elem_text(self.elem, True)}]"
        return f"&mut [{self.elem}]" if self.mutable else f"&[{self.elem}]"


@dataclass(frozen=True, slots=True)
class AtomicTy:
    """One element of an atomic buffer or shared array (`a[i]` in `a[i].load(o)`): only the
    receiver of an atomic method, never a value."""

    elem: Scalar

    def __str__(self) -> str:
        return elem_text(self.elem, True)


def elem_text(elem: Scalar, atomic: bool) -> str:
    """`u32`, or `AtomicU32` for an atomic element (core::sync::atomic's type names)."""
    return f"Atomic{elem.value.upper()}" if atomic else elem.value


class Special(Enum):
    """`()` and `!` (the type of `return`, `break`, `continue` and a `loop` without `break`)."""

    UNIT = "()"
    NEVER = "!"
    ORDERING = "Ordering"
    """`Ordering::Relaxed` ...: only an argument of an atomic method or `fence`."""

    def __str__(self) -> str:
        return self.value


UNIT = Special.UNIT
NEVER = Special.NEVER

ORDERING = Special.ORDERING

Type: TypeAlias = Scalar | ArrayTy | SliceTy | AtomicTy | Special
