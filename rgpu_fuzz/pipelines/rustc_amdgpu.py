"""`rustc-amdgpu`: the printed kernel compiled by the real rustc for `amdgcn-amd-amdhsa`
with this project's minimal core, linked into a code object, and executed.

Spec: `rustc-amdgpu[:gfx942|gfx950|gfx90a|gfx1100|gfx1200][:O0..O3]` (default `gfx942:O2`).

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

Features: all. rustc 1.95 cannot put a static in the workgroup address space (3) (a
`static mut` would land in global memory, shared by every block); `#[shared]` arrays live in
the launch's dynamically allocated group segment instead, reached through the shared aperture
(`rustc_amdgpu_program`, "Shared arrays"), and the launch allocates their bytes as HIP's
`sharedMemBytes` does.

`#[inline(never)]` does not keep a call here: rustc 1.95 deliberately emits no `noinline`
for amdgpu targets (rustc_codegen_llvm `attributes.rs`), so helpers are inlined as LLVM
decides. The minicore's cold panic entry points are real calls.
"""

from __future__ import annotations

import hashlib
import re
import struct
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rgpu_fuzz.codeobj import KernelMetadata, find_ld_lld, read_code_object
from rgpu_fuzz.lang.features import FEATURES, case_features
from rgpu_fuzz.model.case import BufferArg, Case
from rgpu_fuzz.model.inputs import materialise
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Location,
    Ok,
    Outcome,
    Rejected,
    RunCrash,
    Stats,
    Timeout,
    Trap,
    Unsupported,
)
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import Pipeline
from rgpu_fuzz.pipelines.options import Choice, Flag, Int, OptLevel
from rgpu_fuzz.pipelines.rustc_amdgpu_build import (
    RUSTC_ENV,
    TRAP_BUFFER,
    KernargPlan,
    compile_units,
    kernarg_plan,
    rustc_command,
)
from rgpu_fuzz.pipelines.rustc_amdgpu_program import (
    TRAP_KINDS,
    TRAP_RECORD_WORDS,
    amdgpu_program_source,
    entry_symbol,
    shared_layout,
)
from rgpu_fuzz.pipelines.rustc_batch import COMPILE_TIMEOUT, BuiltCase, compile_timeout
from rgpu_fuzz.pipelines.rustc_program import (
    Program,
    ProgramCase,
    find_rustc,
    printed_program_case,
)
from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.targets import PIPELINE_TARGETS

__all__ = ["TARGETS", "RustcAmdgpuPipeline", "execute", "kernel_ir"]

TARGETS = PIPELINE_TARGETS

DEFAULT_STEPS = 20_000_000
"""amdgpu-sim's default budget, so both simulate the same amount."""

UNSUPPORTED: frozenset[str] = frozenset()
"""Language features this pipeline answers `Unsupported` for (see the module docstring)."""

