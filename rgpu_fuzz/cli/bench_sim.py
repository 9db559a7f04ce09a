"""`rgpu-fuzz bench sim`: the ISA simulator's speed in wave-instructions per second.

Each case of the kernel set (the conformance cases, the corpus and `--seeds` generated
cases) is compiled once per spec (`--sim-specs`, default gfx942 at O0 and O3) in a worker,
then its code object is simulated `--repeat` times in this process; the figures are
wave-instructions over simulated seconds (decoding and binding excluded: they happen once
per code object and are reported apart), per case and in total, and a profile of one pass
over the whole set says where the time goes (functions by own time, grouped by module).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from pathlib import Path
from typing import Any

CONFORMANCE = Path("tests/semantics/cases")


def bench_sim(args: argparse.Namespace) -> dict[str, Any]:
    from rgpu_fuzz import casefile
    from rgpu_fuzz.cli.bench import _kernel_set
    from rgpu_fuzz.codeobj import read_code_object
    from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker
    from rgpu_fuzz.sim.code import decode_text
    from rgpu_fuzz.sim.engine import simulate
    from rgpu_fuzz.sim.isa.bench import decode_throughput

    cases = [(f"conformance/{p.stem}", casefile.load(p))
             for p in sorted(CONFORMANCE.glob("*.toml"))] if CONFORMANCE.is_dir() else []
    cases += _kernel_set(args.corpus, args.seeds)
    out: dict[str, Any] = {"specs": {}}
    for spec in args.sim_specs.split(","):
        pipeline = AmdgpuSimPipeline(PipelineSpec.parse(spec))
        launches = []
        t0 = time.perf_counter()
        for name, case in cases:
            got = call_in_worker("rgpu_fuzz.pipelines.amdgpu_sim:prepare_launch",
                                 pipeline.job(case), timeout=pipeline.timeout)
            if isinstance(got, Done) and got.value is not None:
                launches.append((name, got.value))
        compile_s = time.perf_counter() - t0

        def one(launch: Any, **kw: Any) -> Any:
            return simulate(launch.code_object, launch.kernel, launch.grid, launch.block,
                            launch.args, launch.buffers, decode=decode_text,
                            target=launch.target, **kw)

        rows = []
        first_decode, first_bind = [], []
        for name, launch in launches:
            res = one(launch)  # decodes and binds (cached from here on)
            first_decode.append(res.seconds["decode"])
            first_bind.append(res.seconds["bind"])
            times = []
            for _ in range(args.repeat):
                res = one(launch)
                times.append(res.seconds["simulate"])
            rows.append({"case": name, "status": str(res.status),
                         "fault": res.fault.signature if res.fault else None,
                         "wave_instructions": res.wave_instructions,
                         "seconds": statistics.median(times)})
        total_wi = sum(r["wave_instructions"] for r in rows)
        total_s = sum(r["seconds"] for r in rows)
        prof = cProfile.Profile()
        prof.enable()
        for _, launch in launches:
            one(launch)
        prof.disable()
        out["specs"][spec] = {
            "cases": len(rows), "compile_seconds": round(compile_s, 2),
            "wave_instructions": total_wi, "simulate_seconds": round(total_s, 4),
            "wave_instructions_per_second": round(total_wi / total_s) if total_s else None,
            "median_case_wips": round(statistics.median(
                r["wave_instructions"] / r["seconds"] for r in rows if r["seconds"])) if rows
            else None,
            "median_case_simulate_ms": round(1000 * statistics.median(
                r["seconds"] for r in rows), 3) if rows else None,
            "decode_ms_first": round(1000 * statistics.median(first_decode), 3)
            if first_decode else None,
            "bind_ms_first": round(1000 * statistics.median(first_bind), 3)
            if first_bind else None,
            "faults": sorted({r["fault"] for r in rows if r["fault"]}),
            "decoder": decode_throughput(
                [read_code_object(launch.code_object) for _, launch in launches], args.repeat),
            "where_time_goes": _profile(prof),
            "slowest": sorted(rows, key=lambda r: -r["seconds"])[:5],
        }
    return out


def _profile(prof: cProfile.Profile, top: int = 12) -> dict[str, Any]:
    stats = pstats.Stats(prof)
    total = stats.total_tt or 1.0  # type: ignore[attr-defined]
    by_module: dict[str, float] = {}
    funcs = []
    for (path, line, fn), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        mod = path.split("rgpu_fuzz/")[-1] if "rgpu_fuzz/" in path else (
            "numpy" if "numpy" in path else "builtins/other")
        by_module[mod] = by_module.get(mod, 0.0) + tt
        funcs.append((tt, f"{mod}:{line}({fn})"))
    funcs.sort(reverse=True)
    return {"by_module_share": {k: round(v / total, 3) for k, v in
                                sorted(by_module.items(), key=lambda kv: -kv[1])[:top]},
            "top_functions_share": {name: round(tt / total, 3) for tt, name in funcs[:top]}}
