"""The AMDGPU target table: every fact the project knows about a GPU processor, in one place.

The facts are rows of `gpu.toml` (beside this module), each with its source as a comment
(LLVM AMDGPUUsage "Processors", "AMDGPU ELF Header Enumeration Values", "Kernel Descriptor",
"Memory Spaces", the CDNA3 / CDNA4 / RDNA3 / RDNA4 ISA guides); this module reads them once,
checks them and hands them out as frozen dataclasses. Every consumer reads its view from here:
the code-object reader and verifier (`rgpu_fuzz.codeobj.targets`: machine number, descriptor
generation, register and LDS limits, allowed wave sizes), the simulator's decoder
(`sim.isa.tables`: wave size, SGPR count, the decoder parameters of `GpuIsa`) and loader
(`sim.launch.loader.target_config`: wave size, work-item id packing, flat scratch,
`s_waitcnt` layout, true16, vscnt), and the GPU pipelines (`PIPELINE_TARGETS`: the targets
they compile for and simulate).
Nothing else states a GPU target's wave size (`tests/unit/test_targets.py` checks).

Why data and not code: the targets differ in facts, not in code paths; a table keeps each fact
stated once with its citation, and keeps the consumers from drifting apart.

Adding a target:

1. a row `[gfxNNNN]` in `gpu.toml` with every key the file's header lists (the code-object
   reader and verifier then know it);
2. for the simulator and the pipelines, an `[gfxNNNN.isa]` table as well, and its ISA tables:
   an encoding-format tuple in `rgpu_fuzz/sim/isa/formats_*.py` (named by `formats`), the
   generated opcode tables of its family (`tables`), a special-register code map
   (`specials`, in `rgpu_fuzz/sim/isa/tables.py`) and its rows of `sim/isa/corrections.toml`.

The nvptx targets (`sm_*`) are not here: the NVPTX lowering needs only its triple and the SM
name (`rgpu_fuzz.lower.nvptx`), and nothing simulates or reads their objects. Their one fact
the project needs, the warp size, is `NVPTX_WARP_SIZE` below.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["DEFAULT_WAVE_SIZE", "NVPTX_WARP_SIZE", "PIPELINE_TARGETS", "TARGETS", "WAVE_SIZES",
           "Generation", "GpuIsa", "GpuTarget", "TargetTableError",
           "by_mach", "by_name", "load_table"]

TABLE_PATH = Path(__file__).with_name("gpu.toml")


class TargetTableError(ValueError):
    """`gpu.toml` is malformed: a missing, unknown or mistyped key."""


class Generation(StrEnum):
    """Which columns of the AMDGPUUsage kernel-descriptor tables apply."""

    GFX9 = "gfx9"          # GFX9 without MAI registers (gfx900..gfx909)
    GFX90A = "gfx90a"      # GFX90A/GFX942: COMPUTE_PGM_RSRC3 has ACCUM_OFFSET, TG_SPLIT
    GFX10 = "gfx10"
    GFX11 = "gfx11"
    GFX12 = "gfx12"        # COMPUTE_PGM_RSRC1 bits 21/23 are WG_RR_EN/DISABLE_PERF, RSRC3 GFX12


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuIsa:
    """What running a target's code needs besides the common facts: the initial wave state,
    the `s_waitcnt` layout and memory counters, and the decoder's parameters (the format and
    opcode tables themselves are generated code, named here)."""

    packed_workitem_ids: bool
    architected_flat_scratch: bool
    vmcnt: tuple[tuple[int, int], ...]
    """`s_waitcnt` simm16 fields of vmcnt as (lo, width), low bits of the count first."""
    lgkmcnt: tuple[tuple[int, int], ...]
    true16: bool
    stores_in_vmcnt: bool
    tables: str
    """The generated opcode tables' family package (`tinygrad...amd.<tables>`)."""
    formats: str
    """The name of its encoding-format tuple in `rgpu_fuzz.sim.isa.formats_*`."""
    specials: str
    """The name of its scalar-operand special-register code map (`sim.isa.tables`)."""
    vop3_literal: bool
    sdwa: bool
    dpp8: bool
    architected_sgprs: bool = False
    """The work-group ids are in TTMP9 (x) and TTMP7 (y in 15:0, z in 31:16) at entry
    (AMDGPUUsage "Processors": "Architected SGPRs", GFX12)."""
    keeps_high16: bool = False
    """A 16-bit VALU result keeps the other half of its VGPR rather than zeroing D[31:16]
    (GFX10+; LLVM `GCNSubtarget::zeroesHigh16BitsOfDest`: "On gfx10, all 16-bit
    instructions preserve the high bits")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuTarget:
    """One AMDGPU processor (one row of `gpu.toml`)."""

    name: str
    triple: str
    mach: int
    """`EF_AMDGPU_MACH_*` of a code object's `e_flags`."""
    family: str
    generation: Generation
    wave_size: int
    """The default wavefront size."""
    wave_sizes: tuple[int, ...]
    """Every wavefront size the target runs."""
    vgprs: int
    """Architected VGPRs one wave may address."""
    agprs: int
    """AccVGPRs one wave may address (0: none)."""
    sgprs: int
    """Addressable SGPRs: scalar operand codes 0..sgprs-1."""
    max_sgprs: int
    """SGPRs one wave may use, VCC, FLAT_SCRATCH and XNACK_MASK included (what
    `.sgpr_count` counts)."""
    max_lds_bytes: int
    """LDS one work-group may allocate."""
    isa: GpuIsa | None
    """Present on the targets the simulator and the GPU pipelines run."""

    @property
    def max_vgprs(self) -> int:
        """Per-wave VGPR budget: architected VGPRs plus AccVGPRs where one unified file holds
        both (GFX90A/GFX942, AMDGPUUsage "Kernel Descriptor", GRANULATED_WORKITEM_VGPR_COUNT);
        gfx908's AccVGPRs are a file of their own."""
        if self.generation is Generation.GFX90A:
            return self.vgprs + self.agprs
        return self.vgprs

    @property
    def has_accum_offset(self) -> bool:
        return self.generation is Generation.GFX90A

    @property
    def is_gfx10_plus(self) -> bool:
        return self.generation in (Generation.GFX10, Generation.GFX11, Generation.GFX12)

    def vgpr_encoding_granule(self, wave_size: int) -> int:
        """Granule of COMPUTE_PGM_RSRC1.GRANULATED_WORKITEM_VGPR_COUNT (AMDGPUUsage
        "compute_pgm_rsrc1 for GFX6-GFX12"): 8 on GFX90A/GFX942, 8 in wave32 and 4 in wave64
        on GFX10+, 4 on other GFX9."""
        if self.generation is Generation.GFX90A:
            return 8
        if self.is_gfx10_plus and wave_size == 32:
            return 8
        return 4


