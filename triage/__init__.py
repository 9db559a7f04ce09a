"""Triage (docs/design.md §2): reduce, bucket, store, file and reproduce findings."""

from triage.reduce import Reduction, reduce_case, signature_predicate

__all__ = ["Reduction", "reduce_case", "signature_predicate"]

from triage.lookup import Where, find_case
from triage.report import collect_versions, render_report
from triage.store import (
    Bucket,
    BucketStatus,
    BucketUpdate,
    FindingStore,
    IdLookupError,
    StoreError,
    default_store_path,
)

__all__ += [
    "Bucket", "BucketStatus", "BucketUpdate", "FindingStore", "IdLookupError", "StoreError",
    "Where", "collect_versions", "default_store_path", "find_case", "render_report",
]
