"""Find a case by id or id prefix, wherever it lives (docs/design.md §2 "Reproduce").

A prefix may name a corpus case (by the `id` in the file), a stored case, or a bucket (its
best reproducer). It must name exactly one *case*: a case that sits both in the corpus and
in a store, or a bucket and its own best case, is one match, not an ambiguity.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rgpu_fuzz import casefile
from rgpu_fuzz.model.case import Case
from triage.store import (
    Bucket,
    FindingStore,
    IdLookupError,
    ambiguous_message,
    default_store_path,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Where:
    """Where a case was found: a corpus file, a store (and the bucket it reproduces), or both."""

    corpus_file: Path | None = None
    store: Path | None = None
    bucket: Bucket | None = None

    def __str__(self) -> str:
        parts = []
        if self.corpus_file is not None:
            parts.append(str(self.corpus_file))
        if self.store is not None:
            parts.append(f"{self.store}" + (f" (bucket {self.bucket.id})" if self.bucket else ""))
        return ", ".join(parts) or "?"


@dataclass(slots=True)
class _Match:
    case_id: str
    matched: list[tuple[str, str]] = field(default_factory=list)  # (what, id)
    case: Case | None = None
    corpus_file: Path | None = None
    store: Path | None = None
    bucket: Bucket | None = None


def _corpus_ids(directory: Path) -> Iterable[tuple[str, Path]]:
    """(case id, file) for every readable case file of a corpus folder."""
    for path in sorted(directory.glob("*.toml")):
        try:
            text = path.read_text(encoding="utf-8")
            doc = tomllib.loads(text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        case_id = doc.get("id")
        if not isinstance(case_id, str):
            try:
                case_id = casefile.loads(text, str(path)).id
            except casefile.CaseError:
                continue
        yield case_id.lower(), path


def find_case(id_or_prefix: str, *, corpus_dirs: Iterable[Path] = (Path("corpus"),),
              store_paths: Iterable[Path] | None = None) -> tuple[Case, Where]:
    """The one case `id_or_prefix` names (a path to a case file is accepted too).

    Raises `IdLookupError` (a `LookupError`) with one line when nothing or more than one case
    matches, and `casefile.CaseError` when the matching file is not a valid case."""
    as_path = Path(id_or_prefix)
    if as_path.suffix == ".toml" and as_path.is_file():
        case = casefile.load_checked(as_path)  # a file the user names: check it as `run` does
        return case, Where(corpus_file=as_path)
    prefix = id_or_prefix.strip().lower()
    if not prefix:
        raise IdLookupError("an empty id matches nothing")
    corpus_dirs = list(corpus_dirs)
    stores = [default_store_path()] if store_paths is None else list(store_paths)
    matches: dict[str, _Match] = {}

    def match(case_id: str) -> _Match:
        return matches.setdefault(case_id, _Match(case_id))

    for directory in corpus_dirs:
        for case_id, path in _corpus_ids(directory):
            if case_id.startswith(prefix):
                m = match(case_id)
                m.matched.append(("case", case_id))
                if m.corpus_file is None:
                    m.corpus_file = path
    for store_path in stores:
        if not store_path.is_file():
            continue
        with FindingStore(store_path, readonly=True) as store:
            bucket_ids, case_ids = store.match_ids(prefix)
            for bid in bucket_ids:
                b = store.bucket(bid)
                if b.best_case_id is None:
                    continue
                m = match(b.best_case_id)
                m.matched.append(("bucket", bid))
                m.store, m.bucket = m.store or store_path, m.bucket or b
                m.case = m.case or store.case(b.best_case_id)
            for cid in case_ids:
                m = match(cid)
                m.matched.append(("case", cid))
                if m.store is None:
                    m.store = store_path
                    owners = store.buckets_of_case(cid)
                    m.bucket = m.bucket or (owners[0] if owners else None)
                m.case = m.case or store.case(cid)
    if not matches:
        searched = ", ".join([f"{d}/" for d in corpus_dirs] + [str(s) for s in stores])
        raise IdLookupError(f"no bucket or case matches {id_or_prefix!r} "
                            f"(searched {searched or 'nothing'})")
    if len(matches) > 1:
        listed = sorted({pair for m in matches.values() for pair in m.matched},
                        key=lambda p: (p[0], p[1]))
        raise IdLookupError(ambiguous_message(id_or_prefix, listed))
    (m,) = matches.values()
    # a reviewed corpus file wins over the stored copy: it carries the [expect] table
    found = casefile.load(m.corpus_file) if m.corpus_file is not None else m.case
    assert found is not None, m
    return found, Where(corpus_file=m.corpus_file, store=m.store, bucket=m.bucket)


__all__ = ["Where", "find_case"]
