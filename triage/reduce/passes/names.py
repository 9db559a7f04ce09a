"""Canonical names: locals become `a`, `b`, `c`... in binding order (per function), helpers
`f`, `g`, `h`..., consts and shared arrays `A`, `B`, `C`.... Reduced cases then read alike,
and two reductions of one bug tend to print the same. Kernel parameters keep their names:
they are the case's argument names. Renaming uses the checker's bindings, so shadowing is
resolved once and never guessed."""

from __future__ import annotations

import string
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.lexer import KEYWORDS
from rgpu_fuzz.model.case import Case
from triage.reduce.state import Pass, State
from triage.reduce.tree import nodes, rebuild


def _fresh(alphabet: str, taken: set[str]) -> Iterator[str]:
    n = 0
    while True:
        for c in alphabet:
            name = c if n == 0 else f"{c}{n}"
            if name not in taken and name not in KEYWORDS:
                yield name
        n += 1


def _item_names(state: State) -> dict[str, str]:
    """Old → new names of helpers, consts and shared arrays."""
    module, entry = state.module, state.case.entry
    kernel_params = {p.name for p in state.kernel.params}
    taken = {entry} | kernel_params | set(ast.PRELUDE_FUNCTIONS)
    fn_names = _fresh("fghpqrstuvw", taken)
    upper = _fresh(string.ascii_uppercase, taken)
    mapping: dict[str, str] = {}
    for item in module.items:
        if isinstance(item, ast.Fn) and not item.kernel:
            mapping[item.name] = next(fn_names)
        elif isinstance(item, ast.Const | ast.Shared):
            mapping[item.name] = next(upper)
    return mapping


def _local_names(fn: ast.Fn, reserved: set[str]) -> dict[int, str]:
    """Binding → new name for the locals (and helper parameters) of one function."""
    keep = {p.binding: p.name for p in fn.params if fn.kernel and p.binding is not None}
    taken = reserved | set(keep.values())
    bindings = sorted({b for _, n in nodes(fn) if isinstance(n, ast.Param | ast.Let | ast.For)
                       and (b := n.binding) is not None and b not in keep})
    fresh = _fresh(string.ascii_lowercase, taken)
    return {**keep, **{b: next(fresh) for b in bindings}}


def _renamed(state: State, items: bool, locals_: bool) -> ast.Module:
    item_map = _item_names(state) if items else {}
    reserved = set(item_map.values()) | {i.name for i in state.module.items
                                         if isinstance(i, ast.Fn | ast.Const | ast.Shared)
                                         and i.name not in item_map}
    reserved |= set(ast.PRELUDE_FUNCTIONS) | {state.case.entry}

    def rename_item(name: str) -> str:
        return item_map.get(name, name)

    new_items = []
    for item in state.module.items:
        local_map = _local_names(item, reserved) if locals_ and isinstance(item, ast.Fn) else {}

        def visit(n: Any, local_map: dict[int, str] = local_map) -> Any:
            match n:
                case ast.Name(kind=ast.NameKind.LOCAL, binding=b) if b in local_map:
                    return replace(n, ident=local_map[b])
                case ast.Name(kind=kind) if kind is not ast.NameKind.LOCAL:
                    return replace(n, ident=rename_item(n.ident))
                case ast.Let(binding=b) | ast.Param(binding=b) if b in local_map:
                    return replace(n, name=local_map[b])
                case ast.For(binding=b) if b in local_map:
                    return replace(n, var=local_map[b])
                case ast.Call(func=func):
                    return replace(n, func=rename_item(func))
                case ast.Fn() | ast.Const() | ast.Shared():
                    return replace(n, name=rename_item(n.name))
            return n

        new_items.append(rebuild(item, visit))
    return ast.Module(items=tuple(new_items))


def canonical_names(state: State) -> Iterator[Case]:
    """Everything renamed at once, then items only, then locals only."""
    for items, locals_ in ((True, True), (True, False), (False, True)):
        yield state.with_module(_renamed(state, items, locals_))


CANONICAL_NAMES = Pass("canonical-names", canonical_names)
