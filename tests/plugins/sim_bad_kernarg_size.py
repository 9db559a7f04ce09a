"""A deliberately broken `amdgpu-sim`: every kernel descriptor's KERNARG_SIZE (bytes 8..11,
AMDGPUUsage "Code Object V3 Kernel Descriptor") grows by 8 through the code-object hook, so
descriptor and `.kernarg_segment_size` disagree. The loading path must refuse it as
`codeobj-invalid:kernarg-size` before any wave runs, as it does for `hip`."""

from __future__ import annotations

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

KERNARG_SIZE_OFFSET = 8


class BadKernargSize(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded linker-side bug: descriptors claim 8 more kernarg bytes."""

    name = "amdgpu-sim-badkd"
    description = "amdgpu-sim with every descriptor's KERNARG_SIZE off by 8 (seeded bug)"

    def transform_code_object(self, code_object: bytes) -> bytes:
        co = read_code_object(code_object)
        out = bytearray(code_object)
        for k in co.kernels:
            sym = k.descriptor_symbol
            sec = next(s for s in co.elf.sections if s.addr and s.contains(sym.value, 64))
            at = sec.offset + sym.value - sec.addr + KERNARG_SIZE_OFFSET
            size = int.from_bytes(out[at:at + 4], "little")
            out[at:at + 4] = (size + 8).to_bytes(4, "little")
        return bytes(out)
