"""The LLVM toolchain every LLVM-based pipeline composes (docs/design.md §1, §3).

One place that: makes a target machine for any triple, CPU and feature string; parses and
verifies IR; optimises with the new pass manager at O0…O3; emits an object or assembly, each
from a freshly parsed module (llvmlite's code generation mutates the module it is given) or,
for one emission where nothing needs the optimised text, from the optimised module itself
(`optimised_module`, `emit_module`), with llvmlite's own LLVM or with an external `llc`
(`Llc`, option `llc=PATH`); selects the instruction selector of every emission (`Isel`:
SelectionDAG or GlobalISel, option `isel=`); and compiles twice to check determinism
(docs/design.md §3: the same case compiled twice gives the same bytes).

Every llvmlite failure is caught here and only here, and becomes `LlvmError`, whose
`signature` is its first line with numbers, addresses and paths blanked (docs/design.md §5). LLVM
*fatal* errors abort the process instead of raising: everything here runs in a worker process
(`rgpu_fuzz.pipelines.workers`), which turns the abort into a `CompileCrash`.

External `llc` runs through `rgpu_fuzz.process.run_bounded`. An older LLVM reads our IR after
`adapt_ir_for` (the one place IR is adjusted for a version; see there).
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from rgpu_fuzz.process import run_bounded

LLC_TIMEOUT = 120.0
"""Seconds an external `llc` may take for one emission."""

_NOISE = [(re.compile(r"0x[0-9a-fA-F]+"), "0x_"), (re.compile(r"%[\w.]*\d+\b"), "%N"),
          (re.compile(r"(?<![\w.])/[^\s:'\"]+"), "/…"), (re.compile(r"\b\d+\b"), "N"),
          # GlobalISel's scalar types (`%N:_(s32) = G_FPTOSI_SAT %N:_(s64)`): one legalizer
          # gap is one bug whatever the widths (a campaign filed `fpto[su]i.sat` under 11)
          (re.compile(r"(?<=[(<\s])s\d+\b"), "sN"),
          # the function LLVM was in (`k`, `h1`): the same crash in a helper is the same bug
          (re.compile(r"\(in function: [^)]*\)"), "(in function: …)")]


def normalise_error_line(text: str) -> str:
    """The first error line of an LLVM message (`LLVM ERROR: ...`, `<string>:2:7: error:
    ...`, an assertion; else its first line) with addresses, value numbers, paths and plain
    numbers blanked: the same bug hit by two kernels has one signature."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "LLVM ERROR" in ln or "error:" in ln
                 or "Assertion" in ln), lines[0] if lines else "")
    for pattern, repl in _NOISE:
        pick = pattern.sub(repl, pick)
    return pick[:200]


class LlvmError(Exception):
    """LLVM refused our input (`parse`, `verify`) or failed (`optimise`, `codegen`): a value
    of the compiler under test, turned into a `CompileCrash` by the pipeline. `message` is
    LLVM's text, `signature` its normalised first line."""

    def __init__(self, stage: str, message: str) -> None:
        self.stage = stage
        self.message = message.strip()
        self.signature = normalise_error_line(message)
        super().__init__(f"{stage}: {self.signature}")


class OutputKind(StrEnum):
    OBJECT = "obj"
    ASSEMBLY = "asm"


class Isel(StrEnum):
    """The instruction selector of code generation: LLVM's SelectionDAG (`dag`, what
    `llc` uses for AMDGPU and x86 by default; FastISel where the target wants it at O0) or
    GlobalISel (`global`, `llc -global-isel`). GlobalISel is chosen explicitly, so a
    function it cannot select is a fatal `LLVM ERROR` (abort mode on), not a quiet
    fallback to SelectionDAG: the pipeline's answer is then GlobalISel's own."""

    DAG = "dag"
    GLOBAL = "global"


ATOMIC_SCOPES: tuple[str, ...] = (
    "agent", "workgroup", "wavefront", "system", "one-as", "agent-one-as",
    "workgroup-one-as", "wavefront-one-as")
"""LLVM's AMDGPU synchronisation scopes (AMDGPUUsage "Memory Scopes"; `system` is LLVM's
default scope, written without `syncscope`)."""