_ROW_KEYS: Mapping[str, type] = MappingProxyType({
    "triple": str, "mach": int, "family": str, "generation": str, "wave_size": int,
    "wave_sizes": list, "vgprs": int, "agprs": int, "sgprs": int, "max_sgprs": int,
    "lds_bytes": int})
_ISA_KEYS: Mapping[str, type] = MappingProxyType({
    "packed_workitem_ids": bool, "architected_flat_scratch": bool, "vmcnt": list,
    "lgkmcnt": list, "true16": bool, "stores_in_vmcnt": bool, "tables": str, "formats": str,
    "specials": str, "vop3_literal": bool, "sdwa": bool, "dpp8": bool})


def _checked(where: str, raw: Mapping[str, Any], keys: Mapping[str, type],
             optional: frozenset[str] = frozenset()) -> None:
    """Every key present with its type, and no other: a typo must not become a default."""
    missing = [k for k in keys if k not in raw]
    unknown = [k for k in raw if k not in keys and k not in optional]
    if missing or unknown:
        raise TargetTableError(f"{where}: missing {missing}, unknown {unknown}")
    for key, typ in keys.items():
        value = raw[key]
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise TargetTableError(f"{where}: {key} = {value!r} is not a {typ.__name__}")


def _fields(where: str, raw: list[Any]) -> tuple[tuple[int, int], ...]:
    if not raw or not all(isinstance(f, list) and len(f) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in f) for f in raw):
        raise TargetTableError(f"{where}: expected [[lo, width], ...], got {raw!r}")
    return tuple((int(lo), int(width)) for lo, width in raw)


_ISA_OPTIONAL: Mapping[str, type] = MappingProxyType({"architected_sgprs": bool,
                                                      "keeps_high16": bool})
"""ISA keys a row states only where they hold (absent: false)."""


