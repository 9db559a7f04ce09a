"""Plain data shared by every stage: scalar types, cases, outcomes."""

from rgpu_fuzz.model.scalars import FLOAT_TYPES, INT_TYPES, Scalar, from_bits, to_bits

__all__ = ["FLOAT_TYPES", "INT_TYPES", "Scalar", "from_bits", "to_bits"]
