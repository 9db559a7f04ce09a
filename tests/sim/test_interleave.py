"""Interleaved waves (`amdgpu-sim:...:interleave=SEED`, `rgpu_fuzz.sim.launch.engine`): the
simulator switches waves after every memory instruction in a seeded order, across up to
four resident work-groups. A well-defined kernel computes the same with any seed; a
read-modify-write that is not atomic (the seeded `amdgpu-sim-rmwsplit`,
`rgpu_fuzz/bench/seeded/rmw_split.py`) loses updates — and only then, when one lane per
wave updates the counter, since on the default schedule each wave runs to its end alone.

Expected values are worked out by hand: 3 blocks of 256 threads, the threads with
t % 64 == 0 (t = 0, 64, 128, 192: four per block) add 1 to c[0] and t + 1 to c[1], so
c[0] = 3 × 4 = 12 and c[1] = 3 × (1 + 65 + 129 + 193) = 3 × 388 = 1164; d[g] = t."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.casefile import load, loads
from rgpu_fuzz.model.outcome import Ok, Outcome
from rgpu_fuzz.pipelines.registry import Registry
from tests.semantics.expected_values import CASES, load_expected, output_mismatches

ONE_LANE_PER_WAVE = '''
format = "rgpu-case/1"
entry = "one_lane_per_wave"
kernel = """
use rgpu::*;

#[kernel]
pub fn one_lane_per_wave(c: &[AtomicU32], d: &mut [u32]) {
    let t = thread_idx_x();
    if t % 64 == 0 {
        c[0].fetch_add(1, Ordering::Relaxed);
        c[1].fetch_add(t + 1, Ordering::Relaxed);
    }
    d[(block_idx_x() * block_dim_x() + t) as usize] = t;
}
"""

[launch]
grid = [3, 1, 1]
block = [256, 1, 1]

[[args]]
name = "c"
buffer = "u32"
len = 2
init = { fill = 0 }

[[args]]
name = "d"
buffer = "u32"
len = 768
init = { fill = 0 }
'''
COUNTERS = [12, 1164]


@cache
def _registry() -> Registry:
    reg = Registry()
    reg.load_plugin(seeded_plugin("rmw_split.py"))
    return reg


def _run(spec: str, case_text: str = ONE_LANE_PER_WAVE) -> Outcome:
    return _registry().create(spec).run(loads(case_text))


def _counters(outcome: Outcome) -> list[int]:
    assert isinstance(outcome, Ok), outcome
    d = outcome.outputs["d"].values
    assert d.tolist() == np.tile(np.arange(256), 3).tolist()
    return [int(v) for v in outcome.outputs["c"].values]


@pytest.mark.parametrize("spec", ["amdgpu-sim:gfx942:O0:interleave=1",
                                  "amdgpu-sim:gfx942:O3:interleave=2",
                                  "amdgpu-sim:gfx1100:O0:interleave=3",
                                  "amdgpu-sim:gfx90a:O3:interleave=4"])
def test_interleaving_keeps_atomic_counters(spec: str) -> None:
    assert _counters(_run(spec)) == COUNTERS


@pytest.mark.parametrize("name", ["atomic_one_winner", "atomic_rmw_shared"])
def test_interleaving_keeps_barrier_and_lds_cases(name: str) -> None:
    """Two conformance cases with barriers and LDS atomics, against rustc's values
    (`tests/semantics/expected`), on a seed other than the conformance run's."""
    case = load(CASES / f"{name}.toml")
    outcome = _registry().create("amdgpu-sim:gfx942:O3:interleave=11").run(case)
    assert isinstance(outcome, Ok), outcome
    got = {buf: outcome.outputs[buf].bits() for buf in outcome.outputs}
    assert output_mismatches(case, got, load_expected(name)["outputs"]) == []


def test_split_rmw_is_caught_only_when_interleaved() -> None:
    """The seeded non-atomic add computes the right counters on the default schedule (each
    wave's load and store are adjacent) and loses updates under every seed tried."""
    assert _counters(_run("amdgpu-sim-rmwsplit:gfx942:O0")) == COUNTERS
    for seed in (1, 2, 3):
        got = _counters(_run(f"amdgpu-sim-rmwsplit:gfx942:O0:interleave={seed}"))
        assert got[0] < COUNTERS[0] and got[1] < COUNTERS[1], (seed, got)


def test_a_seed_gives_one_schedule() -> None:
    """The same seed twice gives the same lost updates; the draw is the seed's alone."""
    spec = "amdgpu-sim-rmwsplit:gfx1100:O0:interleave=5"
    assert _counters(_run(spec)) == _counters(_run(spec))
