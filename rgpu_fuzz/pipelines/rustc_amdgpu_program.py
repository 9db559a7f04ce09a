"""Kernels as one `#![no_core]` crate for `amdgcn-amd-amdhsa`: the source that `rustc-amdgpu`
hands to the real rustc.

A crate holds one or more cases (a batch, as `rustc_program` batches host programs):
* first the minimal core `rustc_amdgpu_core/minicore.rs` (package data; rust-src is not
  available, so the lang items, the library methods, the GPU functions and the panic entry
  points are written there);
* each case's kernel text, exactly as `rustc-cpu` compiles it (`rust_kernel_text`: the
  canonical printed kernel with `#[kernel]`/`#[shared]` removed, lines kept one for one), in
  its own `mod case_<index>_<id>` whose `rgpu` module re-exports the minicore's GPU functions;
* for each case an entry point `rgpu_case_<index>`: `#[no_mangle] pub extern "gpu-kernel"`,
  taking the trap record's address first and then the kernel's own parameters, and calling
  the kernel. How the parameters cross the kernel ABI (a slice `a` becomes `a.0`, its data
  pointer, and `a.1`, its length, in rustc 1.95) is rustc's decision: the pipeline reads it
  from the code object's metadata (`kernarg_values`), never from this module.

Traps. The minicore's panic entry points (`panic_bounds_check`, `panic_const_div_by_zero`,
...) write the trap record and call `abort` (`llvm.trap`). The record is 8 little-endian
u32 words: kind (`TRAP_KINDS`), the crate line of the failing operation (from
`#[track_caller]`'s `Location`, mapped back to a kernel line with `Program.case_at`), block
x, y, z and thread x, y, z. Its address is the first kernel argument; a panic deep in a
helper finds it through the HSA dispatch packet's `kernarg_address` (offset 40), so no
global variable and no extra parameter of the kernel's own functions is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from rgpu_fuzz.model.case import BufferArg, ScalarArg
from rgpu_fuzz.model.outcome import TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.rustc_program import Program, ProgramCase, rust_kernel_text

__all__ = [
    "TRAP_KINDS",
    "TRAP_PARAM",
    "TRAP_RECORD_WORDS",
    "KernelArgUse",
    "amdgpu_program_source",
    "entry_symbol",
    "kernarg_use",
    "minicore_source",
]

TRAP_RECORD_WORDS = 8
"""kind, crate line, block x, y, z, thread x, y, z (u32 each)."""

TRAP_KINDS: dict[int, TrapKind | None] = {
    1: TrapKind.DIV_BY_ZERO,
    2: TrapKind.DIV_OVERFLOW,
    3: TrapKind.OUT_OF_BOUNDS,
    4: None,  # any other panic: not a trap of the language, a run crash
}
"""The minicore's `trap::*` codes (0: no trap)."""

TRAP_PARAM = "rgpu_trap"
"""The entry point's first parameter, the trap record's address (renamed when a kernel
parameter already has this name)."""


@cache
def minicore_source(part: str = "minicore.rs") -> str:
    """A part of the minicore (package data): `minicore.rs`, the target-neutral core, or
    `gpu_amdgcn.rs`, the GPU functions and `trap::raise` for amdgcn."""
    return files("rgpu_fuzz.pipelines").joinpath("rustc_amdgpu_core", part) \
        .read_text(encoding="utf-8")


def entry_symbol(index: int) -> str:
    """The code-object kernel symbol of case `index` of a crate."""
    return f"rgpu_case_{index}"


def trap_param(unit: ProgramCase) -> str:
    """The trap parameter's name for `unit` (unique among its parameters)."""
    name = TRAP_PARAM
    while any(p.name == name for p in unit.params):
        name += "_"
    return name


_CASE_HEAD = """\
mod @MODULE@ {
    pub mod rgpu {
        pub use crate::gpu::*;
    }

// ---- kernel of case @ID@
"""

_ENTRY = """
#[no_mangle]
pub extern "@ABI@" fn @SYMBOL@(@PARAMS@) {
    @MODULE@::@ENTRY@(@ARGS@)
}
"""


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def _rust_type(unit: ProgramCase, index: int) -> str:
    p = unit.params[index]
    return {"scalar": str(p.ty), "slice": f"&[{p.ty}]", "mut-slice": f"&mut [{p.ty}]"}[p.kind]


def amdgpu_program_source(units: Sequence[ProgramCase], *, target_part: str | None = None,
                          abi: str = "gpu-kernel") -> Program:
    """The crate compiling every one of `units`, and where each kernel's lines are.
    `target_part` replaces the amdgcn half of the minicore and `abi` the entry points' ABI
    (the minicore's host check builds the same crate for the CPU with `extern "C"`)."""
    target = target_part if target_part is not None else minicore_source("gpu_amdgcn.rs")
    parts = [minicore_source(), "\n", target, "\n"]
    line = "".join(parts).count("\n") + 1
    ranges: list[tuple[int, int]] = []
    for i, unit in enumerate(units):
        module = f"case_{i}_{unit.case.id}"
        head = _fill(_CASE_HEAD, MODULE=module, ID=unit.case.id)
        body = rust_kernel_text(unit.kernel_source)
        if not body.endswith("\n"):
            body += "\n"
        first = line + head.count("\n")
        end = first + body.count("\n")
        ranges.append((first, end))
        params = [f"{trap_param(unit)}: *mut u32"]
        params += [f"{p.name}: {_rust_type(unit, k)}" for k, p in enumerate(unit.params)]
        entry = _fill(_ENTRY, ABI=abi, SYMBOL=entry_symbol(i), PARAMS=", ".join(params),
                      MODULE=module, ENTRY=unit.case.entry,
                      ARGS=", ".join(p.name for p in unit.params))
        chunk = head + body + "}\n" + entry + "\n"
        parts.append(chunk)
        line += chunk.count("\n")
    return Program("".join(parts), tuple(ranges))


# ---------------------------------------------------------------- reading the kernel ABI


@dataclass(frozen=True, slots=True)
class KernelArgUse:
    """What one explicit argument of the metadata carries, matched by its name: the trap
    record, a slice's data pointer (`a.0`) or length (`a.1`), or a scalar (`n`)."""

    role: str  # "trap", "data", "len" or "scalar"
    param: str = ""
    scalar: Scalar | None = None

    def width(self) -> int:
        """The bytes this argument's value has in the launch."""
        if self.role in ("trap", "data", "len"):
            return 8
        assert self.scalar is not None
        return 1 if self.scalar is Scalar.BOOL else self.scalar.bits // 8


def kernarg_use(unit: ProgramCase, arg_name: str | None) -> KernelArgUse | str:
    """What the metadata argument `arg_name` of `unit`'s entry point carries, or why it
    matches none of the entry's parameters (then rustc lowered the signature in a way this
    pipeline does not know: a finding, never a guess)."""
    if arg_name is None:
        return "an explicit argument without a name"
    if arg_name == trap_param(unit):
        return KernelArgUse("trap")
    by_name = {p.name: (p, a) for p, a in zip(unit.params, unit.args, strict=True)}
    base, dot, part = arg_name.rpartition(".")
    if dot and base in by_name and isinstance(by_name[base][1], BufferArg):
        p = by_name[base][0]
        if part == "0":
            return KernelArgUse("data", p.name, p.ty)
        if part == "1":
            return KernelArgUse("len", p.name, Scalar.U64)
    if arg_name in by_name and isinstance(by_name[arg_name][1], ScalarArg):
        p = by_name[arg_name][0]
        return KernelArgUse("scalar", p.name, p.ty)
    return f"metadata argument `{arg_name}` is none of the entry's parameters"
