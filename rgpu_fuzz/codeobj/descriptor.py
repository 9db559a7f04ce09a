"""The 64-byte kernel descriptor (`<kernel>.kd`), every field decoded and named.

Layout and field names follow LLVM AMDGPUUsage, tables "Code Object V3 Kernel Descriptor",
"compute_pgm_rsrc1 for GFX6-GFX12", "compute_pgm_rsrc2 for GFX6-GFX12", "compute_pgm_rsrc3 for
GFX90A, GFX942", "compute_pgm_rsrc3 for GFX10-GFX11" and "Kernel Code Properties" (with
`llvm/Support/AMDHSAKernelDescriptor.h` for bit positions). The bit fields are one data table,
`FIELDS`; which rows apply depends on the processor generation, because the same bits mean
different things on GFX9 and GFX10+ (bit 29 of RSRC1 is reserved on GFX9 and WGP_MODE on
GFX10+). Each row also names the `.amdhsa_*` directive `llvm-objdump --disassemble-symbols=
<k>.kd` prints for it, so the differential test compares field by field.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from rgpu_fuzz.codeobj.errors import CodeObjectError
from rgpu_fuzz.codeobj.targets import Generation, Target

__all__ = [
    "FIELDS",
    "KERNEL_DESCRIPTOR_SIZE",
    "BitField",
    "DecodedField",
    "KernelDescriptor",
    "Register",
    "UserSgpr",
    "decode_kernel_descriptor",
]

KERNEL_DESCRIPTOR_SIZE: Final = 64
_LAYOUT = struct.Struct("<IIIIq20sIIIHH4s")


class Register(StrEnum):
    """The packed words of the descriptor that hold bit fields."""

    COMPUTE_PGM_RSRC1 = "COMPUTE_PGM_RSRC1"
    COMPUTE_PGM_RSRC2 = "COMPUTE_PGM_RSRC2"
    COMPUTE_PGM_RSRC3 = "COMPUTE_PGM_RSRC3"
    KERNEL_CODE_PROPERTIES = "KERNEL_CODE_PROPERTIES"
    KERNARG_PRELOAD = "KERNARG_PRELOAD"
    DESCRIPTOR = "kernel_descriptor"
    """Not a register: the descriptor's reserved bytes, reported by `nonzero_reserved`."""


_ALL = frozenset(Generation)
_GFX9 = frozenset({Generation.GFX9, Generation.GFX90A})
_GFX9_ONLY = frozenset({Generation.GFX9})
_GFX90A = frozenset({Generation.GFX90A})
_GFX10P = frozenset({Generation.GFX10, Generation.GFX11, Generation.GFX12})
_GFX10 = frozenset({Generation.GFX10})
_GFX11 = frozenset({Generation.GFX11})
_GFX10_11 = frozenset({Generation.GFX10, Generation.GFX11})
_TO_GFX11 = _ALL - {Generation.GFX12}
_GFX12 = frozenset({Generation.GFX12})


@dataclass(frozen=True, slots=True)
class BitField:
    """One row of the AMDGPUUsage tables: `name` verbatim, bits `lo .. lo+width-1` of
    `register`, meaningful on `generations`.

    `directives` are the `.amdhsa_*` names llvm-objdump prints for this field (a field has two
    where the name depends on the target, e.g. ENABLE_PRIVATE_SEGMENT); `must_be_zero` marks
    reserved bits and fields AMDGPUUsage says the code object must leave 0 (CP sets them)."""

    register: Register
    name: str
    lo: int
    width: int
    generations: frozenset[Generation] = _ALL
    directives: tuple[str, ...] = ()
    must_be_zero: bool = False

    def extract(self, word: int) -> int:
        return (word >> self.lo) & ((1 << self.width) - 1)


def _f(register: Register, name: str, lo: int, width: int = 1,
       generations: frozenset[Generation] = _ALL, directive: str | tuple[str, ...] = (),
       zero: bool = False) -> BitField:
    directives = (directive,) if isinstance(directive, str) else directive
    return BitField(register, name, lo, width, generations, directives, zero)


_R1, _R2, _R3 = (Register.COMPUTE_PGM_RSRC1, Register.COMPUTE_PGM_RSRC2,
                 Register.COMPUTE_PGM_RSRC3)
