"""Atomics through our lowering and LLVM's AMDGPU back end (lower/atomics.py,
toolchain.AtomicConfig, the amdgpu-sim options `scope=`, `atomic-opt=`, `flat`).

Expected IR is LangRef's spelling of each instruction with rustc's ordering map; expected
machine code is what AMDGPUUsage's memory model and the atomic optimizer's strategies
(AMDGPUAtomicOptimizer.cpp: `DPP` scans with `row_shr` DPP adds, `Iterative` loops over the
active lanes with `s_ff1`, `None` leaves one atomic per lane) give on gfx942.
"""

from __future__ import annotations

import pytest

from rgpu_fuzz.casefile import loads
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lower.amdgcn import AmdgcnTarget
from rgpu_fuzz.lower.kernel import lower_module
from rgpu_fuzz.lower.targets import HostTarget
from rgpu_fuzz.pipelines.registry import Registry

KERNEL = """use rgpu::*;

#[shared]
static S: [AtomicI64; 4] = [const { AtomicI64::new(0) }; 4];

#[kernel]
pub fn k(a: &[AtomicU32], b: &[AtomicI32]) {
    let t = thread_idx_x();
    S[0].store(1, Ordering::Release);
    let x = S[0].fetch_min(-2, Ordering::AcqRel);
    a[0].fetch_max(t, Ordering::Relaxed);
    b[0].fetch_max(x as i32, Ordering::SeqCst);
    if a[1].compare_exchange(0, t, Ordering::AcqRel, Ordering::Acquire).is_err() {
        b[1].swap(a[2].load(Ordering::Acquire) as i32, Ordering::Relaxed);
    }
    fence(Ordering::SeqCst);
}
"""


def test_ir_of_every_kind_on_amdgcn_and_host() -> None:
    checked = check_source(KERNEL)
    gpu = lower_module(checked, "k", AmdgcnTarget()).ir
    lines = [line.strip() for line in gpu.splitlines()]
    joined = "\n".join(lines)
    assert 'store atomic i64 1, ptr addrspace(3) ' in joined
    assert 'syncscope("agent") release, align 8' in joined
    assert 'atomicrmw min ptr addrspace(3) ' in joined  # signed i64 min
    assert 'atomicrmw umax ptr addrspace(1) ' in joined  # u32 max is unsigned
    assert 'atomicrmw max ptr addrspace(1) ' in joined  # i32 max is signed
    assert 'syncscope("agent") monotonic, align 4' in joined  # Relaxed
    assert 'syncscope("agent") acq_rel acquire, align 4' in joined  # the exchange
    assert 'atomicrmw xchg ptr addrspace(1) ' in joined
    assert 'syncscope("agent") acquire, align 4' in joined  # load Acquire
    assert 'fence syncscope("agent") seq_cst' in joined
    host = lower_module(checked, "k", HostTarget()).ir
    assert "syncscope" not in host and "atomicrmw umax ptr " in host
    wg = lower_module(checked, "k", AmdgcnTarget(atomic_scope="workgroup-one-as",
                                                 atomic_flat=True)).ir
    assert 'fence syncscope("workgroup-one-as") seq_cst' in wg
    assert "addrspacecast ptr addrspace(3) " in wg and "atomicrmw min ptr %" in wg


CASE = """format = "rgpu-case/1"
entry = "k"
kernel = '''
use rgpu::*;

#[kernel]
pub fn k(a: &[AtomicU32]) {
    a[0].fetch_add(thread_idx_x(), Ordering::Relaxed);
}
'''

[launch]
grid = [1, 1, 1]
block = [64, 1, 1]

[[args]]
name = "a"
buffer = "u32"
len = 1
init = { fill = 0 }
"""


def _asm(spec: str) -> list[str]:
    text = Registry().create(spec).artefact_text(loads(CASE), "asm")
    assert text is not None
    return [line.split(":", 1)[1].strip() for line in text.splitlines()
            if line.startswith("0x")]


@pytest.mark.slow
def test_optimizer_strategies_scopes_and_flat_on_gfx942() -> None:
    """Each strategy's own code, set per emission and reset after: the default run after a
    `dpp` one in the same worker gives `Iterative`'s code again (LLVM 22's default)."""
    dpp = _asm("amdgpu-sim:gfx942:O3:atomic-opt=dpp")
    assert any("v_add_u32_dpp" in i and "row_shr:1" in i for i in dpp)
    iterative = _asm("amdgpu-sim:gfx942:O3:atomic-opt=iterative")
    assert any(i.startswith("s_ff1_i32_b64") for i in iterative)
    assert not any("_dpp" in i for i in iterative)
    none = _asm("amdgpu-sim:gfx942:O3:atomic-opt=none")
    assert not any(i.startswith(("s_ff1", "v_mbcnt")) or "_dpp" in i for i in none)
    assert _asm("amdgpu-sim:gfx942:O3") == iterative
    # AMDGPUUsage "Memory Model GFX942": a monotonic system-scope global atomic sets sc1
    system = [i for i in _asm("amdgpu-sim:gfx942:O3:scope=system:atomic-opt=none")
              if i.startswith("global_atomic_add ")]
    assert system and all(i.endswith(" sc1") for i in system)
    assert any(i.startswith("flat_atomic_add ") for i in _asm("amdgpu-sim:gfx942:O0:flat"))
    assert not any(i.startswith("flat_atomic") for i in _asm("amdgpu-sim:gfx942:O0"))


def test_nvptx_emits_atom_instructions() -> None:
    """The NVPTX back end turns the same IR into PTX `atom.*` (PTX ISA "Parallel
    Synchronization and Communication Instructions: atom"): global and shared, 32 and 64 bit,
    compare-and-swap with its ordering and system scope."""
    import re
    from pathlib import Path

    from rgpu_fuzz.casefile import load
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, nvptx_target

    cases = Path(__file__).resolve().parents[1] / "semantics" / "cases"
    found: set[str] = set()
    for name in ("atomic_rmw_global", "atomic_one_winner"):
        built = build_gpu(load(cases / f"{name}.toml"), nvptx_target("sm_70"), 3)
        assert isinstance(built, GpuBuild), built
        found |= set(re.findall(r"\batom\.[\w.]+", built.asm))
    assert {"atom.global.add.u32", "atom.global.add.u64", "atom.global.max.s32",
            "atom.global.min.u64", "atom.shared.add.u32",
            "atom.acq_rel.sys.global.cas.b32"} <= found, sorted(found)
