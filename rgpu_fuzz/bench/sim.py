"""`rgpu-fuzz bench sim`: the ISA simulator's speed in wave-instructions per second, and what
a campaign case pays for it.

Each case of the kernel set (the conformance cases, the corpus and `--seeds` generated
cases) is compiled once per spec (`--sim-specs`, default gfx942 at O0 and O3) in a worker.
The code objects are then measured in fresh processes, each going through the set once as
a campaign worker would (`campaign`: the first launch of each case pays decoding, binding
and simulation, with the per-process caches of the cases before it and the tiering as
shipped; `first_launch_wips` is its wave-instructions over simulated seconds,
`first_launch_cpu_wips` over the CPU seconds of the whole launch — decoding and binding
included — which a loaded machine inflates far less). Then the
tier-up threshold is set to `--sim-hot` (`rgpu_fuzz.sim.launch.tiers.HOT`, in both trees) and
each case runs `--sim-warmup` more times unmeasured, so that with warmup > hot every run
the simulator would fuse is fused (the shipped threshold is reached only after dozens of
launches of one program: the steady state of a long campaign), then `--repeat` more times
(`warm`: simulation alone; wave-instructions over simulated seconds, per case and in
total: the steady-state figure; `cpu_wips` divides by the process's CPU seconds for the
whole launch instead, which the load of a shared machine inflates far less). Every
launch's status, fault signature, a hash of its output buffers, its wave-instructions and
its per-opcode counts are compared between the two trees, for the first and the warm
launches (`identical`, `differ`). With `--sim-baseline REV` (a git revision or a
checkout's directory) the same launches are measured with that revision's simulator,
alternating with this one `--sim-rounds` times, so old and new are measured side by side
under the same load (the load average is reported). A profile of one pass over the set in
this process says where the time goes (functions by own time, grouped by module).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pickle
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rgpu_fuzz.checkout import in_checkout


def check_sim_specs(text: str) -> None:
    """Raise `UserError` unless every `--sim-specs` entry is a valid `amdgpu-sim` spec.
    Checked before minutes of compiling: the pipeline class reads only its options, so
    `gfx1100:O0` (no pipeline name) was taken as `amdgpu-sim` with its default target and
    the "gfx1100" figures were gfx942's."""
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from rgpu_fuzz.pipelines.registry import PipelineError

    for entry in text.split(","):
        try:
            spec = PipelineSpec.parse(entry)
            if spec.name != AmdgpuSimPipeline.name:
                raise PipelineError(f"not an {AmdgpuSimPipeline.name} spec (expected "
                                    f"{AmdgpuSimPipeline.name}:<target>:O<level>)")
            AmdgpuSimPipeline(spec)
        except PipelineError as e:
            raise UserError(f"--sim-specs {entry!r}: {e}") from None


def bench_sim(args: argparse.Namespace) -> dict[str, Any]:
    from rgpu_fuzz import casefile
    from rgpu_fuzz.bench.command import _kernel_set
    from rgpu_fuzz.codeobj import read_code_object
    from rgpu_fuzz.pipelines.amdgpu_sim import AmdgpuSimPipeline
    from rgpu_fuzz.pipelines.base import PipelineSpec
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker
    from rgpu_fuzz.sim import decode_throughput

    cases = [(f"conformance/{p.stem}", casefile.load(p))
             for p in sorted(args.conformance.glob("*.toml"))]
    cases += _kernel_set(args.corpus, args.seeds)
    launches: dict[str, list[tuple[str, Any]]] = {}
    compile_s: dict[str, float] = {}
    for spec in args.sim_specs.split(","):
        pipeline = AmdgpuSimPipeline(PipelineSpec.parse(spec))
        assert pipeline.spec.name == AmdgpuSimPipeline.name, spec  # `check_sim_specs` ran
        t0 = time.perf_counter()
        got_all = []
        for name, case in cases:
            got = call_in_worker("rgpu_fuzz.pipelines.amdgpu_sim:prepare_launch",
                                 pipeline.job(case), timeout=pipeline.timeout)
            if isinstance(got, Done) and got.value is not None:
                got_all.append((name, portable(got.value)))
        launches[spec] = got_all
        compile_s[spec] = round(time.perf_counter() - t0, 2)

    baseline = getattr(args, "sim_baseline", None)
    rounds = max(1, getattr(args, "sim_rounds", 1) or 1)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="rgpu-bench-sim-") as tmp:
        path = Path(tmp) / "launches.pickle"
        path.write_bytes(pickle.dumps(launches))
        trees = {"current": in_checkout()}
        if baseline:
            trees["baseline"] = _baseline_tree(baseline, Path(tmp))
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in trees}
        warmup = getattr(args, "sim_warmup", 0) or 0
        hot = getattr(args, "sim_hot", 0) or 0
        try:
            for _ in range(rounds):
                for label, tree in trees.items():
                    runs[label].append(_measure_in(tree, path, args.repeat, warmup, hot))
        finally:
            if "baseline" in trees and trees["baseline"].parent == Path(tmp):
                subprocess.run(["git", "worktree", "remove", "--force",
                                str(trees["baseline"])], check=False, capture_output=True)
    load_after = os.getloadavg()

    out: dict[str, Any] = {
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "rounds": rounds, "repeat": args.repeat,
        "warmup": getattr(args, "sim_warmup", 0) or 0, "hot": getattr(args, "sim_hot", 0) or None,
        "baseline": str(baseline) if baseline else None, "specs": {}}
    for spec, ls in launches.items():
        row: dict[str, Any] = {"cases": len(ls), "compile_seconds": compile_s[spec]}
        for label, measured in runs.items():
            row[label] = _summary([m[spec] for m in measured])
        if "baseline" in row:
            row["ratio_current_over_baseline"] = _ratios(row["current"], row["baseline"])
            row["outputs"] = _same_outputs(runs["current"][0][spec], runs["baseline"][0][spec])
        row["decoder"] = decode_throughput([read_code_object(lc[0]) for _, lc in ls],
                                           args.repeat)
        row["where_time_goes"] = _profile_pass(ls)
        out["specs"][spec] = row
    return out


