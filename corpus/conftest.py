"""`pytest corpus` and `pytest corpus/<id>.toml`: each case file is one test, named by its
id, checked exactly as `tests/corpus/test_corpus.py` checks it (which `pytest tests/corpus`
and `make test` run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from tests.corpus.test_corpus import check_case, expectation_marks


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".toml":
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        case = casefile.load(self.path)
        item = CaseItem.from_parent(self, name=case.id)
        for mark in expectation_marks(case):
            item.add_marker(mark)
        yield item


class CaseItem(pytest.Item):
    def runtest(self) -> None:
        check_case(self.path)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"corpus case {self.name}"
