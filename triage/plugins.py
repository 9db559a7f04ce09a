"""Plugin pipelines a store recorded, loaded again by one rule.

A campaign records, for each pipeline that came from a `--plugin FILE.py`, the file's path
and the sha256 of its content (`FindingStore.plugins`). Whatever reruns a recorded finding —
`reproduce`, `report`, the nightly `recheck` — loads such a file again only if its content
is the one recorded: a plugin edited since is a different pipeline, and rerunning it would
say "fixed" or "still there" of a bug nobody filed. A file that is gone or changed is one
line naming the option to pass (`--plugin FILE`, which loads the file as it is now)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from rgpu_fuzz.pipelines.options import PipelineError
from rgpu_fuzz.pipelines.registry import Registry


def load_recorded(registry: Registry, names: Iterable[str],
                  recorded: Mapping[str, tuple[Path, str]]) -> tuple[list[str], dict[str, str]]:
    """Load into `registry` the recorded plugin files of the pipeline `names` it lacks.
    Returns the files loaded, and name → why it cannot be loaded (one line) for the names
    that stay unknown."""
    loaded: list[str] = []
    missing: dict[str, str] = {}
    for name in sorted(set(names)):
        if name in registry.names():  # registered, or defined by a file loaded for another name
            continue
        if name not in recorded:
            missing[name] = f"pipeline `{name}` is not registered here (pass --plugin FILE)"
            continue
        path, digest = recorded[name]
        try:
            same = hashlib.sha256(path.read_bytes()).hexdigest() == digest
        except OSError:
            missing[name] = (f"pipeline `{name}` came from the plugin file {path}, which is "
                             "gone: pass --plugin FILE")
            continue
        if not same:
            missing[name] = (f"pipeline `{name}` came from the plugin file {path}, which has "
                             f"changed since it was recorded: pass --plugin {path} to use it "
                             "as it is now")
            continue
        try:
            registry.load_plugin(path)
        except PipelineError as e:
            missing[name] = str(e).splitlines()[0]
            continue
        loaded.append(str(path))
    return loaded, missing


__all__ = ["load_recorded"]
