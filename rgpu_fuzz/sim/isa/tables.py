"""Per-target decoding tables: formats, opcodes and operand types, loaded once per process.

Opcodes and operand types come from the `tinygrad` wheel's tables generated from AMD's
ISA XML (`tinygrad/runtime/autogen/amd/{cdna,rdna3,rdna4}/{enum,operands}.py`: the
CDNA4, RDNA3 and RDNA4 XML, version pinned in pyproject.toml): the enum member per opcode
value, and per opcode the width and type of each operand field. Where a target differs from
its family's XML (gfx942 and gfx90a against the CDNA4 tables; LLVM spellings) the
difference is a row of
`corrections.toml`, with its reason. Everything else about a target (wave size, SGPR count,
which scalar-operand code map and format tuple, whether VOP3 takes a literal) is a row of the
target table, `rgpu_fuzz.targets` (`gpu.toml`), which `TARGETS` reads.
"""

from __future__ import annotations

import functools
import importlib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import MappingProxyType

from rgpu_fuzz import targets as target_table
from rgpu_fuzz.sim.isa.formats import Format
from rgpu_fuzz.sim.isa.formats_cdna import GFX90A, GFX942
from rgpu_fuzz.sim.isa.formats_cdna4 import GFX950
from rgpu_fuzz.sim.isa.formats_rdna3 import GFX1100
from rgpu_fuzz.sim.isa.formats_rdna4 import GFX1200
from rgpu_fuzz.sim.isa.instruction import Special
from rgpu_fuzz.targets import GpuIsa, GpuTarget

__all__ = ["TARGETS", "OpInfo", "OperandType", "TargetSpec", "TargetTables", "UnknownTarget",
           "tables"]

_CORRECTIONS = Path(__file__).with_name("corrections.toml")


class UnknownTarget(ValueError):
    """The target has no decoding tables."""


# Scalar operand codes 0-255 (CDNA3 ISA §3.2 / RDNA3 ISA §3.3 "Scalar Operands"); SGPRs,
# TTMPs and the inline integer constants are ranges handled by the decoder.
_SPECIAL_GFX9: Mapping[int, Special] = MappingProxyType({
    102: Special.FLAT_SCRATCH_LO, 103: Special.FLAT_SCRATCH_HI,
    104: Special.XNACK_MASK_LO, 105: Special.XNACK_MASK_HI,
    106: Special.VCC_LO, 107: Special.VCC_HI, 124: Special.M0,
    126: Special.EXEC_LO, 127: Special.EXEC_HI,
    235: Special.SRC_SHARED_BASE, 236: Special.SRC_SHARED_LIMIT,
    237: Special.SRC_PRIVATE_BASE, 238: Special.SRC_PRIVATE_LIMIT,
    239: Special.SRC_POPS_EXITING_WAVE_ID,
    251: Special.SRC_VCCZ, 252: Special.SRC_EXECZ, 253: Special.SRC_SCC, 254: Special.LDS_DIRECT,
})
_SPECIAL_GFX11: Mapping[int, Special] = MappingProxyType({
    106: Special.VCC_LO, 107: Special.VCC_HI, 124: Special.NULL, 125: Special.M0,
    126: Special.EXEC_LO, 127: Special.EXEC_HI,
    235: Special.SRC_SHARED_BASE, 236: Special.SRC_SHARED_LIMIT,
    237: Special.SRC_PRIVATE_BASE, 238: Special.SRC_PRIVATE_LIMIT,
    239: Special.SRC_POPS_EXITING_WAVE_ID,
    251: Special.SRC_VCCZ, 252: Special.SRC_EXECZ, 253: Special.SRC_SCC,
})


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetSpec:
    """What the decoder needs to know about a target besides its opcode tables."""

    name: str
    family: str                     # the tinygrad table package: "cdna", "rdna3" or "rdna4"
    formats: tuple[type[Format], ...]
    wave_size: int
    sgprs: int                      # scalar codes 0..sgprs-1 are SGPRs
    specials: Mapping[int, Special]
    vop3_literal: bool              # VOP3 may carry a 32-bit literal (RDNA; not GCN/CDNA)
    sdwa: bool                      # VOP1/VOP2/VOPC src0 code 249 is SDWA (GCN/CDNA)
    dpp8: bool                      # src0 codes 233/234 are DPP8 (RDNA)
    true16: bool                    # 16-bit VGPR operands name halves (v0.l / v0.h)


_FORMATS: Mapping[str, tuple[type[Format], ...]] = MappingProxyType({
    "GFX942": GFX942, "GFX950": GFX950, "GFX90A": GFX90A, "GFX1100": GFX1100,
    "GFX1200": GFX1200})
