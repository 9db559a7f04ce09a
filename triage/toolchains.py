"""The versions of the tools a set of pipelines compiles and runs with, recorded with every
campaign and recheck run: "fixed by LLVM 22.1.0 → 22.1.1"
needs the versions of both runs.

Which tools a built-in pipeline depends on is one table (`COMPONENTS`); a plugin class is
charged the tools of the built-in it derives from plus its own file's sha256, and any
pipeline class may instead define `toolchain_versions(self) -> dict[str, str]`. A tool that
is missing or will not say its version is recorded as such, never an error: the versions
describe a run, they do not gate it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import platform
import socket
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rgpu_fuzz import __version__
from rgpu_fuzz.checkout import checkout
from rgpu_fuzz.pipelines.base import Pipeline, PipelineSpec
from rgpu_fuzz.pipelines.registry import BUILTIN, Registry
from rgpu_fuzz.process import run_bounded

if TYPE_CHECKING:
    from triage.store import FindingStore, Run

TOOL_TIMEOUT_S = 30.0

COMPONENTS: dict[str, tuple[str, ...]] = {
    "ref": (),
    "llvm-cpu": ("llvm",),
    "rustc-cpu": ("rustc",),
    "rustc-amdgpu": ("rustc", "ld.lld", "isa-tables"),
    "amdgpu-sim": ("llvm", "ld.lld", "isa-tables"),
    "hip": ("llvm", "ld.lld", "hip"),
    "nvptx-gpu": ("llvm", "ptxas"),
}
"""Built-in pipeline name → the tools its outcome depends on besides rgpu-fuzz itself
(`ref` is rgpu-fuzz's own interpreter: its version is rgpu-fuzz's git revision)."""


def _first_line(cmd: list[str] | tuple[str, ...], pick: Callable[[str], bool] = bool) -> str:
    try:
        proc = run_bounded(list(cmd), timeout=TOOL_TIMEOUT_S)
    except OSError as e:
        return f"not runnable ({e.strerror or e})"
    text = (proc.stdout or "") + "\n" + (proc.stderr or "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in lines if pick(line)), lines[0] if lines else "no output")


@functools.cache
def _llvm() -> str:
    try:
        import llvmlite
        import llvmlite.binding as llvm
    except ImportError:
        return "llvmlite not installed"
    return (f"LLVM {'.'.join(str(v) for v in llvm.llvm_version_info)} "
            f"(llvmlite {llvmlite.__version__})")


@functools.cache
def _rustc() -> str:
    from rgpu_fuzz.pipelines.rustc_program import find_rustc

    exe = find_rustc()
    return _first_line([exe, "--version"]) if exe else "not found"


@functools.cache
def _ld_lld() -> str:
    from rgpu_fuzz.codeobj import find_ld_lld

    cmd = find_ld_lld()
    return _first_line([*cmd, "--version"]) if cmd else "not found"


def _distribution(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


@functools.cache
def _isa_tables() -> str:
    return f"tinygrad {_distribution('tinygrad')} AMD ISA tables"


@functools.cache
def _ptxas() -> str:
    from rgpu_fuzz.pipelines.nvptx_gpu import find_ptxas

    exe = find_ptxas()
    return _first_line([exe, "--version"], lambda s: "release" in s) if exe else "not found"


@functools.cache
def _hip() -> str:
    return f"hip-python {_distribution('hip-python')}"


@functools.cache
def _llc(path: str) -> str:
    return f"{path}: " + _first_line([path, "--version"], lambda s: "LLVM version" in s)


PROBES: dict[str, Callable[[], str]] = {"llvm": _llvm, "rustc": _rustc, "ld.lld": _ld_lld,
                                        "isa-tables": _isa_tables, "ptxas": _ptxas, "hip": _hip}


@functools.cache
def git_revision() -> str:
    """The commit of the rgpu-fuzz checkout (12 hex digits), read from `.git` itself, or
    "not a git checkout" for an installed wheel. Read, not `git rev-parse`: a campaign
    records it while starting, and a child process there is what tests (and a user's
    Ctrl-C) take as the sign that jobs are running. Local edits are not detected."""
    try:
        repo = checkout()
        if repo is None:
            return "not a git checkout"
        git = repo / ".git"
        if git.is_file():  # a worktree: `gitdir: PATH`
            git = (repo / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:12]
        ref = head[5:]
        common = git / "commondir"
        roots = [git] + ([(git / common.read_text().strip()).resolve()]
                         if common.is_file() else [])
        for root in roots:
            if (root / ref).is_file():
                return (root / ref).read_text().strip()[:12]
            packed = root / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line[:12]
        return f"{ref} (unresolved)"
    except OSError:
        return "not a git checkout"


PACKAGE = Path(sys.modules["rgpu_fuzz"].__file__ or ".").resolve().parent
"""The rgpu_fuzz package directory this process imports from."""


def source_digest(root: Path = PACKAGE) -> str:
    """16 hex of sha256 over every file under `root` (links followed, `__pycache__` and
    compiled files left out) by relative path and content: what this process really runs,
    committed or not. The git revision misses uncommitted edits: a store's probe answers
    filed under the revision were reused after a local edit to the lowering."""
    if root == PACKAGE:
        return _package_digest()
    return _digest(root)


@functools.cache
def _package_digest() -> str:
    return _digest(PACKAGE)


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    files: list[tuple[str, Path]] = []
    for top, dirs, names in os.walk(root, followlinks=True):  # generators/, oracles/, triage/
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = Path(top, name)
            if path.suffix not in (".pyc", ".pyo") and path.is_file():
                files.append((path.relative_to(root).as_posix(), path))
    for rel, path in sorted(files):
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


def host() -> str:
    """The machine a run ran on: host name, OS, architecture, Python."""
    return (f"{socket.gethostname()} ({platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()})")


def _builtin_base(cls: type[Pipeline]) -> str | None:
    """The built-in pipeline a class is or derives from (a plugin's base)."""
    by_target = {target: name for name, target in BUILTIN.items()}
    for klass in cls.__mro__:
        name = by_target.get(f"{klass.__module__}:{klass.__qualname__}")
        if name is not None:
            return name
    return None


def pipeline_versions(pipeline: Pipeline) -> dict[str, str]:
    """The versions one created pipeline depends on, by component name."""
    own = getattr(pipeline, "toolchain_versions", None)
    if callable(own):
        return {str(k): str(v) for k, v in own().items()}
    cls = type(pipeline)
    versions: dict[str, str] = {}
    base = _builtin_base(cls)
    for component in COMPONENTS.get(base or "", ()):
        versions[component] = PROBES[component]()
    llc = (pipeline.option_values["llc"]
           if any(d.name == "llc" for d in cls.declared_options()) else None)
    if isinstance(llc, str) and llc:
        versions["llc"] = _llc(llc)
    if pipeline.is_plugin:
        source = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if source:
            digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
            versions[f"plugin {cls.name}"] = f"{Path(source).resolve()} sha256:{digest}"
        else:
            versions[f"plugin {cls.name}"] = f"{cls.__module__}.{cls.__qualname__}"
    return versions


def collect(specs: Iterable[str], registry: Registry | None = None) -> dict[str, str]:
    """rgpu-fuzz's revision and the versions every pipeline of `specs` depends on; a spec
    that cannot be created here is recorded as unavailable."""
    reg = registry or Registry()
    versions = {"rgpu-fuzz": f"{__version__} {git_revision()}"}
    for spec in specs:
        try:
            pipeline = reg.create(spec)
        except Exception as e:  # a pipeline that cannot be created: a fact of the run
            versions[f"pipeline {PipelineSpec.parse(spec).name}"] = (
                f"unavailable: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
            continue
        versions.update(pipeline_versions(pipeline))
    return dict(sorted(versions.items()))


def begin_run(store: FindingStore, kind: str, specs: Sequence[str],
              plugins: Iterable[str | Path] = (),
              settings: Mapping[str, Any] | None = None) -> Run:
    """Record a run (a campaign, a recheck) in `store` with the versions of its pipelines'
    tools and this host; what a campaign calls once it has opened its store."""
    reg = Registry()
    for path in plugins:
        reg.load_plugin(path)
    return store.begin_run(kind, tuple(specs), collect(specs, reg), host(), settings)


def changed(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Components whose version differs between two runs: name → (before, after); a
    component only one run recorded shows as "–" on the other side."""
    return {k: (before.get(k, "–"), after.get(k, "–"))
            for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}


__all__ = ["COMPONENTS", "PACKAGE", "PROBES", "begin_run", "changed", "collect", "git_revision",
           "host", "pipeline_versions", "source_digest"]