ATOMIC_OPTIMIZERS: tuple[str, ...] = ("default", "dpp", "iterative", "none")
"""`-amdgpu-atomic-optimizer-strategy`: LLVM's default (`Iterative` in LLVM 22), `DPP`,
`Iterative` or `None` (AMDGPUAtomicOptimizer: a uniform-address atomic of a wave becomes
one atomic of the combined value, the lanes' old values rebuilt by a scan)."""


@dataclass(frozen=True, slots=True)
class AtomicConfig:
    """How a GPU target compiles atomics: the `syncscope` the lowering writes on each,
    whether it addresses them through the generic (flat) address space, and the AMDGPU
    atomic optimizer's strategy for code generation."""

    scope: str = "agent"
    flat: bool = False
    optimizer: str = "default"

    @property
    def llvm_strategy(self) -> str | None:
        """The option's value (`DPP`, `Iterative`, `None`); None leaves LLVM's default."""
        return {"dpp": "DPP", "iterative": "Iterative", "none": "None"}.get(self.optimizer)


DEFAULT_ATOMICS = AtomicConfig()


@dataclass(frozen=True, slots=True)
class Target:
    """What a target machine is made for: triple, CPU (`gfx942`; "" for the triple's
    default), feature string (`+wavefrontsize64,-xnack`; "" for the CPU's default) and
    relocation model (LLVM's `default`, `static`, `pic`), and the instruction selector
    (`Isel`) every emission for it uses."""

    triple: str
    cpu: str = ""
    features: str = ""
    reloc: str = "default"
    isel: Isel = Isel.DAG
    atomics: AtomicConfig = DEFAULT_ATOMICS

    @classmethod
    def host(cls, isel: Isel = Isel.DAG) -> Target:
        """The machine running this process, as MCJIT sees it (generic CPU: the host
        pipeline's code must not depend on which x86 this is). Position-independent: MCJIT
        maps code and data above 4 GiB, where the static model's 32-bit absolute relocations
        (jump and lookup tables at O2/O3) do not reach and RuntimeDyldELF asserts
        (`resolveX86_64Relocation`, R_X86_64_32/32S out of range)."""
        return cls(_llvm().get_default_triple(), reloc="pic", isel=isel)


def _llvm() -> Any:
    """llvmlite's binding layer with every target registered (once per process)."""
    import llvmlite.binding as llvm

    _initialise(llvm)
    return llvm


@cache
def _initialise(llvm: Any) -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@contextmanager
def selected_isel(isel: Isel) -> Iterator[None]:
    """LLVM's instruction selector is `isel` for the code generation inside, SelectionDAG
    again after it.

    LLVM reads its `-global-isel` command-line option (a process-wide `cl::opt`) when a
    code generation pipeline is built (`TargetPassConfig::addCoreISelPasses`), that is at
    every `emit_object`/`emit_assembly` and MCJIT finalisation. A worker compiles for many
    pipeline specs one after another, and other code in it generates code with llvmlite
    too (the simulator JITs its host FMA loops, `sim.semantics.hostfma`, which x86's
    GlobalISel cannot legalize): so the option is set explicitly before every emission and
    set back to SelectionDAG after it, never left as the last spec set it. `=0` is
    SelectionDAG as if the option were absent (FastISel still where the target wants it
    at O0); setting it again and again is accepted (tests/unit/test_isel.py compiles dag,
    global, dag in one process)."""
    llvm = _llvm()
    llvm.set_option("", f"-global-isel={int(isel is Isel.GLOBAL)}")
    try:
        yield
    finally:
        if isel is not Isel.DAG:
            llvm.set_option("", "-global-isel=0")


_LLVM_DEFAULT_STRATEGY = "Iterative"
"""`-amdgpu-atomic-optimizer-strategy`'s initial value in LLVM 22 (AMDGPUTargetMachine.cpp),
restored after an emission that set another."""


