"""Where pipelines come from: built-ins, the `rgpu_fuzz.pipelines` entry-point group, and
plugin files given with `--plugin`. All three register the same way, by naming a
`Pipeline` subclass; classes are imported lazily, when a spec names them."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path

from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec

ENTRY_POINT_GROUP = "rgpu_fuzz.pipelines"

BUILTIN: dict[str, str] = {
    "ref": "rgpu_fuzz.pipelines.ref:RefPipeline",
    "llvm-cpu": "rgpu_fuzz.pipelines.llvm_cpu:LlvmCpuPipeline",
}


class PipelineError(Exception):
    """A spec or plugin the user gave cannot be used; `str()` is one line."""


class Registry:
    """Maps pipeline names to classes, loading each lazily from a `module:Class` string."""

    def __init__(self) -> None:
        self._targets: dict[str, str | type[Pipeline]] = dict(BUILTIN)
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            self._targets.setdefault(ep.name, ep.value)

    def names(self) -> list[str]:
        return sorted(self._targets)

    def register(self, cls: type[Pipeline]) -> None:
        """Add (or replace) a pipeline class under its `name`."""
        self._targets[cls.name] = cls

    def load_plugin(self, path: str | Path) -> list[str]:
        """Import a plugin file and register every Pipeline subclass it defines."""
        p = Path(path)
        if not p.is_file():
            raise PipelineError(f"{p}: plugin file not found")
        mod_name = f"rgpu_fuzz_plugin_{p.stem}_{abs(hash(str(p.resolve())))}"
        spec = importlib.util.spec_from_file_location(mod_name, p)
        if spec is None or spec.loader is None:
            raise PipelineError(f"{p}: cannot import as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # a plugin is user code: report its failure in one line
            raise PipelineError(f"{p}: plugin failed to import: {type(e).__name__}: {e}") from e
        found = [obj for obj in vars(module).values()
                 if isinstance(obj, type) and issubclass(obj, Pipeline)
                 and obj.__module__ == mod_name and "name" in vars(obj)]
        if not found:
            raise PipelineError(f"{p}: defines no Pipeline subclass with a `name`")
        for cls in found:
            self.register(cls)
        return [c.name for c in found]

    def cls(self, name: str) -> type[Pipeline]:
        target = self._targets.get(name)
        if target is None:
            raise PipelineError(f"unknown pipeline \"{name}\" (known: {', '.join(self.names())})")
        if isinstance(target, str):
            module_name, _, attr = target.partition(":")
            target = getattr(importlib.import_module(module_name), attr)
            assert isinstance(target, type) and issubclass(target, Pipeline), target
            self._targets[name] = target
        return target

    def create(self, spec_text: str) -> Pipeline:
        try:
            spec = PipelineSpec.parse(spec_text)
        except ValueError as e:
            raise PipelineError(str(e)) from None
        return self.cls(spec.name)(spec)

    def create_all(self, specs: Iterable[str]) -> list[Pipeline]:
        return [self.create(s) for s in specs]
