"""`amdgpu-sim`: our lowering → amdgcn LLVM IR → object for a target of the table → ld.lld →
code object → the ISA simulator (`rgpu_fuzz.sim`), loaded as the ROCm loader would.

Spec: `amdgpu-sim[:gfx942|gfx950|gfx90a|gfx1100|gfx1200][:O0..O3][:isel=dag|global]
[:scope=SCOPE][:atomic-opt=default|dpp|iterative|none][:flat][:interleave=SEED][:llc=PATH]
[:steps=N][:timeout=S][:det]`, e.g.
`amdgpu-sim:gfx942:O3`; `isel=global` generates the code with GlobalISel instead of
SelectionDAG (`toolchain.Isel`), a third opinion on a finding. `scope=`, `atomic-opt=` and
`flat` say how atomics are compiled (`toolchain.AtomicConfig`: the sync scope the lowering
writes, LLVM's atomic optimizer strategy, generic pointers); they change nothing else.
`interleave=SEED` (SEED > 0) has the simulator switch waves after every memory instruction
in an order drawn from SEED (`rgpu_fuzz.sim.launch.engine`), so a read-modify-write that is
not atomic loses updates; 0, the default, runs each wave to its next barrier.
Everything runs in a worker (LLVM may abort): the stages are `check`, `lower`, `transform`,
`optimise`, `codegen`, `link`, `code-object-hook`, `memory-model` (kernels with atomics:
the code-sequence check, `rgpu_fuzz.memmodel`), then `simulate`.

Two extension points: `transform_ir` (IR text, as `llvm-cpu`) and `transform_code_object`
(the linked code object's bytes in, bytes out) — to seed a back-end or linker bug, or run a
team's own post-link tool. A hook that raises or returns something unusable is a
`CompileCrash` in its stage; bytes the simulator cannot load or execute correctly are the
hook's finding like any other.

What the simulator reports besides outputs becomes an outcome:
* `s_trap` (our trap record written first) → `Trap`, as every executor decodes it;
* `sim-oob-access`, `sim-uninit-read`, `sim-waitcnt-hazard`, `sim-wave64-sgpr-overlap`,
  `sim-internal-error` →
  `RunCrash(signal=<kind>)` with the instruction and address in the log (the oracle's
  signature is `run-crash|<label>|<kind>`);
* an instruction the simulator does not implement → `Unsupported(
  "unsupported-instruction:<mnemonic>")`, compared with nobody and counted;
* a launch past `steps=` wave-instructions → `Timeout(stage="simulate")`.

Set `RGPU_SIM_STATS=FILE` to have every simulated launch append one JSON line (wave
instructions, opcodes executed, seconds per stage) — how campaign coverage is measured.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.codeobj.kernarg import KernargSegment
from rgpu_fuzz.codeobj.launch import LaunchPlan, LoadedKernel, load_code_object
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.kernel_abi import (
    TRAP_PARAM,
    TRAP_RECORD_WORDS,
    ArgumentValues,
    decode_trap,
)
from rgpu_fuzz.model.outcome import (
    Buffer,
    CompileCrash,
    Ok,
    Outcome,
    RunCrash,
    Stats,
    Timeout,
    Unsupported,
    detail,
)
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.llvm_stages import COMPILE_STAGES, case_of
from rgpu_fuzz.pipelines.options import (
    Choice,
    Flag,
    Int,
    KeyChoice,
    OptLevel,
    PathOption,
    PipelineError,
)
from rgpu_fuzz.pipelines.registry import ClassRef
from rgpu_fuzz.pipelines.stages import describe_failure, outcome_of, report_stage
from rgpu_fuzz.pipelines.toolchain import (
    ATOMIC_OPTIMIZERS,
    ATOMIC_SCOPES,
    DEFAULT_ATOMICS,
    AtomicConfig,
    Isel,
    Target,
)
from rgpu_fuzz.pipelines.workers import IMPORT_TIMEOUT_S
from rgpu_fuzz.targets import PIPELINE_TARGETS, by_name

TARGETS = PIPELINE_TARGETS
STAGES = (*COMPILE_STAGES, "link", "code-object-hook", "memory-model", "codeobj", "kernarg")
DEFAULT_TIMEOUT = 120.0
DEFAULT_STEPS = 20_000_000
STATS_ENV = "RGPU_SIM_STATS"


@dataclass(frozen=True, slots=True)
class Job:
    case_toml: str
    target: str
    opt_level: int
    pipeline_class: ClassRef
    spec: str
    llc: str | None = None
    steps: int = DEFAULT_STEPS
    check_determinism: bool = False
    trace: bool = False
    texts: bool = False
    isel: Isel = Isel.DAG
    waveops: WaveOps = WaveOps.INTRINSIC
    wave64: bool = False
    interleave: int = 0


def sim_target(cpu: str, isel: Isel, atomics: AtomicConfig = DEFAULT_ATOMICS,
               wave64: bool = False) -> Target:
    """The toolchain target of `amdgpu-sim` for processor `cpu` with selector `isel`, the
    atomics settings `atomics` and (`wave64`) built for wave64 (`+wavefrontsize64`)."""
    from dataclasses import replace

    from rgpu_fuzz.pipelines.gpu_build import gpu_target

    return replace(gpu_target(cpu, wave64=wave64), isel=isel, atomics=atomics)


class AmdgpuSimPipeline(Pipeline):
    """Our lowering compiled for an AMD GPU and executed by the ISA simulator.

    Extension points: override `transform_ir` (IR text before optimisation) or
    `transform_code_object` (the linked code object's bytes before loading) in a subclass
    with its own `name`; register it through the `rgpu_fuzz.pipelines` entry points or pass
    its file with `--plugin`. Both hooks run in the sandboxed worker."""

    name = "amdgpu-sim"
    description = ("our lowering -> amdgcn IR -> LLVM object -> ld.lld -> code object -> "
                   "ISA simulator")
    TARGET = Choice(name="target", choices=TARGETS, help="GPU to compile for and simulate")
    OPT = OptLevel(level=2)
    LLC = PathOption(name="llc", executable=True,
                     help="code generation by this external llc instead of llvmlite")
    STEPS = Int(name="steps", value=DEFAULT_STEPS, min=1,
                help="wave-instruction budget of one launch")
    DET = Flag(name="det", execution=True,
               help="compile twice and compare (docs/design.md §3: a difference is a finding)")
    ISEL = KeyChoice(name="isel", choices=tuple(Isel),
                     help="instruction selector: SelectionDAG or GlobalISel (aborts where it "
                          "cannot select: a CompileCrash, no fallback)")
    SCOPE = KeyChoice(name="scope", choices=ATOMIC_SCOPES,
                      help="LLVM sync scope of every atomic (AMDGPUUsage \"Memory Scopes\")")
    ATOMIC_OPT = KeyChoice(name="atomic-opt", choices=ATOMIC_OPTIMIZERS,
                           help="AMDGPU atomic optimizer strategy "
                                "(-amdgpu-atomic-optimizer-strategy)")
    FLAT = Flag(name="flat", help="atomics through generic (flat) pointers")
    WAVEOPS = KeyChoice(name="waveops", choices=tuple(WaveOps),
                        help="wave reductions and scans: LLVM's intrinsics or a DPP ladder "
                             "(rgpu_fuzz.lower.amdgcn_waves)")
    WAVE64 = Flag(name="wave64", help="build for wave64 (+wavefrontsize64; a gfx1100 runs "
                                      "wave32 by default)")
    INTERLEAVE = Int(name="interleave", value=0, min=0,
                     help="switch waves after every memory instruction, in an order drawn "
                          "from this seed (0: each wave runs to its next barrier)")
    options = (TARGET, OPT, ISEL, SCOPE, ATOMIC_OPT, FLAT, WAVEOPS, WAVE64, INTERLEAVE, LLC,
               STEPS, DET)

    def __init__(self, spec: PipelineSpec | str) -> None:
        super().__init__(spec)
        row = by_name(self.option(self.TARGET))
        if self.option(self.WAVE64) and (row is None or 64 not in row.wave_sizes):
            raise PipelineError(f"{self.spec}: wave64: {self.option(self.TARGET)} has no "
                                "wave64 mode")

    @property
    def wave_size(self) -> int:
        """The wave size the code runs with: 64 with `wave64`, else the target's default."""
        row = by_name(self.option(self.TARGET))
        assert row is not None
        return 64 if self.option(self.WAVE64) else row.wave_size
    timeout: float = DEFAULT_TIMEOUT

    def atomic_config(self) -> AtomicConfig:
        """The atomics settings of this spec (what the worker compiles with)."""
        return AtomicConfig(scope=self.option(self.SCOPE), flat=bool(self.option(self.FLAT)),
                            optimizer=self.option(self.ATOMIC_OPT))
    watchdog_grace = IMPORT_TIMEOUT_S + 30.0
    """The worker bounds each job itself, after its start-up (importing llvmlite takes
    seconds under load) and with reruns after a batch failure: the watchdog of a plugin
    subclass must not cut that short with its own `Timeout(stage="run")` for every case."""

    def transform_ir(self, ir_text: str) -> str:
        """Rewrite the lowered IR before optimisation; the identity here (see `llvm-cpu`)."""
        return ir_text

    def transform_code_object(self, code_object: bytes) -> bytes:
        """Rewrite the linked code object before it is loaded; the identity here. Runs in
        the worker once per compilation; must return bytes."""
        return code_object

    def job(self, case: Case, *, trace: bool = False, texts: bool = False) -> Job:
        return Job(casefile.dumps(case), self.option(self.TARGET), self.option(self.OPT),
                   ClassRef.of(type(self)), str(self.spec), self.option(self.LLC),
                   self.option(self.STEPS), self.option(self.DET), trace, texts,
                   Isel(self.option(self.ISEL)), WaveOps(self.option(self.WAVEOPS)),
                   self.option(self.WAVE64), self.option(self.INTERLEAVE))

    def _run(self, case: Case) -> Outcome:
        from rgpu_fuzz.pipelines.workers import call_in_worker

        result = call_in_worker("rgpu_fuzz.pipelines.amdgpu_sim:execute", self.job(case),
                                timeout=self.timeout)
        return outcome_of(result, self.label, STAGES, is_plugin=self.is_plugin)

    MAX_BATCH = 32
    """Cases per batch job (a campaign chunk is 8)."""
    hook_sees_batches: bool = False
    """Whether `transform_code_object` may be given a batch's code object (the kernels of
    many cases in one). A hook written for one case's code object ("the first `s_waitcnt`
    of `.text`") would rewrite one case of a batch, so by default a subclass with its own
    hook runs each case alone; a hook that treats every kernel alike may set this."""

    @property
    def batches(self) -> bool:
        """Whether `run_many` compiles cases together (`amdgpu_sim_batch`): not with `det`,
        a code-object hook that does not take batches, or a subclass's own `_run` or `job`
        (a batch would bypass them)."""
        cls = type(self)
        own_hook = cls.transform_code_object is not AmdgpuSimPipeline.transform_code_object
        return not (self.option(self.DET) or (own_hook and not cls.hook_sees_batches)
                    or cls._run is not AmdgpuSimPipeline._run
                    or cls.job is not AmdgpuSimPipeline.job)

    def batch_job(self, cases: Sequence[Case]) -> Any:
        from rgpu_fuzz.pipelines.amdgpu_sim_batch import BatchJob

        return BatchJob(tuple(casefile.dumps(c) for c in cases), self.option(self.TARGET),
                        self.option(self.OPT), ClassRef.of(type(self)), str(self.spec),
                        self.option(self.LLC), self.option(self.STEPS), self.timeout,
                        Isel(self.option(self.ISEL)), WaveOps(self.option(self.WAVEOPS)),
                        self.option(self.WAVE64), self.option(self.INTERLEAVE))

    def _run_many(self, cases: Sequence[Case]) -> list[Outcome]:
        """A chunk's cases compiled into one code object and launched from it
        (`amdgpu_sim_batch`). Nothing of one case is lost to another: a case whose own
        stage kills the worker runs alone (`_run`) for its own outcome, a launch that
        overstays its timeout is its own `Timeout`, and after a failure of the batch as a
        whole (no case to blame) every case runs alone. A batch's finding is checked alone
        by the campaign (`campaigns.jobs`)."""
        if not self.batches:
            return [self._run(c) for c in cases]
        from rgpu_fuzz.pipelines.batching import run_in_batches

        return run_in_batches(
            self, cases, entry="rgpu_fuzz.pipelines.amdgpu_sim_batch:execute_batch",
            hang_stage="simulate", max_batch=self.MAX_BATCH)

    def trace_text(self, case: Case) -> str:
        """`run --trace`: the instruction trace of the first wave (pc, instruction, EXEC,
        registers changed)."""
        return self._texts(case, trace=True).get("trace", "")

    def artefact_text(self, case: Case, kind: str) -> str | None:
        """`reproduce --show asm|ir`: the linked code object disassembled by the simulator's
        decoder (what it executes), or the IR before and after optimisation."""
        texts = self._texts(case, trace=False)
        error = f"; {texts['error']}\n" if "error" in texts else ""
        if kind == "asm":
            return texts.get("asm", "") + error
        if kind == "ir":
            return "\n".join(f"; ---- {k}\n{texts[k]}" for k in ("llvm-ir", "llvm-ir-opt")
                             if k in texts) + error
        return None

    def _texts(self, case: Case, *, trace: bool) -> dict[str, str]:
        from rgpu_fuzz.pipelines.workers import Done, call_in_worker

        result = call_in_worker("rgpu_fuzz.pipelines.amdgpu_sim:texts",
                                self.job(case, trace=trace, texts=True), timeout=self.timeout)
        if isinstance(result, Done):
            return result.value  # type: ignore[no-any-return]
        return {"error": describe_failure(result, self.label) or "failed"}


# ---------------------------------------------------------------------- in the worker


def _hooked(pipeline: AmdgpuSimPipeline, code_object: bytes) -> bytes | CompileCrash:
    import traceback

    try:
        out = pipeline.transform_code_object(code_object)
    except Exception as e:
        return CompileCrash(stage="code-object-hook", signature=(
            f"transform_code_object raised {type(e).__name__}: {e}").splitlines()[0][:200],
            log=traceback.format_exc())
    if not isinstance(out, bytes | bytearray):
        return CompileCrash(stage="code-object-hook", signature=(
            f"transform_code_object returned {type(out).__name__}, not bytes"))
    return bytes(out)


@dataclass(frozen=True, slots=True)
class _Built:
    build: Any
    code_object: bytes
    seconds: dict[str, float]
    artefacts: dict[str, str]


def _compile(job: Job) -> _Built | Outcome:
    from rgpu_fuzz.codeobj.link import LinkFailure, link
    from rgpu_fuzz.pipelines import toolchain
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu
    from rgpu_fuzz.pipelines.toolchain import Llc

    pipeline = job.pipeline_class.load()(_spec(job.spec))
    assert isinstance(pipeline, AmdgpuSimPipeline), pipeline
    custom_ir = type(pipeline).transform_ir is not AmdgpuSimPipeline.transform_ir
    case = casefile.loads(job.case_toml)
    got = build_gpu(case, sim_target(job.target, job.isel, pipeline.atomic_config(),
                                     job.wave64), job.opt_level,
                    llc=None if job.llc is None else Llc(job.llc),
                    transform=pipeline.transform_ir if custom_ir else None,
                    determinism=job.check_determinism, assembly=job.texts,
                    waveops=job.waveops)
    if not isinstance(got, GpuBuild):
        return got
    seconds = dict(got.stats.seconds)
    artefacts = dict(got.stats.artefacts)
    report_stage("link")
    t = time.perf_counter()
    linked = link(got.object)
    seconds["link"] = time.perf_counter() - t
    if isinstance(linked, LinkFailure):
        return CompileCrash(stage="link", signature=linked.first_line, log=linked.log)
    if type(pipeline).transform_code_object is not AmdgpuSimPipeline.transform_code_object:
        report_stage("code-object-hook")
        hooked = _hooked(pipeline, linked)
        if isinstance(hooked, CompileCrash):
            return hooked
        linked = hooked
    from rgpu_fuzz.memmodel import STAGE, compile_crash  # docs/design.md "memory-model-sequence"
    report_stage(STAGE)
    t = time.perf_counter()
    wrong = compile_crash(linked, got.ir_opt or got.ir, job.target)
    seconds[STAGE] = time.perf_counter() - t  # decodes `.text`: the launch's decode hits its memo
    if wrong is not None:
        return wrong
    artefacts["code-object"] = toolchain.sha256(linked)  # type: ignore[arg-type]
    return _Built(got, linked, seconds, artefacts)


def _spec(text: str) -> Any:
    from rgpu_fuzz.pipelines.base import PipelineSpec

    return PipelineSpec.parse(text)


@dataclass(frozen=True, slots=True)
class SimKernargs:
    """The simulator's `KernargBuilder` for a case: the code-object launch path
    (`codeobj.launch.LaunchPlan.kernargs`, as `hip` packs), with the trap record's buffer."""

    plan: LaunchPlan

    def __call__(self, address_of: Callable[[str], int]) -> KernargSegment | CompileCrash:
        return self.plan.kernargs(address_of, address_of(TRAP_PARAM))


@dataclass(frozen=True, slots=True)
class Launch:
    """Everything `rgpu_fuzz.sim.simulate` takes for one case (`bench sim` replays it)."""

    code_object: bytes
    kernel: str
    target: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: SimKernargs
    buffers: dict[str, bytes]


def _launch(job: Job, built: _Built, loaded: LoadedKernel | CompileCrash | None = None,
            tag: str = "") -> tuple[Launch, ArgumentValues, LoadedKernel] | CompileCrash:
    """The case's launch through the code-object path: read and verify the linked code
    object (`codeobj-invalid:<rule>`), pack the kernarg segment once with placeholder
    addresses (`kernarg-mismatch`), as `hip` does before its runtime calls. `loaded` is the
    kernel when the caller read the code object already (a batch reads it once); `tag` goes
    before the stages reported (`3:simulate`: case 3 of a batch). Also returns the loaded
    kernel, whose read code object the simulator takes instead of reading it again."""
    case = case_of(job.case_toml)
    build = built.build
    report_stage(tag + "codeobj")
    if loaded is None:
        loaded = load_code_object(built.code_object, build.kernel)
    if isinstance(loaded, CompileCrash):
        return loaded
    plan = LaunchPlan.of(case, build.params, loaded)
    report_stage(tag + "kernarg")
    probe = plan.kernargs(lambda _name: 0, 0)
    if isinstance(probe, CompileCrash):
        return probe
    buffers = {name: arr.tobytes() for name, arr in plan.values.buffers.items()}
    buffers[TRAP_PARAM] = bytes(4 * TRAP_RECORD_WORDS)
    return Launch(built.code_object, build.kernel, job.target, case.launch.grid,
                  case.launch.block, SimKernargs(plan), buffers), plan.values, loaded


def prepare_launch(job: Job) -> Launch | None:
    """The worker side of `bench sim`: the case compiled and its launch, or None when it
    does not compile."""
    built = _compile(job)
    if not isinstance(built, _Built):
        return None
    got = _launch(job, built)
    return None if isinstance(got, CompileCrash) else got[0]


_REFUSED = {"kernarg-mismatch": "kernarg", "sim-load-failure": "load"}
"""Simulator faults that are the loader refusing the launch, as `hip` reports them."""


def _simulate(job: Job, built: _Built, *, trace: bool = False,
              loaded: LoadedKernel | CompileCrash | None = None,
              tag: str = "") -> tuple[Outcome, Any]:
    from rgpu_fuzz.sim import FaultKind, Status, decode_text, simulate

    build = built.build
    got = _launch(job, built, loaded, tag)
    if isinstance(got, CompileCrash):
        return got, None
    launch, values, loaded = got
    report_stage(tag + "simulate")
    cpu0 = time.process_time()
    res = simulate(launch.code_object, launch.kernel, launch.grid, launch.block,
                   launch.args, launch.buffers, decode=decode_text, target=job.target,
                   step_limit=job.steps, trace_wave=0 if trace else None,
                   read=loaded.code_object, interleave=job.interleave)
    cpu = time.process_time() - cpu0
    seconds = {**built.seconds, **{f"sim-{k}": v for k, v in res.seconds.items()}}
    stats = Stats(seconds=seconds, artefacts=built.artefacts)
    _record(job, res, cpu)
    if res.status is Status.FAULT:
        f = res.fault
        assert f is not None
        if f.kind is FaultKind.UNSUPPORTED:
            return Unsupported(features=(f.signature,), stats=stats), res
        if f.kind is FaultKind.STEP_LIMIT:
            return Timeout(stage="simulate", seconds=sum(res.seconds.values()),
                           stats=stats), res
        if f.signature in _REFUSED:
            return CompileCrash(stage=_REFUSED[f.signature], signature=f.signature,
                                log=f.detail, stats=stats), res
        return RunCrash(signal=f.signature, log=f.detail, stats=stats), res
    trap_words = np.frombuffer(res.buffers[TRAP_PARAM], np.uint32).tolist()
    trapped = decode_trap(trap_words, build.locations, stats)
    if trapped is not None:
        return trapped, res
    if res.status is Status.TRAP:
        return RunCrash(signal="s_trap without a trap record", log="", stats=stats), res
    outputs = {}
    for name, (elem, _) in values.outputs().items():
        arr = np.frombuffer(res.buffers[name], dtype=values.buffers[name].dtype).copy()
        outputs[name] = Buffer(elem, arr)
    return Ok(outputs=outputs, stats=stats), res


def _record(job: Job, res: Any, cpu_seconds: float) -> None:
    """One JSON line per launch. `cpu_seconds` is the worker's CPU time for the whole
    `simulate` call (decode, bind, run): the wall-clock `seconds` grow with the machine's
    load, CPU time much less, so per-case costs measured on a shared machine compare by
    it; `pid` tells which worker process (and so which per-process memo) ran it."""
    path = os.environ.get(STATS_ENV)
    if not path:
        return
    line = json.dumps({"spec": job.spec, "status": str(res.status),
                       "fault": res.fault.signature if res.fault else None,
                       "wave_instructions": res.wave_instructions,
                       "opcodes": dict(res.opcodes), "seconds": dict(res.seconds),
                       "cpu_seconds": cpu_seconds, "pid": os.getpid()})
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def execute(job: Job) -> Outcome:
    """Compile, link and simulate one case (the worker's job function)."""
    built = _compile(job)
    if not isinstance(built, _Built):
        return built
    outcome, _ = _simulate(job, built)
    return outcome


def texts(job: Job) -> dict[str, str]:
    """The worker side of `trace_text` and `artefact_text`."""
    built = _compile(job)
    if not isinstance(built, _Built):
        return {"error": f"{built.status}: {detail(built)}"}
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    build = built.build
    out = {"llvm-ir": build.ir, "llvm-ir-opt": build.ir_opt}
    co = read_code_object(built.code_object)
    lines = [f"; {job.target} code object, kernel {build.kernel} "
             f"(entry {co.kernel(build.kernel).entry_address:#x}); disassembled by "
             "rgpu_fuzz.sim.isa"]
    lines += [f"{i.address:#08x}:  {i.text}" for i in decode_text(co)]
    out["asm"] = "\n".join(lines) + "\n"
    if job.trace:
        outcome, res = _simulate(job, built, trace=True)
        steps = res.trace if res is not None else ()
        rows = [f"; wave 0 of block (0, 0, 0): {len(steps)} instructions; outcome "
                f"{outcome.status} {detail(outcome)}",
                f"{'pc':>8}  {'exec':>16}  instruction  ->  changed"]
        for r in steps:
            rows.append(f"{r.address:#08x}  {r.exec_mask:016x}  {r.text}"
                        + (f"  ->  {' '.join(r.changes)}" if r.changes else ""))
        out["trace"] = "\n".join(rows) + "\n"
    return out


__all__ = ["AmdgpuSimPipeline", "Job", "Launch", "execute", "prepare_launch", "sim_target",
           "texts"]
