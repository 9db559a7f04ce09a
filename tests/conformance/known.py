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


def _rows(cases: str, labels: str, observed: str,
          klass: str) -> dict[tuple[str, str], KnownFailure]:
    """One entry per case and pipeline label (both space-separated)."""
    return {(c, label): KnownFailure(observed, klass)
            for c in cases.split() for label in labels.split()}


def _sims(targets: str, levels: str) -> str:
    return " ".join(f"amdgpu-sim:{t}:{o}" for t in targets.split() for o in levels.split())


KNOWN_FAILURES: dict[tuple[str, str], KnownFailure] = {
    **_rows("int_euclid euclid_overflow", _sims("gfx942 gfx950 gfx90a gfx1100 gfx1200", "O0"),
            "CompileCrash: LLVM ERROR: Cannot select: i16,i16 = sdivrem",
            "llvm: `sdiv`+`srem` (or `udiv`+`urem`) of one pair of i8/i16 operands at -O0 "
            "(docs/llvm-bugs/divrem_i16_o0_cannot_select.ll)"),
    **_rows("int_bit_methods", "amdgpu-sim:gfx1100:O0 rustc-amdgpu:gfx1100:O0",
            "wrong `swap_bytes` of 64-bit values (0x8000000000000000 gives 0)",
            "llvm: gfx1100 -O0 real-true16 `llvm.bswap.i64` copies 16 of 32 bits "
            "(`v_mov_b16` before `v_perm_b32`; docs/conformance.md \"Methods and f16\")"),
}
"""The f16 and method cases' known failures (docs/conformance.md "Methods and f16"). A
case the simulator cannot run yet (`Unsupported`) is here too, not in the budget: it is a
strict xfail naming the missing instruction, so the day the simulator runs it the suite
says so."""

UNSUPPORTED_BUDGET: dict[tuple[str, str], str] = {}
"""Which pipelines cannot run which case yet (docs/conformance.md "`Unsupported` budget");
empty since the simulator runs LDS atomics. An entry is removed when its pipeline gains
the feature (the suite then reports the stale entry)."""


def _globalisel(cases: str, targets: str, levels: str, observed: str,
                klass: str) -> dict[tuple[str, str], KnownFailure]:
    """Entries for `amdgpu-sim:<target>:<level>:isel=global`, each case on each target and
    level named (space-separated)."""
    return {(c, f"amdgpu-sim:{t}:{o}:isel=global"): KnownFailure(observed, klass)
            for c in cases.split() for t in targets.split() for o in levels.split()}


_ALL = "gfx942 gfx90a gfx1100 gfx950 gfx1200"
GLOBALISEL_FAILURES: dict[tuple[str, str], KnownFailure] = {
    **_globalisel("cast_from_f32 cast_from_f64 cf_returns_calls random_edges_f64", _ALL,
                  "O0 O3", "CompileCrash: unable to legalize G_FPTOSI_SAT/G_FPTOUI_SAT",
                  "llvm: GlobalISel legalizer gap, llvm.fpto[su]i.sat (docs/conformance.md)"),
    **_globalisel("items_and_scopes", _ALL, "O0",
                  "CompileCrash: unable to legalize G_FPTOSI_SAT (s64 from s32)",
                  "llvm: GlobalISel legalizer gap, llvm.fpto[su]i.sat (docs/conformance.md)"),
    **_globalisel("float_bits_exact float_special_literals", _ALL, "O0",
                  "CompileCrash: unable to legalize G_CONSTANT_FOLD_BARRIER (s64)",
                  "llvm: GlobalISel legalizer gap, G_CONSTANT_FOLD_BARRIER"),
    **_globalisel("shared_helpers shared_3d_phases", _ALL, "O0 O3",
                  "RunCrash: s_trap 2 in a helper using LDS",
                  "llvm: docs/llvm-bugs/globalisel_lds_absolute_in_helper.ll"),
    **_globalisel("shared_barrier_control", _ALL, "O3",
                  "wrong o5: a divergent phi of constants in an SGPR",
                  "llvm: docs/llvm-bugs/globalisel_divergent_phi_sgpr.ll"),
    **_globalisel("half_casts", _ALL, "O0 O3",
                  "CompileCrash: unable to legalize G_FPTOUI_SAT (s64 from s16)",
                  "llvm: GlobalISel legalizer gap, llvm.fpto[su]i.sat (docs/conformance.md)"),
    **_globalisel("int_sat_methods", _ALL, "O0 O3",
                  "CompileCrash: unable to legalize G_SMULH (s64)",
                  "llvm: GlobalISel legalizer gap, G_SMULH s64 (i64::saturating_mul)"),
    **_globalisel("atomic_rmw_shared", _ALL, "O3",
                  "CompileCrash: cannot select G_PHI vcc(s1)",
                  "llvm: GlobalISel instruction selection, a lane-mask phi (docs/conformance.md)"),
    **_globalisel("cf_while", "gfx942 gfx90a gfx950", "O0",
                  "Trap(div-by-zero) that rustc does not take",
                  "llvm: llvm/llvm-project#186348 (lane VGPR IMPLICIT_DEF in a loop)"),
    **_globalisel("local_dynamic_wide", "gfx1100 gfx1200", "O3",
                  "CompileCrash: unable to legalize G_FREEZE <12 x s64>",
                  "llvm: GlobalISel legalizer gap, G_FREEZE of a wide vector"),
}
"""`isel=global` pipelines (run with `RGPU_CONFORMANCE_PIPELINES`; not in the default list):
every difference of a GlobalISel conformance run on every target at O0 and O3, each an
LLVM finding explained in docs/conformance.md "GlobalISel"."""


def known_failure(name: str, label: str) -> KnownFailure | None:
    return KNOWN_FAILURES.get((name, label)) or GLOBALISEL_FAILURES.get((name, label))


def allowed_unsupported(label: str) -> dict[str, str]:
    """Case → reason, for the cases `label` may answer `Unsupported` for."""
    return {case: why for (case, spec), why in UNSUPPORTED_BUDGET.items() if spec == label}
