"""The GPU build stage: a case → amdgcn LLVM IR → optimised IR → assembly and a relocatable
object for one AMDGPU processor, or → nvptx LLVM IR → PTX for one SM (the NVPTX back end
emits no objects; `GpuBuild.object` is then the PTX text, which the CUDA driver or `ptxas`
assembles). Every GPU pipeline calls `build_gpu` in its
worker (`amdgpu-sim`, `hip`, `inspect`); linking the object into a code object and running it
are theirs (`rgpu_fuzz.codeobj`, `rgpu_fuzz.sim`).

`build_gpu` runs in the calling process; `build_in_worker` runs it in a sandboxed worker
and maps an LLVM abort or a hang to an Outcome (what a pipeline's `_run` wants).

The kernel ABI the object follows is documented in `rgpu_fuzz.lower.amdgcn`; `GpuBuild`
carries what an executor needs besides the bytes: the kernel symbol, the flattened argument
list (`kernel_abi.flatten`, the IR parameters in order, the trap record's pointer last) and
the location table that decodes a trap record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rgpu_fuzz import casefile
from rgpu_fuzz.lower import AmdgcnTarget, TargetHooks
from rgpu_fuzz.lower.amdgcn import AMDHSA_TRIPLE
from rgpu_fuzz.lower.nvptx import NVPTX_TRIPLE, NvptxTarget
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.kernel_abi import FlatArg, KernelParam, flatten
from rgpu_fuzz.model.outcome import Outcome, Stats
from rgpu_fuzz.pipelines import toolchain
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.llvm_stages import (
    COMPILE_STAGES,
    LlvmBuild,
    StageClock,
    crash,
    lower_and_optimise,
)
from rgpu_fuzz.pipelines.registry import ClassRef
from rgpu_fuzz.pipelines.stages import outcome_of
from rgpu_fuzz.pipelines.toolchain import Llc, LlvmError, Target
from rgpu_fuzz.targets import PIPELINE_TARGETS, by_name

GPU_CPUS = PIPELINE_TARGETS
"""The processors every GPU pipeline supports (docs/design.md §3): the target table's rows with ISA
facts (`rgpu_fuzz.targets`)."""


WAVE64 = "+wavefrontsize64"
"""The subtarget feature of a GFX10+ processor built for wave64 (AMDGPUUsage "Processors")."""


def gpu_target(cpu: str, features: str = "", *, wave64: bool = False) -> Target:
    """The toolchain target for an AMDGPU processor under the HSA ABI (`wave64`: with
    `+wavefrontsize64`)."""
    if wave64:
        features = ",".join(f for f in (features, WAVE64) if f)
    return Target(AMDHSA_TRIPLE, cpu, features)


def nvptx_target(sm: str) -> Target:
    """The toolchain target for an NVIDIA SM (`sm_90`, ...) under the CUDA driver ABI."""
    return Target(NVPTX_TRIPLE, sm, "")


def lowering_for(target: Target, waveops: WaveOps = WaveOps.INTRINSIC) -> TargetHooks:
    """The lowering's target hooks for a toolchain target (by triple), wave operations
    lowered by `waveops`; the wave size follows the target's features."""
    if target.triple == NVPTX_TRIPLE:
        return NvptxTarget(cpu=target.cpu, waveops=waveops)
    row = by_name(target.cpu)
    # `+wavefrontsize64`: the target's wider mode, from the target table; 0: its default
    wide = max(row.wave_sizes) if row is not None else 0
    wave64 = WAVE64 in target.features.split(",")
    return AmdgcnTarget(cpu=target.cpu, atomic_scope=target.atomics.scope,
                        atomic_flat=target.atomics.flat, wave_size=wide if wave64 else 0,
                        waveops=waveops)


def emits_object(target: Target) -> bool:
    """Whether LLVM writes an object file for `target` (NVPTX: PTX text only)."""
    return target.triple != NVPTX_TRIPLE


@dataclass(frozen=True)
class GpuBuild:
    """One case compiled for one AMDGPU processor."""

    target: Target
    opt_level: int
    kernel: str
    """The kernel's symbol (the entry's name); its descriptor is `<kernel>.kd`."""
    params: tuple[KernelParam, ...]
    ir: str
    """Lowered (and transformed) IR."""
    ir_opt: str
    asm: str
    object: bytes
    """amdgcn: the relocatable ELF object (`ET_REL`), to be linked with `ld.lld -shared`;
    nvptx: the PTX text (UTF-8), the same as `asm`."""
    locations: tuple[tuple[int, int], ...]
    """Source (line, col) of each trap site, indexed by the trap record's location id."""
    shared_bytes: int
    stats: Stats = field(default_factory=Stats)

    @property
    def flat_args(self) -> tuple[FlatArg, ...]:
        """The kernel's explicit IR parameters before the trap record's pointer."""
        return flatten(self.params)


