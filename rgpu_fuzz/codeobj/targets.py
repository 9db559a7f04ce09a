"""AMDGPU processors as a code object names them, and the limits a loader holds them to.

The processors themselves (machine numbers, descriptor generation, wave sizes, register and
LDS limits) are rows of the target table, `rgpu_fuzz.targets` (`gpu.toml`, with its sources);
this module adds what belongs to the ELF container: the xnack/sramecc feature bits
(`EF_AMDGPU_FEATURE_*_V4`) and ABI versions (LLVM AMDGPUUsage "ELF Header").
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

from rgpu_fuzz.targets import TARGETS, Generation, GpuTarget, by_mach, by_name

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


Target = GpuTarget
"""A processor as the code-object reader and verifier see it: a row of the target table
(`rgpu_fuzz.targets`, `gpu.toml`): its machine number, descriptor generation, allowed wave
sizes and the register and LDS limits a kernel's resources must respect."""

_TABLE = TARGETS


def target_by_mach(mach: int) -> Target | None:
    """The target for an `EF_AMDGPU_MACH` value, None when the table does not know it."""
    return by_mach(mach)


def target_by_name(name: str) -> Target | None:
    """The target for a processor name such as `gfx942` (features after `:` ignored)."""
    return by_name(name)


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
