"""The call graph of helper functions, and the no-recursion rule (docs/language.md "Items").

GPU code has no cheap stack: recursion, direct or mutual, is outside the language. Each cycle
is reported once, at the call that enters it from its first function in file order, as
"recursion is not allowed: f -> g -> f".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rgpu_fuzz.lang.source import Span

__all__ = ["find_cycles"]


def find_cycles(
    order: Sequence[str], calls: Mapping[str, Sequence[tuple[str, Span]]]
) -> list[tuple[tuple[str, ...], Span]]:
    """One cycle per strongly connected component that recurses: the path (first function
    repeated at the end) and the span of its first call. `order` is the functions in file
    order; `calls[f]` lists the calls `f` makes, in source order, and has a key for every
    function."""
    index = {name: i for i, name in enumerate(order)}
    out: list[tuple[tuple[str, ...], Span]] = []
    for component in _components(order, calls):
        start = min(component, key=index.__getitem__)
        members = set(component)
        path = _path_back(start, members, calls)
        if path is not None:
            out.append(path)
    out.sort(key=lambda c: index[c[0][0]])
    return out


def _path_back(start: str, members: set[str], calls: Mapping[str, Sequence[tuple[str, Span]]]
               ) -> tuple[tuple[str, ...], Span] | None:
    """A shortest call path from `start` back to itself inside its component (BFS)."""
    parents: dict[str, tuple[str, Span]] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for f in frontier:
            for g, span in calls.get(f, ()):
                if g == start:
                    chain = [f]
                    while chain[-1] != start:
                        chain.append(parents[chain[-1]][0])
                    names = (*reversed(chain), start)
                    first = parents[names[1]][1] if len(names) > 2 else span
                    return names, first
                if g in members and g not in parents and g != start:
                    parents[g] = (f, span)
                    nxt.append(g)
        frontier = nxt
    return None


def _components(order: Sequence[str], calls: Mapping[str, Sequence[tuple[str, Span]]]
                ) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative: call chains can be long)."""
    idx: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in order:
        if root in idx:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                idx[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            succ = [g for g, _ in calls.get(v, ()) if g in calls]
            if i < len(succ):
                work.append((v, i + 1))
                w = succ[i]
                if w not in idx:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], idx[w])
                continue
            if low[v] == idx[v]:
                comp: list[str] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                result.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return result
