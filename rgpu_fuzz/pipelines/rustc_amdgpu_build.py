"""rustc → object → ld.lld → code object, for a batch of cases (the compile half of
`rustc-amdgpu`).

One crate (`rustc_amdgpu_program`) holds a batch; rustc compiles it with
`--target amdgcn-amd-amdhsa -C target-cpu=<gfx> -C opt-level=<n> -C codegen-units=1
-C panic=abort -C overflow-checks=off` into one relocatable object (and its LLVM IR, kept for
reports), and `codeobj.link` (ld.lld -shared) turns that into one code object holding one
kernel per case. Splitting a batch that does not compile is `rustc_batch.build_batch`'s, as
for `rustc-cpu`.

The kernarg segment is packed from the code object's metadata `.args` only: each explicit
argument is matched by its name to the trap record or to a part of a kernel parameter
(`rustc_amdgpu_program.kernarg_use`); an argument that matches nothing, or a parameter no
argument carries, is a `kernarg-mismatch` finding.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from rgpu_fuzz.codeobj import KernelMetadata, LinkFailure, link
from rgpu_fuzz.pipelines.rustc_amdgpu_program import amdgpu_program_source, kernarg_use
from rgpu_fuzz.pipelines.rustc_batch import Build, Builder, BuiltCase, build_batch, first_error_line
from rgpu_fuzz.pipelines.rustc_program import ProgramCase
from rgpu_fuzz.process import run_bounded

__all__ = [
    "AMDGPU_FLAGS",
    "TARGET_TRIPLE",
    "TRAP_BUFFER",
    "KernargPlan",
    "amdgpu_builder",
    "build_code_object",
    "compile_units",
    "kernarg_plan",
    "rustc_command",
]

TARGET_TRIPLE = "amdgcn-amd-amdhsa"

AMDGPU_FLAGS: tuple[str, ...] = (
    "--edition", "2021", "--crate-type", "cdylib", "--crate-name", "rgpu_kernels",
    "-C", "codegen-units=1", "-C", "panic=abort",
    "-C", "overflow-checks=off", "-C", "debug-assertions=off",
)
"""Release semantics (docs/language.md), one codegen unit so the crate is one object. A
`cdylib`, as a GPU code object is: only the `#[no_mangle]` entry points are exported, every
other function is local, so calls are PC-relative (as a `lib`, the minicore's functions are
exported and every call goes through the GOT, which the loader must relocate)."""

TRAP_BUFFER = "rgpu.trap"
"""The launch's name for the trap record buffer (not a valid parameter name)."""

RUSTC_ENV: Mapping[str, str] = {"RUSTC_BOOTSTRAP": "1"}
"""`#![no_core]`, lang items and `extern "gpu-kernel"` are unstable: rustc 1.95 stable
accepts them only with RUSTC_BOOTSTRAP."""


def rustc_command(rustc: str, source: Path, *, target: str, opt_level: int,
                  emit: str, wave64: bool = False) -> list[str]:
    """The rustc command line compiling `source` for `target` (a gfx name), run in
    `source`'s directory: the file is named without its directory, because the panic
    locations embed it in the code object, which must not depend on where it was built.
    `wave64`: `-C target-feature=+wavefrontsize64` (a GFX10+ processor in wave64)."""
    features = ["-C", "target-feature=+wavefrontsize64"] if wave64 else []
    return [rustc, *AMDGPU_FLAGS, "--target", TARGET_TRIPLE, "-C", f"target-cpu={target}",
            *features, "-C", f"opt-level={opt_level}", f"--emit={emit}", source.name]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_code_object(units: Sequence[ProgramCase], workdir: Path, timeout: float, *,
                      rustc: str, target: str, opt_level: int, wave64: bool = False) -> Build:
    """Compile the crate of `units` into `workdir/kernels.hsaco` (a `Build` whose `binary`
    is the code object; `kernels.ll` beside it is rustc's LLVM IR)."""
    program = amdgpu_program_source(units)
    src, obj, ir = workdir / "kernels.rs", workdir / "kernels.o", workdir / "kernels.ll"
    hsaco = workdir / "kernels.hsaco"
    src.write_text(program.source, encoding="utf-8")
    emit = f"obj={obj.name},llvm-ir={ir.name}"
    proc = run_bounded(rustc_command(rustc, src, target=target, opt_level=opt_level, emit=emit,
                                     wave64=wave64),
                       timeout=timeout, cwd=workdir, env=RUSTC_ENV)
    common = {"program": program, "cases": len(units), "seconds": proc.seconds,
              "source_sha256": _sha(program.source.encode()), "log": proc.stderr}
    if proc.returncode is None:
        return Build(binary=None, failure="timeout", signature=f"rustc timed out after "
                     f"{timeout:g}s", **common)  # type: ignore[arg-type]
    if proc.returncode != 0:
        ice = ("panicked at" in proc.stderr or "internal compiler error" in proc.stderr
               or "LLVM ERROR:" in proc.stderr)
        if proc.returncode < 0 and "LLVM ERROR:" not in proc.stderr:
            signature = f"rustc killed by {proc.ended_by}"
        else:
            signature = first_error_line(proc.stderr, workdir)
        failure = "crash" if ice or proc.returncode < 0 else "error"
        return Build(binary=None, failure=failure, signature=signature,
                     **common)  # type: ignore[arg-type]
    linked = link(obj.read_bytes())
    if isinstance(linked, LinkFailure):
        common["log"] = f"{proc.stderr}\n{linked.log}"
        return Build(binary=None, failure="link", signature=f"ld.lld: {linked.first_line}",
                     **common)  # type: ignore[arg-type]
    hsaco.write_bytes(linked)
    return Build(binary=hsaco, binary_sha256=_sha(linked), **common)  # type: ignore[arg-type]


