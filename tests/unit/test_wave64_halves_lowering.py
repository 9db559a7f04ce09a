"""Where a `ds_bpermute_b32` reaches only a 32-lane half (GFX10/GFX11 in wave64), the
amdgcn lowering also moves each word through `llvm.amdgcn.permlane64` and picks by bit 5 of
`lane_id ^ source` (rgpu_fuzz/lower/amdgcn_waves.py; the reach is LLVM's
`GCNSubtarget::supportsWaveWideBPermute`: false only for GFX10/GFX11 wave64). The values the
resulting code computes are checked by the wave conformance rows
`amdgpu-sim:gfx1100:O0:wave64`/`O3:wave64`; this file checks which targets take the path."""

from __future__ import annotations

import pytest

from rgpu_fuzz.lower import AmdgcnTarget
from rgpu_fuzz.lower.context import LowerError
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.gpu_build import gpu_target
from tests.wave_ir import module_ir


@pytest.mark.parametrize(("cpu", "wave", "halves"), [
    ("gfx1100", 64, True), ("gfx1100", 32, False), ("gfx942", 64, False)])
def test_only_rdna_wave64_moves_through_permlane64(cpu: str, wave: int, halves: bool) -> None:
    text = module_ir(AmdgcnTarget(cpu=cpu, wave_size=wave if cpu == "gfx1100" else 0,
                                  waveops=WaveOps.INTRINSIC))
    assert ("llvm.amdgcn.permlane64" in text) is halves
    if halves:  # and LLVM 22 keeps it: the swap and the whole-wave read survive O3
        asm = toolchain.emit_assembly(toolchain.optimise(
            text, target := gpu_target(cpu, wave64=True), 3), target, 3)
        assert "v_permlane64_b32" in asm and "s_or_saveexec_b64" in asm


def test_gfx10_wave64_shuffle_is_a_lowering_error() -> None:
    """gfx1030 (GFX10) has no `v_permlane64_b32` (RDNA2 ISA; LLVM `hasPermLane64`: GFX11+),
    so a wave64 lane move across halves cannot be built there: one clear error."""
    with pytest.raises(LowerError, match="v_permlane64_b32"):
        module_ir(AmdgcnTarget(cpu="gfx1030", wave_size=64, waveops=WaveOps.INTRINSIC))
