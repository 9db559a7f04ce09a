"""`llvm-cpu`: our lowering → LLVM IR → new-pass-manager optimisation → MCJIT on the host.

Options: `O0`…`O3` (default `O2`), `timeout=SECONDS` (default 60; compile and run together),
`det` (compile twice and compare; with `detsample=N` only one case in N, chosen by its
id), `llc=PATH` (code generation by an external `llc`, whose
object MCJIT then loads), e.g. `llvm-cpu:O3:timeout=30`, `llvm-cpu:O2:llc=/usr/bin/llc-19`.

Everything that touches LLVM runs in a worker process (`execute`), since LLVM aborts on
fatal errors and JIT code can crash or loop; the shared stages (`llvm_stages`: check, lower,
transform, optimise, determinism) report themselves to the parent (`stages`), so a death is a
`CompileCrash` in its stage or a `RunCrash`, and a hang a `Timeout` in the stage it hung in.
What is particular to this pipeline: the host target, MCJIT, and calling the kernel through
ctypes with the host ABI of `rgpu_fuzz.lower.HostTarget`.

The extension point is `LlvmCpuPipeline.transform_ir` (see the class docstring). The worker
rebuilds the pipeline from a `ClassRef`, importing the `--plugin` file first when the class
came from one, so a subclass may live in an installed module or in a plugin file.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.lower import HostTarget
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.kernel_abi import TRAP_RECORD_WORDS, ArgumentValues, decode_trap
from rgpu_fuzz.model.outcome import Buffer, Ok, Outcome, Stats, detail
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.llvm_stages import (
    COMPILE_STAGES,
    LlvmBuild,
    StageClock,
    crash,
    lower_and_optimise,
)
from rgpu_fuzz.pipelines.options import Flag, Int, OptLevel, PathOption
from rgpu_fuzz.pipelines.registry import ClassRef
from rgpu_fuzz.pipelines.stages import describe_failure, outcome_of, report_stage
from rgpu_fuzz.pipelines.toolchain import Llc, LlvmError, Target
from rgpu_fuzz.pipelines.workers import IMPORT_TIMEOUT_S

DEFAULT_TIMEOUT = 60.0
ARTEFACT_KEYS = ("llvm-ir", "llvm-ir-opt", "asm")
"""What `artefacts` returns: lowered (and transformed) IR, optimised IR, host assembly."""


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker needs: the case as canonical TOML, the optimisation level, the
    pipeline class and spec whose `transform_ir` to apply, and the code generator."""

    case_toml: str
    opt_level: int
    pipeline_class: ClassRef
    spec: str
    check_determinism: bool = False
    llc: str | None = None


@dataclass(frozen=True, slots=True)
class ArtefactJob:
    """`compile_texts` up to and including the artefact `upto` (one of `ARTEFACT_KEYS`)."""

    job: Job
    upto: str


