"""Which bucket a finding belongs to (DESIGN.md §6 "a signature names a bug, not a case").

Crash, timeout and trap signatures name the bug already (a normalised error line, a trap
kind). A wrong-code signature names the operations left in the *reduced* kernel, so an
unreduced finding is placed by its coarse key (`wrong-code|pipeline`): it joins an existing
bucket whose operations all occur in its kernel (the most specific such bucket), and
otherwise it needs a reduction of its own to learn its bucket.
"""

from __future__ import annotations

from collections.abc import Iterable

from rgpu_fuzz.oracles import Finding, FindingKind, Signature
from rgpu_fuzz.oracles.signature import coarse_key


def signature_ops(signature: str) -> frozenset[str] | None:
    """The operations of a wrong-code signature, or None for signatures without them."""
    return Signature.parse(signature).ops


def place(finding: Finding, case_ops: Iterable[str], known: Iterable[str]) -> str | None:
    """The signature of the bucket this finding counts in, or None when it needs reducing.

    `known` are the signatures of existing buckets; `case_ops` the operations of the case's
    own kernel."""
    if finding.kind is not FindingKind.WRONG_CODE:
        return finding.signature
    key = coarse_key(finding.signature)
    ops = frozenset(case_ops)
    best: tuple[int, str] | None = None
    for sig in known:
        if coarse_key(sig) != key:
            continue
        bucket_ops = signature_ops(sig)
        if bucket_ops is not None and bucket_ops <= ops:
            if best is None or len(bucket_ops) > best[0]:
                best = (len(bucket_ops), sig)
    return best[1] if best else None
