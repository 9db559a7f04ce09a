"""A checked module compiled for one block size: every function's closures, built once.

Compilation is lazy per function (a kernel compiles the helpers it calls) and cached per
(CheckedModule, lanes), so the reducer and a campaign re-running one module pay for it once.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from rgpu_fuzz.interp.exprs import BlockFn
from rgpu_fuzz.interp.state import LaneState
from rgpu_fuzz.interp.stmts import FnCompiler
from rgpu_fuzz.lang import ast

if TYPE_CHECKING:
    from rgpu_fuzz.lang.checker import CheckedModule


class CompiledFn:
    """One function's body closure plus what a call needs to set up its frame."""

    __slots__ = ("bindings", "body", "name", "params", "ret_dtype")

    def __init__(self, fn: ast.Fn, body: BlockFn, bindings: int) -> None:
        self.name = fn.name
        self.body = body
        self.bindings = bindings
        self.params = tuple(_binding(p) for p in fn.params)
        self.ret_dtype = None if fn.ret is None else fn.ret.scalar.dtype

    def invoke(self, st: LaneState, m: np.ndarray, args: list[Any]) -> Any:
        """Run the body inline for the lanes in `m` (helpers are called under the caller's
        mask; there is no recursion, so no call stack beyond Python's)."""
        saved = st.frame, st.ret, st.brk, st.cont, st.retval
        frame: list[Any] = [None] * self.bindings
        for b, v in zip(self.params, args, strict=True):
            frame[b] = v
        st.frame, st.ret, st.brk, st.cont, st.retval = frame, st.none, st.none, st.none, None
        try:
            value, _ = self.body(st, m)
            if st.retval is not None:
                value = st.retval if value is None else np.where(st.ret, st.retval, value)
        finally:
            st.frame, st.ret, st.brk, st.cont, st.retval = saved
        return value


def _binding(p: ast.Param) -> int:
    assert p.binding is not None, "the checker numbers every parameter"
    return p.binding


class Program:
    """The compiled functions of one checked module for `lanes` lanes (constants are
    arrays of that many lanes)."""

    def __init__(self, checked: CheckedModule, lanes: int) -> None:
        self.checked = checked
        self.lanes = lanes
        self._fns: dict[str, CompiledFn] = {}

    def fn(self, name: str) -> CompiledFn:
        compiled = self._fns.get(name)
        if compiled is None:
            fn = self.checked.fns[name]
            body = FnCompiler(self, fn).block(fn.body)
            compiled = CompiledFn(fn, body, self.checked.bindings[name])
            self._fns[name] = compiled
        return compiled

    def shared_len(self, name: str) -> int:
        return self.checked.shared[name].len


_CACHE: OrderedDict[tuple[int, int], tuple[object, Program]] = OrderedDict()
_CACHE_SIZE = 64


def program_for(checked: CheckedModule, lanes: int) -> Program:
    """The cached `Program` of `checked` for `lanes` lanes (identity of the checked module,
    not equality: a module is compiled again only when it is a new object)."""
    key = (id(checked), lanes)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is checked:
        _CACHE.move_to_end(key)
        return hit[1]
    program = Program(checked, lanes)
    _CACHE[key] = (checked, program)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return program


def clear_cache() -> None:
    """Forget every compiled program (benchmarks measure the cold path with it)."""
    _CACHE.clear()
