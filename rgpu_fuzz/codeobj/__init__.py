"""AMDGPU code objects: link with ld.lld, read the ELF, its `NT_AMDGPU_METADATA` note and
each kernel's descriptor, pack the kernarg segment from the metadata, and verify what a
loader relies on (docs/design.md §1: below `sim`, `lower` and `pipelines`, which all load code
objects through this package; it imports none of them).

Failures of the bytes under test are values (`LinkFailure`, `KernargMismatch`, `Violation`)
or one `CodeObjectError` from the readers, which callers turn into a value at their boundary.
"""

from rgpu_fuzz.codeobj.describe import describe_code_object, kernarg_layout
from rgpu_fuzz.codeobj.descriptor import (
    FIELDS,
    BitField,
    DecodedField,
    KernelDescriptor,
    Register,
    UserSgpr,
    decode_kernel_descriptor,
)
from rgpu_fuzz.codeobj.elf import ElfImage, ElfSection, ElfSegment, ElfSymbol, Relocation
from rgpu_fuzz.codeobj.errors import CodeObjectError
from rgpu_fuzz.codeobj.kernarg import (
    ArgValue,
    Dispatch,
    KernargMismatch,
    KernargSegment,
    KernargSlot,
    pack_kernargs,
)
from rgpu_fuzz.codeobj.launch import (
    LoadedKernel,
    dispatch_of,
    kernel_arguments,
    load_code_object,
    load_kernel,
    pack_launch,
)
from rgpu_fuzz.codeobj.link import LinkFailure, find_ld_lld, link
from rgpu_fuzz.codeobj.notes import (
    CodeObjectMetadata,
    KernelArg,
    KernelMetadata,
    Note,
    parse_metadata,
    parse_notes,
)
from rgpu_fuzz.codeobj.reader import CodeObject, Kernel, read_code_object
from rgpu_fuzz.codeobj.targets import AbiVersion, FeatureSetting, Generation, Target, target_by_name
from rgpu_fuzz.codeobj.verify import Violation, verify_code_object

__all__ = [
    "FIELDS",
    "AbiVersion",
    "ArgValue",
    "BitField",
    "CodeObject",
    "CodeObjectError",
    "CodeObjectMetadata",
    "DecodedField",
    "Dispatch",
    "ElfImage",
    "ElfSection",
    "ElfSegment",
    "ElfSymbol",
    "FeatureSetting",
    "Generation",
    "KernargMismatch",
    "KernargSegment",
    "KernargSlot",
    "Kernel",
    "KernelArg",
    "KernelDescriptor",
    "KernelMetadata",
    "LinkFailure",
    "LoadedKernel",
    "Note",
    "Register",
    "Relocation",
    "Target",
    "UserSgpr",
    "Violation",
    "decode_kernel_descriptor",
    "describe_code_object",
    "dispatch_of",
    "find_ld_lld",
    "kernarg_layout",
    "kernel_arguments",
    "link",
    "load_code_object",
    "load_kernel",
    "pack_kernargs",
    "pack_launch",
    "parse_metadata",
    "parse_notes",
    "read_code_object",
    "target_by_name",
    "verify_code_object",
]
