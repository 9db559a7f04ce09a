"""`run_kernel`: one launch of a checked kernel, all threads of a wave of blocks in lock step
as numpy lanes.

The reference interpreter is the executable specification (docs/language.md): it gives every
`&mut` buffer's final contents, or the first trap, or the reason the case is not
well-defined (docs/language.md "Well-definedness"). The specification runs the blocks one
after another, each with fresh (uninitialised) shared memory; global-memory race tracking
spans the whole launch.

Waves. Running blocks one by one pays numpy's per-operation cost once per block. A wave runs
up to `WAVE_LANES` lanes' worth of consecutive blocks at once instead: each block keeps its
own segment of every shared array, its own barrier check and barrier intervals, and steps
count once per block that executes a statement, exactly as block by block. A launch that
finishes as waves computes what block by block computes: blocks share only global memory,
and a global location written by one thread and accessed by another is a race that stops
the launch either way. Any stop (trap, race, uninitialised read, barrier divergence, step
budget) in a wave makes the launch run again block by block, from the original inputs, so the
reported stop is the first one in block order, as the specification defines it. Only the time
budget is not re-run: it bounds the whole call.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from rgpu_fuzz.interp.memory import SharedArray, Tracked, global_buffer
from rgpu_fuzz.interp.nanbits import latitudes, observes_nan_bits, with_consts_evaluated_again
from rgpu_fuzz.interp.program import CompiledFn, program_for
from rgpu_fuzz.interp.schedules import block_starts, explore, lane_masks
from rgpu_fuzz.interp.signals import BudgetSignal, RejectSignal, StopLanes, TrapSignal
from rgpu_fuzz.interp.state import LaneState
from rgpu_fuzz.interp.stmts import over_budget
from rgpu_fuzz.interp.waves import wave_prelude
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.atomics import uses_atomics
from rgpu_fuzz.lang.semantics.nan import NanChoice, observing
from rgpu_fuzz.model.latitude import Latitude
from rgpu_fuzz.model.outcome import Location, Rejected, RejectReason, Trap
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.targets import DEFAULT_WAVE_SIZE

if TYPE_CHECKING:
    from rgpu_fuzz.lang.checker import CheckedModule

Dim3: TypeAlias = tuple[int, int, int]
ArgValue: TypeAlias = np.ndarray | int | float | bool | np.generic

WAVE_LANES = 4096
"""The most lanes one wave runs (a wave holds at least one whole block)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """The launch ran to completion: the final contents of every `&mut` buffer, and how many
    steps (statements and loop iterations, counted once per block-wide execution) it took."""

    outputs: dict[str, np.ndarray]
    steps: int
    latitude: dict[str, Latitude] = field(default_factory=dict)
    """Per output, what else its elements may hold (`interp.nanbits`); empty when the
    kernel cannot observe NaN bits."""


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
    time_budget: float | None = None,
    waves: bool = True,
    explore_nans: bool = True,
    wave_size: int = DEFAULT_WAVE_SIZE,
) -> InterpResult:
    """Run kernel `entry` of `checked` over `grid` blocks of `block` threads.

    The launch stops with `Rejected(step-budget)` after `step_budget` steps, or once it has
    run `time_budget` seconds (None: no time limit); both are checked at every loop iteration
    and between blocks. `waves=False` runs the blocks strictly one by one (the specification's
    order; the result is the same, only slower: see the module docstring).

    Input arrays are never modified: `&mut` buffers are copied before the launch.
    IEEE exceptions are not errors here: a signalling NaN operand or an overflow is ordinary
    data, so numpy's floating-point warnings are silenced for the whole launch.

    When the outputs may depend on the unspecified bits of a NaN, `explore_nans` runs the
    launch again to find which do (`Finished.latitude`, `interp.nanbits`).

    `wave_size` is the number of lanes the wave functions run over (`interp.waves`); kernels
    without them compute the same at every wave size.
    """
    with observing() as seen:
        if uses_atomics(checked.module):
            result = explore(lambda in_waves: _run_once(
                checked, entry, grid, block, args, step_budget, time_budget, waves and in_waves,
                wave_size))
        else:
            result = _run_once(checked, entry, grid, block, args, step_budget, time_budget,
                               waves, wave_size)
    if not explore_nans or not isinstance(result, Finished) or not observes_nan_bits(
            seen.nan_bits, result.outputs):
        return result

    def rerun(choice: NanChoice) -> dict[str, np.ndarray] | None:
        again = _run_once(with_consts_evaluated_again(checked, choice), entry, grid, block,
                          args, step_budget, time_budget, waves, wave_size)
        return again.outputs if isinstance(again, Finished) else None

    return replace(result, latitude=latitudes(result.outputs, rerun))


