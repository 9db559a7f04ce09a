"""Which bucket a finding belongs to (docs/design.md §5 "a signature names a bug, not a case").

Crash, timeout and trap signatures name the bug already (a normalised error line, a trap
kind). A wrong-code finding is placed, in this order:
1. by its *bug key* when it has one (`triage/bugkey.py`: the operations of its kernel that
   the pipeline computes wrong on their own, `wrong-code|P|probe=...`), when the key names
   exactly one operation family: that is its bucket, reduced or not;
2. a key with several families in an unreduced kernel needs a reduction of its own, whose
   kernel's key is its bucket: a kernel may hold an operation of a second bug that did not
   cause this finding (joining a bucket of one of the families merged two bugs of one
   pipeline: 2 of 3 shl findings in the cast bug's bucket, measured by `bench buckets`);
3. without a key, in a campaign that keys findings (`keyed`): it needs a reduction of its
   own, and the reduced kernel's `ops=` signature is its bucket as it stands. No operation
   of such a kernel is wrong alone, so the bug needs context (a constant operand, two
   operations together, an optimisation across statements), and the operations a kernel
   happens to hold say nothing about which context: a real campaign's bucket 1b682c54bf
   (`ops=neg,sqrt`, the simulator's VOP3 `neg` on `v_cndmask`) took an LLVM `srem` bug
   (docs/llvm-bugs/srem64_bypass_urem_24bit.ll) because that kernel held a `neg` and a
   `sqrt` too. A context bug may so be split over buckets; it is no longer hidden in
   another bug's bucket;
4. without a key in a campaign that does not key findings (the `ops=` behaviour kept for
   comparison, `bench buckets`): by its coarse key (`wrong-code|pipeline`): it joins an
   existing `ops=` bucket whose operations all occur in its kernel (the most specific such
   bucket), or else it needs a reduction of its own to learn its bucket.

Both key versions live side by side in a store: `ops=` buckets written before bug keys keep
their signature and id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from oracles import Finding, FindingKind, Signature
from triage.known_bugs import is_known_bug


def signature_ops(signature: Signature) -> frozenset[str] | None:
    """The operations of a wrong-code signature, or None for signatures without them."""
    return signature.ops


def is_bug_key(signature: Signature | None) -> bool:
    """Whether `signature` is a probe-keyed (bug key) wrong-code signature."""
    return signature is not None and signature.probe is not None


def reduction_slot(signature: Signature) -> Signature:
    """The key under which at most one reduction runs at a time: a bug key itself (each
    bug-keyed bucket reduces its own first finding), else the coarse key (findings of one
    coarse key wait for the reduction that may place them)."""
    return signature if is_bug_key(signature) else signature.coarse


def slot_text(slot: Signature) -> str:
    """The text a reduction slot had before signatures were values, which names a campaign's
    `reducing/` marker (so a campaign stopped by an older rgpu-fuzz resumes): a bug key's
    own text; a coarse wrong-code key as `wrong-code|P` (`Signature.coarse_text`, without
    the empty detail field); any other signature's text."""
    if slot.kind == FindingKind.WRONG_CODE and not slot.detail:
        return f"{slot.kind}|{slot.pipeline}"
    return str(slot)

def place(finding: Finding, case_ops: Iterable[str], known: Iterable[Signature], *,
          bug_key: Signature | None = None, reduced: bool = False,
          keyed: bool = False) -> Signature | None:
    """The signature of the bucket this finding counts in, or None when it needs reducing.

    `known` are the signatures of existing buckets; `case_ops` the operations of the case's
    own kernel; `bug_key` the finding's bug key if it has one (`BugKeys.key`), taken as is
    for a `reduced` kernel and when it names one family; `keyed`: the campaign asked for
    bug keys, so a finding without one has none (rule 3 of the module doc)."""
    if bug_key is not None and is_known_bug(bug_key):
        return bug_key  # a known LLVM bug explains it (triage/known_bugs.py), any kind
    if finding.kind is not FindingKind.WRONG_CODE:
        return finding.signature
    key = finding.signature.coarse
    if bug_key is not None:
        families = bug_key.probe or frozenset()
        return bug_key if reduced or len(families) == 1 else None
    if keyed:
        return finding.signature if reduced else None
    return _most_specific(key, frozenset(case_ops), known, signature_ops)


def unreduced_bucket(finding: Finding, bug_key: Signature | None) -> Signature:
    """The bucket of a finding of a campaign that does not reduce (`--no-reduce`): its bug
    key when it has one — a known LLVM bug's, or the probe key, narrowed to the family the
    whole kernel shows alone (`BugKeys.shown`) — else its own signature (a context bug: split
    over buckets, never hidden in another bug's; see rule 3)."""
    return bug_key if bug_key is not None else finding.signature


def _most_specific(key: Signature, have: frozenset[str], known: Iterable[Signature],
                   names: Callable[[Signature], frozenset[str] | None]) -> Signature | None:
    """The known bucket of coarse key `key` with the most names, all of them in `have`."""
    best: tuple[int, Signature] | None = None
    for sig in known:
        if sig.coarse != key:
            continue
        bucket = names(sig)
        if bucket is not None and bucket <= have:
            if best is None or len(bucket) > best[0]:
                best = (len(bucket), sig)
    return best[1] if best else None


def same_bug(signature: Signature, finding: Finding, ops: tuple[str, ...]) -> bool:
    """The finding is the bug of the bucket `signature` names (the one rule `reproduce` and
    `recheck` share): same signature, or (wrong code) the campaign's
    placement puts it there. A bug-keyed bucket (`probe=`) matches wrong code on its
    pipeline: its key came from probe kernels, which a recheck does not rerun, and the
    reproducer's own `ops=` never names a key (such buckets read "changed" before)."""
    if finding.signature == signature:
        return True
    if is_bug_key(signature):
        return finding.signature.coarse == signature.coarse
    if is_known_bug(signature):  # its reproducer shows the bug as a finding of kind and pipeline
        found = finding.signature
        return (found.kind, found.pipeline) == (signature.kind, signature.pipeline)
    return (finding.signature.coarse == signature.coarse
            and place(finding, ops, [signature]) == signature)
