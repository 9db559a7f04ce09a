"""The language features a kernel uses, so a pipeline can declare what it supports and answer
`Unsupported` for the rest (DESIGN.md §4). Detected on the syntax tree, no checking needed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from functools import lru_cache

from rgpu_fuzz.lang import ast
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


_IS_NODE: dict[type, bool] = {}


def children(n: object) -> Iterator[object]:
    """The AST nodes directly under `n`, in source order."""
    is_node = _IS_NODE
    for name in _structural_fields(n):
        v = getattr(n, name)
        for c in v if isinstance(v, tuple) else (v,):
            hit = is_node.get(type(c))
            if hit is None:  # whether values of this class are nodes, asked once per class
                hit = is_node[type(c)] = is_dataclass(type(c))
            if hit:
                yield c


def walk(node: object) -> Iterator[object]:
    """Every AST node below and including `node`, depth first in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(tuple(children(n))))


def module_features(module: ast.Module) -> frozenset[str]:
    found: set[str] = set()
    for n in walk(module):
        match n:
            case ast.Shared():
                found.add("shared")
            case ast.Call(func="sync_threads"):
                found.add("barrier")
            case ast.ScalarType(scalar=s) | ast.Cast(to=s) | ast.IntLit(suffix=s) \
                    | ast.FloatLit(suffix=s) | ast.AssocCall(scalar=s) | ast.AssocConst(scalar=s):
                found |= _scalar_feature(s)
            case ast.SliceType(elem=s):
                found |= _scalar_feature(s)
            case ast.ArrayType() | ast.ArrayRepeat() | ast.ArrayList():
                found.add("local-array")
            case ast.Fn(kernel=False, inline_never=inl):
                found.add("helper")
                if inl:
                    found.add("inline-never")
            case ast.For() | ast.While() | ast.Loop():
                found.add("loop")
            case ast.MethodCall(method="mul_add"):
                found.add("mul-add")
    return frozenset(found)


def _scalar_feature(s: Scalar | None) -> set[str]:
    if s is Scalar.F32:
        return {"f32"}
    if s is Scalar.F64:
        return {"f64"}
    if s in (Scalar.I64, Scalar.U64):
        return {"i64"}
    return set()


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