"""The encoding-format tuples a target-table row names (`gpu.toml` `isa.formats`)."""
_SPECIALS: Mapping[str, Mapping[int, Special]] = MappingProxyType({
    "gfx9": _SPECIAL_GFX9, "gfx11": _SPECIAL_GFX11})
"""The special-register code maps a target-table row names (`isa.specials`)."""


def _spec(target: GpuTarget, isa: GpuIsa) -> TargetSpec:
    """The decoder's view of a target-table row and its ISA facts."""
    return TargetSpec(name=target.name, family=isa.tables, formats=_FORMATS[isa.formats],
                      wave_size=target.wave_size, sgprs=target.sgprs,
                      specials=_SPECIALS[isa.specials], vop3_literal=isa.vop3_literal,
                      sdwa=isa.sdwa, dpp8=isa.dpp8, true16=isa.true16)


TARGETS: Mapping[str, TargetSpec] = MappingProxyType({
    t.name: _spec(t, t.isa) for t in target_table.TARGETS if t.isa is not None})
"""The decoder's parameters per target, built from the target table (`rgpu_fuzz.targets`)."""


@dataclass(frozen=True, slots=True)
class OperandType:
    """One operand field of one opcode, as AMD's XML describes it."""

    bits: int                       # operand width: 16, 32, 64, 96, 128 …
    type: str                       # the XML operand type, e.g. "OPR_SRC", "OPR_SREG"
    fmt: str                        # the XML data format, e.g. "FMT_NUM_F64", "FMT_NUM_M64"


@dataclass(frozen=True, slots=True)
class OpInfo:
    """An opcode of one encoding table."""

    name: str                       # AMD's name without the _E32/_E64 suffix, e.g. "V_ADD_U32"
    table_name: str                 # the enum member's name, e.g. "V_ADD_U32_E32"
    mnemonic: str                   # LLVM's spelling without the encoding suffix
    operands: Mapping[str, OperandType]
    suffix: str | None = None       # LLVM's encoding suffix when not the rule's ("" = none)
    prints_op_sel: bool = True      # LLVM prints VOP3 op_sel for this opcode
    prints_cache_policy: bool = True  # LLVM prints the memory cache-policy bits


@dataclass(frozen=True, slots=True)
class TargetTables:
    """Opcode tables of one target: `ops[table][value]`."""

    spec: TargetSpec
    ops: Mapping[str, Mapping[int, OpInfo]]
    by_name: Mapping[str, Mapping[str, OpInfo]]
    corrections: tuple[Mapping[str, object], ...] = field(default=())


