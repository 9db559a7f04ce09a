"""Which wave size each pipeline runs the wave functions at (docs/language.md "Wave
operations", docs/design.md §3). Expected sizes: AMDGPUUsage "AMDGPU Processors" (gfx90a and
gfx942 are wave64 only; gfx1100 defaults to wave32), and the PTX ISA's `WARP_SZ` (32).
"""

from __future__ import annotations

import pytest

from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry


@pytest.mark.parametrize(("spec", "size"), [
    ("amdgpu-sim", 64),
    ("amdgpu-sim:gfx942:O0", 64),
    ("amdgpu-sim:gfx90a", 64),
    ("amdgpu-sim:gfx1100", 32),
    ("rustc-amdgpu:gfx1100", 32),
    ("rustc-amdgpu", 64),
    ("nvptx-gpu", 32),
    ("ref", 64),
    ("ref:wave=32", 32),
    ("ref:wave=64", 64),
])
def test_each_pipeline_declares_its_wave_size(spec: str, size: int) -> None:
    assert Registry().create(spec).wave_size == size


def test_the_reference_runs_only_wave_sizes_some_target_has() -> None:
    with pytest.raises(PipelineError, match="wave=48"):
        Registry().create("ref:wave=48")
