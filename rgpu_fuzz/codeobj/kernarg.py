"""The kernarg segment, packed from the code object's metadata — the one packer the `hip`
pipeline and the simulator share.

Layout comes only from `amdhsa.kernels[].args` (offsets, sizes, value kinds) and
`.kernarg_segment_size`, never from what a lowering is assumed to emit: the caller supplies
the explicit arguments in `.args` order, each with the value kind and the bytes it means to
pass, and a difference from the metadata is a finding (`KernargMismatch`, signature
`kernarg-mismatch`), not an exception. Hidden arguments are filled from the launch as
AMDGPUUsage "Code Object V5 Metadata" (hidden argument value kinds) and the HIP runtime
define them; those that name runtime services this harness does not provide (hostcall, heap,
device queues, multigrid sync) are 0, which is what a runtime passes when the service is
absent — unless the caller supplies a value in `hidden`.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Final

from rgpu_fuzz.codeobj.notes import KernelArg, KernelMetadata

__all__ = [
    "HIDDEN_FROM_DISPATCH",
    "ArgValue",
    "Dispatch",
    "KernargLayout",
    "KernargMismatch",
    "KernargSegment",
    "KernargSlot",
    "kernarg_layout",
    "pack_kernargs",
]

GLOBAL_BUFFER: Final = "global_buffer"
BY_VALUE: Final = "by_value"


@dataclass(frozen=True, slots=True)
class ArgValue:
    """One explicit argument as the caller means it: `value_kind` in the metadata's vocabulary
    (`global_buffer` for a device pointer, `by_value` for a scalar) and its little-endian
    bytes."""

    value_kind: str
    data: bytes
    name: str | None = None

    @classmethod
    def pointer(cls, address: int, name: str | None = None) -> ArgValue:
        """A global-memory pointer (8 bytes)."""
        return cls(GLOBAL_BUFFER, struct.pack("<Q", address & (2**64 - 1)), name)

    @classmethod
    def integer(cls, value: int, size: int, name: str | None = None) -> ArgValue:
        """A by-value integer of `size` bytes; negative values in two's complement."""
        return cls(BY_VALUE, (value % (1 << (8 * size))).to_bytes(size, "little"), name)

    @classmethod
    def raw(cls, data: bytes, name: str | None = None) -> ArgValue:
        """A by-value argument given as its bytes (floats: `struct.pack('<f', x)`)."""
        return cls(BY_VALUE, bytes(data), name)


