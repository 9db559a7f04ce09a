"""The code-sequence rows the check compares with: LLVM AMDGPUUsage, section "Memory Model",
tables "AMDHSA Memory Model Code Sequences GFX90A", "... GFX942", "... GFX10-GFX11" and
"... GFX12" (anchors `amdgpu-amdhsa-memory-model-code-sequences-gfx90a-table`, `-gfx942-table`,
`-gfx10-gfx11-table`, `-gfx12-table`, with the syncscope-to-`scope:` mapping of
`-gfx12-scopes-table`). Each row is the part of one table row this check can see in a code
object, in our own words, with the row it comes from in `source`.

A processor without a table of its own takes the table LLVM implements for it (`SHARED`):
gfx950 (CDNA4) has no table in AMDGPUUsage's "Memory Model" section, and LLVM's memory
legalizer gives every processor with the GFX940 instructions, gfx950 among them, the GFX942
cache control (`SIMemoryLegalizer.cpp`, `SICacheControl::create`: `hasGFX940Insts()` ->
`SIGfx940CacheControl`); llc-22 writes the same code for both (`tests/unit/test_memmodel.py`).

The defaults the tables assume and the rows here take: HSA (not OpenCL, so LDS is ordered
with global memory), no threadgroup-split mode on GFX90A/GFX942, WGP mode on GFX10-GFX12
(the default of gfx1100 and gfx1200: a work-group spans both CUs of a WGP, so workgroup
scope needs `scope:SCOPE_SE` and an invalidate on GFX12). A row's items:
* `bits`: the cache-policy bits the atomic instruction itself carries (scope bits only;
  GFX12's `scope:SCOPE_*` is met by a wider scope, `machine._bits`);
* `before`: what must hold just before a release: `vm`, `vs`, `lgkm` (GFX12: `load`,
  `store`, `ds`) (that counter drained, so no earlier memory operation of that kind is
  outstanding) and write-backs (`buffer_wbl2 sc1`: that instruction with those bits);
* `after`: what must follow an acquire before the next memory instruction: `own` (a wait
  for the atomic's own counter at 0) and invalidates.

GFX12's sample and BVH counters, which its release rows also drain, count image
instructions only, which no atomic pairs with; the rows leave them out.

Two checks of these rows: llc-22's code (LLVM implements the tables) is accepted as it is
and a copy with one item edited out is not, and the GFX942 and GFX12 rows of monotonic loads,
stores and read-modify-writes, acquire loads, release stores and fences are compared with
the tables' text read by hand (`tests/unit/test_memmodel.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

TABLES = {
    "gfx90a": "AMDHSA Memory Model Code Sequences GFX90A",
    "gfx942": "AMDHSA Memory Model Code Sequences GFX942",
    "gfx1100": "AMDHSA Memory Model Code Sequences GFX10-GFX11",
    "gfx1200": "AMDHSA Memory Model Code Sequences GFX12",
}
"""The table of each family the rows cover."""

SHARED = {"gfx950": "gfx942"}
"""Processors that take another family's table (the module docstring says why)."""


def family_of(target: str) -> str | None:
    """The family whose table `target`'s atomics are checked against; None without one."""
    target = SHARED.get(target, target)
    return target if target in TABLES else None


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


_SE, _DEV, _SYS = "scope:SCOPE_SE", "scope:SCOPE_DEV", "scope:SCOPE_SYS"
_LDS_RELEASE = {"gfx942": ("lgkm",), "gfx90a": ("lgkm",), "gfx1100": ("vm", "vs", "lgkm"),
                "gfx1200": ("load", "store", "ds")}
_LDS_ACQUIRE = {"gfx942": ("own",), "gfx90a": ("own",), "gfx1100": ("own", "buffer_gl0_inv"),
                "gfx1200": ("own", f"global_inv {_SE}")}

ROWS: tuple[Row, ...] = (
    *_family_rows(
        "gfx942",
        # An atomic read-modify-write uses sc0 to ask for the old value, not for scope
        # ("Memory Model GFX942": "Atomic read-modify-write instructions implicitly bypass
        # the L1 cache ... They do use sc1 to indicate system or agent scope coherence").
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
    *_family_rows(
        "gfx1200",
        # Every global/generic load, store and read-modify-write carries its scope in WGP
        # mode ("Apply ...-gfx12-scopes-table": workgroup SCOPE_SE, agent SCOPE_DEV,
        # system SCOPE_SYS); a release waits for loadcnt, storecnt and dscnt at every
        # scope, and at system scope first writes back (`global_wb scope:SCOPE_SYS`, "If
        # agent scope, omit"); an acquire waits for its own counter, then `global_inv`
        # at its scope.
        bits={(op, scope): (sc,) for op in ("load", "store", "rmw")
              for scope, sc in (("workgroup", _SE), ("agent", _DEV), ("system", _SYS))},
        waits={s: ("load", "store", "ds") for s in ("workgroup", "agent", "system")},
        wb={"system": (f"global_wb {_SYS}",)},
        inv={"workgroup": (f"global_inv {_SE}",), "agent": (f"global_inv {_DEV}",),
             "system": (f"global_inv {_SYS}",)}),
    # LDS: only a work-group sees it, so an LDS atomic at a wider scope is the workgroup
    # row ("Memory Scopes": the local address space is visible within a work-group).
    *(_r(f, op, "release", "workgroup", "lds", f"{_IR[op]} release - workgroup - local",
         before=_LDS_RELEASE[f]) for f in TABLES for op in ("store", "rmw")),
    *(_r(f, op, "acquire", "workgroup", "lds", f"{_IR[op]} acquire - workgroup - local",
         after=_LDS_ACQUIRE[f]) for f in TABLES for op in ("load", "rmw")),
)
"""Wavefront (and singlethread) scope rows ask nothing beyond the instruction, in every
table, so none is listed; `-one-as` scopes take the rows of their scope."""

_INDEX = {(r.family, r.op, r.side, r.scope, r.space): r for r in ROWS}


def row(family: str, op: str, side: str, scope: str, space: str) -> Row | None:
    """The row for this atomic, or None where the tables ask nothing."""
    if space == "lds" and scope in ("agent", "system"):
        scope = "workgroup"
    return _INDEX.get((family, op, side, scope, space))