@contextmanager
def codegen_options(target: Target) -> Iterator[None]:
    """`selected_isel`, and the AMDGPU atomic optimizer's strategy of `target` for the
    code generation inside, LLVM's default again after it. Like `-global-isel`, the strategy
    is a process-wide `cl::opt` read when the code generation pipeline is built
    (AMDGPUPassConfig::addIRPasses adds the optimizer unless the strategy is `None`), so it
    is set before every emission and never left as the last spec set it."""
    strategy = target.atomics.llvm_strategy if target.triple.startswith("amdgcn") else None
    llvm = _llvm()
    with selected_isel(target.isel):
        if strategy is None:
            yield
            return
        llvm.set_option("", f"-amdgpu-atomic-optimizer-strategy={strategy}")
        try:
            yield
        finally:
            llvm.set_option("", f"-amdgpu-atomic-optimizer-strategy={_LLVM_DEFAULT_STRATEGY}")


_MACHINES: dict[tuple[Target, int], Any] = {}


def target_machine(target: Target, level: int, *, fresh: bool = False) -> Any:
    """A target machine for `target` at optimisation level `level`, cached per process;
    `fresh` makes a new one (MCJIT takes ownership of the machine it is given). Each
    selector has machines of its own (`Target.isel` is part of the key): LLVM records the
    selector it chose in the machine's options when it builds a code generation pipeline,
    and a machine shared by both would carry GlobalISel's setting into a `dag` emission."""
    key = (target, level)
    if not fresh and key in _MACHINES:
        return _MACHINES[key]
    llvm = _llvm()
    try:
        with selected_isel(target.isel):
            tm = llvm.Target.from_triple(target.triple).create_target_machine(
                cpu=target.cpu, features=target.features, opt=level, reloc=target.reloc,
                codemodel="default")
    except RuntimeError as e:
        raise LlvmError("target", str(e)) from e
    if not fresh:
        _MACHINES[key] = tm
    return tm


def parse(ir_text: str) -> Any:
    """A fresh, verified module from IR text."""
    llvm = _llvm()
    try:
        mod = llvm.parse_assembly(ir_text)
    except RuntimeError as e:
        raise LlvmError("parse", str(e)) from e
    try:
        mod.verify()
    except RuntimeError as e:
        raise LlvmError("verify", str(e)) from e
    return mod


def optimise(ir_text: str, target: Target, level: int) -> str:
    """The new pass manager's `default<O<level>>` pipeline for `target`'s machine, run on a
    fresh module; the optimised text (O0 returns the verified input unchanged)."""
    return str(optimised_module(ir_text, target, level))


def tuning_options(level: int) -> Any:
    """The pass builder's tuning options for `default<O<level>>` as `opt-22 -O<level>` and
    clang set them: the loop and SLP vectorisers at O2 and O3 only (at O1 the loop vectoriser
    honours only loops that force it). llvmlite's `PipelineTuningOptions` starts from LLVM's
    constructor (llvm/lib/Passes/PassBuilderPipelines.cpp: `LoopVectorization = true`,
    `SLPVectorization = false`) at every level, which left SLP off at O2/O3 (so two adjacent
    16-bit results never became one `v_pk_*` instruction) and the loop vectoriser on at O1.
    `opt-22 -O<n>
    -print-pipeline-passes` lists `slp-vectorizer` at O2 and O3 and
    `loop-vectorize<...;vectorize-forced-only;>` at O1; clang passes `-vectorize-loops
    -vectorize-slp` to cc1 from -O2 (clang/lib/Driver/ToolChains/Clang.cpp,
    `shouldEnableVectorizerAtOLevel`). rustc enables the loop vectoriser at `-C
    opt-level=2/3` and SLP at 3 only (rustc_codegen_ssa/src/back/write.rs,
    `ModuleConfig::new`: `vectorize_slp` at `OptLevel::Aggressive`); the `rustc-*` pipelines
    keep rustc's own choice, ours follows opt."""
    pto = _llvm().create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    pto.slp_vectorization = level >= 2
    return pto


