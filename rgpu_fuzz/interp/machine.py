"""`run_kernel`: one launch of a checked kernel, block after block, all threads of a block
in lock step as numpy lanes.

The reference interpreter is the executable specification (DESIGN.md §3): it gives every
`&mut` buffer's final contents, or the first trap, or the reason the case is not
well-defined (docs/language.md "Well-definedness"). Blocks run one after another, each with
fresh (uninitialised) shared memory; global-memory race tracking spans the whole launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from rgpu_fuzz.interp.memory import SharedArray, Tracked, global_buffer
from rgpu_fuzz.interp.program import program_for
from rgpu_fuzz.interp.signals import RejectSignal, StopLanes, TrapSignal
from rgpu_fuzz.interp.state import LaneState
from rgpu_fuzz.lang import ast
from rgpu_fuzz.model.outcome import Location, Rejected, RejectReason, Trap
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lang.checker import CheckedModule

Dim3: TypeAlias = tuple[int, int, int]
ArgValue: TypeAlias = np.ndarray | int | float | bool | np.generic


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """The launch ran to completion: the final contents of every `&mut` buffer, and how many
    steps (statements and loop iterations, counted once per block-wide execution) it took."""

    outputs: dict[str, np.ndarray]
    steps: int


InterpResult: TypeAlias = Finished | Trap | Rejected


class _InvalidCase(Exception):
    pass


def run_kernel(
    checked: CheckedModule,
    entry: str,
    *,
    grid: Dim3,
    block: Dim3,
    args: Mapping[str, ArgValue],
    step_budget: int = 10_000_000,
) -> InterpResult:
    """Run kernel `entry` of `checked` over `grid` blocks of `block` threads.

    Input arrays are never modified: `&mut` buffers are copied before the launch.
    IEEE exceptions are not errors here: a signalling NaN operand or an overflow is ordinary
    data, so numpy's floating-point warnings are silenced for the whole launch.
    """
    with np.errstate(all="ignore"):
        return _run_kernel(checked, entry, grid=grid, block=block, args=args,
                           step_budget=step_budget)


def _run_kernel(
    checked: CheckedModule,
    entry: str,
    *,
    grid: Dim3,
    block: Dim3,
    args: Mapping[str, ArgValue],
    step_budget: int = 10_000_000,
) -> InterpResult:
    """Run kernel `entry` of `checked` over `grid` blocks of `block` threads.

    Input arrays are never modified: `&mut` buffers are copied before the launch.
    """
    try:
        kernel = _kernel(checked, entry)
        _check_shape(grid, "grid")
        _check_shape(block, "block")
        threads = block[0] * block[1] * block[2]
        buffers, scalars = _bind_args(kernel, args)
    except _InvalidCase as e:
        return Rejected(reason=RejectReason.INVALID_CASE, detail=str(e))
    program = program_for(checked, threads)
    compiled = program.fn(entry)
    st = LaneState(threads, step_budget)
    st.buffers = buffers
    st.lens = {name: np.full(threads, len(buf), dtype=np.uint64)
               for name, buf in buffers.items()}
    lanes = st.lane_ids
    tid = {
        "x": (lanes % block[0]).astype(np.uint32),
        "y": ((lanes // block[0]) % block[1]).astype(np.uint32),
        "z": (lanes // (block[0] * block[1])).astype(np.uint32),
    }
    uniform = {f"block_dim_{a}": np.full(threads, d, np.uint32)
               for a, d in zip("xyz", block, strict=True)}
    uniform |= {f"grid_dim_{a}": np.full(threads, d, np.uint32)
                for a, d in zip("xyz", grid, strict=True)}
    params = [(p.binding, _lanes(scalars[p.name], threads)) for p in kernel.params
              if p.name in scalars]
    shared = checked.shared
    linear = 0
    for bz in range(grid[2]):
        for by in range(grid[1]):
            for bx in range(grid[0]):
                st.block = (bx, by, bz)
                st.prelude = {f"thread_idx_{a}": tid[a] for a in "xyz"} | uniform | {
                    f"block_idx_{a}": np.full(threads, v, np.uint32)
                    for a, v in zip("xyz", st.block, strict=True)
                }
                st.gtid = st.lane_ids.astype(np.int64) + linear * threads
                st.shared = {name: SharedArray(name, ty.elem, ty.len)
                             for name, ty in shared.items()}
                frame: list[object] = [None] * compiled.bindings
                for binding, value in params:
                    frame[binding] = value
                st.frame, st.ret, st.brk, st.cont, st.retval = (
                    frame, st.none, st.none, st.none, None)
                try:
                    compiled.body(st, st.full)
                except StopLanes as stop:
                    return _outcome(stop, st.block, block)
                linear += 1
    outputs = {name: buf.data for name, buf in buffers.items() if buf.tracked}
    return Finished(outputs=outputs, steps=st.steps)


def _lanes(value: np.ndarray, threads: int) -> np.ndarray:
    lanes = np.full(threads, value, dtype=value.dtype)
    lanes.flags.writeable = False
    return lanes


def _outcome(stop: StopLanes, block_idx: Dim3, block: Dim3) -> Trap | Rejected:
    thread = None
    if stop.lane is not None:
        lane = stop.lane
        thread = (lane % block[0], (lane // block[0]) % block[1], lane // (block[0] * block[1]))
    where = Location(line=stop.span.line, col=stop.span.col, block=block_idx, thread=thread)
    if isinstance(stop, TrapSignal):
        return Trap(kind=stop.kind, where=where)
    assert isinstance(stop, RejectSignal)
    return Rejected(reason=stop.reason, detail=stop.detail, where=where)


def _kernel(checked: CheckedModule, entry: str) -> ast.Fn:
    fn = checked.fns.get(entry)
    if fn is None or not fn.kernel:
        raise _InvalidCase(f"no kernel named `{entry}`")
    return fn


def _check_shape(dims: Dim3, what: str) -> None:
    if len(dims) != 3 or any(int(d) < 1 for d in dims):
        raise _InvalidCase(f"{what} must be three positive sizes, got {dims}")


def _bind_args(kernel: ast.Fn, args: Mapping[str, ArgValue]
               ) -> tuple[dict[str, Tracked], dict[str, np.ndarray]]:
    """Buffers (copies of the `&mut` ones) and scalar parameters as lane arrays."""
    names = {p.name for p in kernel.params}
    if extra := sorted(set(args) - names):
        raise _InvalidCase(f"no parameter named {', '.join(extra)}")
    buffers: dict[str, Tracked] = {}
    scalars: dict[str, np.ndarray] = {}
    for p in kernel.params:
        if p.name not in args:
            raise _InvalidCase(f"missing argument `{p.name}`")
        value = args[p.name]
        if isinstance(p.ty, ast.SliceType):
            arr = np.asarray(value)
            if arr.ndim != 1 or arr.dtype != p.ty.elem.dtype:
                raise _InvalidCase(
                    f"`{p.name}` needs a 1-D {p.ty.elem.dtype} array, got {arr.dtype} "
                    f"with shape {arr.shape}")
            data = arr.copy() if p.ty.mutable else arr
            buffers[p.name] = global_buffer(p.name, p.ty.elem, data, p.ty.mutable)
        else:
            assert isinstance(p.ty, ast.ScalarType)
            scalars[p.name] = _scalar_arg(p.name, p.ty.scalar, value)
    return buffers, scalars


def _scalar_arg(name: str, ty: Scalar, value: ArgValue) -> np.ndarray:
    """A scalar argument as a 0-d array of its type; ints must be in range, floats are taken
    as given when they already have the type (a Python float for `f32` rounds to nearest)."""
    if isinstance(value, np.ndarray) and value.ndim != 0:
        raise _InvalidCase(f"`{name}` is a scalar parameter")
    v = value.item() if isinstance(value, np.ndarray | np.generic) else value
    if ty.is_int:
        if isinstance(v, bool) or not isinstance(v, int) or not ty.min_value <= v <= ty.max_value:
            raise _InvalidCase(f"`{name}`: {v!r} is not a {ty}")
    elif ty is Scalar.BOOL:
        if not isinstance(v, bool):
            raise _InvalidCase(f"`{name}`: {v!r} is not a bool")
    elif isinstance(v, bool) or not isinstance(v, int | float):
        raise _InvalidCase(f"`{name}`: {v!r} is not a {ty}")
    return np.asarray(value, dtype=ty.dtype)
