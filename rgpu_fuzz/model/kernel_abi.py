"""The kernel ABI every executor shares: the flattened argument list and the trap record.

A kernel's source parameters (`KernelParam`) flatten into machine-level arguments
(`FlatArg`) the same way on every target: a slice `a` becomes its data pointer `a` then its
length `a.len` (u64), a scalar stays one argument of its own type, in the signature's order.
The host target packs the flattened list into 64-bit slots, the amdgcn target makes each one
a kernel IR parameter (and so one entry of the code object's `.args` metadata); executors
fill it from `ArgumentValues`, never from their own reading of the case.

The trap record is `TRAP_RECORD_WORDS` little-endian `u32`s: code (`TRAP_CODES`, 0 = none),
location id (an index into the lowering's location table), block x, y, z, thread x, y, z.
`decode_trap` turns one into a `Trap` outcome for every executor alike.

This module sits in `model` (the bottom layer) so the simulator, which may not import
`lang` or `lower`, reads the same facts as the lowering that writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from rgpu_fuzz.model.case import BufferArg, Case, ScalarArg
from rgpu_fuzz.model.inputs import materialise
from rgpu_fuzz.model.outcome import Location, Stats, Trap, TrapKind
from rgpu_fuzz.model.scalars import Scalar

TRAP_CODES: dict[TrapKind, int] = {
    TrapKind.DIV_BY_ZERO: 1,
    TrapKind.DIV_OVERFLOW: 2,
    TrapKind.OUT_OF_BOUNDS: 3,
    TrapKind.ASSERT: 4,
}
"""The `code` word of the trap record (0: no trap)."""

KIND_OF_CODE: dict[int, TrapKind] = {code: kind for kind, code in TRAP_CODES.items()}

TRAP_RECORD_WORDS = 8
"""code, location id, block x, y, z, thread x, y, z (each a u32)."""

TRAP_PARAM = "rgpu.trap"
"""The name of the GPU kernel's last parameter, the trap record's address."""

LEN_SUFFIX = ".len"
"""A slice `a`'s length travels as the flattened argument `a.len`."""


class ArgRole(StrEnum):
    """What one flattened argument carries."""

    DATA = "data"      # a slice's element pointer (global memory)
    LEN = "len"        # a slice's element count, u64
    SCALAR = "scalar"  # a scalar parameter's value, by value


@dataclass(frozen=True, slots=True)
class KernelParam:
    """One parameter of a kernel's signature."""

    name: str
    elem: Scalar
    """The element type of a slice, or the scalar's type."""
    slice: bool
    mutable: bool = False


@dataclass(frozen=True, slots=True)
class FlatArg:
    """One machine-level argument: `name` is the IR parameter name (`a`, `a.len`, `n`)."""

    name: str
    param: str
    role: ArgRole
    scalar: Scalar
    """The slice's element type (DATA), U64 (LEN) or the scalar's type (SCALAR)."""


_FLAT: dict[int, tuple[Sequence[KernelParam], tuple[FlatArg, ...]]] = {}
"""Flattened signatures by the id of their (tuple) parameter list, the tuple held so that
its id is not reused: executors flatten a case's signature at every launch."""


def flatten(params: Sequence[KernelParam]) -> tuple[FlatArg, ...]:
    """The flattened argument list of a signature (see the module docstring)."""
    held = _FLAT.get(id(params))
    if held is not None and held[0] is params:
        return held[1]
    out: list[FlatArg] = []
    for p in params:
        if p.slice:
            out.append(FlatArg(p.name, p.name, ArgRole.DATA, p.elem))
            out.append(FlatArg(p.name + LEN_SUFFIX, p.name, ArgRole.LEN, Scalar.U64))
        else:
            out.append(FlatArg(p.name, p.name, ArgRole.SCALAR, p.elem))
    flat = tuple(out)
    if isinstance(params, tuple):
        if len(_FLAT) >= 1024:
            _FLAT.clear()
        _FLAT[id(params)] = (params, flat)
    return flat


@dataclass(frozen=True, slots=True)
class ArgumentValues:
    """A case's arguments, materialised for one run: fresh buffers (which the executor may
    write) and the bits of each scalar."""

    params: tuple[KernelParam, ...]
    buffers: dict[str, np.ndarray]
    scalars: dict[str, int]

    @classmethod
    def of(cls, case: Case, params: Sequence[KernelParam]) -> ArgumentValues:
        buffers: dict[str, np.ndarray] = {}
        scalars: dict[str, int] = {}
        for p in params:
            arg = case.arg(p.name)
            if p.slice:
                assert isinstance(arg, BufferArg), (p, arg)
                buffers[p.name] = np.ascontiguousarray(materialise(arg))
            else:
                assert isinstance(arg, ScalarArg), (p, arg)
                scalars[p.name] = arg.bits
        return cls(tuple(params), buffers, scalars)

    def words(self, address_of: Callable[[str], int]) -> list[int]:
        """The flattened argument values as integers (`flatten` order): `address_of(name)`
        is where the executor put buffer `name`; a scalar is its bit pattern, zero-extended."""
        out: list[int] = []
        for a in flatten(self.params):
            match a.role:
                case ArgRole.DATA:
                    out.append(address_of(a.param))
                case ArgRole.LEN:
                    out.append(len(self.buffers[a.param]))
                case ArgRole.SCALAR:
                    out.append(self.scalars[a.param])
        return out

    def outputs(self) -> dict[str, tuple[Scalar, np.ndarray]]:
        """The `&mut` buffers, the outputs of a case (docs/language.md)."""
        return {p.name: (p.elem, self.buffers[p.name]) for p in self.params
                if p.slice and p.mutable}


def decode_trap(words: Sequence[int], locations: Sequence[tuple[int, int]],
                stats: Stats | None = None) -> Trap | None:
    """The trap a trap record reports, or None when its code is 0."""
    code = int(words[0])
    if code == 0:
        return None
    line, col = locations[int(words[1])]
    where = Location(line=line, col=col,
                     block=(int(words[2]), int(words[3]), int(words[4])),
                     thread=(int(words[5]), int(words[6]), int(words[7])))
    return Trap(kind=KIND_OF_CODE[code], where=where, stats=stats or Stats())


__all__ = ["KIND_OF_CODE", "LEN_SUFFIX", "TRAP_CODES", "TRAP_PARAM", "TRAP_RECORD_WORDS",
           "ArgRole", "ArgumentValues", "FlatArg", "KernelParam", "decode_trap", "flatten"]
