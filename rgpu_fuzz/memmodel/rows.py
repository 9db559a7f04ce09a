"""The code-sequence rows the check compares with: LLVM AMDGPUUsage, section "Memory Model",
tables "AMDHSA Memory Model Code Sequences GFX90A", "... GFX942" and "... GFX10-GFX11"
(anchors `amdgpu-amdhsa-memory-model-code-sequences-gfx90a-table`, `-gfx942-table`,
`-gfx10-gfx11-table`). Each row is the part of one table row this check can see in a code
object, in our own words, with the row it comes from in `source`.

The defaults the tables assume and the rows here take: HSA (not OpenCL, so LDS is ordered
with global memory), no threadgroup-split mode on GFX90A/GFX942, WGP mode on GFX10-GFX11
(the default of gfx1100). A row's items:
* `bits`: the cache-policy bits the atomic instruction itself carries (scope bits only;
  `scope_bits` of the family are the ones a row may require);
* `before`: what must hold just before a release: `vm`, `vs`, `lgkm` (that counter drained,
  so no earlier memory operation of that kind is outstanding) and write-backs (`buffer_wbl2
  sc1`: that instruction with those bits);
* `after`: what must follow an acquire before the next memory instruction: `own` (a wait
  for the atomic's own counter at 0) and invalidates.

Two checks of these rows: llc-22's code (LLVM implements the tables) is accepted as it is
and a copy with one item edited out is not, and the GFX942 rows of monotonic loads, stores
and read-modify-writes, acquire loads, release stores and fences are compared with the
table's text read by hand (`tests/unit/test_memmodel.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

TABLES = {
    "gfx90a": "AMDHSA Memory Model Code Sequences GFX90A",
    "gfx942": "AMDHSA Memory Model Code Sequences GFX942",
    "gfx1100": "AMDHSA Memory Model Code Sequences GFX10-GFX11",
}

SCOPE_BITS = {
    # The bits that select coherence scope; an atomic read-modify-write uses sc0/glc to ask
    # for the old value instead (AMDGPUUsage "Memory Model GFX942": "Atomic read-modify-
    # write instructions implicitly bypass the L1 cache ... They do use sc1 to indicate
    # system or agent scope coherence").
    ("gfx942", "load"): ("sc0", "sc1"), ("gfx942", "store"): ("sc0", "sc1"),
    ("gfx942", "rmw"): ("sc1",),
    ("gfx90a", "load"): ("glc",), ("gfx90a", "store"): (), ("gfx90a", "rmw"): (),
    ("gfx1100", "load"): ("glc", "dlc"), ("gfx1100", "store"): (), ("gfx1100", "rmw"): (),
}


@dataclass(frozen=True, slots=True)
class Row:
    """What one table row asks of one atomic kind: `op` is load, store, rmw (atomicrmw and
    cmpxchg) or fence; `side` is `monotonic` (the instruction's bits), `release` or
    `acquire` (the sequence around it); `space` is global (also generic) or lds."""

    family: str
    op: str
    side: str
    scope: str
    space: str
    bits: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    row: str = ""

    @property
    def source(self) -> str:
        return f'AMDGPUUsage table "{TABLES[self.family]}", row "{self.row}"'


def _r(family: str, op: str, side: str, scope: str, space: str, row: str,
       bits: tuple[str, ...] = (), before: tuple[str, ...] = (),
       after: tuple[str, ...] = ()) -> Row:
    return Row(family, op, side, scope, space, bits, before, after, row)


_IR = {"load": "load atomic", "store": "store atomic", "rmw": "atomicrmw", "fence": "fence"}


def _family_rows(family: str, bits: dict[tuple[str, str], tuple[str, ...]],
                 waits: dict[str, tuple[str, ...]], wb: dict[str, tuple[str, ...]],
                 inv: dict[str, tuple[str, ...]]) -> list[Row]:
    """The rows of one family from its per-scope parts: `bits[(op, scope)]`, the release
    waits and write-backs per scope, the acquire invalidates per scope."""
    rows = []
    for scope in ("workgroup", "agent", "system"):
        for op in ("load", "store", "rmw"):
            rows.append(_r(family, op, "monotonic", scope, "global",
                           f"{_IR[op]} monotonic - {scope} - global/generic",
                           bits=bits.get((op, scope), ())))
        for op in ("store", "rmw", "fence", "load"):
            rel = "seq_cst" if op == "load" else "release"
            rows.append(_r(family, op, "release", scope, "global",
                           f"{_IR[op]} {rel} - {scope} - global/generic",
                           before=waits[scope] + (wb.get(scope, ()) if op != "load" else ())))
        for op in ("load", "rmw", "fence"):
            # Without threadgroup split a work-group's waves share one CU and its L1, so
            # a GFX90A/GFX942 workgroup acquire waits for nothing ("If not TgSplit
            # execution mode, omit"); GFX10-GFX11 in WGP mode span two CUs' L0 caches.
            own = () if op == "fence" or (scope, family) in (
                ("workgroup", "gfx942"), ("workgroup", "gfx90a")) else ("own",)
            rows.append(_r(family, op, "acquire", scope, "global",
                           f"{_IR[op]} acquire - {scope} - global/generic",
                           after=own + inv.get(scope, ())))
    return rows


ROWS: tuple[Row, ...] = (
    *_family_rows(
        "gfx942",
        bits={("load", "workgroup"): ("sc0",), ("load", "agent"): ("sc1",),
              ("load", "system"): ("sc0", "sc1"), ("store", "workgroup"): ("sc0",),
              ("store", "agent"): ("sc1",), ("store", "system"): ("sc0", "sc1"),
              ("rmw", "system"): ("sc1",)},
        waits={"workgroup": ("lgkm",), "agent": ("vm", "lgkm"), "system": ("vm", "lgkm")},
        wb={"agent": ("buffer_wbl2 sc1",), "system": ("buffer_wbl2 sc0 sc1",)},
        inv={"agent": ("buffer_inv sc1",), "system": ("buffer_inv sc0 sc1",)}),
    *_family_rows(
        "gfx90a",
        bits={("load", "agent"): ("glc",), ("load", "system"): ("glc",)},
        waits={"workgroup": ("lgkm",), "agent": ("vm", "lgkm"), "system": ("vm", "lgkm")},
        wb={"system": ("buffer_wbl2",)},
        inv={"agent": ("buffer_wbinvl1_vol",),
             "system": ("buffer_invl2", "buffer_wbinvl1_vol")}),
    *_family_rows(
        "gfx1100",
        bits={("load", "workgroup"): ("glc",), ("load", "agent"): ("glc",),
              ("load", "system"): ("glc",)},
        waits={s: ("vm", "vs", "lgkm") for s in ("workgroup", "agent", "system")},
        wb={},
        inv={"workgroup": ("buffer_gl0_inv",),
             "agent": ("buffer_gl0_inv", "buffer_gl1_inv"),
             "system": ("buffer_gl0_inv", "buffer_gl1_inv")}),
    # LDS: only a work-group sees it, so an LDS atomic at a wider scope is the workgroup
    # row ("Memory Scopes": the local address space is visible within a work-group).
    *(_r(f, op, "release", "workgroup", "lds", f"{_IR[op]} release - workgroup - local",
         before=("lgkm",) if f != "gfx1100" else ("vm", "vs", "lgkm"))
      for f in TABLES for op in ("store", "rmw")),
    *(_r(f, op, "acquire", "workgroup", "lds", f"{_IR[op]} acquire - workgroup - local",
         after=("own",) if f != "gfx1100" else ("own", "buffer_gl0_inv"))
      for f in TABLES for op in ("load", "rmw")),
)
"""Wavefront (and singlethread) scope rows ask nothing beyond the instruction, in every
table, so none is listed; `-one-as` scopes take the rows of their scope."""

_INDEX = {(r.family, r.op, r.side, r.scope, r.space): r for r in ROWS}


def row(family: str, op: str, side: str, scope: str, space: str) -> Row | None:
    """The row for this atomic, or None where the tables ask nothing."""
    if space == "lds" and scope in ("agent", "system"):
        scope = "workgroup"
    return _INDEX.get((family, op, side, scope, space))
