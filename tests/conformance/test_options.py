"""The option contract every registered pipeline keeps (`rgpu_fuzz.pipelines.options`):
its declarations are unambiguous, each default written canonically parses back to itself,
a label parses back to the same label, and a token no declaration claims is refused.

Runs over every name the registry knows (built-ins and entry points), so a new pipeline
(`amdgpu-sim`, `rustc-amdgpu`, `hip`, a third party's) is checked the day it registers."""

from __future__ import annotations

import pytest

from rgpu_fuzz.pipelines.options import Flag, PathOption, PipelineError
from rgpu_fuzz.pipelines.registry import RESERVED_NAMES, Registry

REGISTRY = Registry()


@pytest.mark.parametrize("name", REGISTRY.names())
def test_declarations_are_unambiguous(name: str) -> None:
    decls = REGISTRY.cls(name).declared_options()
    names = [d.name for d in decls]
    assert len(names) == len(set(names)), names
    for d in decls:
        if isinstance(d, PathOption) or d.default is None:
            continue
        token = d.render(d.default)
        claimants = [o.name for o in decls if o.claims(token)]
        assert claimants == [d.name], (token, claimants)
        assert d.read(token) == (True if isinstance(d, Flag) else d.default)


@pytest.mark.parametrize("name", REGISTRY.names())
def test_label_round_trips(name: str) -> None:
    cls = REGISTRY.cls(name)
    tokens = [d.render(d.default) for d in cls.declared_options()
              if not isinstance(d, PathOption | Flag) and not d.execution]
    spec = ":".join((name, *reversed(tokens)))     # any order in, declaration order out
    pipeline = REGISTRY.create(spec)
    assert REGISTRY.create(pipeline.label).label == pipeline.label
    assert pipeline.label == ":".join((name, *tokens))
    with pytest.raises(PipelineError, match="unknown option"):
        REGISTRY.create(f"{name}:no-such-option")


def test_every_builtin_name_is_reserved() -> None:
    from rgpu_fuzz.pipelines.registry import BUILTIN

    assert set(BUILTIN) <= RESERVED_NAMES