def optimised_module(ir_text: str, target: Target, level: int) -> Any:
    """`optimise`, returning the optimised module itself, verified again after the passes
    (as parsing its text for code generation would): for one emission from it
    (`emit_module`), where nothing needs the optimised text. Printing the module and
    parsing and verifying the text again cost a batch of eight O3 cases ~3 ms (of ~110 in
    optimise and codegen), and the objects are the same bytes (18 of 18 batches measured)."""
    llvm = _llvm()
    mod = parse(ir_text)
    if level > 0:
        tm = target_machine(target, level)
        try:
            pb = llvm.create_pass_builder(tm, tuning_options(level))
            pb.getModulePassManager().run(mod, pb)
        except RuntimeError as e:
            raise LlvmError("optimise", str(e)) from e
        try:
            mod.verify()
        except RuntimeError as e:
            raise LlvmError("verify", str(e)) from e
    return mod


def emit(ir_text: str, target: Target, level: int, kind: OutputKind,
         llc: Llc | None = None) -> bytes:
    """An object file or assembly text (UTF-8 bytes) for `target` from a fresh module, by
    llvmlite's code generator or by `llc`."""
    if llc is not None:
        return llc.emit(ir_text, target, level, kind)
    return emit_module(parse(ir_text), target, level, kind)


def emit_module(mod: Any, target: Target, level: int,
                kind: OutputKind = OutputKind.OBJECT) -> bytes:
    """`emit` from a module the caller holds (`optimised_module`) instead of a fresh one:
    code generation mutates it, so it serves this one emission and nothing after."""
    tm = target_machine(target, level)
    try:
        with codegen_options(target):
            if kind is OutputKind.OBJECT:
                return bytes(tm.emit_object(mod))
            return str(tm.emit_assembly(mod)).encode()
    except RuntimeError as e:
        raise LlvmError("codegen", str(e)) from e


def emit_object(ir_text: str, target: Target, level: int, llc: Llc | None = None) -> bytes:
    return emit(ir_text, target, level, OutputKind.OBJECT, llc)


def emit_assembly(ir_text: str, target: Target, level: int, llc: Llc | None = None) -> str:
    return emit(ir_text, target, level, OutputKind.ASSEMBLY, llc).decode()


def sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def determinism(ir_text: str, opt_text: str, target: Target, level: int,
                llc: Llc | None = None, first_object: bytes | None = None) -> dict[str, str]:
    """Optimise `ir_text` again and emit the object for `opt_text` twice, each from a fresh
    module (`first_object`: the first emission, already made by the caller). Returns
    artefact hashes: `object`, and `llvm-ir-opt-again` / `object-again` only where the
    second result differs from the first (the oracle reports such a key as a
    nondeterminism finding, docs/design.md §3)."""
    out: dict[str, str] = {}
    again = optimise(ir_text, target, level)
    if again != opt_text:
        out["llvm-ir-opt-again"] = sha256(again)
    # NVPTX writes no objects: its final artefact is the PTX text
    kind = OutputKind.ASSEMBLY if target.triple.startswith("nvptx") else OutputKind.OBJECT
    first = sha256(first_object if first_object is not None
                   else emit(opt_text, target, level, kind, llc))
    second = sha256(emit(opt_text, target, level, kind, llc))
    out["object"] = first
    if second != first:
        out["object-again"] = second
    return out


# ---------------------------------------------------------------------- external llc

