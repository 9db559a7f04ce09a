"""The minicore's semantics equal the real core's, checked without a GPU.

The rustc-amdgpu crate of every conformance kernel (the minicore, the kernels as rustc-cpu
prints them, one entry point each) is built for the host CPU by the real rustc, with the
amdgcn half of the minicore replaced by a test double (`minicore_host/gpu_host.rs`: ids from
thread-locals, `sync_threads` and traps call back into the driver) and `extern "C"` entry
points. Run on the conformance inputs, it must compute what the real rustc with the real
`core` computed (`tests/semantics/expected`, written by rustc-cpu): every output bit for bit
(NaNs equal, `min`/`max` zeros either sign) and every trap's kind and kernel line. A
difference is a minicore bug by construction, since everything else — rustc's lowering of
operators, casts and checks — is the same compiler on the same text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from rgpu_fuzz.casefile import load
from rgpu_fuzz.model.case import BufferArg, ScalarArg
from rgpu_fuzz.model.inputs import materialise
from rgpu_fuzz.model.outcome import Rejected
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.rustc_amdgpu_program import (
    TRAP_KINDS,
    amdgpu_program_source,
    entry_symbol,
    shared_layout,
)
from rgpu_fuzz.pipelines.rustc_program import (
    Program,
    ProgramCase,
    find_rustc,
    printed_program_case,
    uses_barrier,
)
from rgpu_fuzz.process import run_bounded
from tests.semantics.expected_values import CASES, case_names, load_expected, output_mismatches

pytestmark = pytest.mark.rustc

HERE = Path(__file__).resolve().parent / "minicore_host"


def _units() -> list[tuple[str, ProgramCase]]:
    out = []
    for name in case_names():
        unit = printed_program_case(load(CASES / f"{name}.toml"))
        assert not isinstance(unit, Rejected), (name, unit)
        out.append((name, unit))
    return out


def _job_case(index: int, unit: ProgramCase) -> dict[str, object]:
    params = []
    for p, a in zip(unit.params, unit.args, strict=True):
        if isinstance(a, ScalarArg):
            params.append({"kind": "scalar", "ty": str(p.ty), "name": p.name, "bits": a.bits})
        else:
            assert isinstance(a, BufferArg)
            values = materialise(a)
            raw = (values.astype("u1") if p.ty is Scalar.BOOL
                   else values.astype(values.dtype.newbyteorder("<"))).tobytes()
            params.append({"kind": "slice", "ty": str(p.ty), "name": p.name, "len": a.len,
                           "bytes": raw.hex()})
    return {"index": index, "symbol": entry_symbol(index), "params": params,
            "grid": list(unit.case.launch.grid), "block": list(unit.case.launch.block),
            "threaded": uses_barrier(unit.kernel_source),
            "lds": shared_layout(unit).size,
            "outputs": [p.name for p in unit.params if p.kind in ("mut-slice", "atomic-slice")]}


def _bits(unit: ProgramCase, name: str, raw: bytes) -> list[int]:
    p = next(p for p in unit.params if p.name == name)
    width = 1 if p.ty is Scalar.BOOL else p.ty.bits // 8
    return [int.from_bytes(raw[i:i + width], "little") for i in range(0, len(raw), width)]


@cache
def _host_results(opt_level: int, workdir: Path) -> tuple[Program, dict[str, dict]]:
    rustc = find_rustc()
    if rustc is None:
        pytest.skip("rustc not found")
    named = _units()
    units = [u for _, u in named]
    host = (HERE / "gpu_host.rs").read_text(encoding="utf-8")
    program = amdgpu_program_source(units, target_part=host, abi="C")
    src, lib = workdir / f"host{opt_level}.rs", workdir / f"libhost{opt_level}.so"
    src.write_text(program.source, encoding="utf-8")
    # a `#![no_core]` library has no compiler_builtins: x86-64 code for `f16` calls
    # `__extendhfsf2`/`__truncsfhf2`, which libgcc_s provides (GCC 12+, compiler-rt's ABI)
    proc = run_bounded([rustc, "--edition", "2021", "--crate-type", "cdylib", "-C",
                        "panic=abort", "-C", "overflow-checks=off", "-C",
                        f"opt-level={opt_level}", "-C", "link-arg=-lgcc_s", "-o", str(lib),
                        str(src)],
                       timeout=300, cwd=workdir, env={"RUSTC_BOOTSTRAP": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = [_job_case(i, u) for i, u in enumerate(units)]
    results: dict[int, dict] = {}
    while len(results) < len(jobs):
        todo = [j for j in jobs if j["index"] not in results]
        run = subprocess.run([sys.executable, str(HERE / "driver.py")],
                             input=json.dumps({"lib": str(lib), "cases": todo}),
                             capture_output=True, text=True, timeout=300, check=False)
        lines = [json.loads(x) for x in run.stdout.splitlines() if x.strip()]
        assert lines, f"driver produced nothing: {run.stderr[-2000:]}"
        for doc in lines:
            results[doc["index"]] = doc
    return program, {name: results[i] | {"unit": units[i]} for i, (name, _) in enumerate(named)}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("minicore-host")


@pytest.mark.parametrize("opt_level", [0, 2])
def test_minicore_computes_what_core_computes(opt_level: int, workdir: Path) -> None:
    _, results = _host_results(opt_level, workdir)
    problems = []
    for name, doc in results.items():
        want, unit = load_expected(name), doc["unit"]
        if "trap" in want:
            if "trap" not in doc:
                problems.append(f"{name}: rustc traps with {want['trap']}, minicore: {doc}")
                continue
            kind = TRAP_KINDS.get(doc["trap"][0])
            if str(kind) != want["trap"]:
                problems.append(f"{name}: trap {kind}, rustc says {want['trap']}")
            continue
        if "trap" in doc:
            problems.append(f"{name}: minicore traps {doc['trap']}, rustc computes outputs")
            continue
        got = {k: _bits(unit, k, bytes.fromhex(v)) for k, v in doc["outputs"].items()}
        problems += [f"{name}: {m}" for m in output_mismatches(unit.case, got, want["outputs"])]
    assert problems == []


def test_trap_record_names_the_kernel_line(workdir: Path) -> None:
    """The line `#[track_caller]` gives the panic entry points maps back, through the
    program's kernel ranges, to the line of the failing operation in the printed kernel."""
    program, results = _host_results(2, workdir)
    checked = 0
    for name, doc in results.items():
        if "trap" not in doc:
            continue
        line = doc["trap"][1]
        index = program.case_at(line)
        assert index is not None and entry_symbol(index).endswith(f"_{index}")
        first = program.kernel_lines[index][0]
        text = doc["unit"].kernel_source.splitlines()[line - first]
        assert any(op in text for op in ("/", "%", "[")), (name, text)
        checked += 1
    assert checked >= 6
