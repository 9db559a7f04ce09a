"""What a loader relies on, checked: each violation is a value (`Violation`, signature
`codeobj-invalid:<rule>`), never an exception — an invalid code object is a finding against
the compiler or linker that made it.

Rules (AMDGPUUsage "Code Object V3 Kernel Descriptor", "Kernel Dispatch", "Initial Kernel
Execution State", the metadata maps):
* `no-text` — a linked code object without `.text`;
* `target-mismatch` — `amdhsa.target` differs from the target ID `e_flags` encode;
* `entry-outside-text`, `entry-alignment`, `entry-symbol` — the descriptor's
  KERNEL_CODE_ENTRY_BYTE_OFFSET must land inside `.text`, on a 256-byte boundary, at the
  kernel's own symbol;
* `kd-alignment`, `kd-size` — the descriptor is 64 bytes on a 64-byte boundary (CP microcode);
* `kernarg-size` — descriptor KERNARG_SIZE equals `.kernarg_segment_size`;
* `kernarg-layout` — arguments inside the segment, not overlapping, pointers 8-aligned,
  `.kernarg_segment_align` a power of two of at least 4;
* `group-segment-size`, `private-segment-size` — descriptor and metadata agree;
* `lds-limit`, `vgpr-limit`, `sgpr-limit` — within the target's limits;
* `vgpr-allocation`, `sgpr-allocation` — the descriptor allocates at least the registers the
  metadata says the kernel uses;
* `accum-offset` — on GFX90A/GFX942 the AccVGPRs (from ACCUM_OFFSET) fit the allocation;
* `wave-size` — descriptor, metadata and target agree on the wavefront size;
* `user-sgpr-count` — USER_SGPR_COUNT covers the enabled user SGPRs;
* `scratch-not-enabled` — a private segment is used but ENABLE_PRIVATE_SEGMENT is 0;
* `descriptor-reserved` — a field the descriptor must leave 0 is not 0;
* `workgroup-size` — `.max_flat_workgroup_size` above 1024.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from rgpu_fuzz.codeobj.notes import KernelMetadata
from rgpu_fuzz.codeobj.reader import CodeObject, Kernel

__all__ = ["Violation", "verify_code_object"]

ENTRY_ALIGNMENT = 256
KD_ALIGNMENT = 64
MAX_WORKGROUP_SIZE = 1024


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken loader rule; `kernel` None for whole-object rules."""

    rule: str
    detail: str
    kernel: str | None = None

    @property
    def signature(self) -> str:
        return f"codeobj-invalid:{self.rule}"

    def __str__(self) -> str:
        where = f"kernel {self.kernel}: " if self.kernel else ""
        return f"{self.signature}: {where}{self.detail}"


def _layout(meta: KernelMetadata) -> list[str]:
    problems: list[str] = []
    align = meta.kernarg_segment_align
    if align < 4 or align & (align - 1):
        problems.append(f".kernarg_segment_align {align} is not a power of two >= 4")
    spans = sorted((a.offset, a.offset + a.size, i) for i, a in enumerate(meta.args))
    for (_s0, e0, i0), (s1, _e1, i1) in itertools.pairwise(spans):
        if s1 < e0:
            problems.append(f"args {i0} and {i1} overlap")
    for i, a in enumerate(meta.args):
        if a.offset < 0 or a.offset + a.size > meta.kernarg_segment_size:
            problems.append(f"arg {i} ({a.offset}+{a.size}) is outside the "
                            f"{meta.kernarg_segment_size}-byte segment")
        if a.value_kind == "global_buffer" and a.offset % 8:
            problems.append(f"pointer arg {i} at offset {a.offset} is not 8-aligned")
    return problems


