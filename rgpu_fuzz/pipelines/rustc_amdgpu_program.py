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

Shared arrays. rustc 1.95 cannot place a static in the group (LDS) address space, so each
`#[shared] static mut NAME: [T; N] = init;` of the printed kernel becomes
`static mut NAME: crate::Shared<[T; N], OFFSET> = crate::Shared::NEW;` (same line): a
zero-sized handle that dereferences to the array at byte `OFFSET` of the work-group's
dynamically allocated group segment (the minicore's `Shared`, `gpu::dynamic_group_segment`).
The arrays are laid out in declaration order, each aligned to its element size
(`shared_layout`); the launch allocates `SharedLayout.size` bytes of dynamic group segment,
as HIP's `sharedMemBytes` does. Indexing, bounds checks and `.len()` stay rustc's own on the
array the handle dereferences to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from rgpu_fuzz.lang.ast import Shared
from rgpu_fuzz.lang.parser import parse
from rgpu_fuzz.model.case import BufferArg, ScalarArg
from rgpu_fuzz.model.outcome import TrapKind
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.frontend import prepare
from rgpu_fuzz.pipelines.rustc_program import Program, ProgramCase, rust_kernel_text

__all__ = [
    "TRAP_KINDS",
    "TRAP_PARAM",
    "TRAP_RECORD_WORDS",
    "KernelArgUse",
    "SharedArray",
    "SharedLayout",
    "amdgpu_program_source",
    "entry_symbol",
    "kernarg_use",
    "minicore_source",
    "shared_layout",
]

TRAP_RECORD_WORDS = 8
"""kind, crate line, block x, y, z, thread x, y, z (u32 each)."""

TRAP_KINDS: dict[int, TrapKind | None] = {
    1: TrapKind.DIV_BY_ZERO,
    2: TrapKind.DIV_OVERFLOW,
    3: TrapKind.OUT_OF_BOUNDS,
    4: None,  # any other panic: not a trap of the language, a run crash
    5: TrapKind.ASSERT,  # `clamp`'s assert!
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
        pub use crate::atomic::{fence, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
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
    return {"scalar": str(p.ty), "slice": f"&[{p.ty}]", "mut-slice": f"&mut [{p.ty}]",
            "atomic-slice": f"&[crate::atomic::Atomic{p.ty.value.upper()}]"}[p.kind]


@dataclass(frozen=True, slots=True)
class SharedArray:
    """One `#[shared]` array of a kernel and its place in the dynamic group segment."""

    name: str
    elem: Scalar
    len: int
    offset: int

    @property
    def size(self) -> int:
        return self.len * self.elem.dtype.itemsize


@dataclass(frozen=True, slots=True)
class SharedLayout:
    """A kernel's `#[shared]` arrays in declaration order, and the bytes of dynamic group
    segment its launch allocates."""

    arrays: tuple[SharedArray, ...] = ()

    @property
    def size(self) -> int:
        return max((a.offset + a.size for a in self.arrays), default=0)


def shared_layout(unit: ProgramCase) -> SharedLayout:
    """Where `unit`'s `#[shared]` arrays live: in declaration order, each at the next offset
    aligned to its element size (lengths as the checker evaluated them)."""
    prepared = prepare(unit.case)
    assert isinstance(prepared, tuple), "a ProgramCase is made from a checked case"
    types = prepared[0].shared
    arrays: list[SharedArray] = []
    offset = 0
    for item in _shared_items(unit.kernel_source):
        ty = types[item.name]
        align = ty.elem.dtype.itemsize
        offset = (offset + align - 1) // align * align
        arrays.append(SharedArray(item.name, ty.elem, ty.len, offset))
        offset += arrays[-1].size
    return SharedLayout(tuple(arrays))


@cache
def _shared_items(kernel_source: str) -> tuple[Shared, ...]:
    return tuple(i for i in parse(kernel_source, "<kernel>").items if isinstance(i, Shared))


def _with_shared_handles(kernel_source: str, layout: SharedLayout) -> str:
    """`kernel_source` with each `#[shared]` static's declaration (from `static` to its `;`)
    replaced by its `Shared` handle, newlines kept so lines still match."""
    items = _shared_items(kernel_source)
    assert [i.name for i in items] == [a.name for a in layout.arrays]
    out, last = [], 0
    for item, array in zip(items, layout.arrays, strict=True):
        start = kernel_source.index("static", item.span.start, item.span.end)
        old = kernel_source[start:item.span.end]
        elem, mut = (f"crate::atomic::Atomic{array.elem.value.upper()}", "") if item.atomic \
            else (str(array.elem), "mut ")
        out += [kernel_source[last:start],
                f"static {mut}{array.name}: crate::Shared<[{elem}; {array.len}], "
                f"{array.offset}> = crate::Shared::NEW;", "\n" * old.count("\n")]
        last = item.span.end
    out.append(kernel_source[last:])
    return "".join(out)


def amdgpu_program_source(units: Sequence[ProgramCase], *, target_part: str | None = None,
                          abi: str = "gpu-kernel") -> Program:
    """The crate compiling every one of `units`, and where each kernel's lines are.
    `target_part` replaces the amdgcn half of the minicore and `abi` the entry points' ABI
    (the minicore's host check builds the same crate for the CPU with `extern "C"`)."""
    target = target_part if target_part is not None else minicore_source("gpu_amdgcn.rs")
    parts = [minicore_source(), "\n", minicore_source("atomics.rs"), "\n", target, "\n"]
    line = "".join(parts).count("\n") + 1
    ranges: list[tuple[int, int]] = []
    for i, unit in enumerate(units):
        module = f"case_{i}_{unit.case.id}"
        head = _fill(_CASE_HEAD, MODULE=module, ID=unit.case.id)
        layout = shared_layout(unit)
        body = rust_kernel_text(_with_shared_handles(unit.kernel_source, layout)
                                if layout.arrays else unit.kernel_source)
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
