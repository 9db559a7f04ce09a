"""The atomics conformance cases (`tests/semantics/cases/atomic_*.toml`, expected values from
rustc 1.95 on the host, `tests/semantics/regen_expected.py`) on the ways `amdgpu-sim` can
compile and run atomics, beyond the default that `test_semantics.py` runs everywhere:

* each of LLVM's atomic optimizer strategies (`atomic-opt=dpp|iterative|none`;
  `-amdgpu-atomic-optimizer-strategy`) on every target at O0 and O3 (the optimizer runs at
  O1 and above, so O0 checks that the option changes nothing there);
* generic (FLAT) pointers (`flat`) at O0, where LLVM keeps them (docs/conformance.md
  "Atomics");
* interleaved waves (`interleave=SEED`): a well-defined kernel computes the same under any
  schedule the simulator draws.

The host pipelines, `rustc-cpu` and `rustc-amdgpu` (every target, O0 and O2) run the same
cases here too, so that one run of this file answers for atomics on every pipeline
(`test_semantics.py` runs them with every other case). `ref`, `llvm-cpu` and
`amdgpu-sim:gfx942:O3:atomic-opt=dpp` run in `make test`; the rest is `slow`."""

from __future__ import annotations

from functools import cache

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.outcome import Ok, Outcome, Unavailable
from rgpu_fuzz.pipelines.registry import Registry
from tests.semantics.expected_values import CASES, case_names, load_expected, output_mismatches

TARGETS = ("gfx942", "gfx90a", "gfx1100")
STRATEGIES = ("dpp", "iterative", "none")
FAST = ("ref", "llvm-cpu:O0", "llvm-cpu:O3", "amdgpu-sim:gfx942:O3:atomic-opt=dpp")
RUSTC = ("rustc-cpu:O2", *(f"rustc-amdgpu:{t}:O{o}" for t in TARGETS for o in (0, 2)))


def _specs() -> list[str]:
    specs = [*FAST, *RUSTC]
    specs += [f"amdgpu-sim:{t}:O{o}:atomic-opt={s}" for t in TARGETS for o in (0, 3)
              for s in STRATEGIES]
    specs += [f"amdgpu-sim:{t}:O0:flat" for t in TARGETS]
    specs += [f"amdgpu-sim:{t}:O{o}:interleave={k}" for k, (t, o) in enumerate(
        (t, o) for t in TARGETS for o in (0, 3))]
    return specs


def atomic_cases() -> list[str]:
    return [n for n in case_names() if n.startswith("atomic_")]


@cache
def _outcomes(spec: str) -> dict[str, Outcome]:
    """Every atomics case through `spec` in one batch, as a campaign runs them."""
    names = atomic_cases()
    pipeline = Registry().create(spec)
    return dict(zip(names, pipeline.run_many([load(CASES / f"{n}.toml") for n in names]),
                    strict=True))


def _params() -> list[object]:
    out: list[object] = []
    for spec in dict.fromkeys(_specs()):
        marks = [pytest.mark.xdist_group(f"atomics-{spec}")]
        if spec not in FAST:
            marks.append(pytest.mark.slow)
        if spec in RUSTC:
            marks.append(pytest.mark.rustc)
        out += [pytest.param(spec, name, marks=marks, id=f"{spec}-{name}")
                for name in atomic_cases()]
    return out


@pytest.mark.parametrize(("spec", "name"), _params())
def test_atomics_compute_what_rustc_computed(spec: str, name: str) -> None:
    outcome = _outcomes(spec)[name]
    if isinstance(outcome, Unavailable):
        pytest.skip(f"{spec}: {outcome.reason}")
    assert isinstance(outcome, Ok), f"{spec}: {outcome}"
    got = {buf: outcome.outputs[buf].bits() for buf in outcome.outputs}
    case = load(CASES / f"{name}.toml")
    assert output_mismatches(case, got, load_expected(name)["outputs"]) == []


def test_the_matrix_cases_hold_every_method_and_ordering() -> None:
    """`atomic_matrix_global` and `atomic_matrix_shared` name every method with every
    ordering Rust allows for it (load/store three each, the read-modify-writes five,
    compare_exchange 15 pairs, fence four) — the claim docs/conformance.md makes."""
    orders = ("Relaxed", "Acquire", "Release", "AcqRel", "SeqCst")
    want = {("load", o) for o in ("Relaxed", "Acquire", "SeqCst")}
    want |= {("store", o) for o in ("Relaxed", "Release", "SeqCst")}
    want |= {(m, o) for m in ("swap", "fetch_add", "fetch_sub", "fetch_and", "fetch_or",
                              "fetch_xor", "fetch_min", "fetch_max") for o in orders}
    want |= {("compare_exchange", f"{s}/{f}") for s in orders
             for f in ("Relaxed", "Acquire", "SeqCst")}
    want |= {("fence", o) for o in ("Acquire", "Release", "AcqRel", "SeqCst")}
    import re

    call = re.compile(r"\.(load|store|swap|fetch_\w+|compare_exchange)\([^;]*?"
                      r"Ordering::(\w+)(?:, Ordering::(\w+))?\)")
    fence = re.compile(r"\bfence\(Ordering::(\w+)\)")
    for name in ("atomic_matrix_global", "atomic_matrix_shared"):
        src = load(CASES / f"{name}.toml").kernel
        seen = {(m[1], m[2] if m[3] is None else f"{m[2]}/{m[3]}") for m in call.finditer(src)}
        seen |= {("fence", m[1]) for m in fence.finditer(src)}
        assert want <= seen, (name, sorted(want - seen))
