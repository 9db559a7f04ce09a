"""Triage (DESIGN.md §7): reduce, bucket, store, file and reproduce findings."""

from rgpu_fuzz.triage.reduce import Reduction, reduce_case, signature_predicate

__all__ = ["Reduction", "reduce_case", "signature_predicate"]
