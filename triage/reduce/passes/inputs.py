"""Passes over what the kernel runs on: the launch (grid to 1, block halved or 1), buffer
lengths (halved or 1), seeded `random` initialisers made explicit `values`, and input values
(buffers and scalars) moved toward 0. The kernel text is unchanged; the interestingness test
re-runs `ref`, so a buffer too short for the kernel (a trap) is never accepted."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import replace

from rgpu_fuzz.model.case import Arg, BufferArg, Case, Fill, Launch, Random, ScalarArg, Values
from rgpu_fuzz.model.inputs import random_bits
from rgpu_fuzz.model.scalars import Scalar
from triage.reduce.size import value_cost
from triage.reduce.state import Pass, State

MAX_ELEMENTWISE = 256
"""Buffers longer than this are only shrunk in chunks, not element by element."""


def _dims_smaller(dims: tuple[int, int, int]) -> Iterator[tuple[int, int, int]]:
    if dims != (1, 1, 1):
        yield (1, 1, 1)
    for axis in range(3):
        if dims[axis] > 1:
            for v in dict.fromkeys((1, dims[axis] // 2, dims[axis] - 1)):
                new = list(dims)
                new[axis] = v
                yield (new[0], new[1], new[2])


def shrink_launch(state: State) -> Iterator[Case]:
    """Grid to one block first (fewer threads for every later candidate), then the block."""
    launch = state.case.launch
    for grid in _dims_smaller(launch.grid):
        yield state.with_inputs(launch=Launch(grid=grid, block=launch.block))
    for block in _dims_smaller(launch.block):
        yield state.with_inputs(launch=Launch(grid=launch.grid, block=block))


def _with_arg(state: State, index: int, arg: Arg) -> Case:
    args = list(state.case.args)
    args[index] = arg
    return state.with_inputs(args=tuple(args))


def shrink_buffers(state: State) -> Iterator[Case]:
    """Each buffer's length → 1, then halved (explicit values truncated)."""
    for i, arg in enumerate(state.case.args):
        if not isinstance(arg, BufferArg) or arg.len <= 1:
            continue
        for n in dict.fromkeys((1, arg.len // 2, arg.len - 1)):
            init = Values(arg.init.bits[:n]) if isinstance(arg.init, Values) else arg.init
            yield _with_arg(state, i, replace(arg, len=n, init=init))


def _bits_of(value: float | int, ty: Scalar) -> int:
    if ty.is_float:
        fmt, ufmt = ("<f", "<I") if ty is Scalar.F32 else ("<d", "<Q")
        return int(struct.unpack(ufmt, struct.pack(fmt, float(value)))[0])
    if ty is Scalar.BOOL:
        return int(value) & 1
    return int(value) & ((1 << ty.bits) - 1)


def simpler_bits(bits: int, ty: Scalar) -> list[int]:
    """Bit patterns of `ty` simpler than `bits` (lower `value_cost`), simplest first."""
    options = [0, _bits_of(1, ty)]
    if ty.is_int:
        signed = bits - (1 << ty.bits) if ty.is_signed and bits >> (ty.bits - 1) else bits
        options.append(_bits_of(int(signed / 2), ty))
        if signed < 0:
            options.append(_bits_of(-signed, ty))
    cost = value_cost(bits, ty)
    return [b for b in dict.fromkeys(options) if value_cost(b, ty) < cost]


def shrink_values(state: State) -> Iterator[Case]:
    """`random` → explicit `values` (same bits); values → all zero (`fill`), runs of zeros
    (halving), then each element simpler; scalar arguments simpler."""
    for i, arg in enumerate(state.case.args):
        if isinstance(arg, ScalarArg):
            for b in simpler_bits(arg.bits, arg.ty):
                yield _with_arg(state, i, replace(arg, bits=b))
            continue
        match arg.init:
            case Fill(bits=b):
                for s in simpler_bits(b, arg.elem):
                    yield _with_arg(state, i, replace(arg, init=Fill(s)))
            case Random(seed=seed, dist=dist):
                yield _with_arg(state, i, replace(arg, init=Fill(0)))
                bits = tuple(int(x) for x in random_bits(seed, dist, arg.elem, arg.len))
                yield _with_arg(state, i, replace(arg, init=Values(bits)))
            case Values(bits=bits):
                yield _with_arg(state, i, replace(arg, init=Fill(0)))
                yield from _shrink_value_list(state, i, arg, bits)


def _shrink_value_list(state: State, index: int, arg: BufferArg,
                       bits: tuple[int, ...]) -> Iterator[Case]:
    n = len(bits)
    chunk = max(1, n // 2)
    while chunk >= 1 and (chunk > 1 or n <= MAX_ELEMENTWISE):
        for start in range(0, n, chunk):
            part = bits[start:start + chunk]
            if any(part) and chunk > 1:
                zeroed = bits[:start] + (0,) * len(part) + bits[start + chunk:]
                yield _with_arg(state, index, replace(arg, init=Values(zeroed)))
        if chunk == 1:
            break
        chunk //= 2
    if n > MAX_ELEMENTWISE:
        return
    for j, b in enumerate(bits):
        for s in simpler_bits(b, arg.elem):
            new = (*bits[:j], s, *bits[j + 1:])
            yield _with_arg(state, index, replace(arg, init=Values(new)))


SHRINK_LAUNCH = Pass("shrink-launch", shrink_launch)
SHRINK_BUFFERS = Pass("shrink-buffers", shrink_buffers)
SHRINK_VALUES = Pass("shrink-values", shrink_values)
