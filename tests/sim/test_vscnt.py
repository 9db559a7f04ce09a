"""Which vector-memory counter a store is in. GFX9 (gfx942, gfx90a) counts loads and stores
in vmcnt, in issue order; RDNA counts stores in vscnt, so `s_waitcnt vmcnt(N)` waits for
loads alone (RDNA3 ISA, S_WAITCNT / S_WAITCNT_VSCNT; AMDGPUUsage memory model, GFX10-GFX11:
"vscnt" for stores). With a load then a store in flight, `vmcnt(1)` completes the load on
gfx942 (two entries, one may stay) and not on gfx1100 (one load, which may stay): reading
the load's register next is then a `sim-waitcnt-hazard` on gfx1100 only. Before the target table's
`stores_in_vmcnt`, gfx1100 completed the load too and the hazard went unseen. Expected
outcomes by hand from those rules; llvm-mc-22 encodes the instructions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.common.fault import FaultKind, SimStop
from rgpu_fuzz.sim.launch.loader import target_config
from rgpu_fuzz.sim.state.memory import AddressSpace
from rgpu_fuzz.sim.state.wave import Wave
from tests.sim.asm_steps import assemble, run_steps

SUFFIX = {"gfx942": ("dword", "dword"), "gfx1100": ("b32", "b32")}


def _env(cpu: str) -> Env:
    cfg = target_config(cpu)
    return Env(lanes=cfg.wave_size, ieee=True, flush32=False, flush64=False,
               constants=((125, 0),), waitcnt=cfg.waitcnt, true16=cfg.true16,
               stores_in_vmcnt=cfg.stores_in_vmcnt)


def _run(cpu: str, wait: int) -> Wave:
    lanes = target_config(cpu).wave_size
    w = Wave(lanes, 0, 0)
    glob = AddressSpace()
    m = glob.map("buf", (np.arange(lanes, dtype=np.uint32) * 7 + 1).tobytes() + bytes(4 * lanes))
    w.mem = SimpleNamespace(glob=glob)
    load, store = SUFFIX[cpu]
    w.V[:, 4:6] = (m.base + 4 * np.arange(lanes, dtype=np.uint64)).view(np.uint32).reshape(
        lanes, 2)
    w.V[:, 6:8] = (m.base + 4 * lanes + 4 * np.arange(lanes, dtype=np.uint64)).view(
        np.uint32).reshape(lanes, 2)
    w.V[:, 2] = 5
    w.vdef[:, 2:8] = True
    run_steps(assemble([f"global_load_{load} v1, v[4:5], off",
                        f"global_store_{store} v[6:7], v2, off",
                        f"s_waitcnt vmcnt({wait})",
                        "v_mov_b32 v3, v1"], cpu), w, _env(cpu))
    return w


def test_gfx942_counts_the_store_so_vmcnt_1_completes_the_load() -> None:
    w = _run("gfx942", 1)
    assert w.V[:, 3].tolist() == [7 * ln + 1 for ln in range(64)]


def test_gfx1100_does_not_count_the_store_so_vmcnt_1_leaves_the_load_in_flight() -> None:
    with pytest.raises(SimStop) as stop:
        _run("gfx1100", 1)
    assert stop.value.fault.kind is FaultKind.WAITCNT_HAZARD
    w = _run("gfx1100", 0)
    assert w.V[:, 3].tolist() == [7 * ln + 1 for ln in range(32)]