def _kernel(co: CodeObject, k: Kernel) -> list[Violation]:
    out: list[Violation] = []
    kd, meta, target = k.descriptor, k.metadata, co.target

    def bad(rule: str, detail: str) -> None:
        out.append(Violation(rule, detail, k.name))

    if not co.elf.is_relocatable:
        text = co.text
        entry = k.entry_address
        if text is not None and not text.contains(entry):
            bad("entry-outside-text", f"entry {entry:#x} is outside .text "
                f"[{text.addr:#x}, {text.addr + text.size:#x})")
        if entry % ENTRY_ALIGNMENT:
            bad("entry-alignment", f"entry {entry:#x} is not {ENTRY_ALIGNMENT}-byte aligned")
        if k.code_symbol is not None and k.code_symbol.value != entry:
            bad("entry-symbol", f"entry {entry:#x} is not the kernel symbol "
                f"{k.code_symbol.value:#x}")
        if k.descriptor_symbol.value % KD_ALIGNMENT:
            bad("kd-alignment", f"{meta.symbol} at {k.descriptor_symbol.value:#x} is not "
                f"{KD_ALIGNMENT}-byte aligned")
    if k.descriptor_symbol.size != 64:
        bad("kd-size", f"{meta.symbol} has size {k.descriptor_symbol.size}, expected 64")
    if kd.kernarg_size != meta.kernarg_segment_size:
        bad("kernarg-size", f"descriptor KERNARG_SIZE {kd.kernarg_size} != metadata "
            f".kernarg_segment_size {meta.kernarg_segment_size}")
    for problem in _layout(meta):
        bad("kernarg-layout", problem)
    if kd.group_segment_fixed_size != meta.group_segment_fixed_size:
        bad("group-segment-size", f"descriptor {kd.group_segment_fixed_size} != metadata "
            f"{meta.group_segment_fixed_size}")
    if kd.private_segment_fixed_size != meta.private_segment_fixed_size:
        bad("private-segment-size", f"descriptor {kd.private_segment_fixed_size} != metadata "
            f"{meta.private_segment_fixed_size}")
    if kd.group_segment_fixed_size > target.max_lds_bytes:
        bad("lds-limit", f"{kd.group_segment_fixed_size} bytes of LDS > {target.name}'s "
            f"{target.max_lds_bytes}")
    # On GFX90A/GFX942 `.vgpr_count` is the whole unified file: ACCUM_OFFSET + AccVGPRs.
    vgprs_needed = meta.vgpr_count
    if vgprs_needed > target.max_vgprs:
        bad("vgpr-limit", f"{vgprs_needed} VGPRs > {target.name}'s {target.max_vgprs}")
    if kd.next_free_vgpr(target) < vgprs_needed:
        bad("vgpr-allocation", f"descriptor allocates {kd.next_free_vgpr(target)} VGPRs, the "
            f"kernel uses {vgprs_needed}")
    if meta.sgpr_count > target.max_sgprs:
        bad("sgpr-limit", f"{meta.sgpr_count} SGPRs > {target.name}'s {target.max_sgprs}")
    if kd.next_free_sgpr is not None and kd.next_free_sgpr < meta.sgpr_count:
        bad("sgpr-allocation", f"descriptor allocates {kd.next_free_sgpr} SGPRs, the kernel "
            f"uses {meta.sgpr_count}")
    agprs = meta.agpr_count or 0
    if kd.accum_offset is not None and kd.accum_offset + agprs > kd.next_free_vgpr(target):
        bad("accum-offset", f"AccVGPRs v{kd.accum_offset}..+{agprs} lie outside the "
            f"{kd.next_free_vgpr(target)} VGPRs allocated")
    if kd.wavefront_size != meta.wavefront_size or kd.wavefront_size not in target.wave_sizes:
        bad("wave-size", f"descriptor wave{kd.wavefront_size}, metadata "
            f"wave{meta.wavefront_size}, {target.name} runs {target.wave_sizes}")
    enabled = sum(u.count for u in kd.user_sgprs())
    if kd.user_sgpr_count < enabled:
        bad("user-sgpr-count", f"USER_SGPR_COUNT {kd.user_sgpr_count} < {enabled} enabled "
            "user SGPRs")
    if kd.private_segment_fixed_size and not kd.field("ENABLE_PRIVATE_SEGMENT"):
        bad("scratch-not-enabled", f"{kd.private_segment_fixed_size} bytes of scratch with "
            "ENABLE_PRIVATE_SEGMENT 0")
    for f in kd.nonzero_reserved():
        bad("descriptor-reserved", f"{f.register.value}.{f.name} = {f.value}, must be 0")
    if meta.max_flat_workgroup_size > MAX_WORKGROUP_SIZE:
        bad("workgroup-size", f".max_flat_workgroup_size {meta.max_flat_workgroup_size} > "
            f"{MAX_WORKGROUP_SIZE}")
    return out


def verify_code_object(co: CodeObject, kernel: str | None = None) -> tuple[Violation, ...]:
    """Every broken rule of `co`, in kernel order; empty when a loader would accept it.
    With `kernel`, the whole-object rules and that kernel's own: what launching it relies
    on (a batch's code object holds many kernels, and one kernel's broken descriptor says
    nothing about another's launch)."""
    out: list[Violation] = []
    if not co.elf.is_relocatable and co.text is None:
        out.append(Violation("no-text", "no .text section"))
    expected = f"amdgcn-amd-amdhsa--{co.target_id}"
    if co.metadata.target is not None and co.metadata.target != expected:
        out.append(Violation("target-mismatch", f"amdhsa.target {co.metadata.target!r}, "
                             f"e_flags say {expected!r}"))
    for k in co.kernels:
        if kernel is None or k.name == kernel:
            out.extend(_kernel(co, k))
    return tuple(out)