_STAGE = {"crash": "rustc", "error": "rustc-error", "link": "ld.lld"}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class RustcAmdgpuPipeline(Pipeline):
    """The real rustc's amdgcn back end with our minicore, on the AMDGPU simulator."""

    name = "rustc-amdgpu"
    description = "the printed kernel compiled by the real rustc for amdgcn (minicore), simulated"
    TARGET = Choice(name="target", choices=TARGETS, help="GPU (rustc -C target-cpu)")
    OPT = OptLevel(level=2, help="rustc -C opt-level")
    STEPS = Int(name="steps", value=DEFAULT_STEPS, min=1,
                help="wave-instruction budget of one launch (past it: Timeout)")
    WAVE64 = Flag(name="wave64", help="build for wave64 (-C target-feature=+wavefrontsize64; "
                                      "a gfx1100 runs wave32 by default)")
    options = (TARGET, OPT, WAVE64, STEPS)

    @property
    def wave_size(self) -> int:
        return 64 if self.option(self.WAVE64) else super().wave_size
    features = frozenset(FEATURES) - UNSUPPORTED
    compile_timeout: float = COMPILE_TIMEOUT
    batch_cases: int = 8
    """Cases per crate. rustc's fixed cost (~1 s) favours large crates; the simulator
    decodes and binds the code object's whole `.text` for every kernel it launches, which
    grows with the crate (rustc's O0 code is ~5,000 instructions per conformance kernel)."""
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
            # run_many's callers may leave the feature check to the pipeline: a shared array
            # compiled as a global static would give wrong answers, never Unsupported.
            if missing := case_features(case) & UNSUPPORTED:
                outcomes[i] = Unsupported(features=tuple(sorted(missing)))
                continue
            unit = printed_program_case(case)
            if isinstance(unit, Rejected):
                outcomes[i] = unit
            else:
                units.append(unit)
                where.append(i)
        for start in range(0, len(units), self.batch_cases):
            chunk = units[start:start + self.batch_cases]
            with tempfile.TemporaryDirectory(prefix="rgpu-rustc-amdgpu-") as tmp:
                built = compile_units(chunk, rustc=rustc, target=self.target,
                                      opt_level=self.opt_level, root=Path(tmp),
                                      timeout=self.compile_timeout,
                                      wave64=self.option(self.WAVE64))
                for i, unit, b in zip(where[start:], chunk, built, strict=False):
                    outcomes[i] = self._outcome(unit, b)
        return [o for o in outcomes if o is not None]

    def _outcome(self, unit: ProgramCase, built: BuiltCase) -> Outcome:
        build = built.build
        artefacts = {"source": _sha(unit.kernel_source), "rust-source": build.source_sha256}
        seconds = {"rustc": built.compile_seconds}
        if build.failure == "timeout":
            return Timeout(stage="rustc", seconds=compile_timeout(build.cases,
                                                                  self.compile_timeout),
                           stats=Stats(seconds=seconds, artefacts=artefacts))
        if build.failure is not None:
            return CompileCrash(stage=_STAGE[build.failure], signature=build.signature,
                                log=build.log, stats=Stats(seconds=seconds,
                                                           artefacts=artefacts))
        assert build.binary is not None
        artefacts["code-object"] = build.binary_sha256
        code_object = build.binary.read_bytes()
        symbol = entry_symbol(built.index)
        meta = _metadata(build.binary_sha256, code_object, symbol)
        plan = kernarg_plan(unit, meta)
        if isinstance(plan, str):
            return CompileCrash(stage="kernarg-mismatch", signature=f"kernarg-mismatch: "
                                f"{plan}", stats=Stats(seconds=seconds, artefacts=artefacts))
        return execute(self.target, code_object, symbol, unit, plan, build.program,
                       built.index, Stats(seconds=seconds, artefacts=artefacts),
                       steps=self.option(self.STEPS))

    def report_section(self, case: Case, outcomes: Mapping[str, Outcome], verdict: Any,
                       pipelines: Sequence[Pipeline]) -> str | None:
        """For `rgpu-fuzz report`: where to look when this pipeline is in a finding, with
        rustc's LLVM IR of the case next to ours (an `amdgpu-sim` pipeline's, when one ran).
        `verdict` is the oracle's `Verdict` (the oracles sit above this layer)."""
        findings = [f for f in verdict.findings if self.label in f.pipelines]
        if not findings:
            return None
        alone = all(f.pipelines == (self.label,) or f.pipelines[-1:] == (self.label,)
                    for f in findings)
        others_ok = {label: type(o).__name__ for label, o in outcomes.items()
                     if label != self.label}
        lines = [f"## Where to look ({self.label})", ""]
        if any(f.kind == "compile-crash" for f in findings):
            lines += ["rustc (or LLVM inside rustc) failed on the crate of this case. An "
                      "`error` that names the minicore's items is ours "
                      "(`rgpu_fuzz/pipelines/rustc_amdgpu_core/`); an internal compiler "
                      "error or `LLVM ERROR` is rustc's or LLVM's: file it upstream with the "
                      "crate (`--show ir` of a passing level, or the `kernels.rs` the "
                      "pipeline writes).", ""]
        elif alone:
            lines += ["Only `rustc-amdgpu` disagrees. The same printed kernel through the real "
                      "`core` on the host (`rustc-cpu`) and through our own amdgcn lowering "
                      "(`amdgpu-sim`) are the controls: "
                      + ", ".join(f"`{k}`: {v}" for k, v in others_ok.items()) + ".",
                      "",
                      "1. The minicore: `tests/unit/test_rustc_amdgpu_minicore.py` checks it "
                      "against the real core on the host; a method the kernel calls that the "
                      "test does not cover is the first suspect.",
                      "2. rustc's amdgcn lowering: compare rustc's IR below with ours for the "
                      "operation the reduced kernel keeps (address spaces, `extern "
                      "\"gpu-kernel\"` argument handling, intrinsics).",
                      "3. LLVM's AMDGPU back end on rustc's IR: if the IR below is right, "
                      "compile it with `llc -mtriple=amdgcn-amd-amdhsa -mcpu=" + self.target
                      + f" -O{self.opt_level}` and read the assembly (`--show asm`).", ""]
        else:
            return None
        ours = next((p for p in pipelines if p.spec.name == "amdgpu-sim"), None)
        rustc_ir = self.artefact_text(case, "ir")
        if rustc_ir:
            lines += ["<details><summary>rustc's LLVM IR of the kernel "
                      "(`--emit=llvm-ir`)</summary>", "", "```llvm",
                      kernel_ir(rustc_ir), "```", "", "</details>", ""]
        getter = getattr(ours, "artefact_text", None) if ours is not None else None
        our_ir = getter(case, "ir") if callable(getter) else None
        if our_ir:
            lines += [f"<details><summary>our LLVM IR ({ours.label if ours else ''})"
                      "</summary>", "", "```llvm", our_ir.rstrip(), "```", "", "</details>",
                      ""]
        return "\n".join(lines)

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
            emit = f"{'llvm-ir' if kind == 'ir' else 'asm'}={out.name}"
            proc = run_bounded(rustc_command(rustc, src, target=self.target,
                                             opt_level=self.opt_level, emit=emit,
                                             wave64=self.option(self.WAVE64)),
                               timeout=self.compile_timeout, cwd=Path(tmp),
                               env=RUSTC_ENV)
            if proc.returncode != 0 or not out.exists():
                return f"; rustc failed ({proc.ended_by})\n{proc.stderr}"
            return out.read_text(encoding="utf-8", errors="replace")