Portable = tuple[bytes, str, str, tuple[int, int, int], tuple[int, int, int], dict[str, bytes],
                 tuple[bytes, int, tuple[tuple[int, str], ...]]]
"""A launch as plain data (code object, kernel, target, grid, block, buffers, kernarg
recipe), so that a baseline revision's simulator can replay it: the pipeline's `Launch`
holds this tree's classes (its kernarg builder, a `LaunchPlan` of this tree's scalar types),
which an older tree cannot unpickle."""

_PLACES = (0x5EED_0000_0000_0000, 0x7A11_0000_0000_0000)
"""Two sets of stand-in buffer addresses: a kernarg byte that differs between them is part
of a buffer's address."""


def portable(lc: Any) -> Portable:
    """`lc` (`amdgpu_sim.Launch`) as `Portable`: its kernarg segment packed twice with
    stand-in addresses, each buffer's 8-byte address slots found where the two differ (an
    argument derived from an address in any other way is refused: the replay could not
    rebuild it)."""
    from rgpu_fuzz.codeobj.kernarg import KernargSegment

    packed = []
    for base in _PLACES:
        names: list[str] = []

        def address_of(name: str, names: list[str] = names, base: int = base) -> int:
            if name not in names:
                names.append(name)
            return base + (names.index(name) << 16)
        seg = lc.args(address_of)
        if not isinstance(seg, KernargSegment):
            raise RuntimeError(f"{lc.kernel}: no kernarg segment ({seg})")
        packed.append((seg, names))
    (seg, names), (seg2, names2) = packed
    assert names == names2, (names, names2)
    slots = []
    for k, name in enumerate(names):
        want = [(b + (k << 16)).to_bytes(8, "little") for b in _PLACES]
        slots += [(off, name) for off in range(len(seg.data) - 7)
                  if seg.data[off:off + 8] == want[0] and seg2.data[off:off + 8] == want[1]]
    blank = bytearray(seg.data)
    blank2 = bytearray(seg2.data)
    for off, _ in slots:
        blank[off:off + 8] = blank2[off:off + 8] = bytes(8)
    if blank != blank2:
        raise RuntimeError(f"{lc.kernel}: a kernarg depends on a buffer address otherwise "
                           "than as the address itself")
    return (lc.code_object, lc.kernel, lc.target, tuple(lc.grid), tuple(lc.block),
            dict(lc.buffers), (bytes(blank), seg.alignment, tuple(slots)))


def replayable(p: Portable) -> Any:
    """A `Portable` as what `simulate` takes, built from the classes of the `rgpu_fuzz`
    this process imports (this tree or a baseline's)."""
    from types import SimpleNamespace

    from rgpu_fuzz.codeobj.kernarg import KernargSegment

    code_object, kernel, target, grid, block, buffers, (data, alignment, slots) = p

    def args(address_of: Any) -> Any:
        out = bytearray(data)
        for off, name in slots:
            out[off:off + 8] = int(address_of(name)).to_bytes(8, "little")
        return KernargSegment(bytes(out), alignment)
    return SimpleNamespace(code_object=code_object, kernel=kernel, target=target, grid=grid,
                           block=block, buffers=buffers, args=args)


