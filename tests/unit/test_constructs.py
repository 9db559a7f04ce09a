"""The construct catalogue (`generators/constructs.py`): what the walk finds in hand-written
kernels (the expected constructs are read off the kernel text by hand), and that the shipped
profiles produce every construct not left out by design."""

from __future__ import annotations

import pytest

from generators import from_seed, profile_names
from generators.constructs import (
    CONSTRUCTS,
    EXCLUDED,
    case_constructs,
    launch_constructs,
    module_constructs,
)
from rgpu_fuzz import casefile
from rgpu_fuzz.cli import main
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.model.case import Launch
from tests.semantics.expected_values import CASES

BARRIER_KERNEL = """use rgpu::*;
#[shared]
static mut S: [u32; 64] = [0u32; 64];
fn get(i: usize) -> u32 { unsafe { S[i % S.len()] } }
#[kernel]
pub fn k(a: &[u32], out: &mut [u32], n: u32) {
    let t: usize = thread_idx_x() as usize;
    unsafe { S[t] = a[t]; S[t] += 1u32; }
    sync_threads();
    let mut acc: u32 = 0u32;
    for i in 0u32..4u32 {
        if i == 2u32 { break; }
        acc += get(t + i as usize);
    }
    for r in 0u32..n {
        if r == 1u32 { continue; }
        sync_threads();
    }
    out[t] = acc;
    out[t] ^= 3u32;
}
"""


def _constructs(src: str) -> set[str]:
    return module_constructs(check_source(src, "k.rs").module)


def test_barrier_regions_loops_and_shared_access() -> None:
    """The `break` stands in a loop without a barrier of a kernel with barriers (a region
    loop on the host); the `continue` in a loop with one; `S[t] += 1` is a compound
    assignment to a shared element; `out[t] ^= 3` to a slice element; `get` reads shared
    memory and takes `.len()` of it, and it is called in a kernel with barriers."""
    got = _constructs(BARRIER_KERNEL)
    for c in ("gpu:break-in-region-loop", "gpu:continue-in-barrier-loop", "gpu:barrier-in-for",
              "compound:shared", "compound:slice", "assign:shared", "helper:shared-read",
              "helper:shared-len", "gpu:shared-helper-in-barrier-kernel", "stmt:break-for",
              "stmt:continue-for", "expr:call", "stmt:for-computed-end"):
        assert c in got, c
    for c in ("gpu:continue-in-region-loop", "gpu:break-in-barrier-loop", "helper:shared-write",
              "gpu:barrier-in-while", "stmt:return-kernel", "item:helper-mut-param"):
        assert c not in got, c
    assert got <= set(CONSTRUCTS)


def test_the_shared_helpers_conformance_kernel() -> None:
    """`chain` calls `stash_wide`, which writes shared memory; `small_add` has a `mut`
    parameter and is called in an `if` condition; `bump` does `ACC[i] += v`."""
    case = casefile.load(CASES / "shared_helpers.toml")
    got = case_constructs(case)
    for c in ("helper:calls-shared-helper", "helper:shared-write", "helper:shared-compound",
              "helper:shared-read", "helper:shared-len", "expr:call-mut-param-in-condition",
              "helper:assign-mut-param", "item:shared-subword", "item:shared-64bit",
              "item:shared-float", "item:shared-several", "launch:1d"):
        assert c in got, c
    assert "launch:partial-wave" not in got  # 32 threads: a full wave32


def test_the_shared_3d_phases_conformance_kernel() -> None:
    """`put` reads `thread_idx_z()` and does `W[t * 2] *= 3`; the kernel does `B[tid] ^= …`
    and `out[gid] -= …`; `nb_sum` (a `mut` parameter) calls `nb`, which reads `B` and
    `B.len()`, in an `if` condition; the kernel's `for` breaks and continues before no
    barrier of its own; blocks of 3·3·3 threads."""
    got = case_constructs(casefile.load(CASES / "shared_3d_phases.toml"))
    for c in ("helper:prelude", "helper:shared-compound", "compound:shared", "compound:slice",
              "helper:calls-shared-helper", "expr:call-mut-param-in-condition",
              "gpu:break-in-region-loop", "gpu:continue-in-region-loop", "helper:shared-len",
              "expr:len-shared", "launch:3d-partial-wave", "item:shared-len-const"):
        assert c in got, c
    assert "gpu:break-in-barrier-loop" not in got


