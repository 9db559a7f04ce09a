"""The bug-key probe answers a store keeps (schema v5): which operations each pipeline
computes wrong on its own, per toolchain, so a resumed or repeated campaign does not probe
again what it already asked (`triage/bugkey.py` says what a probe is).

An answer is only as good as the compilers it was asked of: answers are filed under a
*toolchain* fingerprint, the hash of every tool version the run recorded (`toolchains.py`:
LLVM, rustc, ld.lld, the ISA tables, each plugin file's sha256, rgpu-fuzz's revision), the
oracle policy, the probe kernels' format and a digest of rgpu-fuzz's source files (so an
uncommitted edit is a new toolchain). A change of any of them starts an empty set.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rgpu_fuzz.model.scalars import Scalar
from triage.bugkey import PROBE_SEED, PROBE_THREADS, ProbeAnswer, TypedOp
from triage.store.schema import StoreBase

PROBE_FORMAT = f"probe-kernels/1 seed={PROBE_SEED:#x} threads={PROBE_THREADS}"
"""What the probe kernels are; part of the fingerprint (change it with `bugkey._kernel`)."""


def probe_toolchain(versions: Mapping[str, str], policy: str, source: str | None = None) -> str:
    """The fingerprint answers are filed under: 16 hex of sha256 over the run's versions,
    the policy name, `PROBE_FORMAT` and the digest of rgpu-fuzz's own source (`source`,
    by default `toolchains.source_digest()` of the running package: the revision in
    `versions` does not see uncommitted edits, the digest does)."""
    if source is None:
        from triage.toolchains import source_digest

        source = source_digest()
    text = json.dumps({"versions": dict(versions), "policy": policy, "probes": PROBE_FORMAT,
                       "source": source}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def op_text(op: TypedOp) -> str:
    """The stored form of a typed operation (JSON, stable key order)."""
    return json.dumps({"family": op.family, "template": op.template,
                       "operands": [str(t) for t in op.operands], "result": str(op.result)},
                      sort_keys=True)


def op_from(text: str) -> TypedOp:
    d = json.loads(text)
    return TypedOp(family=d["family"], template=d["template"],
                   operands=tuple(Scalar(t) for t in d["operands"]), result=Scalar(d["result"]))


class ProbeCache(StoreBase):
    """The store's probe answers (a part of `FindingStore`; table `probes`, schema v5)."""

    def record_probes(self, toolchain: str, answers: Sequence[ProbeAnswer]) -> None:
        """Keep answers under `toolchain`; an answer already kept stays as it was."""
        now = time.time()
        with self._write() as db:
            db.executemany("INSERT OR IGNORE INTO probes VALUES (?, ?, ?, ?, ?, ?)",
                           [(toolchain, a.pipeline, op_text(a.op), int(a.broken),
                             self.run_id, now) for a in answers])

    def probe_answers(self, toolchain: str) -> list[ProbeAnswer]:
        """Every answer kept under `toolchain`."""
        rows: Iterator[Any] = self._conn.execute(
            "SELECT pipeline, op, broken FROM probes WHERE toolchain = ? ORDER BY rowid",
            (toolchain,))
        return [ProbeAnswer(r[0], op_from(r[1]), bool(r[2])) for r in rows]


__all__ = ["PROBE_FORMAT", "ProbeCache", "op_from", "op_text", "probe_toolchain"]
