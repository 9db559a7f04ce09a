"""Plain data shared by every stage: scalar types, cases, outcomes.

The scalar helpers load on first use (PEP 562): they need numpy, and `rgpu-fuzz --help`
imports this package for `model.errors` alone."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rgpu_fuzz.model.scalars import FLOAT_TYPES, INT_TYPES, Scalar, from_bits, to_bits

__all__ = ["FLOAT_TYPES", "INT_TYPES", "Scalar", "from_bits", "to_bits"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'rgpu_fuzz.model' has no attribute {name!r}")
    value = getattr(import_module("rgpu_fuzz.model.scalars"), name)
    globals()[name] = value
    return value