def test_launch_shapes_by_hand() -> None:
    """27 threads per block (3·3·3) fill no wave; a y-extent in the grid is a 2-D launch."""
    assert launch_constructs(Launch(grid=(2, 1, 1), block=(3, 3, 3))) == {
        "launch:3d", "launch:multi-block", "launch:partial-wave", "launch:3d-partial-wave"}
    assert launch_constructs(Launch(grid=(1, 2, 1), block=(64, 1, 1))) == {
        "launch:2d", "launch:multi-block", "launch:grid-y"}


def test_excluded_constructs_are_in_the_catalogue_and_give_a_reason() -> None:
    assert EXCLUDED and all(c in CONSTRUCTS and len(why) > 20 for c, why in EXCLUDED.items())


def _first_seeds_reaching(wanted: set[str], profiles: list[str], seeds: int) -> set[str]:
    """Walk the profiles' seeds round-robin until every wanted construct was seen; what is
    left unseen after `seeds` seeds of each."""
    left = set(wanted)
    for s in range(seeds):
        for p in profiles:
            left -= case_constructs(from_seed(s, p))
            if not left:
                return left
    return left


@pytest.mark.slow
def test_every_construct_is_produced_by_a_shipped_profile_within_2000_seeds() -> None:
    """Round-robin over the shipped profiles; about 90 s here (every construct is seen
    long before seed 2000: `item:const-of-const` and `helper:calls-shared-helper`, the
    rarest, occur in about 1% of the kernels of some profiles)."""
    wanted = set(CONSTRUCTS) - set(EXCLUDED)
    left = _first_seeds_reaching(wanted, sorted(profile_names()), 2000)
    assert not left, f"never produced: {sorted(left)}"


FAST = ("helper:shared-read", "helper:shared-write", "helper:shared-compound",
        "compound:shared", "expr:len-shared", "helper:prelude",
        "gpu:shared-helper-in-barrier-kernel", "gpu:break-in-region-loop",
        "gpu:continue-in-barrier-loop", "gpu:return-in-barrier-loop",
        "expr:call-mut-param-in-condition", "compound:slice", "launch:3d")


def test_new_constructs_within_60_seeds_of_barriers_and_memory() -> None:
    left = _first_seeds_reaching(set(FAST), ["barriers", "memory"], 60)
    assert not left, f"never produced: {sorted(left)}"


def test_default_profile_makes_no_shared_helper() -> None:
    """`shared_helpers` is off in default: its seeds keep their cases (test_generator pins
    them), and none of its kernels has a helper touching shared memory."""
    for s in range(40):
        got = case_constructs(from_seed(s))
        assert not {"helper:shared-read", "helper:shared-write", "compound:shared"} & got


def test_gen_stats_table_over_several_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--count", "6", "--stats", "--profile", "barriers,default"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header == ["construct", "barriers", "default"]
    assert "never produced by any profile:" in out and "left out by design:" in out
    row = next(line for line in out.splitlines() if line.startswith("gpu:barrier "))
    assert row.split()[1] == "100.0%"  # every barriers kernel has one


def test_gen_several_profiles_without_stats_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--profile", "barriers,default"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "only with --stats" in err[0]


def test_the_waves_profile_reaches_every_wave_construct_within_60_seeds() -> None:
    """generators/waves.py: every wave function, in a wave-uniform `if`, in a loop, after a
    barrier, `thread_idx_x() / wave_size()`, and a block with a partial wave at wave 64
    only."""
    wanted = {c for c in CONSTRUCTS if c.startswith("wave:")} | {"launch:partial-wave64"}
    left = _first_seeds_reaching(wanted, ["waves"], 60)
    assert not left, f"never produced: {sorted(left)}"