def build_gpu(case: Case, target: Target, opt_level: int, *, llc: Llc | None = None,
              transform: Callable[[str], str] | None = None, determinism: bool = False,
              assembly: bool = True, waveops: WaveOps = WaveOps.INTRINSIC,
              ) -> GpuBuild | Outcome:
    """Compile `case` for `target` in this process (call it in a worker: LLVM may abort).
    Stages: check, lower, transform, optimise, (determinism), codegen. Returns the build or
    the Outcome that stopped it (`Rejected`, `Unsupported`, `CompileCrash`)."""
    clock = StageClock()
    got = lower_and_optimise(case, lowering_for(target, waveops), target, opt_level,
                             transform=transform, clock=clock, determinism=determinism,
                             llc=llc)
    if not isinstance(got, LlvmBuild):
        return got
    try:
        if emits_object(target):
            obj = clock.run("codegen", lambda: toolchain.emit_object(got.ir_opt, target,
                                                                      opt_level, llc))
            asm = clock.run("codegen", lambda: toolchain.emit_assembly(
                got.ir_opt, target, opt_level, llc)) if assembly else ""
        else:
            asm = clock.run("codegen", lambda: toolchain.emit_assembly(
                got.ir_opt, target, opt_level, llc))
            obj = asm.encode()
    except LlvmError as e:
        return crash("codegen", e)
    clock.artefacts["object"] = toolchain.sha256(obj)
    lowered = got.lowered
    return GpuBuild(target=target, opt_level=opt_level, kernel=lowered.symbol,
                    params=lowered.params, ir=got.ir, ir_opt=got.ir_opt, asm=asm, object=obj,
                    locations=lowered.locations, shared_bytes=lowered.shared_bytes,
                    stats=Stats(seconds=clock.seconds, artefacts=clock.artefacts))


@dataclass(frozen=True, slots=True)
class GpuJob:
    """`build_gpu` as a worker job: the case as canonical TOML and what to build it for.
    `hook` names a pipeline (class and spec) whose `transform_ir` rewrites the IR."""

    case_toml: str
    target: Target
    opt_level: int
    llc: str | None = None
    determinism: bool = False
    assembly: bool = True
    hook: tuple[ClassRef, str] | None = None


def run_job(job: GpuJob) -> GpuBuild | Outcome:
    """The worker side of `build_in_worker`."""
    transform = None
    if job.hook is not None:
        cls, spec = job.hook
        pipeline = cls.load()(PipelineSpec.parse(spec))
        transform = getattr(pipeline, "transform_ir", None)
        assert callable(transform), f"{spec}: a hook pipeline needs transform_ir"
    return build_gpu(casefile.loads(job.case_toml), job.target, job.opt_level,
                     llc=None if job.llc is None else Llc(job.llc), transform=transform,
                     determinism=job.determinism, assembly=job.assembly)


def build_in_worker(case: Case, target: Target, opt_level: int, *, llc: str | None = None,
                    timeout: float = 120.0, determinism: bool = False, assembly: bool = True,
                    hook: tuple[ClassRef, str] | None = None, label: str = "amdgcn",
                    is_plugin: bool = False) -> GpuBuild | Outcome:
    """`build_gpu` in a sandboxed worker: an LLVM abort is a `CompileCrash` in the stage the
    worker last reported, a hang a `Timeout`; otherwise the build or the outcome that
    stopped it."""
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker

    job = GpuJob(casefile.dumps(case), target, opt_level, llc, determinism, assembly, hook)
    result = call_in_worker("rgpu_fuzz.pipelines.gpu_build:run_job", job, timeout=timeout)
    if isinstance(result, Done) and isinstance(result.value, GpuBuild):
        return result.value
    return outcome_of(result, label, COMPILE_STAGES, is_plugin=is_plugin)


__all__ = ["GPU_CPUS", "GpuBuild", "GpuJob", "build_gpu", "build_in_worker", "emits_object",
           "gpu_target", "lowering_for", "nvptx_target", "run_job"]
