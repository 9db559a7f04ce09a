"""The `amdgpu-sim` pipeline end to end (our lowering → LLVM → ld.lld → simulator), its
seeded-bug plugins (code-object hook) and its trace, judged against `ref` and against
LLVM's own disassembler."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oracles import judge, load_policy
from rgpu_fuzz import casefile
from rgpu_fuzz.lang.features import case_module
from rgpu_fuzz.model.outcome import CompileCrash, Ok, RunCrash
from rgpu_fuzz.pipelines.registry import PipelineError, Registry
from rgpu_fuzz.pipelines.runner import run_case
from tests.toolchain import debian_llvm_tool

ROOT = Path(__file__).parent.parent.parent
CASE = ROOT / "corpus" / "254dd5a67c19.toml"
PLUGINS = ROOT / "tests" / "plugins"


def _norm(text: str) -> str:
    """Whitespace collapsed, and `lit(X)` read as `X` (the renderer's spelling of a literal
    that LLVM 22 prints bare in some operand positions: sim.isa's business, not the trace's)."""
    return " ".join(re.sub(r"lit\((\w+)\)", r"\1", text).split())


def _registry() -> Registry:
    reg = Registry()
    reg.load_plugin(PLUGINS / "sim_no_waitcnt.py")
    reg.load_plugin(PLUGINS / "sim_add_to_sub.py")
    reg.load_plugin(PLUGINS / "sim_bad_kernarg_size.py")
    return reg


def test_options_are_declared() -> None:
    reg = Registry()
    assert reg.create("amdgpu-sim:gfx942:O3").label == "amdgpu-sim:gfx942:O3"
    for bad in ("amdgpu-sim:gfx999", "amdgpu-sim:O7", "amdgpu-sim:steps=0"):
        with pytest.raises(PipelineError):
            reg.create(bad)


def test_corpus_case_agrees_with_ref_and_seeded_bugs_are_caught() -> None:
    """The plain pipeline agrees with `ref`; removing the first s_waitcnt is reported as
    `sim-waitcnt-hazard`; turning the first v_add_u32 into v_sub_u32 is wrong code."""
    case = casefile.load_checked(CASE)
    specs = ["ref", "amdgpu-sim:gfx942:O3", "amdgpu-sim-nowait:gfx942:O3",
             "amdgpu-sim-add2sub:gfx942:O3"]
    outcomes = run_case(case, _registry().create_all(specs))
    assert isinstance(outcomes["amdgpu-sim:gfx942:O3"], Ok), outcomes["amdgpu-sim:gfx942:O3"]
    nowait = outcomes["amdgpu-sim-nowait:gfx942:O3"]
    assert isinstance(nowait, RunCrash) and nowait.signal == "sim-waitcnt-hazard", nowait
    verdict = judge(case, outcomes, load_policy("default"), case_module(case))
    kinds = {(f.kind.value, f.pipelines[-1]) for f in verdict.findings}
    assert ("wrong-code", "amdgpu-sim-add2sub:gfx942:O3") in kinds, verdict.findings
    assert not any(p[-1] == "amdgpu-sim:gfx942:O3" for _, p in
                   ((f.kind, f.pipelines) for f in verdict.findings))


def test_code_object_is_verified_before_loading() -> None:
    """The code object goes through the code-object launch path (`codeobj.launch`, as `hip`):
    a descriptor whose KERNARG_SIZE disagrees with the metadata is refused by the verifier
    (AMDGPUUsage: KERNARG_SIZE is the kernarg segment's size), not simulated."""
    case = casefile.load_checked(CASE)
    outcomes = run_case(case, _registry().create_all(["amdgpu-sim-badkd:gfx942:O3"]))
    got = outcomes["amdgpu-sim-badkd:gfx942:O3"]
    assert isinstance(got, CompileCrash), got
    assert (got.stage, got.signature) == ("codeobj", "codeobj-invalid:kernarg-size"), got


def test_trace_and_disassembly_match_llvm_objdump() -> None:
    """Every instruction the trace shows, and every line of `--show asm`, is LLVM's own
    disassembly of the same code object (llvm-objdump-22) at the same address."""
    objdump = debian_llvm_tool("llvm-objdump", 22)
    from rgpu_fuzz.pipelines.amdgpu_sim import prepare_launch
    from rgpu_fuzz.process import run_bounded

    case = casefile.load_checked(CASE)
    p = Registry().create("amdgpu-sim:gfx942:O0")
    launch = prepare_launch(p.job(case))  # type: ignore[attr-defined]
    assert launch is not None
    hsaco = Path(__import__("tempfile").mkdtemp()) / "k.hsaco"
    hsaco.write_bytes(launch.code_object)
    proc = run_bounded([objdump, "-d", "--mcpu=gfx942", str(hsaco)], timeout=120)
    llvm = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s+(.*?)\s*// ([0-9A-F]{12}):", line)
        if m:
            llvm[int(m.group(2), 16)] = _norm(m.group(1))
    trace = p.trace_text(case)  # type: ignore[attr-defined]
    rows = [ln for ln in trace.splitlines() if re.match(r"0x[0-9a-f]+\s", ln)]
    assert len(rows) > 20
    for row in rows:
        addr, _exec, rest = row.split(maxsplit=2)
        text = rest.split("  ->  ")[0]
        assert _norm(text) == llvm[int(addr, 16)], row
    asm = p.artefact_text(case, "asm")  # type: ignore[attr-defined]
    listed = [ln for ln in asm.splitlines() if ln.startswith("0x")]
    assert len(listed) == len(llvm)
    for ln in listed:
        addr, text = ln.split(":", 1)
        assert _norm(text) == llvm[int(addr, 16)], ln
