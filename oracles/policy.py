"""Oracle policies: which pipeline is the arbiter, how floats compare, which differences are
known. Policies are TOML data files (`oracles/policies/*.toml` or any path), not code."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatch
from pathlib import Path

from oracles.signature import Signature
from rgpu_fuzz.model.errors import RgpuError

POLICY_DIR = Path(__file__).resolve().parent / "policies"


class ZeroSign(StrEnum):
    STRICT = "strict"                # +0.0 and -0.0 differ
    LOOSE = "loose"                  # +0.0 equals -0.0 everywhere
    LOOSE_IF_MIN_MAX = "loose-if-min-max"  # equal only in kernels that use float min/max,
    # where Rust lets the result be either zero (docs/language.md)


@dataclass(frozen=True, slots=True)
class KnownDifference:
    """A difference we know about: findings on matching pipelines with a signature that
    contains `signature` are reported as known, not new."""

    pipelines: str       # fnmatch pattern over pipeline labels, e.g. "rustc-*"
    signature: str
    issue: str

    def matches(self, pipeline: str, signature: Signature) -> bool:
        """Whether a finding on `pipeline` is this difference (`signature`, a pattern, is
        a part of the finding's signature text)."""
        return fnmatch(pipeline, self.pipelines) and self.signature in str(signature)


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    arbiter: str = "ref"
    zero_sign: ZeroSign = ZeroSign.LOOSE_IF_MIN_MAX
    max_diffs: int = 8
    known: tuple[KnownDifference, ...] = ()


class PolicyError(RgpuError):
    """A policy file that cannot be used; `str()` is one line naming the field."""


def load_policy(name_or_path: str = "default") -> Policy:
    path = Path(name_or_path)
    if not path.suffix:
        path = POLICY_DIR / f"{name_or_path}.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise PolicyError(f"{path}: cannot read policy: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(f"{path}: invalid TOML: {e}") from None
    try:
        zero = ZeroSign(doc.get("zero_sign", ZeroSign.LOOSE_IF_MIN_MAX))
    except ValueError:
        raise PolicyError(f"{path}: zero_sign: expected one of "
                          f"{', '.join(z.value for z in ZeroSign)}") from None
    known = []
    for i, k in enumerate(doc.get("known", [])):
        try:
            known.append(KnownDifference(k["pipelines"], k["signature"], k.get("issue", "")))
        except (KeyError, TypeError):
            raise PolicyError(f"{path}: known[{i}]: needs `pipelines` and `signature`") from None
    max_diffs = doc.get("max_diffs", 8)
    if not isinstance(max_diffs, int) or max_diffs < 1:
        raise PolicyError(f"{path}: max_diffs: expected a positive integer")
    return Policy(name=doc.get("name", path.stem), arbiter=doc.get("arbiter", "ref"),
                  zero_sign=zero, max_diffs=max_diffs, known=tuple(known))
