"""The language features a kernel uses, so a pipeline can declare what it supports and answer
`Unsupported` for the rest (docs/design.md §3). Detected on the syntax tree, no checking needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass
from functools import lru_cache
from typing import Any, get_args, get_origin, get_type_hints

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.methods import WAVE_FUNCTIONS
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.scalars import Scalar

FEATURES: dict[str, str] = {
    "shared": "#[shared] static mut arrays",
    "barrier": "sync_threads()",
    "f32": "binary32 floats",
    "f64": "binary64 floats",
    "i64": "64-bit integers i64 and u64 (usize indexing is everywhere and not counted)",
    "local-array": "private arrays [T; N]",
    "helper": "helper fns",
    "inline-never": "#[inline(never)] helpers",
    "loop": "for, while and loop",
    "launch-3d": "launches with y or z extent > 1",
    "mul-add": "fused multiply-add",
    "wave": "wave functions: wave_size(), lane_id(), ballots, lane reads, shuffles, reductions",
}


_FIELDS: dict[type, tuple[str, ...]] = {}


def _structural_fields(n: object) -> tuple[str, ...]:
    """The fields of a node that hold sub-trees (not `span`, not the checker's `ty`), cached
    per class: coverage statistics and signatures walk every node of thousands of kernels."""
    names = _FIELDS.get(type(n))
    if names is None:
        names = tuple(f.name for f in fields(n) if f.name not in ("span", "ty")) \
            if is_dataclass(n) else ()
        _FIELDS[type(n)] = names
    return names


_SUBTREES: dict[type, tuple[tuple[str, bool], ...] | None] = {}


def _subtree_fields(cls: type) -> tuple[tuple[str, bool], ...] | None:
    """`(name, holds a tuple)` for each field of an AST class that can hold sub-trees: the
    structural fields whose declared type names an AST node class (a node, an optional node
    or a tuple of nodes), read from the annotations once per class. None for a class outside
    `lang/ast.py`, whose children are found by looking at the values."""
    if cls.__module__ != ast.__name__ or not is_dataclass(cls):
        return None
    hints = get_type_hints(cls)
    out = []
    for name in _structural_fields_of(cls):
        hint = hints[name]
        many = get_origin(hint) is tuple
        kinds = get_args(hint)[:1] if many else (hint,)
        flat = [k for kind in kinds for k in (get_args(kind) or (kind,))]
        if any(isinstance(k, type) and is_dataclass(k) for k in flat):
            out.append((name, many))
    return tuple(out)


def _structural_fields_of(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.name not in ("span", "ty"))


_IS_NODE: dict[type, bool] = {}


def children(n: object) -> list[object]:
    """The AST nodes directly under `n`, in source order (a list: the interpreter asks for
    them ~160 times per default kernel, and a generator costs twice as much)."""
    cls = type(n)
    try:
        subtrees = _SUBTREES[cls]
    except KeyError:
        subtrees = _SUBTREES[cls] = _subtree_fields(cls)
    out: list[object] = []
    if subtrees is not None:
        for name, many in subtrees:
            v = getattr(n, name)
            if many:
                out += v
            elif v is not None:
                out.append(v)
        return out
    is_node = _IS_NODE
    for name in _structural_fields(n):
        v = getattr(n, name)
        for c in v if isinstance(v, tuple) else (v,):
            hit = is_node.get(type(c))
            if hit is None:  # whether values of this class are nodes, asked once per class
                hit = is_node[type(c)] = is_dataclass(type(c))
            if hit:
                out.append(c)
    return out


def walk(node: object) -> Iterator[object]:
    """Every AST node below and including `node`, depth first in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kids = children(n)
        if kids:
            kids.reverse()
            stack += kids


def module_features(module: ast.Module) -> frozenset[str]:
    found: set[str] = set()
    for n in walk(module):
        rule = _FEATURE_RULES.get(type(n))
        if rule is not None:
            rule(n, found)
    return frozenset(found)


def _add_scalar(attr: str) -> Callable[[Any, set[str]], None]:
    def rule(n: Any, found: set[str]) -> None:
        feature = _SCALAR_FEATURES.get(getattr(n, attr))
        if feature is not None:
            found.add(feature)
    return rule


def _add(feature: str) -> Callable[[Any, set[str]], None]:
    def rule(n: Any, found: set[str]) -> None:
        found.add(feature)
    return rule


def _typed(n: ast.Param | ast.Let | ast.Const, found: set[str]) -> None:
    """A declared type: it is a field named `ty`, which the walk leaves out (on expressions
    `ty` is the checker's annotation, not syntax)."""
    match n.ty:
        case ast.ScalarType(scalar=s) | ast.SliceType(elem=s):
            _scalar(s, found)
        case ast.ArrayType(elem=s):
            found.add("local-array")
            _scalar(s, found)


def _scalar(s: Scalar | None, found: set[str]) -> None:
    feature = _SCALAR_FEATURES.get(s)
    if feature is not None:
        found.add(feature)


def _shared(n: ast.Shared, found: set[str]) -> None:
    found.add("shared")
    _scalar(n.elem, found)


def _array_type(n: ast.ArrayType, found: set[str]) -> None:
    found.add("local-array")
    _scalar(n.elem, found)


def _call(n: ast.Call, found: set[str]) -> None:
    if n.func == "sync_threads":
        found.add("barrier")
    elif n.func in WAVE_FUNCTIONS:
        found.add("wave")


def _fn(n: ast.Fn, found: set[str]) -> None:
    if not n.kernel:
        found.add("helper")
        if n.inline_never:
            found.add("inline-never")


def _method_call(n: ast.MethodCall, found: set[str]) -> None:
    if n.method == "mul_add":
        found.add("mul-add")


_SCALAR_FEATURES: dict[Scalar | None, str] = {
    Scalar.F32: "f32", Scalar.F64: "f64", Scalar.I64: "i64", Scalar.U64: "i64"}

_FEATURE_RULES: dict[type, Callable[[Any, set[str]], None]] = {
    ast.Shared: _shared,
    ast.Call: _call,
    ast.ScalarType: _add_scalar("scalar"),
    ast.Cast: _add_scalar("to"),
    ast.IntLit: _add_scalar("suffix"),
    ast.FloatLit: _add_scalar("suffix"),
    ast.AssocCall: _add_scalar("scalar"),
    ast.AssocConst: _add_scalar("scalar"),
    ast.SliceType: _add_scalar("elem"),
    ast.ArrayType: _array_type,
    ast.Param: _typed,
    ast.Let: _typed,
    ast.Const: _typed,
    ast.ArrayRepeat: _add("local-array"),
    ast.ArrayList: _add("local-array"),
    ast.Fn: _fn,
    ast.For: _add("loop"),
    ast.While: _add("loop"),
    ast.Loop: _add("loop"),
    ast.MethodCall: _method_call,
}
"""What each node class adds to a module's features (one dictionary look-up per node)."""


@lru_cache(maxsize=1024)
def _module_of(kernel: str) -> ast.Module | None:
    from rgpu_fuzz.lang.parser import parse
    from rgpu_fuzz.lang.source import DiagnosticError

    try:
        return parse(kernel, "<case>")
    except DiagnosticError:
        return None


def case_module(case: Case) -> ast.Module | None:
    """The parsed kernel of a case, or None when it does not parse (pipelines report why).
    Cached on the kernel text: one case is parsed by features, oracle and triage alike, and
    syntax trees are immutable."""
    return _module_of(case.kernel)


@lru_cache(maxsize=1024)
def _kernel_features(kernel: str) -> frozenset[str]:
    module = _module_of(kernel)
    return frozenset(module_features(module)) if module is not None else frozenset()


def case_features(case: Case) -> frozenset[str]:
    """Features of the case's kernel plus those of its launch. An unparsable kernel has none
    (every pipeline will reject it on its own). The kernel's part is cached on its text: a
    campaign asks once for its pipelines and once for its statistics."""
    feats = _kernel_features(case.kernel)
    if case.launch.grid[1:] != (1, 1) or case.launch.block[1:] != (1, 1):
        return feats | {"launch-3d"}
    return feats
