"""Which outputs of a finished launch depend on the unspecified bits of an arithmetic NaN
(docs/language.md "NaN bits"), and what else they may hold.

The first run computes one allowed execution. When a kernel can observe NaN bits (it calls
`to_bits`, or a float output holds a NaN), the launch runs twice more under
`semantics.nan.exploring`: every arithmetic NaN positive with the preferred payload, then
negative with its first NaN operand's payload (the second run is skipped when the first made
no NaN). An output element that is equal in every run does not depend on the choice and is
compared exactly (a NaN too: its bits came from the inputs or a literal). One that differs
may hold any run's value; where every run stored a NaN's bits it may hold any of their
payloads with either sign, or a signalling operand unchanged (`model.latitude.Latitude`).

The runs make every choice the same way, so choices that combine (`a.to_bits() ^
b.to_bits()` of two NaNs with independent signs; an operation with two NaN operands of
different payloads, whose second payload no run picks) are seen in two of their
combinations: a pipeline that makes another is reported (a false finding, never a false
agreement). Runs that trap or are rejected add nothing: an allowed execution that traps
where the first did not is outside what one outcome can express.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.consts import evaluate_consts
from rgpu_fuzz.lang.env import Env
from rgpu_fuzz.lang.semantics.nan import Explorer, NanChoice, exploring
from rgpu_fuzz.model.latitude import Latitude, float_nan_bits

if TYPE_CHECKING:
    from rgpu_fuzz.lang.checker import CheckedModule

_WIDTHS = {np.dtype(np.float32): 32, np.dtype(np.float64): 64, np.dtype(np.uint32): 32,
           np.dtype(np.int32): 32, np.dtype(np.uint64): 64, np.dtype(np.int64): 64,
           np.dtype(np.float16): 16, np.dtype(np.uint16): 16, np.dtype(np.int16): 16}


def observes_nan_bits(saw_nan_bits: bool, outputs: Mapping[str, np.ndarray]) -> bool:
    """Whether outputs may depend on NaN bits: only `to_bits` turns them into anything but a
    NaN (casts to integers give 0, comparisons are false), so only a run in which `to_bits`
    saw a NaN (`saw_nan_bits`) or a float output holds one."""
    return saw_nan_bits or any(
        a.dtype.kind == "f" and bool(np.isnan(a).any()) for a in outputs.values())


_AGAIN: dict[tuple[int, NanChoice], tuple[CheckedModule, CheckedModule]] = {}


def with_consts_evaluated_again(checked: CheckedModule, choice: NanChoice) -> CheckedModule:
    """`checked` with its `const` items evaluated again under `choice`: Rust leaves an
    arithmetic NaN's bits as open in a const as at run time (rustc's const evaluation gives
    0x7fc00000 for `0.0f32 / 0.0f32`, x86 at run time 0xffc00000). `checked` itself when no
    const changes, so the compiled program is reused; memoised by identity otherwise."""
    consts = {i.name: i for i in checked.module.items if isinstance(i, ast.Const)}
    if not consts:
        return checked
    hit = _AGAIN.get((id(checked), choice))
    if hit is not None and hit[0] is checked:
        return hit[1]
    env = Env(checked.source, const_types=dict(checked.const_types))
    with exploring(Explorer(choice)):
        values = evaluate_consts(consts, env)
    same = values.keys() == checked.consts.keys() and all(
        np.asarray(v).tobytes() == np.asarray(checked.consts[k]).tobytes()
        for k, v in values.items())
    again = checked if same else replace(checked, consts=values)
    if len(_AGAIN) > 64:
        _AGAIN.clear()
    _AGAIN[(id(checked), choice)] = (checked, again)
    return again


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype != np.bool_ else a


def latitudes(first: Mapping[str, np.ndarray],
              rerun: Callable[[NanChoice], Mapping[str, np.ndarray] | None]
              ) -> dict[str, Latitude]:
    """The latitude of every output of `first` (the outputs of a finished run); `rerun`
    runs the launch again from the original inputs with the consts of a choice (inside the
    exploring block) and returns its outputs, or None when it did not finish."""
    runs: list[Mapping[str, np.ndarray]] = []
    explorers: list[Explorer] = []
    for choice in NanChoice:
        explorer = Explorer(choice)
        with exploring(explorer):
            out = rerun(choice)
        explorers.append(explorer)
        if out is not None:
            runs.append(out)
        if not explorer.produced:
            break
    result = {}
    for name, values in first.items():
        base = _bits(values)
        alternatives = np.stack([_bits(r[name]) for r in runs]) if runs else \
            np.empty((0, len(base)), dtype=base.dtype)
        width = _WIDTHS.get(values.dtype, 0)
        nan = np.zeros(len(base), dtype=bool)
        signalling: frozenset[int] = frozenset()
        if width and len(alternatives):
            nan = (alternatives != base).any(axis=0) & float_nan_bits(base, width)
            for alt in alternatives:
                nan &= float_nan_bits(alt, width)
            signalling = frozenset().union(*(e.signalling[width] for e in explorers))
        result[name] = Latitude(alternatives=alternatives, nan=nan, width=width,
                                signalling=signalling)
    return result
