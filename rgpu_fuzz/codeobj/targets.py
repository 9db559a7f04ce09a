"""AMDGPU processors as a code object names them, and the limits a loader holds them to.

Machine numbers are the `EF_AMDGPU_MACH_*` values of LLVM AMDGPUUsage, table "AMDGPU ELF
Header Enumeration Values"; the xnack/sramecc feature bits (`EF_AMDGPU_FEATURE_*_V4`) and ABI
versions come from the same section ("ELF Header"). Register and LDS limits come from
AMDGPUUsage "Processors" and "Memory Spaces" and the CDNA3 / RDNA3 ISA guides.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

__all__ = [
    "EF_AMDGPU_MACH",
    "ELFOSABI_AMDGPU_HSA",
    "EM_AMDGPU",
    "AbiVersion",
    "FeatureSetting",
    "Generation",
    "Target",
    "target_by_mach",
    "target_by_name",
]

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
EF_AMDGPU_MACH = 0x0FF
EF_AMDGPU_FEATURE_XNACK_V4 = 0x300
EF_AMDGPU_FEATURE_SRAMECC_V4 = 0xC00


class AbiVersion(IntEnum):
    """`e_ident[EI_ABIVERSION]` for `ELFOSABI_AMDGPU_HSA` (AMDGPUUsage "ELF Header")."""

    V2 = 0
    V3 = 1
    V4 = 2
    V5 = 3
    V6 = 4

    @property
    def code_object_version(self) -> int:
        return self.value + 2


class FeatureSetting(StrEnum):
    """A target feature's setting in `e_flags` (`EF_AMDGPU_FEATURE_XNACK_*_V4` and
    `EF_AMDGPU_FEATURE_SRAMECC_*_V4`): the two-bit fields read 0 unsupported, 1 any,
    2 off, 3 on."""

    UNSUPPORTED = "unsupported"
    ANY = "any"
    OFF = "off"
    ON = "on"


_SETTINGS = (FeatureSetting.UNSUPPORTED, FeatureSetting.ANY, FeatureSetting.OFF,
             FeatureSetting.ON)


class Generation(StrEnum):
    """Which columns of the AMDGPUUsage kernel-descriptor tables apply."""

    GFX9 = "gfx9"          # GFX9 without MAI registers (gfx900..gfx909)
    GFX90A = "gfx90a"      # GFX90A/GFX942: COMPUTE_PGM_RSRC3 has ACCUM_OFFSET, TG_SPLIT
    GFX10 = "gfx10"
    GFX11 = "gfx11"


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One processor: its machine number, descriptor generation and the limits a kernel's
    resources must respect."""

    name: str
    mach: int
    generation: Generation
    wave_sizes: tuple[int, ...]
    max_vgprs: int
    """Per-wave addressable VGPRs (architected plus AccVGPRs on GFX90A/GFX942)."""
    max_sgprs: int
    """SGPRs one wave may use, the reserved VCC, FLAT_SCRATCH and XNACK_MASK included (what
    `.sgpr_count` counts): 112 on GFX8-GFX9 (LLVM `getMaxNumSGPRs` with Addressable=false:
    102 addressable plus the reserved ones, allocated in granules of 16), 106 addressable plus
    VCC on GFX10+."""
    max_lds_bytes: int
    """LDS one work-group may allocate."""

    @property
    def has_accum_offset(self) -> bool:
        return self.generation is Generation.GFX90A

    @property
    def is_gfx10_plus(self) -> bool:
        return self.generation in (Generation.GFX10, Generation.GFX11)

    def vgpr_encoding_granule(self, wave_size: int) -> int:
        """Granule of COMPUTE_PGM_RSRC1.GRANULATED_WORKITEM_VGPR_COUNT (AMDGPUUsage
        "compute_pgm_rsrc1 for GFX6-GFX12"): 8 on GFX90A/GFX942, 8 in wave32 and 4 in wave64
        on GFX10+, 4 on other GFX9."""
        if self.generation is Generation.GFX90A:
            return 8
        if self.is_gfx10_plus and wave_size == 32:
            return 8
        return 4


_TABLE = (
    Target(name="gfx900", mach=0x02C, generation=Generation.GFX9, wave_sizes=(64,),
           max_vgprs=256, max_sgprs=112, max_lds_bytes=65536),
    Target(name="gfx906", mach=0x02F, generation=Generation.GFX9, wave_sizes=(64,),
           max_vgprs=256, max_sgprs=112, max_lds_bytes=65536),
    Target(name="gfx908", mach=0x030, generation=Generation.GFX9, wave_sizes=(64,),
           max_vgprs=256, max_sgprs=112, max_lds_bytes=65536),
    Target(name="gfx90a", mach=0x03F, generation=Generation.GFX90A, wave_sizes=(64,),
           max_vgprs=512, max_sgprs=112, max_lds_bytes=65536),
    Target(name="gfx942", mach=0x04C, generation=Generation.GFX90A, wave_sizes=(64,),
           max_vgprs=512, max_sgprs=112, max_lds_bytes=65536),
    Target(name="gfx1030", mach=0x036, generation=Generation.GFX10, wave_sizes=(32, 64),
           max_vgprs=256, max_sgprs=108, max_lds_bytes=65536),
    Target(name="gfx1100", mach=0x041, generation=Generation.GFX11, wave_sizes=(32, 64),
           max_vgprs=256, max_sgprs=108, max_lds_bytes=65536),
    Target(name="gfx1101", mach=0x046, generation=Generation.GFX11, wave_sizes=(32, 64),
           max_vgprs=256, max_sgprs=108, max_lds_bytes=65536),
    Target(name="gfx1102", mach=0x047, generation=Generation.GFX11, wave_sizes=(32, 64),
           max_vgprs=256, max_sgprs=108, max_lds_bytes=65536),
)
_BY_MACH = {t.mach: t for t in _TABLE}
_BY_NAME = {t.name: t for t in _TABLE}


def target_by_mach(mach: int) -> Target | None:
    """The target for an `EF_AMDGPU_MACH` value, None when this table does not know it."""
    return _BY_MACH.get(mach)


def target_by_name(name: str) -> Target | None:
    """The target for a processor name such as `gfx942` (features after `:` ignored)."""
    return _BY_NAME.get(name.split(":", 1)[0])


def feature_settings(e_flags: int) -> tuple[FeatureSetting, FeatureSetting]:
    """(xnack, sramecc) settings encoded in a code object v4+ `e_flags`."""
    return (_SETTINGS[(e_flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8],
            _SETTINGS[(e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10])


def target_id(name: str, xnack: FeatureSetting, sramecc: FeatureSetting) -> str:
    """The target ID (AMDGPUUsage "Target ID"): `gfx90a:sramecc+:xnack-`; a feature set to
    any or unsupported is left out; features in alphabetical order."""
    parts = [name]
    for feature, setting in (("sramecc", sramecc), ("xnack", xnack)):
        if setting is FeatureSetting.ON:
            parts.append(f"{feature}+")
        elif setting is FeatureSetting.OFF:
            parts.append(f"{feature}-")
    return ":".join(parts)