_KCP, _KP = Register.KERNEL_CODE_PROPERTIES, Register.KERNARG_PRELOAD

FIELDS: Final[tuple[BitField, ...]] = (
    # compute_pgm_rsrc1 for GFX6-GFX12
    _f(_R1, "GRANULATED_WORKITEM_VGPR_COUNT", 0, 6),
    _f(_R1, "GRANULATED_WAVEFRONT_SGPR_COUNT", 6, 4, _GFX9),
    _f(_R1, "RESERVED_SGPR_COUNT", 6, 4, _GFX10P, zero=True),  # GFX10+: reserved, must be 0
    _f(_R1, "PRIORITY", 10, 2, zero=True),
    _f(_R1, "FLOAT_ROUND_MODE_32", 12, 2, directive=".amdhsa_float_round_mode_32"),
    _f(_R1, "FLOAT_ROUND_MODE_16_64", 14, 2, directive=".amdhsa_float_round_mode_16_64"),
    _f(_R1, "FLOAT_DENORM_MODE_32", 16, 2, directive=".amdhsa_float_denorm_mode_32"),
    _f(_R1, "FLOAT_DENORM_MODE_16_64", 18, 2, directive=".amdhsa_float_denorm_mode_16_64"),
    _f(_R1, "PRIV", 20, zero=True),
    _f(_R1, "ENABLE_DX10_CLAMP", 21, 1, _TO_GFX11, ".amdhsa_dx10_clamp"),
    _f(_R1, "ENABLE_WG_RR_EN", 21, 1, _GFX12, ".amdhsa_round_robin_scheduling"),
    _f(_R1, "DEBUG_MODE", 22, zero=True),
    _f(_R1, "ENABLE_IEEE_MODE", 23, 1, _TO_GFX11, ".amdhsa_ieee_mode"),
    _f(_R1, "DISABLE_PERF", 23, 1, _GFX12),
    _f(_R1, "BULKY", 24, zero=True),
    _f(_R1, "CDBG_USER", 25, zero=True),
    _f(_R1, "FP16_OVFL", 26, directive=".amdhsa_fp16_overflow"),
    _f(_R1, "RESERVED1", 27, 2, zero=True),
    _f(_R1, "RESERVED2", 29, 3, _GFX9, zero=True),
    _f(_R1, "WGP_MODE", 29, 1, _GFX10P, ".amdhsa_workgroup_processor_mode"),
    _f(_R1, "MEM_ORDERED", 30, 1, _GFX10P, ".amdhsa_memory_ordered"),
    _f(_R1, "FWD_PROGRESS", 31, 1, _GFX10P, ".amdhsa_forward_progress"),
    # compute_pgm_rsrc2 for GFX6-GFX12
    _f(_R2, "ENABLE_PRIVATE_SEGMENT", 0, directive=(
        ".amdhsa_enable_private_segment",
        ".amdhsa_system_sgpr_private_segment_wavefront_offset")),
    _f(_R2, "USER_SGPR_COUNT", 1, 5, directive=".amdhsa_user_sgpr_count"),
    _f(_R2, "ENABLE_TRAP_HANDLER", 6, 1, _TO_GFX11),
    _f(_R2, "ENABLE_DYNAMIC_VGPR", 6, 1, _GFX12),
    _f(_R2, "ENABLE_SGPR_WORKGROUP_ID_X", 7, directive=".amdhsa_system_sgpr_workgroup_id_x"),
    _f(_R2, "ENABLE_SGPR_WORKGROUP_ID_Y", 8, directive=".amdhsa_system_sgpr_workgroup_id_y"),
    _f(_R2, "ENABLE_SGPR_WORKGROUP_ID_Z", 9, directive=".amdhsa_system_sgpr_workgroup_id_z"),
    _f(_R2, "ENABLE_SGPR_WORKGROUP_INFO", 10, directive=".amdhsa_system_sgpr_workgroup_info"),
    _f(_R2, "ENABLE_VGPR_WORKITEM_ID", 11, 2, directive=".amdhsa_system_vgpr_workitem_id"),
    _f(_R2, "ENABLE_EXCEPTION_ADDRESS_WATCH", 13, zero=True),
    _f(_R2, "ENABLE_EXCEPTION_MEMORY", 14, zero=True),
    _f(_R2, "GRANULATED_LDS_SIZE", 15, 9, zero=True),
    _f(_R2, "ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION", 24,
       directive=".amdhsa_exception_fp_ieee_invalid_op"),
    _f(_R2, "ENABLE_EXCEPTION_FP_DENORMAL_SOURCE", 25,
       directive=".amdhsa_exception_fp_denorm_src"),
    _f(_R2, "ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO", 26,
       directive=".amdhsa_exception_fp_ieee_div_zero"),
    _f(_R2, "ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW", 27,
       directive=".amdhsa_exception_fp_ieee_overflow"),
    _f(_R2, "ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW", 28,
       directive=".amdhsa_exception_fp_ieee_underflow"),
    _f(_R2, "ENABLE_EXCEPTION_IEEE_754_FP_INEXACT", 29,
       directive=".amdhsa_exception_fp_ieee_inexact"),
    _f(_R2, "ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO", 30,
       directive=".amdhsa_exception_int_div_zero"),
    _f(_R2, "RESERVED0", 31, zero=True),
    # compute_pgm_rsrc3: GFX9 before GFX90A has none (the word is reserved)
    _f(_R3, "RESERVED", 0, 32, _GFX9_ONLY, zero=True),
    # compute_pgm_rsrc3 for GFX90A, GFX942
    _f(_R3, "ACCUM_OFFSET", 0, 6, _GFX90A),
    _f(_R3, "RESERVED0", 6, 10, _GFX90A, zero=True),
    _f(_R3, "TG_SPLIT", 16, 1, _GFX90A, ".amdhsa_tg_split"),
    _f(_R3, "RESERVED1", 17, 15, _GFX90A, zero=True),
    # compute_pgm_rsrc3 for GFX10-GFX11, and GFX12 (AMDHSAKernelDescriptor.h)
    _f(_R3, "SHARED_VGPR_COUNT", 0, 4, _GFX10_11, ("; SHARED_VGPR_COUNT",
                                                  ".amdhsa_shared_vgpr_count")),
    _f(_R3, "RESERVED0", 0, 4, _GFX12, zero=True),
    _f(_R3, "RESERVED1", 4, 8, _GFX10, zero=True),
    _f(_R3, "INST_PREF_SIZE", 4, 6, _GFX11, ".amdhsa_inst_pref_size"),
    _f(_R3, "TRAP_ON_START", 10, 1, _GFX11, "; TRAP_ON_START"),
    _f(_R3, "TRAP_ON_END", 11, 1, _GFX11, "; TRAP_ON_END"),
    _f(_R3, "INST_PREF_SIZE", 4, 8, _GFX12, ".amdhsa_inst_pref_size"),
    _f(_R3, "RESERVED2", 12, 2, _GFX10_11, zero=True),
    _f(_R3, "RESERVED2", 12, 1, _GFX12, zero=True),
    _f(_R3, "GLG_EN", 13, 1, _GFX12, "; GLG_EN"),
    _f(_R3, "RESERVED4", 14, 17, _GFX10P, zero=True),
    _f(_R3, "RESERVED5", 31, 1, _GFX10, zero=True),
    _f(_R3, "IMAGE_OP", 31, 1, _GFX11 | _GFX12, "; IMAGE_OP"),
    # Kernel Code Properties
    _f(_KCP, "ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER", 0,
       directive=".amdhsa_user_sgpr_private_segment_buffer"),
    _f(_KCP, "ENABLE_SGPR_DISPATCH_PTR", 1, directive=".amdhsa_user_sgpr_dispatch_ptr"),
    _f(_KCP, "ENABLE_SGPR_QUEUE_PTR", 2, directive=".amdhsa_user_sgpr_queue_ptr"),
    _f(_KCP, "ENABLE_SGPR_KERNARG_SEGMENT_PTR", 3,
       directive=".amdhsa_user_sgpr_kernarg_segment_ptr"),
    _f(_KCP, "ENABLE_SGPR_DISPATCH_ID", 4, directive=".amdhsa_user_sgpr_dispatch_id"),
    _f(_KCP, "ENABLE_SGPR_FLAT_SCRATCH_INIT", 5,
       directive=".amdhsa_user_sgpr_flat_scratch_init"),
    _f(_KCP, "ENABLE_SGPR_PRIVATE_SEGMENT_SIZE", 6,
       directive=".amdhsa_user_sgpr_private_segment_size"),
    _f(_KCP, "RESERVED0", 7, 3, zero=True),
    _f(_KCP, "RESERVED_WAVEFRONT_SIZE32", 10, 1, _GFX9, zero=True),  # GFX9: wave64 only
    _f(_KCP, "ENABLE_WAVEFRONT_SIZE32", 10, 1, _GFX10P, ".amdhsa_wavefront_size32"),
    _f(_KCP, "USES_DYNAMIC_STACK", 11, directive=".amdhsa_uses_dynamic_stack"),
    _f(_KCP, "RESERVED1", 12, 4, zero=True),
    # Kernarg preload specification
    _f(_KP, "KERNARG_PRELOAD_SPEC_LENGTH", 0, 7,
       directive=".amdhsa_user_sgpr_kernarg_preload_length"),
    _f(_KP, "KERNARG_PRELOAD_SPEC_OFFSET", 7, 9,
       directive=".amdhsa_user_sgpr_kernarg_preload_offset"),
)


