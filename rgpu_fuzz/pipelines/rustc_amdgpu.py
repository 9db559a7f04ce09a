"""`rustc-amdgpu`: the printed kernel compiled by the real rustc for `amdgcn-amd-amdhsa`
with this project's minimal core, linked into a code object, and executed.

Spec: `rustc-amdgpu[:gfx942|gfx90a|gfx1100][:O0..O3]` (default `gfx942:O2`).

Path: canonical printed kernel (as `rustc-cpu` compiles it) → one `#![no_core]` crate per
batch (`rustc_amdgpu_program`) → rustc → object → ld.lld → code object
(`rustc_amdgpu_build`) → kernarg segment packed from the code object's metadata `.args`
(`codeobj.pack_kernargs`) → the AMDGPU simulator → outputs.

Outcomes:
* rustc reports an error: `CompileCrash(stage="rustc-error")` (first suspect the minicore);
* rustc panics (ICE), LLVM aborts inside rustc, or rustc dies by a signal:
  `CompileCrash(stage="rustc")`, signature the normalised first error line;
* ld.lld refuses rustc's object: `CompileCrash(stage="ld.lld")`;
* the metadata does not carry the kernel's parameters: `CompileCrash(stage="kernarg-mismatch")`;
* the trap record says div-by-zero, div-overflow or out-of-bounds: `Trap(kind, where)` with
  the kernel line, block and thread;
* rustc or the run exceeds its time: `Timeout(stage="rustc" / "run")`.

Features: everything but `shared`. rustc 1.95 cannot put a static in the workgroup address
space (3): a `static mut` lands in global memory, shared by every block, which would give
wrong answers; `core::intrinsics::gpu::gpu_launch_sized_workgroup_mem` exists only in later
nightlies. Kernels with `#[shared]` arrays are `Unsupported`.

`#[inline(never)]` does not keep a call here: rustc 1.95 deliberately emits no `noinline`
for amdgpu targets (rustc_codegen_llvm `attributes.rs`), so helpers are inlined as LLVM
decides. The minicore's cold panic entry points are real calls.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rgpu_fuzz.codeobj import find_ld_lld
from rgpu_fuzz.lang.features import FEATURES
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import (
    CompileCrash,
    Outcome,
    Rejected,
    Stats,
    Timeout,
    Unavailable,
)
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.options import Choice, OptLevel
from rgpu_fuzz.pipelines.rustc_amdgpu_build import RUSTC_ENV, compile_units, rustc_command
from rgpu_fuzz.pipelines.rustc_amdgpu_program import amdgpu_program_source
from rgpu_fuzz.pipelines.rustc_batch import COMPILE_TIMEOUT, BuiltCase, compile_timeout
from rgpu_fuzz.pipelines.rustc_program import ProgramCase, find_rustc, printed_program_case
from rgpu_fuzz.process import run_bounded

__all__ = ["TARGETS", "RustcAmdgpuPipeline"]

TARGETS = ("gfx942", "gfx90a", "gfx1100")

UNSUPPORTED = frozenset({"shared"})
"""See the module docstring."""

_STAGE = {"crash": "rustc", "error": "rustc-error", "link": "ld.lld"}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class RustcAmdgpuPipeline(Pipeline):
    """The real rustc's amdgcn back end with our minicore, on the AMDGPU simulator."""

    name = "rustc-amdgpu"
    description = "the printed kernel compiled by the real rustc for amdgcn (minicore), simulated"
    TARGET = Choice(name="target", choices=TARGETS, help="GPU (rustc -C target-cpu)")
    OPT = OptLevel(level=2, help="rustc -C opt-level")
    options = (TARGET, OPT)
    features = frozenset(FEATURES) - UNSUPPORTED
    compile_timeout: float = COMPILE_TIMEOUT
    watchdog_grace = 600.0
    """rustc runs under its own bounded-subprocess timeout."""

    @property
    def target(self) -> str:
        return self.option(self.TARGET)

    @property
    def opt_level(self) -> int:
        return self.option(self.OPT)

    def unavailable_reason(self) -> str | None:
        if find_rustc() is None:
            return "rustc not found (put it on PATH or set RGPU_RUSTC)"
        if find_ld_lld() is None:
            return "ld.lld not found (pip install ziglang, or put ld.lld on PATH)"
        return _simulator_missing()

    def _run(self, case: Case) -> Outcome:
        return self._run_many([case])[0]

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        rustc = find_rustc()
        assert rustc is not None, "availability is checked before running"
        outcomes: list[Outcome | None] = [None] * len(cases)
        units: list[ProgramCase] = []
        where: list[int] = []
        for i, case in enumerate(cases):
            unit = printed_program_case(case)
            if isinstance(unit, Rejected):
                outcomes[i] = unit
            else:
                units.append(unit)
                where.append(i)
        with tempfile.TemporaryDirectory(prefix="rgpu-rustc-amdgpu-") as tmp:
            built = compile_units(units, rustc=rustc, target=self.target,
                                  opt_level=self.opt_level, root=Path(tmp),
                                  timeout=self.compile_timeout)
            for i, unit, b in zip(where, units, built, strict=True):
                outcomes[i] = self._outcome(unit, b)
        return [o for o in outcomes if o is not None]

    def _outcome(self, unit: ProgramCase, built: BuiltCase) -> Outcome:
        build = built.build
        artefacts = {"source": _sha(unit.kernel_source), "rust-source": build.source_sha256}
        stats = Stats(seconds={"rustc": built.compile_seconds}, artefacts=artefacts)
        if build.failure == "timeout":
            return Timeout(stage="rustc", seconds=compile_timeout(build.cases,
                                                                  self.compile_timeout),
                           stats=stats)
        if build.failure is not None:
            return CompileCrash(stage=_STAGE[build.failure], signature=build.signature,
                                log=build.log, stats=stats)
        artefacts["code-object"] = build.binary_sha256
        return Unavailable(reason=_simulator_missing() or "no simulator", stats=stats)

    def artefact_text(self, case: Case, kind: str) -> str | None:
        """`reproduce --show ir|asm`: rustc's LLVM IR (`--emit=llvm-ir`) or its assembly
        (`--emit=asm`) of the crate holding this one case."""
        if kind not in ("ir", "asm"):
            return None
        rustc = find_rustc()
        unit = printed_program_case(case)
        if rustc is None or isinstance(unit, Rejected):
            return None
        with tempfile.TemporaryDirectory(prefix="rgpu-rustc-amdgpu-") as tmp:
            src = Path(tmp, "kernels.rs")
            src.write_text(amdgpu_program_source([unit]).source, encoding="utf-8")
            out = Path(tmp, "kernels.out")
            emit = f"{'llvm-ir' if kind == 'ir' else 'asm'}={out}"
            proc = run_bounded(rustc_command(rustc, src, target=self.target,
                                             opt_level=self.opt_level, emit=emit),
                               timeout=self.compile_timeout, cwd=Path(tmp),
                               env=RUSTC_ENV)
            if proc.returncode != 0 or not out.exists():
                return f"; rustc failed ({proc.ended_by})\n{proc.stderr}"
            return out.read_text(encoding="utf-8", errors="replace")


def _simulator_missing() -> str | None:
    """Why the AMDGPU simulator cannot run code objects here, or None."""
    return "the AMDGPU simulator (rgpu_fuzz.sim) cannot execute code objects yet"