class LlvmCpuPipeline(Pipeline):
    """Our LLVM lowering, optimised at `O0`…`O3`, JIT-compiled and run on the host CPU.

    Extension point: subclass it, give the subclass a `name`, and override `transform_ir`
    to rewrite the lowered module's IR text before optimisation and code generation — to
    seed a miscompilation, add a pass of your own, or feed the IR to another tool. Register
    the subclass through the `rgpu_fuzz.pipelines` entry-point group or pass its file with
    `--plugin`. The hook runs in the sandboxed worker, so IR that makes LLVM abort becomes
    a `CompileCrash` and code that hangs a `Timeout`; a subclass may set the class attribute
    `timeout` (seconds) to change the default of the `timeout=` option.
    """

    name = "llvm-cpu"
    description = "our lowering -> LLVM IR -> llvmlite MCJIT on the host (threads as loops)"
    OPT = OptLevel(level=2)
    DET = Flag(name="det", execution=True,
               help="compile twice and compare (DESIGN.md §4: a difference is a finding)")
    LLC = PathOption(name="llc", executable=True,
                     help="code generation by this external llc (MCJIT loads its object)")
    DET_SAMPLE = Int(name="detsample", value=1, min=1, execution=True,
                     help="with det: compile twice 1 case in N, chosen by the case id, so a "
                          "nondeterminism finding still shows on its own case")
    options = (OPT, DET, DET_SAMPLE, LLC)
    timeout: float = DEFAULT_TIMEOUT
    watchdog_grace = IMPORT_TIMEOUT_S + 30.0
    """The worker bounds the job itself (and reports the stage); `run`'s own limit is the
    last resort, past the worker's start-up allowance."""

    @property
    def opt_level(self) -> int:
        return self.option(self.OPT)

    @property
    def check_determinism(self) -> bool:
        return self.option(self.DET)

    def checks_determinism_of(self, case: Case) -> bool:
        """Whether `case` is compiled twice: with `det`, every case, or with `detsample=N`
        the cases whose id (a hash of the case's content) is 0 modulo N."""
        n = self.option(self.DET_SAMPLE)
        return self.check_determinism and (n == 1 or int(case.id, 16) % n == 0)

    @property
    def llc(self) -> str | None:
        return self.option(self.LLC)

    def transform_ir(self, ir_text: str) -> str:
        """Rewrite the lowered IR text before optimisation; the identity here.

        Runs in the worker, once per compilation. The input is the whole module (the
        kernel's entry function `rgpu_kernel_<entry>`, its per-thread function, helpers);
        the output must parse and verify: a hook that raises, returns something else than
        text, or returns IR LLVM rejects is a `CompileCrash(stage="transform")`, and valid
        IR that makes LLVM abort a `CompileCrash` in the stage it aborts in."""
        return ir_text

    def job(self, case: Case) -> Job:
        """The worker's description of compiling and running `case` with this pipeline."""
        return Job(casefile.dumps(case), self.opt_level, ClassRef.of(type(self)),
                   str(self.spec), self.checks_determinism_of(case), self.llc)

    def artefact_text(self, case: Case, kind: str) -> str | None:
        """`reproduce --show ir|asm`: the IR before and after optimisation, or the assembly."""
        texts = artefacts(case, str(self.spec), pipeline=self)
        error = f"; {texts['error']}\n" if "error" in texts else ""
        if kind == "asm":
            return texts.get("asm", "") + error
        if kind == "ir":
            parts = [f"; ---- {key}\n{texts[key]}" for key in ARTEFACT_KEYS[:2] if key in texts]
            return "\n".join(parts) + error
        return None

    def _run(self, case: Case) -> Outcome:
        from rgpu_fuzz.pipelines.workers import call_in_worker

        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:execute", self.job(case),
                                timeout=self.timeout)
        return outcome_of(result, self.label, COMPILE_STAGES, is_plugin=self.is_plugin)


def artefacts(case: Case, spec: str = "llvm-cpu", *,
              pipeline: LlvmCpuPipeline | None = None) -> dict[str, str]:
    """The texts behind a run of `case` on `spec` (or on `pipeline`, a plugin subclass
    included): `llvm-ir` (lowered and transformed), `llvm-ir-opt` and `asm` (host assembly),
    computed in a worker. Where a stage crashes, hangs or the case does not compile, the
    texts before it are returned with `error` saying what happened."""
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker

    p = pipeline if pipeline is not None else LlvmCpuPipeline(PipelineSpec.parse(spec))
    job = p.job(case)
    texts: dict[str, str] = {}
    for upto in reversed(ARTEFACT_KEYS):
        result = call_in_worker("rgpu_fuzz.pipelines.llvm_cpu:compile_texts",
                                ArtefactJob(job, upto), timeout=p.timeout)
        if isinstance(result, Done):
            return {**result.value, **texts}  # type: ignore[dict-item]
        failure = describe_failure(result, p.label)
        assert failure is not None
        texts.setdefault("error", failure)
    return texts




# ---------------------------------------------------------------------- in the worker