@dataclass(frozen=True, slots=True)
class Dispatch:
    """A launch: `grid` in work-groups per dimension (HIP's gridDim), `block` in work-items per
    work-group (blockDim). `dims` is the dispatch packet's setup dimensions (hidden_grid_dims);
    by default the highest dimension whose grid or block exceeds 1 (at least 1)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dims: int | None = None

    @property
    def grid_dims(self) -> int:
        if self.dims is not None:
            return self.dims
        for d in (3, 2):
            if self.grid[d - 1] > 1 or self.block[d - 1] > 1:
                return d
        return 1


def _from_dispatch(d: Dispatch) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, axis in enumerate("xyz"):
        out[f"hidden_block_count_{axis}"] = d.grid[i]
        out[f"hidden_group_size_{axis}"] = d.block[i]
        # grid size in work-items modulo the work-group size: 0 because a HIP launch covers
        # whole work-groups (hipModuleLaunchKernel takes the grid in blocks).
        out[f"hidden_remainder_{axis}"] = 0
        out[f"hidden_global_offset_{axis}"] = 0
    out["hidden_grid_dims"] = d.grid_dims
    return out


HIDDEN_FROM_DISPATCH: Final = frozenset(_from_dispatch(Dispatch((1, 1, 1), (1, 1, 1))))
"""Hidden value kinds whose values come from the launch; every other hidden kind is 0 unless
the caller passes it (e.g. `hidden_private_base` for a simulator's apertures)."""


@dataclass(frozen=True, slots=True)
class KernargSlot:
    """What went where: one metadata argument and the bytes written for it."""

    index: int
    offset: int
    size: int
    value_kind: str
    name: str | None
    data: bytes


@dataclass(frozen=True, slots=True)
class KernargSegment:
    """The packed segment: `data` is exactly `.kernarg_segment_size` bytes, to be placed at
    an address aligned to `alignment` (`.kernarg_segment_align`)."""

    data: bytes
    alignment: int
    placed: tuple[KernargSlot, ...] = field(default=())
    """Every argument's slot, in `.args` order; one whose `data` is shorter than its size
    holds what `data` has at its place (an explicit argument packed by a `KernargLayout`,
    whose places do not overlap: a slot object per argument and launch cost ~40 us for a
    kernel of 48 arguments, and only `inspect` reads them)."""

    @property
    def slots(self) -> tuple[KernargSlot, ...]:
        """What went where: each argument's slot with the bytes written for it."""
        return tuple(s if len(s.data) == s.size else
                     replace(s, data=self.data[s.offset:s.offset + s.size])
                     for s in self.placed)


@dataclass(frozen=True, slots=True)
class KernargMismatch:
    """The caller's arguments do not fit the metadata (a finding: the compiler's kernel
    signature differs from the one the harness launches)."""

    detail: str
    arg_index: int | None = None
    kind: str = "kernarg-mismatch"


def _fits(value: int, size: int) -> bool:
    return 0 <= value < (1 << (8 * size))


def _check(arg: KernelArg, segment_size: int, index: int) -> KernargMismatch | None:
    if arg.offset < 0 or arg.size < 0 or arg.offset + arg.size > segment_size:
        return KernargMismatch(f"arg {index} ({arg.value_kind}) at offset {arg.offset} size "
                               f"{arg.size} lies outside the {segment_size}-byte segment",
                               index)
    return None


def pack_kernargs(meta: KernelMetadata, args: Sequence[ArgValue], dispatch: Dispatch, *,
                  hidden: Mapping[str, int] | None = None) -> KernargSegment | KernargMismatch:
    """Pack `args` (explicit arguments, in `.args` order) and the hidden arguments for
    `dispatch` into the kernarg segment `meta` describes.

    What depends on the metadata and the dispatch alone is worked out once per metadata
    object, dispatch and `hidden` (`kernarg_layout`): a launch then checks and writes only
    its explicit arguments. Arguments that do not fit go through `_pack` for their finding."""
    layout = kernarg_layout(meta, dispatch, hidden)
    if layout is None or not layout.fits(args):
        return _pack(meta, args, dispatch, hidden)
    return layout.pack([a.data for a in args])


@dataclass(frozen=True, slots=True)
class KernargLayout:
    """`pack_kernargs`'s work that does not depend on the explicit arguments' values: the
    segment with every hidden argument written (explicit ones zero), every argument's slot
    (an explicit one's without bytes: `KernargSegment.placed`), the explicit arguments with
    their indices in `.args`."""

    template: bytes
    alignment: int
    slots: tuple[KernargSlot, ...]
    explicit: tuple[tuple[int, KernelArg], ...]

    def fits(self, args: Sequence[ArgValue]) -> bool:
        """Whether `args` have the explicit arguments' number, value kinds and sizes."""
        return len(args) == len(self.explicit) and all(
            a.value_kind == arg.value_kind and len(a.data) == arg.size
            for a, (_, arg) in zip(args, self.explicit, strict=True))

    def pack(self, data: Sequence[bytes]) -> KernargSegment:
        """The segment whose explicit argument k holds `data[k]` (of its size: `fits`)."""
        buf = bytearray(self.template)
        for d, (_, arg) in zip(data, self.explicit, strict=True):
            buf[arg.offset:arg.offset + arg.size] = d
        return KernargSegment(bytes(buf), self.alignment, self.slots)


_LAYOUTS: dict[tuple[int, Dispatch, tuple[tuple[str, int], ...]],
               tuple[KernelMetadata, KernargLayout | None]] = {}
"""By metadata object (its id, the object held so that the id is not reused: hashing a
`KernelMetadata` by value costs more than packing), dispatch and hidden values."""


def kernarg_layout(meta: KernelMetadata, dispatch: Dispatch,
                   hidden: Mapping[str, int] | None = None) -> KernargLayout | None:
    """The `KernargLayout` of `meta` for `dispatch` (and `hidden` values), kept for later
    launches; None where `_pack` must find what is wrong (an argument outside the segment,
    a hidden value too wide) or where arguments overlap (the later one's bytes win in
    `_pack`)."""
    key = (id(meta), dispatch, tuple(hidden.items()) if hidden else ())
    held = _LAYOUTS.get(key)
    if held is not None and held[0] is meta:
        return held[1]
    size = meta.kernarg_segment_size
    buf = bytearray(size)
    hidden_values = {**_from_dispatch(dispatch), **(hidden or {})}
    slots: list[KernargSlot] = []
    explicit: list[tuple[int, KernelArg]] = []
    layout: KernargLayout | None = None
    for index, arg in enumerate(meta.args):
        if _check(arg, size, index):
            break
        if arg.is_hidden:
            value = hidden_values.get(arg.value_kind, 0)
            if not _fits(value, arg.size):
                break
            data = value.to_bytes(arg.size, "little")
            buf[arg.offset:arg.offset + arg.size] = data
        else:
            explicit.append((index, arg))
            data = b""
        slots.append(KernargSlot(index, arg.offset, arg.size, arg.value_kind, arg.name, data))
    else:
        spans = sorted((a.offset, a.offset + a.size) for a in meta.args if a.size)
        if all(end <= start for (_, end), (start, _) in pairwise(spans)):
            layout = KernargLayout(bytes(buf), meta.kernarg_segment_align, tuple(slots),
                                   tuple(explicit))
    if len(_LAYOUTS) >= 512:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (meta, layout)
    return layout


def _pack(meta: KernelMetadata, args: Sequence[ArgValue], dispatch: Dispatch,
          hidden: Mapping[str, int] | None) -> KernargSegment | KernargMismatch:
    """`pack_kernargs` argument by argument, in `.args` order: the first argument that does
    not fit is the finding."""
    size = meta.kernarg_segment_size
    buf = bytearray(size)
    explicit = meta.explicit_args
    if len(args) != len(explicit):
        return KernargMismatch(f"kernel {meta.name} takes {len(explicit)} explicit arguments "
                               f"({', '.join(a.value_kind for a in explicit) or 'none'}); "
                               f"{len(args)} given")
    hidden_values = {**_from_dispatch(dispatch), **(hidden or {})}
    slots: list[KernargSlot] = []
    given = iter(args)
    for index, arg in enumerate(meta.args):
        if bad := _check(arg, size, index):
            return bad
        label = arg.name or f"arg {index}"
        if arg.is_hidden:
            value = hidden_values.get(arg.value_kind, 0)
            if not _fits(value, arg.size):
                return KernargMismatch(f"{arg.value_kind} = {value} does not fit in "
                                       f"{arg.size} bytes", index)
            data = value.to_bytes(arg.size, "little")
        else:
            value_arg = next(given)
            if value_arg.value_kind != arg.value_kind:
                return KernargMismatch(f"{label}: metadata says {arg.value_kind}, the launch "
                                       f"passes {value_arg.value_kind}", index)
            if len(value_arg.data) != arg.size:
                return KernargMismatch(f"{label}: metadata says {arg.size} bytes, the launch "
                                       f"passes {len(value_arg.data)}", index)
            data = value_arg.data
        buf[arg.offset:arg.offset + arg.size] = data
        slots.append(KernargSlot(index, arg.offset, arg.size, arg.value_kind, arg.name, data))
    return KernargSegment(bytes(buf), meta.kernarg_segment_align, tuple(slots))