def kernel_ir(module_ir: str) -> str:
    """The function definitions of rustc's IR that belong to the kernel of case 0 of a
    one-case crate (its entry point and the functions of its module), the attributes they
    use left out: the minicore's own functions would bury the kernel."""
    blocks = re.findall(r"^(?:; [^\n]*\n)*define [^\n]*\{\n.*?^\}$", module_ir,
                        re.MULTILINE | re.DOTALL)
    mine = [b for b in blocks if "@rgpu_case_0" in b.split("{", 1)[0] or "case_0_" in
            b.split("{", 1)[0]]
    return "\n\n".join(mine or blocks)


@cache
def _metadata(digest: str, code_object: bytes, symbol: str) -> KernelMetadata:
    del digest  # the cache key: code objects are large
    return read_code_object(code_object).kernel(symbol).metadata


def _simulator_missing() -> str | None:
    """Why the AMDGPU simulator cannot run code objects here, or None."""
    try:
        from rgpu_fuzz.sim import simulate  # noqa: F401
    except ImportError:
        return "the AMDGPU simulator (rgpu_fuzz.sim) is not available"
    return None


def execute(target: str, code_object: bytes, symbol: str, unit: ProgramCase, plan: KernargPlan,
            program: Program, index: int, stats: Stats, *,
            steps: int = DEFAULT_STEPS) -> Outcome:
    """Run kernel `symbol` of `code_object` on the simulator with `unit`'s arguments and read
    back the outputs or the trap record."""
    from rgpu_fuzz.sim import Arg, FaultKind, Status, decode_text, simulate

    buffers: dict[str, bytes] = {TRAP_BUFFER: bytes(4 * TRAP_RECORD_WORDS)}
    lengths: dict[str, int] = {}
    for p, a in zip(unit.params, unit.args, strict=True):
        if isinstance(a, BufferArg):
            values = materialise(a)
            buffers[p.name] = (values.astype(np.uint8) if p.ty is Scalar.BOOL
                               else values.astype(values.dtype.newbyteorder("<"))).tobytes()
            lengths[p.name] = a.len
    args = [Arg(buffer=v) if isinstance(v, str) else Arg(data=v) for v in plan.values(lengths)]
    launch = unit.case.launch
    result = simulate(code_object, symbol, launch.grid, launch.block, args, buffers,
                      decode=decode_text, target=target, step_limit=steps,
                      dynamic_lds=shared_layout(unit).size)
    seconds = {**stats.seconds, **{f"sim-{k}": v for k, v in result.seconds.items()}}
    stats = Stats(seconds=seconds, artefacts=stats.artefacts)
    if result.status is Status.FAULT:
        fault = result.fault
        assert fault is not None
        if fault.kind is FaultKind.UNSUPPORTED:
            return Unsupported(features=(fault.signature,), stats=stats)
        if fault.kind is FaultKind.STEP_LIMIT:
            return Timeout(stage="simulate", seconds=sum(result.seconds.values()), stats=stats)
        return RunCrash(signal=fault.signature, log=fault.detail, stats=stats)
    if result.status is Status.TRAP:
        return _trap_outcome(result.buffers[TRAP_BUFFER], program, index, stats)
    outputs: dict[str, Buffer] = {}
    for p in unit.params:
        if p.kind in ("mut-slice", "atomic-slice"):
            raw = result.buffers[p.name]
            dtype = np.uint8 if p.ty is Scalar.BOOL else p.ty.dtype.newbyteorder("<")
            values = np.frombuffer(raw, dtype=dtype)
            outputs[p.name] = Buffer(p.ty, values.astype(bool) if p.ty is Scalar.BOOL
                                     else values.astype(p.ty.dtype))
    return Ok(outputs=outputs, stats=stats)


def _trap_outcome(record: bytes, program: Program, index: int, stats: Stats) -> Outcome:
    words = struct.unpack(f"<{TRAP_RECORD_WORDS}I", record[:4 * TRAP_RECORD_WORDS])
    code, line = words[0], words[1]
    if code == 0:
        return RunCrash(signal="s_trap without a trap record", stats=stats,
                        log="the wave trapped but no panic entry point of the minicore ran "
                            "(a trap LLVM inserted, e.g. for unreachable code)")
    kind = TRAP_KINDS.get(code)
    if kind is None:
        return RunCrash(signal="panic", stats=stats, log=f"trap record {list(words)}")
    first, end = program.kernel_lines[index]
    where = None
    if first <= line < end:
        where = Location(line=line - first + 1, col=0, block=(words[2], words[3], words[4]),
                         thread=(words[5], words[6], words[7]))
    return Trap(kind=kind, where=where, stats=stats)
