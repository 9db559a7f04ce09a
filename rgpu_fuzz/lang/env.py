"""What the checker's passes share: item signatures, the error sink, and the provisional types
used while inferring literal types.

Bodies are checked one function at a time against an `Env` built from the items, so items
resolve regardless of their order in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TypeAlias

import numpy as np

from rgpu_fuzz.lang.source import Diagnostic, SourceFile, Span
from rgpu_fuzz.lang.types import ArrayTy, Type
from rgpu_fuzz.model.scalars import Scalar

ConstValue: TypeAlias = int | bool | np.float32 | np.float64
"""A `const`'s value; floats as numpy scalars of their type, which hold the exact bits."""
"""The value of a `const`: a Python int for integer types, the exact float of its type for
`f32`/`f64`, a bool for `bool`."""


class Infer(Enum):
    """Provisional types that never survive a successful check.

    `INT`/`FLOAT` type an unsuffixed literal (and operators over such literals) until the
    context fixes the type, as rustc's `{integer}`/`{float}` do; `ERR` types an expression
    that already produced an error, so that nothing built on it reports again.
    """

    INT = "{integer}"
    FLOAT = "{float}"
    ERR = "{error}"


AnyTy: TypeAlias = Type | Infer


def describe(t: AnyTy) -> str:
    """A type as rustc writes it in "expected ..., found ..."."""
    if t is Infer.INT:
        return "integer"
    if t is Infer.FLOAT:
        return "floating-point number"
    return f"`{t}`"


def is_int(t: AnyTy) -> bool:
    """An integer type, or a literal that will become one."""
    return t is Infer.INT or (isinstance(t, Scalar) and t.is_int)


def is_float(t: AnyTy) -> bool:
    return t is Infer.FLOAT or (isinstance(t, Scalar) and t.is_float)


def fits(t: AnyTy, expected: Type) -> bool:
    """Whether a provisional literal type can become `expected`."""
    return (t is Infer.INT and isinstance(expected, Scalar) and expected.is_int) or (
        t is Infer.FLOAT and isinstance(expected, Scalar) and expected.is_float)


@dataclass(frozen=True, slots=True)
class FnSig:
    """A function as its callers see it."""

    name: str
    params: tuple[AnyTy, ...]
    ret: AnyTy
    kernel: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Local:
    """A local variable in scope: `let`, parameter or `for` variable."""

    name: str
    binding: int
    ty: AnyTy
    mutable: bool
    kind: str  # "let", "param" or "for": only for the wording of mutability errors


@dataclass
class Env:
    """The module's items as seen from any body, plus the list every pass reports into."""

    file: SourceFile
    errors: list[Diagnostic] = field(default_factory=list)
    const_types: dict[str, Scalar] = field(default_factory=dict)
    const_values: dict[str, ConstValue] = field(default_factory=dict)
    shared: dict[str, ArrayTy] = field(default_factory=dict)
    fns: dict[str, FnSig] = field(default_factory=dict)

    def error(self, message: str, span: Span, *notes: str) -> None:
        self.errors.append(Diagnostic(message, span, self.file, tuple(notes)))

    def where(self, span: Span) -> str:
        """`file:line:col` of a span, for notes that point at a second place."""
        return f"{self.file.name}:{span.line}:{span.col}"

    def snippet(self, span: Span) -> str:
        """The source text under a span (empty for generated nodes)."""
        return self.file.text[span.start:span.end] if span.end > span.start else ""


def concrete(t: AnyTy) -> Type | None:
    """`t` if it is a real type, None while provisional or erroneous."""
    return None if isinstance(t, Infer) else t