def _baseline_tree(baseline: str, tmp: Path) -> Path:
    """A directory holding the baseline's `rgpu_fuzz`: `baseline` itself when it is one,
    else a temporary git worktree of that revision."""
    if Path(baseline).is_dir():
        return Path(baseline).resolve()
    tree = tmp / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), baseline],
                   check=True, capture_output=True)
    return tree


def _same_outputs(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """Launches (first and warm) whose status, fault signature, output hash,
    wave-instructions and per-opcode counts agree (a record without `opcodes`, from an
    older baseline, is compared without them)."""
    def key(r: dict[str, Any], opcodes: bool) -> tuple[Any, ...]:
        return (r["status"], r["fault"], r["outputs"], r["wave_instructions"],
                r.get("opcodes") if opcodes else None)
    differ = []
    n = 0
    for phase in ("first", "warm"):
        for a, b in zip(current[phase], baseline[phase], strict=True):
            if "outputs" not in a or "outputs" not in b:
                continue
            n += 1
            if key(a, "opcodes" in b) != key(b, "opcodes" in a):
                differ.append(f"{phase}:{a.get('case', '?')}")
    return {"identical": n - len(differ), "differ": differ}


def _measure_in(tree: Path, launches: Path, repeat: int, warmup: int = 0,
                hot: int = 0) -> dict[str, Any]:
    """`measure_file` in a fresh interpreter whose `rgpu_fuzz` is the one in `tree` (this
    file is run by path, so the same measurement drives either simulator)."""
    code = ("import runpy, sys; sys.path.insert(0, sys.argv[1]); "
            "g = runpy.run_path(sys.argv[2]); "
            "g['measure_file'](sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), "
            "int(sys.argv[6]))")
    proc = subprocess.run([sys.executable, "-c", code, str(tree), __file__, str(launches),
                           str(repeat), str(warmup), str(hot)], capture_output=True, text=True,
                          check=False,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    if proc.returncode != 0:
        raise RuntimeError(f"bench sim worker ({tree}) failed:\n{proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _identity(res: Any) -> dict[str, Any]:
    """What must not change with the simulator's speed: status, fault signature, a hash of
    the output buffers, wave-instructions and a hash of the per-opcode counts."""
    digest = hashlib.sha256()
    for buf in sorted(res.buffers):
        digest.update(buf.encode() + b"\0" + res.buffers[buf])
    ops = hashlib.sha256(json.dumps(sorted(dict(res.opcodes).items())).encode())
    return {"wave_instructions": res.wave_instructions, "status": str(res.status),
            "fault": res.fault.signature if res.fault else None,
            "outputs": digest.hexdigest()[:16], "opcodes": ops.hexdigest()[:16]}


def measure_file(launches_path: str, repeat: int, warmup: int = 0, hot: int = 0) -> None:
    """Worker: measure every launch of the pickle, print one JSON line (see the module
    docstring for `campaign` and `warm`; `hot` > 0 sets the tier-up threshold after the
    first pass)."""
    tiers, decode_text, simulate = _sim_entry()

    launches = {spec: [(name, replayable(p)) for name, p in ls] for spec, ls in
                pickle.loads(Path(launches_path).read_bytes()).items()}

    def one(lc: Any) -> Any:
        return simulate(lc.code_object, lc.kernel, lc.grid, lc.block, lc.args, lc.buffers,
                        decode=decode_text, target=lc.target)

    out: dict[str, Any] = {}
    shipped_hot = getattr(tiers, "HOT", None)
    for spec, ls in launches.items():
        if shipped_hot is not None:
            tiers.HOT = shipped_hot  # type: ignore[attr-defined]
        first = []
        for name, lc in ls:
            c0 = time.process_time()
            res = one(lc)
            first_cpu = time.process_time() - c0
            first.append({"case": name, **{k: res.seconds[k] for k in
                                           ("decode", "bind", "simulate")},
                          "cpu_seconds": first_cpu, **_identity(res)})
        if hot and shipped_hot is not None:
            tiers.HOT = hot  # type: ignore[attr-defined]
            _restart_heat()
        warm = []
        for name, lc in ls:
            for _ in range(warmup):
                one(lc)
            times, cpu = [], []
            for _ in range(repeat):
                c0 = time.process_time()
                res = one(lc)
                cpu.append(time.process_time() - c0)
                times.append(res.seconds["simulate"])
            warm.append({"case": name, "seconds": statistics.median(times),
                         "cpu_seconds": statistics.median(cpu), **_identity(res)})
        out[spec] = {"first": first, "warm": warm}
    print(json.dumps(out))


def _sim_entry() -> tuple[Any, Any, Any]:
    """The tier-policy module, `decode_text` and `simulate` of the `rgpu_fuzz` this worker
    imports: the package layout (`sim.launch`, `sim.isa.code`) or, for a baseline revision
    older than it, the flat one (`sim.program`, `sim.code`, `sim.engine`)."""
    import importlib

    try:
        tiers = importlib.import_module("rgpu_fuzz.sim.launch.tiers")
        code = importlib.import_module("rgpu_fuzz.sim.isa.code")
        engine = importlib.import_module("rgpu_fuzz.sim.launch.engine")
    except ModuleNotFoundError:
        tiers = importlib.import_module("rgpu_fuzz.sim.program")
        code = importlib.import_module("rgpu_fuzz.sim.code")
        engine = importlib.import_module("rgpu_fuzz.sim.engine")
    return tiers, code.decode_text, engine.simulate


def _restart_heat() -> None:
    """Count executions from zero again in every cached program, for a lowered tier-up
    threshold: the engine tiers up when an index's count reaches `HOT` exactly, so an index
    run more than the new threshold in the first pass (and fewer than the shipped one)
    would otherwise never be fused, and the warm figure would not be the fused steady
    state (gfx942 O0, 10 seeds: 60 % of the warm wave-instructions ran outside runs)."""
    import importlib
    import sys

    engine = sys.modules.get("rgpu_fuzz.sim.launch.engine") or \
        importlib.import_module("rgpu_fuzz.sim.engine")
    for prog in getattr(engine, "_PROGRAMS", {}).values():
        heat = getattr(prog, "heat", None)
        if heat is not None:
            heat[:] = [0 if h > 0 else h for h in heat]


def _summary(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over rounds of: per-case campaign cost (first launch: decode, bind,
    simulate and their sum), warm wave-instructions per second (over the set, and the
    median case) and the median case's warm simulate time."""
    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    per_round = []
    for m in measured:
        first, warm = m["first"], m["warm"]
        total_wi = sum(r["wave_instructions"] for r in warm)
        total_s = sum(r["seconds"] for r in warm)
        total_cpu = sum(r.get("cpu_seconds", 0.0) for r in warm)
        first_s = sum(f["simulate"] for f in first)
        first_cpu = sum(f.get("cpu_seconds", 0.0) for f in first)
        per_round.append({
            "campaign_case_ms": 1000 * med([f["decode"] + f["bind"] + f["simulate"]
                                            for f in first]),
            "campaign_decode_ms": 1000 * med([f["decode"] for f in first]),
            "campaign_bind_ms": 1000 * med([f["bind"] for f in first]),
            "campaign_simulate_ms": 1000 * med([f["simulate"] for f in first]),
            "first_launch_wips": (sum(f.get("wave_instructions", 0) for f in first) / first_s
                                  if first_s else 0.0),
            "first_launch_cpu_wips": (sum(f.get("wave_instructions", 0) for f in first)
                                      / first_cpu if first_cpu else 0.0),
            "wave_instructions_per_second": total_wi / total_s if total_s else 0.0,
            "cpu_wips": total_wi / total_cpu if total_cpu else 0.0,
            "median_case_wips": med([r["wave_instructions"] / r["seconds"]
                                     for r in warm if r["seconds"]]),
            "median_case_simulate_ms": 1000 * med([r["seconds"] for r in warm]),
        })
    summary: dict[str, Any] = {k: round(med([r[k] for r in per_round]), 3)
                               for k in per_round[0]}
    summary["wave_instructions"] = sum(r["wave_instructions"] for r in measured[0]["warm"])
    summary["faults"] = sorted({r["fault"] for r in measured[0]["warm"] if r["fault"]})
    summary["slowest"] = sorted(measured[0]["warm"], key=lambda r: -r["seconds"])[:5]
    return summary


def _ratios(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, float]:
    return {k: round(current[k] / baseline[k], 3) for k in current
            if isinstance(current[k], float) and baseline.get(k)}


def _profile_pass(launches: list[tuple[str, Any]]) -> dict[str, Any]:
    from rgpu_fuzz.sim import decode_text, simulate

    prof = cProfile.Profile()
    prof.enable()
    for _, lc in [(name, replayable(p)) for name, p in launches]:
        simulate(lc.code_object, lc.kernel, lc.grid, lc.block, lc.args, lc.buffers,
                 decode=decode_text, target=lc.target)
    prof.disable()
    return _profile(prof)


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