def amdgpu_builder(*, rustc: str, target: str, opt_level: int,
                   wave64: bool = False) -> Builder:
    """`build_code_object` with its compiler, target and level bound (for `build_batch`)."""
    return partial(build_code_object, rustc=rustc, target=target, opt_level=opt_level,
                   wave64=wave64)


def compile_units(units: Sequence[ProgramCase], *, rustc: str, target: str, opt_level: int,
                  root: Path, timeout: float, wave64: bool = False) -> list[BuiltCase]:
    """Every unit compiled (in as few crates as compile), one `BuiltCase` each, in order;
    kernel `entry_symbol(index)` of the build's code object is the case's."""
    return build_batch(units, amdgpu_builder(rustc=rustc, target=target, opt_level=opt_level,
                                             wave64=wave64),
                       root=root, timeout=timeout)


# ---------------------------------------------------------------- kernargs from metadata


@dataclass(frozen=True, slots=True)
class KernargPlan:
    """How to fill each explicit argument of one kernel's metadata, in `.args` order:
    `(role, param, width)` triples — `("trap", "", 8)`, `("data", "a", 8)`,
    `("len", "a", 8)`, `("scalar", "n", 4)` — and each scalar parameter's bits."""

    slots: tuple[tuple[str, str, int], ...]
    scalar_bits: Mapping[str, int] = field(default_factory=dict)

    def values(self, lengths: Mapping[str, int]) -> list[str | bytes]:
        """Each explicit argument in `.args` order: the name of the buffer whose address it
        is (`TRAP_BUFFER` for the trap record), or its little-endian bytes (a slice's
        length from `lengths`, a scalar's bits)."""
        out: list[str | bytes] = []
        for role, param, width in self.slots:
            if role == "trap":
                out.append(TRAP_BUFFER)
            elif role == "data":
                out.append(param)
            elif role == "len":
                out.append(struct.pack("<Q", lengths[param]))
            else:
                out.append(self.scalar_bits[param].to_bytes(width, "little"))
        return out


def kernarg_plan(unit: ProgramCase, meta: KernelMetadata) -> KernargPlan | str:
    """How `meta`'s explicit arguments carry `unit`'s parameters, or why they do not (a
    `kernarg-mismatch`: an unknown argument, a parameter part given twice or never)."""
    slots: list[tuple[str, str, int]] = []
    seen: set[tuple[str, str]] = set()
    for arg in meta.explicit_args:
        use = kernarg_use(unit, arg.name)
        if isinstance(use, str):
            return use
        key = (use.role, use.param)
        if key in seen:
            return f"metadata argument `{arg.name}` carries {use.role} of `{use.param}` twice"
        seen.add(key)
        if arg.size != use.width():
            return (f"metadata argument `{arg.name}` has {arg.size} bytes; {use.role} of "
                    f"`{use.param or 'the trap record'}` has {use.width()}")
        slots.append((use.role, use.param, use.width()))
    wanted = {("trap", "")}
    for p in unit.params:
        wanted |= {("data", p.name), ("len", p.name)} if p.kind != "scalar" \
            else {("scalar", p.name)}
    if missing := sorted(wanted - seen):
        role, param = missing[0]
        return f"no metadata argument carries {role} of `{param or 'the trap record'}`"
    bits = {p.name: a.bits for p, a in zip(unit.params, unit.args, strict=True)
            if p.kind == "scalar" and hasattr(a, "bits")}
    return KernargPlan(tuple(slots), bits)