def _isa(where: str, raw: Mapping[str, Any]) -> GpuIsa:
    _checked(where, raw, _ISA_KEYS, optional=frozenset(_ISA_OPTIONAL))
    for key, typ in _ISA_OPTIONAL.items():
        if key in raw and not isinstance(raw[key], typ):
            raise TargetTableError(f"{where}: {key} = {raw[key]!r} is not a {typ.__name__}")
    return GpuIsa(packed_workitem_ids=raw["packed_workitem_ids"],
                  architected_flat_scratch=raw["architected_flat_scratch"],
                  vmcnt=_fields(f"{where}.vmcnt", raw["vmcnt"]),
                  lgkmcnt=_fields(f"{where}.lgkmcnt", raw["lgkmcnt"]),
                  true16=raw["true16"], stores_in_vmcnt=raw["stores_in_vmcnt"],
                  tables=raw["tables"], formats=raw["formats"], specials=raw["specials"],
                  vop3_literal=raw["vop3_literal"], sdwa=raw["sdwa"], dpp8=raw["dpp8"],
                  architected_sgprs=raw.get("architected_sgprs", False),
                  keeps_high16=raw.get("keeps_high16", False))


def _target(name: str, raw: Mapping[str, Any]) -> GpuTarget:
    where = f"gpu.toml [{name}]"
    _checked(where, raw, _ROW_KEYS, optional=frozenset({"isa"}))
    try:
        generation = Generation(raw["generation"])
    except ValueError:
        raise TargetTableError(f"{where}: unknown generation {raw['generation']!r}") from None
    sizes = tuple(raw["wave_sizes"])
    if not sizes or any(s not in (32, 64) for s in sizes) or raw["wave_size"] not in sizes:
        raise TargetTableError(f"{where}: wave_size {raw['wave_size']} / wave_sizes {sizes}: "
                               "sizes are 32 or 64 and include the default")
    isa = raw.get("isa")
    return GpuTarget(name=name, triple=raw["triple"], mach=raw["mach"], family=raw["family"],
                     generation=generation, wave_size=raw["wave_size"], wave_sizes=sizes,
                     vgprs=raw["vgprs"], agprs=raw["agprs"], sgprs=raw["sgprs"],
                     max_sgprs=raw["max_sgprs"], max_lds_bytes=raw["lds_bytes"],
                     isa=None if isa is None else _isa(f"{where}.isa", isa))


def load_table(text: str) -> tuple[GpuTarget, ...]:
    """The rows of a target table's TOML text, in file order (TargetTableError when one is
    malformed or two share a machine number)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TargetTableError(f"gpu.toml: {e}") from None
    rows = tuple(_target(name, raw) for name, raw in data.items())
    machs = [t.mach for t in rows]
    if len(set(machs)) != len(machs):
        raise TargetTableError("gpu.toml: two rows share a machine number")
    return rows


TARGETS: tuple[GpuTarget, ...] = load_table(TABLE_PATH.read_text(encoding="utf-8"))
"""Every row of `gpu.toml`, in file order."""

PIPELINE_TARGETS: tuple[str, ...] = tuple(t.name for t in TARGETS if t.isa is not None)
"""The processors the simulator and every GPU pipeline support, the default first."""

NVPTX_WARP_SIZE = 32
"""Threads per warp on every NVIDIA SM (PTX ISA, "Special Registers": `WARP_SZ`, "the warp
size in threads", is 32 on all targets so far; CUDA C++ Programming Guide, "SIMT
Architecture")."""

_BY_NAME: Mapping[str, GpuTarget] = MappingProxyType({t.name: t for t in TARGETS})
_BY_MACH: Mapping[int, GpuTarget] = MappingProxyType({t.mach: t for t in TARGETS})


WAVE_SIZES: tuple[int, ...] = tuple(sorted({w for t in TARGETS for w in t.wave_sizes}))
"""Every wave size some target of the table runs (the reference interpreter runs any of
them; docs/language.md "Wave operations")."""

DEFAULT_WAVE_SIZE: int = _BY_NAME[PIPELINE_TARGETS[0]].wave_size
"""The default target's default wave size: what a pipeline that states no other runs wave
functions at (`Pipeline.wave_size`)."""


def by_name(name: str) -> GpuTarget | None:
    """The row of a processor name such as `gfx942` (target-ID features after `:` ignored),
    None when the table does not know it."""
    return _BY_NAME.get(name.split(":", 1)[0])


def by_mach(mach: int) -> GpuTarget | None:
    """The row of an `EF_AMDGPU_MACH` value, None when the table does not know it."""
    return _BY_MACH.get(mach)