def _run_once(checked: CheckedModule, entry: str, grid: Dim3, block: Dim3,
              args: Mapping[str, ArgValue], step_budget: int, time_budget: float | None,
              waves: bool, wave_size: int) -> InterpResult:
    deadline = None if time_budget is None else time.perf_counter() + time_budget
    with np.errstate(all="ignore"):
        try:
            launch = _Launch(checked, entry, grid, block, args, step_budget, deadline,
                             wave_size)
        except _InvalidCase as e:
            return Rejected(reason=RejectReason.INVALID_CASE, detail=str(e))
        blocks = grid[0] * grid[1] * grid[2]
        groups = min(blocks, max(1, WAVE_LANES // launch.threads)) if waves else 1
        if groups > 1:
            result = launch.run(groups)
            if isinstance(result, Finished) or isinstance(result[0], BudgetSignal):
                return launch.result(result)
        return launch.result(launch.run(1))


_Stop: TypeAlias = tuple[StopLanes, Dim3]


class _Launch:
    """One launch's fixed parts; `run` executes it from the original inputs each time."""

    def __init__(self, checked: CheckedModule, entry: str, grid: Dim3, block: Dim3,
                 args: Mapping[str, ArgValue], budget: int, deadline: float | None,
                 wave_size: int) -> None:
        if wave_size < 1:
            raise _InvalidCase(f"the wave size must be positive, got {wave_size}")
        self.wave_size = wave_size
        self.checked = checked
        self.kernel = _kernel(checked, entry)
        _check_shape(grid, "grid")
        _check_shape(block, "block")
        self.grid, self.block = grid, block
        self.threads = block[0] * block[1] * block[2]
        self.args = args
        self._bound: tuple[dict[str, Tracked], dict[str, np.ndarray]] | None = (
            _bind_args(self.kernel, args))  # an invalid argument is found before any run
        self.budget, self.deadline = budget, deadline

    def result(self, result: Finished | _Stop) -> InterpResult:
        if isinstance(result, Finished):
            return result
        return _outcome(result[0], result[1], self.block)

    def _state(self, groups: int, buffers: dict[str, Tracked],
               scalars: dict[str, np.ndarray]) -> tuple[LaneState, CompiledFn, list]:
        threads, block, grid = self.threads, self.block, self.grid
        st = LaneState(threads, groups, self.budget, self.deadline, self.wave_size)
        st.buffers = buffers
        st.lens = {name: np.full(st.lanes, len(buf), dtype=np.uint64)
                   for name, buf in buffers.items()}
        tid = st.lane_ids % threads
        st.prelude = {
            "thread_idx_x": (tid % block[0]).astype(np.uint32),
            "thread_idx_y": ((tid // block[0]) % block[1]).astype(np.uint32),
            "thread_idx_z": (tid // (block[0] * block[1])).astype(np.uint32),
        }
        st.prelude |= wave_prelude(st.waves, st.lanes)
        st.prelude |= {f"block_dim_{a}": np.full(st.lanes, d, np.uint32)
                       for a, d in zip("xyz", block, strict=True)}
        st.prelude |= {f"grid_dim_{a}": np.full(st.lanes, d, np.uint32)
                       for a, d in zip("xyz", grid, strict=True)}
        compiled = program_for(self.checked, st.lanes).fn(self.kernel.name)
        params = [(p.binding, _lanes(scalars[p.name], st.lanes)) for p in self.kernel.params
                  if p.name in scalars]
        return st, compiled, params

    def run(self, groups: int) -> Finished | _Stop:
        """Every block, `groups` consecutive (linear) blocks at a time."""
        buffers, scalars = self._bound or _bind_args(self.kernel, self.args)
        self._bound = None  # a second run starts again from the original inputs
        grid, threads = self.grid, self.threads
        blocks = grid[0] * grid[1] * grid[2]
        states: dict[int, tuple[LaneState, CompiledFn, list]] = {}
        shared = self.checked.shared
        steps = 0
        for first in block_starts(blocks, groups):
            g = min(groups, blocks - first)
            if g not in states:
                states[g] = self._state(g, buffers, scalars)
            st, compiled, params = states[g]
            st.block = _block_index(first, grid)
            st.steps = steps
            try:
                # Also outside loops: a loop-free kernel over a huge grid stops too.
                if steps > self.budget or st.out_of_time():
                    raise over_budget(st, self.kernel.span)
                linear = first + st.lane_ids // threads
                st.prelude["block_idx_x"] = (linear % grid[0]).astype(np.uint32)
                st.prelude["block_idx_y"] = ((linear // grid[0]) % grid[1]).astype(np.uint32)
                st.prelude["block_idx_z"] = (linear // (grid[0] * grid[1])).astype(np.uint32)
                st.gtid = st.lane_ids.astype(np.int64) + first * threads
                st.shared = {name: SharedArray(name, ty.elem, ty.len, g, threads)
                             for name, ty in shared.items()}
                for mask in lane_masks(st.full, threads):  # lock step, or chunk by chunk
                    frame: list[object] = [None] * compiled.bindings
                    for binding, value in params:
                        frame[binding] = value
                    st.frame, st.ret, st.brk, st.cont, st.retval = (
                        frame, st.none, st.none, st.none, None)
                    compiled.body(st, mask)
            except StopLanes as stop:
                return stop, st.block
            steps = st.steps
        outputs = {name: buf.data for name, buf in buffers.items() if buf.tracked}
        return Finished(outputs=outputs, steps=steps)


def _block_index(linear: int, grid: Dim3) -> Dim3:
    return linear % grid[0], (linear // grid[0]) % grid[1], linear // (grid[0] * grid[1])


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
