"""Where pipelines come from: built-ins, the `rgpu_fuzz.pipelines` entry-point group, and
plugin files given with `--plugin`. All three register the same way, by naming a
`Pipeline` subclass; classes are imported lazily, when a spec names them.

A plugin file is imported as module `rgpu_fuzz_plugin_<stem>_<hash>`, the hash taken over its
resolved path and its bytes. The name is the same in every process, so a worker process can
re-import the file and find a class by `module:qualname` (`ClassRef`), and a file edited since
it was loaded is noticed rather than silently mixed with the old version.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.options import PipelineError

ENTRY_POINT_GROUP = "rgpu_fuzz.pipelines"

BUILTIN: dict[str, str] = {
    "ref": "rgpu_fuzz.pipelines.ref:RefPipeline",
    "llvm-cpu": "rgpu_fuzz.pipelines.llvm_cpu:LlvmCpuPipeline",
    "rustc-cpu": "rgpu_fuzz.pipelines.rustc_cpu:RustcCpuPipeline",
    "rustc-amdgpu": "rgpu_fuzz.pipelines.rustc_amdgpu:RustcAmdgpuPipeline",
    "hip": "rgpu_fuzz.pipelines.hip:HipPipeline",
    "amdgpu-sim": "rgpu_fuzz.pipelines.amdgpu_sim:AmdgpuSimPipeline",
    "nvptx-gpu": "rgpu_fuzz.pipelines.nvptx_gpu:NvptxGpuPipeline",
}

RESERVED_NAMES: frozenset[str] = frozenset({
    *BUILTIN, "amdgpu-sim", "rustc-amdgpu", "hip", "nvptx-gpu",
})
"""Names only rgpu-fuzz's own pipelines may take (the built-ins and those being built), so
a plugin can never stand in for the arbiter or a reference pipeline. The one list."""


PLUGIN_MODULE_PREFIX = "rgpu_fuzz_plugin_"


def plugin_module_name(path: str | Path) -> str:
    """The module name a plugin file is imported as (same file and bytes: same name)."""
    p = Path(path).resolve()
    digest = hashlib.sha256(str(p).encode() + b"\0" + p.read_bytes()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", p.stem)
    return f"{PLUGIN_MODULE_PREFIX}{stem}_{digest}"


def import_plugin(path: str | Path) -> ModuleType:
    """Import a plugin file, once per process: a second call with the same file (same bytes)
    returns the module already imported, so its classes keep their identity."""
    p = Path(path)
    if not p.is_file():
        raise PipelineError(f"{p}: plugin file not found")
    mod_name = plugin_module_name(p)
    loaded = sys.modules.get(mod_name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(mod_name, p.resolve())
    if spec is None or spec.loader is None:
        raise PipelineError(f"{p}: cannot import as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # a plugin is user code: report its failure in one line
        del sys.modules[mod_name]
        raise PipelineError(f"{p}: plugin failed to import: {type(e).__name__}: {e}") from e
    return module


@dataclass(frozen=True, slots=True)
class ClassRef:
    """How another process (a sandboxed worker) finds a pipeline class: `module:qualname`,
    and the plugin file to import first when the class was defined in a `--plugin` file."""

    module: str
    qualname: str
    plugin_file: str | None = None

    @classmethod
    def of(cls, target: type) -> ClassRef:
        plugin_file = None
        if target.__module__.startswith(PLUGIN_MODULE_PREFIX):
            plugin_file = getattr(sys.modules.get(target.__module__), "__file__", None)
            assert plugin_file is not None, f"plugin module {target.__module__} has no file"
        return cls(target.__module__, target.__qualname__, plugin_file)

    def load(self) -> type[Pipeline]:
        """The class, importing its module (or its plugin file) as needed."""
        if self.plugin_file is not None:
            module = import_plugin(self.plugin_file)
            if module.__name__ != self.module:
                raise PipelineError(f"{self.plugin_file}: plugin file changed since it was "
                                    "loaded; rerun to pick up the new version")
        else:
            module = importlib.import_module(self.module)
        obj: object = module
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        assert isinstance(obj, type) and issubclass(obj, Pipeline), obj
        return obj


def _where(cls: type) -> str:
    module = sys.modules.get(cls.__module__)
    source = getattr(module, "__file__", None) or cls.__module__
    return f"{source} ({cls.__qualname__})"


def _dist(ep: object) -> str:
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None) or "an installed package"


class Registry:
    """Maps pipeline names to classes, loading each lazily from a `module:Class` string."""

    def __init__(self) -> None:
        self._targets: dict[str, str | type[Pipeline]] = dict(BUILTIN)
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if self._targets.get(ep.name, ep.value) != ep.value:
                raise PipelineError(
                    f"entry point {ep.name} = {ep.value} ({_dist(ep)}): the name is taken by "
                    f"{self._targets[ep.name]}"
                    + (" (a built-in name)" if ep.name in RESERVED_NAMES else ""))
            if ep.name in RESERVED_NAMES and ep.name not in BUILTIN:
                raise PipelineError(f"entry point {ep.name} = {ep.value} ({_dist(ep)}): "
                                    f"\"{ep.name}\" is reserved for rgpu-fuzz's own pipeline")
            self._targets[ep.name] = ep.value

    def names(self) -> list[str]:
        return sorted(self._targets)

    def register(self, cls: type[Pipeline]) -> None:
        """Add a pipeline class under its `name`. Refused: a reserved name (`RESERVED_NAMES`)
        for a class that is not the built-in, and a name another class already has."""
        where = _where(cls)
        current = self._targets.get(cls.name)
        if cls.name in RESERVED_NAMES and current is not cls and \
                BUILTIN.get(cls.name) != f"{cls.__module__}:{cls.__qualname__}":
            raise PipelineError(f"{where}: pipeline name \"{cls.name}\" is reserved for a "
                                f"built-in pipeline (reserved: "
                                f"{', '.join(sorted(RESERVED_NAMES))})")
        if current is not None and current is not cls and \
                current != f"{cls.__module__}:{cls.__qualname__}":
            other = _where(current) if isinstance(current, type) else current
            raise PipelineError(f"{where}: two pipelines named \"{cls.name}\" "
                                f"(the other is {other})")
        if not isinstance(getattr(cls, "name", None), str) or not cls.name \
                or ":" in cls.name or "," in cls.name:
            raise PipelineError(f"{where}: a pipeline name must be a non-empty string without "
                                f"':' or ','")
        self._targets[cls.name] = cls

    def load_plugin(self, path: str | Path) -> list[str]:
        """Import a plugin file and register every Pipeline subclass it defines (classes
        it merely imports, such as a base class, are not registered again)."""
        module = import_plugin(path)
        found = [obj for obj in vars(module).values()
                 if isinstance(obj, type) and issubclass(obj, Pipeline)
                 and obj.__module__ == module.__name__ and "name" in vars(obj)]
        if not found:
            raise PipelineError(f"{path}: defines no Pipeline subclass with a `name`")
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
        """The pipeline a spec names, its options parsed and validated (`PipelineError`)."""
        spec = PipelineSpec.parse(spec_text)
        return self.cls(spec.name)(spec)

    def create_all(self, specs: Iterable[str]) -> list[Pipeline]:
        return [self.create(s) for s in specs]
