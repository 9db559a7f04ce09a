"""How big a case is, and the order that says whether a candidate is smaller.

"Smaller" is shortlex over the canonical printed kernel (tokens, then characters), then the
launch (threads, then blocks), then buffer lengths, then how complex the inputs are. The
reducer never accepts a candidate that is not strictly smaller, so every reduction
terminates and no pass can undo another's work.

Input complexity lets the value passes make progress that no size above sees: a seeded
`random` buffer costs more than any explicit `values` of the same length, and a value costs
more the further it is from 0 (integers by magnitude, floats 0.0 < 1.0 < small integral
values < anything else).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from rgpu_fuzz.lang.lexer import tokenize
from rgpu_fuzz.lang.source import DiagnosticError, SourceFile
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Random, ScalarArg, Values
from rgpu_fuzz.model.scalars import Scalar


@dataclass(frozen=True, slots=True, order=True)
class Size:
    """The reduction order's key; compare with `<`. `lines` is reported, not compared."""

    tokens: int
    chars: int
    threads: int
    blocks: int
    buffer_elements: int
    input_cost: int
    lines: int = field(compare=False)


def value_cost(bits: int, ty: Scalar) -> int:
    """How far one bit pattern of `ty` is from the simplest value (0 costs 0)."""
    if ty is Scalar.BOOL:
        return bits & 1
    if ty.is_int:
        value = bits - (1 << ty.bits) if ty.is_signed and bits >> (ty.bits - 1) else bits
        return abs(value).bit_length() + (1 if value < 0 else 0)
    fmt = "<f" if ty is Scalar.F32 else "<d"
    packed = struct.pack("<I" if ty is Scalar.F32 else "<Q", bits)
    value = struct.unpack(fmt, packed)[0]
    if bits == 0:
        return 0
    if value == 1.0:
        return 1
    if math.isfinite(value) and value == int(value) and abs(value) < 2**32:
        return 2 + abs(int(value)).bit_length() + (1 if value < 0 else 0)
    return ty.bits + 2


def _arg_cost(arg: BufferArg | ScalarArg) -> int:
    if isinstance(arg, ScalarArg):
        return value_cost(arg.bits, arg.ty)
    width = 1 if arg.elem is Scalar.BOOL else arg.elem.bits
    match arg.init:
        case Fill(bits=b):
            return value_cost(b, arg.elem)
        case Values(bits=bs):
            return sum(value_cost(b, arg.elem) for b in bs)
        case Random():
            return arg.len * (width + 3) + 1
    raise AssertionError(arg.init)


def token_count(kernel: str) -> int:
    """Tokens of a kernel text (EOF not counted); an unlexable text counts its characters."""
    try:
        return len(tokenize(SourceFile("<reduce>", kernel))) - 1
    except DiagnosticError:
        return len(kernel)


def measure(case: Case) -> Size:
    """The size of a case in the reduction order."""
    return Size(
        tokens=token_count(case.kernel),
        chars=len(case.kernel),
        threads=case.launch.blocks * case.launch.threads_per_block,
        blocks=case.launch.blocks,
        buffer_elements=sum(a.len for a in case.args if isinstance(a, BufferArg)),
        input_cost=sum(_arg_cost(a) for a in case.args),
        lines=len(case.kernel.splitlines()),
    )
