"""`rgpu-fuzz bench compile`: what turning a kernel into an AMDGPU code object costs, per
target and optimisation level.

For every kernel of the bench's kernel set (the corpus plus `--seeds` generated cases) and
every target × level, one compilation in a worker (`gpu_build.build_gpu`: check, lower,
optimise, codegen of the object; no assembly), then in this process `ld.lld` (the link),
reading the code object and the loader checks. Reported per target and level: the median and
90th percentile over kernels of each stage's seconds and of the total, the median object and
code-object sizes, and how many kernels did not compile (with their first outcome line). All
cells are measured in one run, interleaved kernel by kernel, so their ratios hold even on a
loaded machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any

TARGETS = ("gfx942", "gfx90a", "gfx1100")
LEVELS = (0, 1, 2, 3)


@dataclass(frozen=True)
class CompileJob:
    case_toml: str
    cpu: str
    opt_level: int


def compile_one(job: CompileJob) -> tuple[bytes, dict[str, float]] | str:
    """In the worker: the object and the seconds per stage, or the outcome's one line."""
    from rgpu_fuzz import casefile
    from rgpu_fuzz.model.outcome import detail
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target

    got = build_gpu(casefile.loads(job.case_toml), gpu_target(job.cpu), job.opt_level,
                    assembly=False)
    if not isinstance(got, GpuBuild):
        return f"{got.status}: {detail(got)}"
    return got.object, dict(got.stats.seconds)


def _quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"median": statistics.median(ordered),
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]}


def bench_compile(args: argparse.Namespace, kernel_set: list[tuple[str, Any]]) -> dict[str, Any]:
    from rgpu_fuzz import casefile
    from rgpu_fuzz.codeobj import LinkFailure, link, read_code_object, verify_code_object
    from rgpu_fuzz.pipelines.stages import describe_failure
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker

    cells: dict[tuple[str, int], dict[str, Any]] = {
        (cpu, level): {"stages": {}, "object_bytes": [], "code_object_bytes": [],
                       "failed": {}} for cpu in TARGETS for level in LEVELS}
    for name, case in kernel_set:
        text = casefile.dumps(case)
        for cpu in TARGETS:
            for level in LEVELS:
                cell = cells[(cpu, level)]
                result = call_in_worker("rgpu_fuzz.bench.compile:compile_one",
                                        CompileJob(text, cpu, level), timeout=300)
                if not isinstance(result, Done) or isinstance(result.value, str):
                    why = (result.value if isinstance(result, Done)
                           else describe_failure(result, "bench compile"))
                    cell["failed"][name] = why
                    continue
                obj, seconds = result.value
                t0 = time.perf_counter()
                linked = link(obj)
                t1 = time.perf_counter()
                if isinstance(linked, LinkFailure):
                    cell["failed"][name] = f"link: {linked.first_line}"
                    continue
                verify_code_object(read_code_object(linked))
                t2 = time.perf_counter()
                seconds = {**seconds, "link": t1 - t0, "read+verify": t2 - t1}
                seconds["total"] = sum(seconds.values())
                for stage, s in seconds.items():
                    cell["stages"].setdefault(stage, []).append(s)
                cell["object_bytes"].append(len(obj))
                cell["code_object_bytes"].append(len(linked))
    out: dict[str, Any] = {"kernels": len(kernel_set), "targets": {}}
    for (cpu, level), cell in cells.items():
        out["targets"].setdefault(cpu, {})[f"O{level}"] = {
            "seconds": {stage: _quantiles(v) for stage, v in cell["stages"].items()},
            "object_bytes_median": statistics.median(cell["object_bytes"])
            if cell["object_bytes"] else None,
            "code_object_bytes_median": statistics.median(cell["code_object_bytes"])
            if cell["code_object_bytes"] else None,
            "compiled": len(cell["object_bytes"]),
            "failed": cell["failed"],
        }
    return out
