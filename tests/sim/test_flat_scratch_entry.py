"""The entry state of a kernel with a private segment, by target (AMDGPUUsage "Initial
Kernel Execution State"; "AMDGPU Processors" lists gfx942 and gfx1100 as "Architected flat
scratch", gfx90a not).

- gfx942 (GFX9): FLAT_SCRATCH is the SGPR pair s[102:103] (CDNA3 ISA "Scalar registers"),
  set at entry to the wave's scratch base; no wave-offset system SGPR.
- gfx1100 (GFX11): no wave-offset system SGPR either (LLVM 22's kernels list none in their
  `argumentInfo`), and FLAT_SCRATCH is a hardware register: s102 and s103 are ordinary SGPRs
  nothing initialises. The loader used to treat gfx1100 as not architected and set a
  wave-offset SGPR after the work-group ids that hardware does not.
- gfx90a: the wave-offset SGPR after the work-group ids."""

from __future__ import annotations

import pytest

from rgpu_fuzz.codeobj.reader import read_code_object
from rgpu_fuzz.sim.launch.loader import EntryState, entry_plan, init_wave, target_config
from rgpu_fuzz.sim.state.wave import FLAT_SCRATCH, FULL, Wave
from tests.sim.kernels import build

IR = """
define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %i) {
  %a = alloca [8 x i32], align 4, addrspace(5)
  %p = getelementptr [8 x i32], ptr addrspace(5) %a, i32 0, i32 %i
  store volatile i32 7, ptr addrspace(5) %p
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  store i32 %g, ptr addrspace(1) %out
  ret void
}
declare i32 @llvm.amdgcn.workgroup.id.x()
"""
BASE, OFFSET = 0x7000_0000_0000, 0x400


def _entry(cpu: str) -> tuple[Wave, int]:
    """A wave as the loader sets it up, and the first SGPR after the work-group id."""
    kernel = read_code_object(build(IR, cpu)).kernel("k")
    cfg = target_config(cpu)
    plan = entry_plan(kernel.descriptor)
    assert plan.private_segment
    st = EntryState(0x1000, 0x2000, 0x3000, 1, BASE, 32, b"\0" * 16, 0)
    w = Wave(cfg.wave_size, 0, 0)
    init_wave(w, kernel, cfg, st, (5, 0, 0), (1, 1, 1), 0, OFFSET)
    assert w.S[plan.user_count] == 5 and w.sdef[plan.user_count] == FULL  # work-group id x
    return w, plan.user_count + len(plan.group_axes)


@pytest.mark.parametrize("cpu", ["gfx942", "gfx1100"])
def test_architected_flat_scratch_has_no_wave_offset_sgpr(cpu: str) -> None:
    w, after = _entry(cpu)
    assert w.sdef[after] == 0, f"s{after} set at entry on {cpu}"
    if cpu == "gfx942":
        base = BASE + OFFSET
        assert (w.S[FLAT_SCRATCH], w.S[FLAT_SCRATCH + 1]) == (base & FULL, base >> 32)
        assert w.sdef[FLAT_SCRATCH] == w.sdef[FLAT_SCRATCH + 1] == FULL
    else:
        assert w.sdef[FLAT_SCRATCH] == w.sdef[FLAT_SCRATCH + 1] == 0


def test_gfx90a_has_the_wave_offset_sgpr() -> None:
    w, after = _entry("gfx90a")
    assert (w.S[after], w.sdef[after]) == (OFFSET, FULL)
