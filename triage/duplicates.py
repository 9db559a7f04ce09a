"""Is it filed already? Before a finding goes upstream, the report lists what it may
duplicate:

* the LLVM bugs of `docs/llvm-bugs/*.ll` and `triage/known_bugs.toml` whose culprit pass
  is the finding's (each reproducer states its culprit in a `; Culprit: PASS` line, known
  from its upstream issue or a MIR diff, and each known bug in a `culprit` key);
* the regression corpus cases whose known divergence names such a bug, or whose kernel has
  the same *shape* as the finding's: the same set of operation families
  (`triage.bugkey.TypedOp.family`: `or:int`, `as:float->int`), a reduced kernel being
  little more than the operations the bug needs;
* the store's other buckets with the same bug key (signature kind and detail: `probe=`,
  `ops=` or a known bug), which are the same bug on another pipeline.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from oracles.signature import Signature
from rgpu_fuzz import casefile
from rgpu_fuzz.checkout import checkout
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.pipelines.frontend import prepare
from triage.bugkey import typed_ops

_CULPRIT = re.compile(r"^;\s*Culprit:\s*([\w.-]+)", re.MULTILINE)


@dataclass(frozen=True)
class Duplicate:
    """`where` may already hold this bug, `why` says what matches."""

    where: str
    why: str


def shape(case: Case) -> frozenset[str]:
    """The operation families of the case's kernel (empty when it does not check)."""
    prepared = prepare(case)
    if not isinstance(prepared, tuple):
        return frozenset()
    checked, _ = prepared
    return frozenset(op.family for op in typed_ops(tuple(checked.fns.values())))


def llvm_bug_culprits(root: Path) -> dict[str, str]:
    """Reproducer path (relative to `root`) -> its `; Culprit:` pass."""
    out = {}
    for path in sorted((root / "docs" / "llvm-bugs").glob("*.ll")):
        m = _CULPRIT.search(path.read_text())
        if m:
            out[str(path.relative_to(root))] = m.group(1)
    return out


def known_bug_culprits() -> dict[str, tuple[str, str]]:
    """Known bug name -> (culprit pass, its finding note) from known_bugs.toml."""
    data = tomllib.loads(resources.files("triage").joinpath("known_bugs.toml").read_text())
    return {b["name"]: (b.get("culprit", ""), b.get("finding", "")) for b in data["bug"]}


def _corpus(root: Path, issue_culprits: dict[str, str], culprit: str,
            case: Case) -> list[Duplicate]:
    out = []
    mine = shape(case)
    for path in sorted((root / "corpus").glob("*.toml")):
        other = casefile.load(path)
        if other.id == case.id:
            continue
        rel = str(path.relative_to(root))
        issue = other.expect.issue if other.expect is not None else ""
        if culprit and issue_culprits.get(issue) == culprit:
            out.append(Duplicate(rel, f"a known divergence of the same culprit pass, "
                                      f"{culprit} ({issue})"))
        elif mine and shape(other) == mine:
            out.append(Duplicate(rel, "the same shape: " + ", ".join(sorted(mine))))
    return out


def _buckets(store: Path, signature: str, exclude: str | None) -> list[Duplicate]:
    from triage.store import FindingStore

    key = Signature.parse(signature)
    out = []
    with FindingStore(store, readonly=True) as fs:
        for b in fs.buckets():
            other = b.signature
            if b.id != exclude and other.kind == key.kind and other.detail == key.detail \
                    and str(other) != signature:
                out.append(Duplicate(f"bucket {b.id} ({b.status})",
                                     f"the same bug key {key.kind}|{key.detail} on "
                                     f"{other.pipeline}"))
    return out


def find_duplicates(case: Case, culprit: str = "", signature: str | None = None,
                    store: Path | None = None, bucket: str | None = None) -> list[Duplicate]:
    """What `case`'s finding may duplicate: reproducers and known bugs of the same
    `culprit` pass, corpus cases of that bug or of the same shape, and buckets of `store`
    (but `bucket`, the finding's own) with the bug key of `signature`."""
    root = checkout()
    out: list[Duplicate] = []
    issue_culprits: dict[str, str] = {}
    if root is not None:
        issue_culprits = llvm_bug_culprits(root)
        out += [Duplicate(path, f"the same culprit pass, {culprit}")
                for path, c in issue_culprits.items() if culprit and c == culprit]
    for name, (c, finding) in known_bug_culprits().items():
        if finding:
            issue_culprits[finding] = c
        if culprit and c == culprit:
            out.append(Duplicate(f"triage/known_bugs.toml {name}",
                                 f"the same culprit pass, {culprit}"))
    if root is not None:
        out += _corpus(root, issue_culprits, culprit, case)
    if store is not None and signature is not None and store.is_file():
        out += _buckets(store, signature, bucket)
    return out


__all__ = ["Duplicate", "find_duplicates", "known_bug_culprits", "llvm_bug_culprits", "shape"]
