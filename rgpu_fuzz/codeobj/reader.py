"""A whole AMDGPU code object read into one value: target, metadata, and each kernel with its
decoded descriptor — what the ROCm loader and the simulator start from.

`read_code_object` checks what a loader checks before anything else (AMDGPUUsage "ELF
Header": a known `EF_AMDGPU_MACH`, ABI version of code object V4 or later, one
`NT_AMDGPU_METADATA` note) and raises `CodeObjectError` otherwise. Whether the kernels are
consistent (entry points, register counts, sizes) is `verify.verify_code_object`'s job, which
reports findings instead of raising.
"""

from __future__ import annotations

from dataclasses import dataclass

from rgpu_fuzz.codeobj.descriptor import (
    KERNEL_DESCRIPTOR_SIZE,
    KernelDescriptor,
    decode_kernel_descriptor,
)
from rgpu_fuzz.codeobj.elf import ElfImage, ElfSection, ElfSymbol, read_elf
from rgpu_fuzz.codeobj.errors import CodeObjectError
from rgpu_fuzz.codeobj.notes import (
    NT_AMDGPU_METADATA,
    CodeObjectMetadata,
    KernelMetadata,
    parse_metadata,
)
from rgpu_fuzz.codeobj.targets import (
    EF_AMDGPU_MACH,
    AbiVersion,
    FeatureSetting,
    Target,
    feature_settings,
    target_by_mach,
    target_id,
)

__all__ = ["CodeObject", "Kernel", "read_code_object"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Kernel:
    """One kernel: its metadata entry, its descriptor symbol and decoded descriptor, and its
    code symbol (None when the object has no symbol of the kernel's name)."""

    name: str
    metadata: KernelMetadata
    descriptor_symbol: ElfSymbol
    descriptor: KernelDescriptor
    code_symbol: ElfSymbol | None

    @property
    def entry_address(self) -> int:
        """Where the dispatcher starts the kernel: the descriptor's address plus
        KERNEL_CODE_ENTRY_BYTE_OFFSET (AMDGPUUsage "Code Object V3 Kernel Descriptor")."""
        return self.descriptor_symbol.value + self.descriptor.kernel_code_entry_byte_offset


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeObject:
    """A read code object. `elf` keeps every section, symbol and relocation."""

    elf: ElfImage
    target: Target
    xnack: FeatureSetting
    sramecc: FeatureSetting
    abi_version: AbiVersion
    metadata: CodeObjectMetadata
    kernels: tuple[Kernel, ...]

    @property
    def target_id(self) -> str:
        """`gfx942`, `gfx90a:sramecc+:xnack-` (AMDGPUUsage "Target ID")."""
        return target_id(self.target.name, self.xnack, self.sramecc)

    @property
    def code_object_version(self) -> int:
        return self.abi_version.code_object_version

    @property
    def text(self) -> ElfSection | None:
        return self.elf.section(".text")

    @property
    def text_bytes(self) -> bytes:
        return self.elf.section_bytes(self.text) if self.text is not None else b""

    def kernel(self, name: str) -> Kernel:
        for k in self.kernels:
            if k.name == name:
                return k
        raise CodeObjectError(f"no kernel named {name} (kernels: "
                              f"{', '.join(k.name for k in self.kernels) or 'none'})")


def _metadata(elf: ElfImage) -> CodeObjectMetadata:
    found = [n for n in elf.notes if n.name == "AMDGPU" and n.type == NT_AMDGPU_METADATA]
    if not found:
        raise CodeObjectError("no NT_AMDGPU_METADATA note (owner AMDGPU, type 32)")
    if len(found) > 1:
        raise CodeObjectError(f"{len(found)} NT_AMDGPU_METADATA notes, expected one")
    return parse_metadata(found[0].desc)


def _kernel(elf: ElfImage, target: Target, meta: KernelMetadata) -> Kernel:
    kd_sym = elf.symbol(meta.symbol)
    if kd_sym is None:
        raise CodeObjectError(f"kernel {meta.name}: descriptor symbol {meta.symbol} is missing")
    raw = elf.symbol_bytes(kd_sym, KERNEL_DESCRIPTOR_SIZE)
    return Kernel(name=meta.name, metadata=meta, descriptor_symbol=kd_sym,
                  descriptor=decode_kernel_descriptor(raw, target.generation),
                  code_symbol=elf.symbol(meta.name))


def read_code_object(data: bytes) -> CodeObject:
    """Read a relocatable object or a linked code object; CodeObjectError (one line) when the
    bytes are not a readable AMDGPU HSA code object of V4 or later."""
    elf = read_elf(data)
    mach = elf.flags & EF_AMDGPU_MACH
    target = target_by_mach(mach)
    if target is None:
        raise CodeObjectError(f"unknown processor: EF_AMDGPU_MACH {mach:#x} in e_flags "
                              f"{elf.flags:#x}")
    try:
        abi = AbiVersion(elf.abi_version)
    except ValueError:
        raise CodeObjectError(f"unknown EI_ABIVERSION {elf.abi_version}") from None
    if abi < AbiVersion.V4:
        raise CodeObjectError(f"code object V{abi.code_object_version} is not supported "
                              "(V4 or later: e_flags carry xnack/sramecc settings)")
    xnack, sramecc = feature_settings(elf.flags)
    metadata = _metadata(elf)
    kernels = tuple(_kernel(elf, target, k) for k in metadata.kernels)
    return CodeObject(elf=elf, target=target, xnack=xnack, sramecc=sramecc, abi_version=abi,
                      metadata=metadata, kernels=kernels)