def _strip_suffix(name: str) -> str:
    for suffix in ("_E32", "_E64"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


_TABLE_NAMES: Mapping[str, str] = MappingProxyType({
    "VGLOBALOp": "GLOBALOp", "VFLATOp": "FLATOp", "VSCRATCHOp": "SCRATCHOp",
    "VBUFFEROp": "MUBUFOp"})
"""RDNA4's XML names of the memory formats (VGLOBAL, VBUFFER, ...), by the RDNA3/CDNA names
the decoder and simulator use for the same formats (`formats_rdna4`)."""
_FIELD_NAMES: Mapping[str, str] = MappingProxyType({
    "vaddr": "addr", "vsrc": "data", "rsrc": "srsrc"})
"""RDNA4's XML operand names of those formats, by RDNA3's (FLAT `addr`/`data`, MUBUF
`srsrc`); a MUBUF `vaddr` keeps its name."""


def _renamed(table: str, fields: dict[str, OperandType]) -> dict[str, OperandType]:
    if table not in _TABLE_NAMES:
        return fields
    keep = ("vaddr",) if table == "VBUFFEROp" else ()
    return {(_FIELD_NAMES.get(f, f) if f not in keep else f): t for f, t in fields.items()}


@functools.cache
def _family(family: str) -> tuple[dict[str, dict[int, str]], dict[tuple[str, str], dict]]:
    """The family's opcode enums and operand table, imported once per process."""
    enum_mod = importlib.import_module(f"tinygrad.runtime.autogen.amd.{family}.enum")
    operands_mod = importlib.import_module(f"tinygrad.runtime.autogen.amd.{family}.operands")
    enums: dict[str, dict[int, str]] = {}
    for name, obj in vars(enum_mod).items():
        if name.endswith("Op") and isinstance(obj, type) and issubclass(obj, Enum):
            enums[_TABLE_NAMES.get(name, name)] = {member.value: member.name for member in obj}
    operands: dict[tuple[str, str], dict] = {}
    for op, spec in operands_mod.OPERANDS.items():
        table = type(op).__name__
        fields = _renamed(table, {fname: OperandType(bits=bits, type=optype.name, fmt=fmt.name)
                                  for fname, (fmt, bits, optype) in spec.items()})
        table = _TABLE_NAMES.get(table, table)
        if table in ("VOP3Op", "VOP3POp", "VOP3SDOp") and "vsrc0" in fields and (
                "src0" not in fields):
            # RDNA3's XML names the VOP3 form's first source of a VOP1 opcode "vsrc0" (RDNA4's
            # also VOP3P's dot2/mix and VOP3SD's carries); it is the 9-bit SRC0 field like every
            # other VOP3 source (RDNA3 ISA §15.3.3).
            fields["src0"] = fields.pop("vsrc0")
        operands[(table, op.name)] = fields
        operands.setdefault((table, _strip_suffix(op.name)), fields)
    return enums, operands


def _load_corrections(target: str) -> list[dict]:
    with _CORRECTIONS.open("rb") as f:
        data = tomllib.load(f)
    return [row for row in data.get("correction", []) if target in row["targets"]]


@functools.cache
def tables(target: str) -> TargetTables:
    """The decoding tables of `target` (e.g. "gfx942"), built once per process."""
    spec = TARGETS.get(target)
    if spec is None:
        raise UnknownTarget(f"no ISA tables for target {target!r} (have {', '.join(TARGETS)})")
    enums, operands = _family(spec.family)
    corrections = _load_corrections(target)
    ops: dict[str, dict[int, OpInfo]] = {}
    wanted = {fmt.op_table for fmt in spec.formats} | {"VOP1Op", "VOP2Op", "VOPCOp", "VOP3Op",
                                                        "VOP3SDOp"}
    for table in wanted:
        entries: dict[int, OpInfo] = {}
        for value, member in enums.get(table, {}).items():
            entries[value] = _op_info(table, member, operands)
        ops[table] = entries
    for row in corrections:
        _apply(row, ops, operands)
    frozen = {t: MappingProxyType(e) for t, e in ops.items()}
    by_name = {t: MappingProxyType({i.name: i for i in e.values()}) for t, e in ops.items()}
    return TargetTables(spec=spec, ops=MappingProxyType(frozen),
                        by_name=MappingProxyType(by_name),
                        corrections=tuple(MappingProxyType(r) for r in corrections))


def _op_info(table: str, member: str, operands: Mapping[tuple[str, str], dict],
             mnemonic: str | None = None, operands_of: str | None = None) -> OpInfo:
    name = _strip_suffix(member)
    spec = operands.get((table, operands_of or name)) or operands.get((table, member)) or {}
    return OpInfo(name=name, table_name=member, mnemonic=mnemonic or name.lower(),
                  operands=MappingProxyType(spec))


def _apply(row: Mapping, ops: dict[str, dict[int, OpInfo]],
           operands: Mapping[tuple[str, str], dict]) -> None:
    """Applies one correction row: `drop`, `rename` (LLVM spelling), `operand` (a field's
    width; 0 removes it) or `add`."""
    table = ops[row["table"]]
    kind = row["kind"]
    if kind == "drop":
        for value in [v for v, info in table.items() if info.name in row["names"]]:
            del table[value]
    elif kind == "rename":
        for value, info in list(table.items()):
            if info.name == row["name"]:
                table[value] = OpInfo(name=info.name, table_name=info.table_name,
                                      mnemonic=row.get("mnemonic", info.mnemonic),
                                      operands=info.operands,
                                      suffix=row.get("suffix", info.suffix),
                                      prints_op_sel=row.get("op_sel", info.prints_op_sel),
                                      prints_cache_policy=row.get(
                                          "cache_policy", info.prints_cache_policy))
    elif kind == "operand":
        for value, info in list(table.items()):
            if info.name in row["names"]:
                old = info.operands[row["field"]]
                fields = dict(info.operands)
                if row["bits"] == 0:
                    del fields[row["field"]]
                else:
                    fields[row["field"]] = OperandType(bits=row["bits"], type=old.type,
                                                       fmt=old.fmt)
                table[value] = OpInfo(name=info.name, table_name=info.table_name,
                                      mnemonic=info.mnemonic, suffix=info.suffix,
                                      prints_op_sel=info.prints_op_sel,
                                      prints_cache_policy=info.prints_cache_policy,
                                      operands=MappingProxyType(fields))
    elif kind == "add":
        table[row["value"]] = _op_info(row["table"], row["name"], operands,
                                       mnemonic=row.get("mnemonic"),
                                       operands_of=row.get("operands_of"))
    else:
        raise ValueError(f"corrections.toml: unknown kind {kind!r}")
