"""A deliberately broken `amdgpu-sim`: a code-object hook that changes the first step of
the atomic optimizer's DPP scan — the bug of a scan built with a wrong lane shift. LLVM's
`AMDGPUAtomicOptimizer` (strategy `DPP`, `atomic-opt=dpp`) sums a uniform-address atomic's
operands across the wave before one lane performs it: on GFX9 (`buildScan`) through
`row_shr:1, 2, 4, 8` then `row_bcast:15/31`, on GFX10+ without a used result
(`buildReduction`) through `row_xmask:1, 2, 4, 8` and `v_permlanex16_b32`. The hook turns
the first `row_shr:1` (DPP_CTRL 0x111) or `row_xmask:1` (0x161) of `.text` into
`row_shr:2` / `row_xmask:2` (0x112 / 0x162): DPP_CTRL is bits 8..16 of the DPP dword, the
instruction's last (CDNA3 ISA §6.5 "DPP"; RDNA3 ISA "VOP_DPP16"). A lane then adds the value
two lanes below (or across) instead of one, so the wave's sum, and the counter, are wrong.

Load it with `--plugin rgpu_fuzz/bench/seeded/dpp_step.py` and use
`amdgpu-sim-dppstep:gfx942:O3:atomic-opt=dpp`; without a DPP scan in the code object (O0,
another strategy) it changes nothing."""

from __future__ import annotations

from rgpu_fuzz.bench.seeded.dpp_row_shr import widen_first_dpp_step
from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline

ROW_SHR_1, ROW_XMASK_1 = 0x111, 0x161
"""DPP_CTRL values (ISA manuals' DPP_CTRL enumeration: ROW_SHR 0x111-0x11F, ROW_XMASK
0x160-0x16F on GFX10+)."""


def shift_dpp_step(code_object: bytes) -> bytes:
    """The code object with the first `row_shr:1`/`row_xmask:1` DPP instruction of `.text`
    changed to a step of 2 (unchanged when there is none); the edit is `dpp_row_shr`'s."""
    return widen_first_dpp_step(code_object, frozenset({ROW_SHR_1, ROW_XMASK_1}))


class DppStepChanged(AmdgpuSimPipeline):
    """`amdgpu-sim` with a seeded atomic-optimizer bug: one DPP scan step shifts by 2."""

    name = "amdgpu-sim-dppstep"
    description = ("amdgpu-sim with the first row_shr:1/row_xmask:1 DPP step changed to 2 "
                   "(seeded bug)")
    hook_sees_batches = False

    def transform_code_object(self, code_object: bytes) -> bytes:
        return shift_dpp_step(code_object)
