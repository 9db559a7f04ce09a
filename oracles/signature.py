"""A finding's signature: the name of a bug, not of a case (docs/design.md §5).

A `Signature` is a frozen value — kind, pipeline, stage, detail — with exactly one text
form, `str(sig)`, which the store keys buckets on and the command line prints, and one
reader, `Signature.parse`. Findings, buckets, bug keys, reduction jobs and reports carry the
value; text is made and read only where it leaves the process: the store (`triage/store/`),
the campaign wire (`campaigns/wire.py`), a resumed campaign's markers and the command line's
arguments. Nothing else splits signature text.

The text form is the kind followed by the fields that kind has, `|`-separated, always all of
them (so an empty middle field keeps its place); the last field takes the rest of the text,
since a crash line or an operator list may itself contain `|`. These layouts are those
stores have been written with since the first campaign, so old stores read unchanged:

    wrong-code|<pipeline>|ops=<op,op,...>           (the operations left in the kernel)
    wrong-code|<pipeline>|probe=<family+family...>  (the operations wrong on their own,
                                                     `triage/bugkey.py`; since key v2)
    trap-mismatch|<pipeline>|expected <kind>, got <...>   (or: unexpected <kind>)
    compile-crash|<pipeline>|<stage>|<first error line, normalised>
    run-crash|<pipeline>|<signal>
    timeout|<pipeline>|<stage>
    nondeterminism|<pipeline>|<artefact>
    rejected|<pipeline>|<reason>
    pipeline-error|<pipeline>|<error line, normalised>
    invalid-case|<reason>
"""

from __future__ import annotations

from dataclasses import dataclass

PIPELINE, STAGE, DETAIL = "pipeline", "stage", "detail"

LAYOUT: dict[str, tuple[str, ...]] = {
    "wrong-code": (PIPELINE, DETAIL),
    "trap-mismatch": (PIPELINE, DETAIL),
    "compile-crash": (PIPELINE, STAGE, DETAIL),
    "run-crash": (PIPELINE, DETAIL),
    "timeout": (PIPELINE, STAGE),
    "nondeterminism": (PIPELINE, STAGE),
    "rejected": (PIPELINE, DETAIL),
    "pipeline-error": (PIPELINE, DETAIL),
    "invalid-case": (DETAIL,),
}
"""Which fields each kind's text carries, in order (one source of truth)."""

_DEFAULT_LAYOUT = (PIPELINE, DETAIL)
OPS_PREFIX = "ops="
PROBE_PREFIX = "probe="


@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    """kind, pipeline label, stage and detail of one bug; `str()` is its one text form."""

    kind: str
    pipeline: str = ""
    stage: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        for name in ("kind", PIPELINE, STAGE, DETAIL):  # StrEnum members become plain text
            object.__setattr__(self, name, str(getattr(self, name)))
        fields = LAYOUT.get(self.kind, _DEFAULT_LAYOUT)
        for name in (PIPELINE, STAGE):
            if name not in fields and getattr(self, name):
                raise ValueError(f"a {self.kind} signature has no {name}")
        for name in fields[:-1]:
            if "|" in getattr(self, name):
                raise ValueError(f"signature {name} may not contain '|': "
                                 f"{getattr(self, name)!r}")

    def __str__(self) -> str:
        return "|".join((self.kind, *(getattr(self, f) for f in
                                      LAYOUT.get(self.kind, _DEFAULT_LAYOUT))))

    @property
    def text(self) -> str:
        return str(self)

    @property
    def after_kind(self) -> str:
        """The text form without its kind (what a listing with a kind column shows)."""
        return str(self).partition("|")[2] or str(self)

    @classmethod
    def parse(cls, text: str) -> Signature:
        """The value of a text form (any text: an unknown kind reads as pipeline|detail)."""
        kind, _, rest = text.partition("|")
        fields = LAYOUT.get(kind, _DEFAULT_LAYOUT)
        parts = rest.split("|", len(fields) - 1) if rest else []
        parts += [""] * (len(fields) - len(parts))
        return cls(kind=kind, **dict(zip(fields, parts, strict=True)))

    @property
    def ops(self) -> frozenset[str] | None:
        """The operations of a wrong-code signature (`ops=xor,shl`); None for others."""
        if not self.detail.startswith(OPS_PREFIX):
            return None
        return frozenset(o for o in self.detail[len(OPS_PREFIX):].split(",") if o)

    @property
    def probe(self) -> frozenset[str] | None:
        """The operation families of a probe-keyed wrong-code signature
        (`probe=as:float->int+shl:int`); None for others."""
        if not self.detail.startswith(PROBE_PREFIX):
            return None
        return frozenset(f for f in self.detail[len(PROBE_PREFIX):].split("+") if f)

    @property
    def has_operations(self) -> bool:
        """Whether the detail names operations (`ops=` or `probe=`), which reduction and
        placement ignore."""
        return self.detail.startswith((OPS_PREFIX, PROBE_PREFIX))

    @property
    def coarse(self) -> Signature:
        """The signature without its operations: what reduction keeps equal (reduction
        removes operations by design) and what unreduced findings are placed by."""
        if not self.has_operations:
            return self
        return Signature(kind=self.kind, pipeline=self.pipeline, stage=self.stage)

    def coarse_text(self) -> str:
        """The text of `coarse` as older stores' reduction keys spelled it: a wrong-code
        signature without its `|ops=`/`|probe=` field (for display only)."""
        if not self.has_operations:
            return str(self)
        return f"{self.kind}|{self.pipeline}"

    def __lt__(self, other: Signature) -> bool:
        """Signatures sort as their text does (listings and reports keep their order)."""
        return str(self) < str(other)


__all__ = ["LAYOUT", "OPS_PREFIX", "PROBE_PREFIX", "Signature"]