@dataclass(frozen=True, slots=True)
class DecodedField:
    """One field's value in one descriptor."""

    register: Register
    name: str
    value: int
    lo: int
    width: int
    must_be_zero: bool


@dataclass(frozen=True, slots=True)
class UserSgpr:
    """One entry of the user-SGPR prologue the dispatcher loads (AMDGPUUsage "Initial Kernel
    Execution State"): `name` starts at SGPR `first` and takes `count` SGPRs."""

    name: str
    first: int
    count: int


# AMDGPUUsage "SGPR Register Set Up Order": enabled user SGPRs in this order.
_USER_SGPR_ORDER: Final = (
    ("ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER", "private_segment_buffer", 4),
    ("ENABLE_SGPR_DISPATCH_PTR", "dispatch_ptr", 2),
    ("ENABLE_SGPR_QUEUE_PTR", "queue_ptr", 2),
    ("ENABLE_SGPR_KERNARG_SEGMENT_PTR", "kernarg_segment_ptr", 2),
    ("ENABLE_SGPR_DISPATCH_ID", "dispatch_id", 2),
    ("ENABLE_SGPR_FLAT_SCRATCH_INIT", "flat_scratch_init", 2),
    ("ENABLE_SGPR_PRIVATE_SEGMENT_SIZE", "private_segment_size", 1),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelDescriptor:
    """A decoded `<kernel>.kd` (AMDGPUUsage "Code Object V3 Kernel Descriptor").

    The four whole-word fields are attributes; every bit field of the packed words applicable
    to `generation` is in `fields`, in table order, and by name through `field()`."""

    raw: bytes
    generation: Generation
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int
    compute_pgm_rsrc1: int
    compute_pgm_rsrc2: int
    compute_pgm_rsrc3: int
    kernel_code_properties: int
    kernarg_preload: int
    reserved0: bytes
    reserved1: bytes
    reserved3: bytes
    fields: tuple[DecodedField, ...]

    def field(self, name: str, register: Register | None = None) -> int:
        """The value of bit field `name` (qualify by `register` where a name repeats, such as
        RESERVED1); KeyError when the field does not exist on this generation."""
        for f in self.fields:
            if f.name == name and (register is None or f.register is register):
                return f.value
        raise KeyError(name)

    def has_field(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    @property
    def wavefront_size(self) -> int:
        """32 when ENABLE_WAVEFRONT_SIZE32 is set (GFX10+), else 64."""
        return 32 if self.has_field("ENABLE_WAVEFRONT_SIZE32") and self.field(
            "ENABLE_WAVEFRONT_SIZE32") else 64

    @property
    def user_sgpr_count(self) -> int:
        return self.field("USER_SGPR_COUNT")

    def next_free_vgpr(self, target: Target) -> int:
        """VGPRs the dispatcher allocates per work-item: (granulated count + 1) × granule."""
        granule = target.vgpr_encoding_granule(self.wavefront_size)
        return (self.field("GRANULATED_WORKITEM_VGPR_COUNT") + 1) * granule

    @property
    def next_free_sgpr(self) -> int | None:
        """SGPRs allocated per wave on GFX9 ((granulated count + 1) × 8); None on GFX10+,
        where every wave gets all SGPRs and the field is reserved."""
        if not self.has_field("GRANULATED_WAVEFRONT_SGPR_COUNT"):
            return None
        return (self.field("GRANULATED_WAVEFRONT_SGPR_COUNT") + 1) * 8

    @property
    def accum_offset(self) -> int | None:
        """First AccVGPR as a VGPR number on GFX90A/GFX942: (ACCUM_OFFSET + 1) × 4."""
        if not self.has_field("ACCUM_OFFSET"):
            return None
        return (self.field("ACCUM_OFFSET") + 1) * 4

    def user_sgprs(self) -> tuple[UserSgpr, ...]:
        """The enabled user SGPRs in set-up order, then preloaded kernargs (one SGPR per
        dword of KERNARG_PRELOAD_SPEC_LENGTH)."""
        out: list[UserSgpr] = []
        nxt = 0
        for enable, name, count in _USER_SGPR_ORDER:
            if self.field(enable):
                out.append(UserSgpr(name, nxt, count))
                nxt += count
        if preload := self.field("KERNARG_PRELOAD_SPEC_LENGTH"):
            out.append(UserSgpr("kernarg_preload", nxt, preload))
        return tuple(out)

    def nonzero_reserved(self) -> tuple[DecodedField, ...]:
        """Fields AMDGPUUsage requires to be 0 that are not (a loader may refuse them)."""
        out = [f for f in self.fields if f.must_be_zero and f.value]
        for name, raw in (("reserved0", self.reserved0), ("reserved1", self.reserved1),
                          ("reserved3", self.reserved3)):
            if any(raw):
                out.append(DecodedField(Register.DESCRIPTOR, name.upper(),
                                        int.from_bytes(raw, "little"), 0, 8 * len(raw), True))
        return tuple(out)

    def as_dict(self) -> dict[str, object]:
        """Every field by name, for `--json` and reports."""
        out: dict[str, object] = {
            "GROUP_SEGMENT_FIXED_SIZE": self.group_segment_fixed_size,
            "PRIVATE_SEGMENT_FIXED_SIZE": self.private_segment_fixed_size,
            "KERNARG_SIZE": self.kernarg_size,
            "KERNEL_CODE_ENTRY_BYTE_OFFSET": self.kernel_code_entry_byte_offset,
        }
        registers: dict[str, dict[str, int]] = {}
        for f in self.fields:
            registers.setdefault(f.register.value, {})[f.name] = f.value
        out.update(registers)
        return out


def _words(generation: Generation, words: Mapping[Register, int]) -> tuple[DecodedField, ...]:
    return tuple(DecodedField(f.register, f.name, f.extract(words[f.register]), f.lo, f.width,
                              f.must_be_zero)
                 for f in FIELDS if generation in f.generations)


def decode_kernel_descriptor(raw: bytes, generation: Generation) -> KernelDescriptor:
    """Decode 64 descriptor bytes; CodeObjectError when there are not exactly 64."""
    if len(raw) != KERNEL_DESCRIPTOR_SIZE:
        raise CodeObjectError(f"kernel descriptor is {len(raw)} bytes, expected 64")
    (group, private, kernarg, reserved0, entry, reserved1, rsrc3, rsrc1, rsrc2, props,
     preload, reserved3) = _LAYOUT.unpack(raw)
    words = {Register.COMPUTE_PGM_RSRC1: rsrc1, Register.COMPUTE_PGM_RSRC2: rsrc2,
             Register.COMPUTE_PGM_RSRC3: rsrc3, Register.KERNEL_CODE_PROPERTIES: props,
             Register.KERNARG_PRELOAD: preload}
    return KernelDescriptor(
        raw=bytes(raw), generation=generation, group_segment_fixed_size=group,
        private_segment_fixed_size=private, kernarg_size=kernarg,
        kernel_code_entry_byte_offset=entry, compute_pgm_rsrc1=rsrc1, compute_pgm_rsrc2=rsrc2,
        compute_pgm_rsrc3=rsrc3, kernel_code_properties=props, kernarg_preload=preload,
        reserved0=reserved0.to_bytes(4, "little"), reserved1=reserved1,
        reserved3=reserved3, fields=_words(generation, words))