_VERSION = re.compile(r"LLVM version (\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class Llc:
    """An external `llc` (a team's own LLVM build, Debian's `llc-19`): code generation for
    IR that llvmlite's LLVM optimised. A failure is an `LlvmError` (stage `codegen`) whose
    signature is llc's first error line; a hang ends after `timeout` seconds."""

    path: str
    timeout: float = LLC_TIMEOUT

    def version(self) -> tuple[int, int]:
        return llc_version(self.path)

    def emit(self, ir_text: str, target: Target, level: int, kind: OutputKind) -> bytes:
        major = self.version()[0]
        with tempfile.TemporaryDirectory(prefix="rgpu-llc-") as tmp:
            src, out = Path(tmp, "in.ll"), Path(tmp, f"out.{kind}")
            src.write_text(adapt_ir_for(ir_text, major))
            cmd = [self.path, f"-O{level}", f"-mtriple={target.triple}"]
            cmd += [f"-mcpu={target.cpu}"] if target.cpu else []
            cmd += [f"-mattr={target.features}"] if target.features else []
            cmd += [f"-relocation-model={target.reloc}"] if target.reloc != "default" else []
            cmd += ["-global-isel"] if target.isel is Isel.GLOBAL else []
            strategy = target.atomics.llvm_strategy
            if strategy is not None and target.triple.startswith("amdgcn"):
                cmd += [f"-amdgpu-atomic-optimizer-strategy={strategy}"]
            # relative names (cwd is the temporary folder): no temporary paths in errors
            cmd += [f"-filetype={kind}", "-o", out.name, src.name]
            proc = run_bounded(cmd, timeout=self.timeout, cwd=Path(tmp))
            if proc.returncode != 0:
                text = (proc.stderr or proc.stdout).replace(f"{self.path}: ", "").strip()
                raise LlvmError("codegen", text or f"llc ended by {proc.ended_by}")
            return out.read_bytes()


@cache
def llc_version(path: str) -> tuple[int, int]:
    """(major, minor) of the LLVM an `llc` was built from (`llc --version`)."""
    try:
        proc = run_bounded([path, "--version"], timeout=30)
    except OSError as e:
        raise LlvmError("target", f"{path}: cannot run llc: {e.strerror}") from e
    m = _VERSION.search(proc.stdout + proc.stderr)
    if proc.returncode != 0 or m is None:
        raise LlvmError("target", f"{path}: not an llc ({proc.ended_by}): "
                                  f"{(proc.stderr or proc.stdout).strip()[:200]}")
    return int(m.group(1)), int(m.group(2))


_MODULE_FLAG_LINE = re.compile(r"^!\d+ = !\{i32 \d+, !\"amdhsa_code_object_version\".*$",
                               re.MULTILINE)


def adapt_ir_for(ir_text: str, major: int) -> str:
    """IR text as an LLVM of version `major` reads it. The one place our IR is adjusted for
    an older LLVM; what it does is listed in `IR_ADAPTATIONS` (empty rules are no-ops)."""
    for since, _what, rule in IR_ADAPTATIONS:
        if major < since:
            ir_text = rule(ir_text)
    return ir_text


def _sub(pattern: str, repl: str) -> Callable[[str], str]:
    compiled = re.compile(pattern)
    return lambda text: compiled.sub(repl, text)


IR_ADAPTATIONS: list[tuple[int, str, Callable[[str], str]]] = [
    (21, "parameter attribute `captures(none)` is written `nocapture`; other `captures(...)` "
         "forms are dropped (they only add facts)",
     lambda text: _sub(r"\bcaptures\((?!none\))[^)]*\)\s?", "")(
         _sub(r"\bcaptures\(none\)", "nocapture")(text))),
    (22, "function attribute `nocreateundeforpoison` (intrinsic declarations) is dropped",
     _sub(r"\bnocreateundeforpoison\s?", "")),
    (22, "`memory(...)` locations `target_mem0`/`target_mem1` are dropped (the remaining "
         "locations keep their access kinds; the default kind covers the dropped ones)",
     _sub(r",\s*target_mem\d+: \w+", "")),
    (20, "the `samesign` flag of `icmp` is dropped (a fact for the optimiser only)",
     _sub(r"\bicmp samesign\b", "icmp")),
    (22, "`llvm.lifetime.start/end` take only the pointer since LLVM 22: the calls and their "
         "declarations are dropped (markers for stack colouring, not semantics)",
     _sub(r"(?m)^\s*(call void|declare void) @llvm\.lifetime\.(start|end)\.p\d+\(.*\n", "")),
]
"""(first LLVM major that reads it, what, rewrite): applied in order, for an older `llc`,
to IR that llvmlite's LLVM 22 wrote. Each rule only drops or respells facts the optimiser
added; none changes what the code computes."""


__all__ = ["DEFAULT_ATOMICS", "IR_ADAPTATIONS", "AtomicConfig", "Isel", "Llc", "LlvmError",
           "OutputKind", "Target", "adapt_ir_for", "codegen_options", "determinism", "emit",
           "emit_assembly", "emit_module", "emit_object", "llc_version", "normalise_error_line",
           "optimise", "optimised_module", "parse", "selected_isel", "sha256", "target_machine"]