def _build(job: Job, case: Case, clock: StageClock, upto: str) -> LlvmBuild | Outcome:
    pipeline = job.pipeline_class.load()(PipelineSpec.parse(job.spec))
    assert isinstance(pipeline, LlvmCpuPipeline), pipeline
    custom = type(pipeline).transform_ir is not LlvmCpuPipeline.transform_ir
    return lower_and_optimise(case, HostTarget(), Target.host(), job.opt_level,
                              transform=pipeline.transform_ir if custom else None,
                              clock=clock, upto=upto,
                              determinism=job.check_determinism and upto == "llvm-ir-opt",
                              llc=None if job.llc is None else Llc(job.llc))


def compile_texts(job: ArtefactJob) -> dict[str, str]:
    """The worker side of `artefacts`."""
    case = casefile.loads(job.job.case_toml)
    got = _build(job.job, case, StageClock(), "llvm-ir" if job.upto == "llvm-ir"
                 else "llvm-ir-opt")
    if not isinstance(got, LlvmBuild):
        return {"error": f"{got.status}: {detail(got)}"}
    texts = {"llvm-ir": got.ir}
    if job.upto == "llvm-ir":
        return texts
    texts["llvm-ir-opt"] = got.ir_opt
    if job.upto == "llvm-ir-opt":
        return texts
    report_stage("codegen")
    llc = None if job.job.llc is None else Llc(job.job.llc)
    try:
        texts["asm"] = toolchain.emit_assembly(got.ir_opt, Target.host(), job.job.opt_level,
                                               llc)
    except LlvmError as e:
        texts["error"] = f"codegen: {e.signature}"
    return texts


def _jit(build: LlvmBuild, level: int, llc: Llc | None) -> tuple[object, int]:
    """An MCJIT engine holding the kernel (compiled by MCJIT itself, or `llc`'s object
    loaded into it) and the kernel's address. The engine must outlive the call."""
    import llvmlite.binding as llvm

    target = Target.host()
    # MCJIT takes ownership of its target machine: a fresh one for every engine
    tm = toolchain.target_machine(target, level, fresh=True)
    if llc is None:
        engine = llvm.create_mcjit_compiler(toolchain.parse(build.ir_opt), tm)
    else:
        obj = toolchain.emit_object(build.ir_opt, target, level, llc)
        engine = llvm.create_mcjit_compiler(toolchain.parse(""), tm)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine, engine.get_function_address(build.lowered.symbol)


def execute(job: Job) -> Outcome:
    """Compile and run one case in this process (the worker's job function)."""
    clock = StageClock()
    case = casefile.loads(job.case_toml)
    got = _build(job, case, clock, "llvm-ir-opt")
    if not isinstance(got, LlvmBuild):
        return got
    lowered = got.lowered
    llc = None if job.llc is None else Llc(job.llc)
    try:
        engine, address = clock.run("codegen", lambda: _jit(got, job.opt_level, llc))
    except LlvmError as e:
        return crash("codegen", e)
    values = ArgumentValues.of(case, lowered.params)
    trap = np.zeros(TRAP_RECORD_WORDS, dtype=np.int32)

    def run() -> None:
        words = values.words(lambda name: values.buffers[name].ctypes.data)
        slots = np.array(words or [0], dtype=np.uint64)
        launch = np.array(case.launch.dims, dtype=np.int32)
        shared = np.zeros(lowered.shared_bytes, dtype=np.uint64)  # 8-byte aligned
        frames = np.zeros(max(1, lowered.frame_bytes * case.launch.threads_per_block // 8 + 1),
                          dtype=np.uint64)
        kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 5)(address)
        kernel(slots.ctypes.data, launch.ctypes.data, shared.ctypes.data, frames.ctypes.data,
               trap.ctypes.data)

    clock.run("run", run)
    del engine
    stats = Stats(seconds=clock.seconds, artefacts=clock.artefacts)
    trapped = decode_trap(trap.tolist(), lowered.locations, stats)
    if trapped is not None:
        return trapped
    outputs = {name: Buffer(elem, arr) for name, (elem, arr) in values.outputs().items()}
    return Ok(outputs=outputs, stats=stats)


__all__ = ["ARTEFACT_KEYS", "ArtefactJob", "Job", "LlvmCpuPipeline", "artefacts",
           "compile_texts", "execute"]
