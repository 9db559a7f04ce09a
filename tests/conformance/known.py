"""What the conformance suite knows to be wrong today, in two tables (docs/conformance.md
explains every entry with its evidence).

`KNOWN_FAILURES`: (case, pipeline label) → the outcome observed and its class. Each is a
strict expected failure, so the day it is fixed the test reports XPASS(strict) and fails:
the entry is then removed. The class names who is wrong: `sim:` the AMDGPU simulator,
`llvm:` LLVM's code generation, `rustc:` the rustc pipelines' harness.

`UNSUPPORTED_BUDGET`: (case, pipeline label) → why that pipeline cannot run that case. An
`Unsupported` outcome is a skip; the suite counts them per pipeline and fails on one that
this table does not name (a simulator coverage regression) and on an entry that no longer
happens (a stale excuse). The budget is the table's size.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KnownFailure:
    """A (case, pipeline) that is wrong today: what it gives and which class of bug."""

    observed: str
    klass: str


_MUBUF_WRAP = KnownFailure(
    observed="RunCrash(sim-oob-access): buffer_load_dword v16, v16, s[0:3], 0 offen "
             "offset:128 reads private offset 0x10000007c",
    klass="sim: MUBUF scratch offset (vaddr + inst offset) not taken modulo 2^32")

_MUBUF_WRAP_RUSTC = KnownFailure(
    observed="RunCrash(sim-oob-access): buffer_load_dword v4, v4, s[0:3], 0 offen "
             "offset:128 reads private offset 0x100000054",
    klass=_MUBUF_WRAP.klass)

_MUBUF_WRAP_WIDE = KnownFailure(
    observed="RunCrash(sim-oob-access): buffer_load_dword v14, v9, s[0:3], 0 offen "
             "offset:88 reads private offset 0x100000050",
    klass=_MUBUF_WRAP.klass)

_O0_LANE_MASK = KnownFailure(
    observed="RunCrash(sim-uninit-read): EXEC set from an undefined value at "
             "s_andn2_b64 exec, exec, s[4:5] (a loop's lane mask reloaded by v_readlane "
             "from a whole-wave SGPR-spill VGPR)",
    klass="sim: false sim-uninit-read on a gfx90a O0 lane mask spilled through a lane VGPR")

KNOWN_FAILURES: dict[tuple[str, str], KnownFailure] = {
    ("local_dynamic_index", "amdgpu-sim:gfx90a:O2"): _MUBUF_WRAP,
    ("local_dynamic_index", "amdgpu-sim:gfx90a:O3"): _MUBUF_WRAP,
    ("local_dynamic_index", "rustc-amdgpu:gfx90a:O2"): _MUBUF_WRAP_RUSTC,
    ("local_dynamic_wide", "amdgpu-sim:gfx90a:O2"): _MUBUF_WRAP_WIDE,
    ("local_dynamic_wide", "amdgpu-sim:gfx90a:O3"): _MUBUF_WRAP_WIDE,
    ("cf_loop_break", "rustc-amdgpu:gfx90a:O0"): _O0_LANE_MASK,
}

UNSUPPORTED_BUDGET: dict[tuple[str, str], str] = {}
"""Empty: every pipeline runs every case today (the full matrix in docs/conformance.md)."""


def known_failure(name: str, label: str) -> KnownFailure | None:
    return KNOWN_FAILURES.get((name, label))


def allowed_unsupported(label: str) -> dict[str, str]:
    """Case → reason, for the cases `label` may answer `Unsupported` for."""
    return {case: why for (case, spec), why in UNSUPPORTED_BUDGET.items() if spec == label}
