"""The memory-model code-sequence check (`rgpu_fuzz.memmodel`) against LLVM, the reference
implementation of AMDGPUUsage's code-sequence tables: kernels with every atomic kind at every
scope and ordering, compiled by `llc-22` for gfx942, gfx90a and gfx1100, are accepted as
LLVM writes them, and the same code with one instruction of a table row edited out or one
scope bit cleared is a finding that cites that row."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from rgpu_fuzz.codeobj.link import link
from rgpu_fuzz.memmodel import check_code_object, check_text, compile_crash

LLC = shutil.which("llc-22") or "/usr/lib/llvm-22/bin/llc"
pytestmark = pytest.mark.skipif(not shutil.which(LLC), reason="llc-22 not installed")

SCOPES = {"wavefront": 'syncscope("wavefront")', "workgroup": 'syncscope("workgroup")',
          "agent": 'syncscope("agent")', "system": "", "agent_one_as": 'syncscope("agent-one-as")'}
ORDERINGS = ("monotonic", "acquire", "release", "acq_rel", "seq_cst")
SPACES = {"g": "ptr addrspace(1)", "l": "ptr addrspace(3)", "f": "ptr"}


def _kernels() -> dict[str, str]:
    """name -> IR function: atomicrmw add (result used), atomicrmw or (no return, after a
    global and an LDS store), load and store atomic, cmpxchg and fences."""
    out = {}
    for sn, s in SCOPES.items():
        for o in ORDERINGS:
            for sp, ty in SPACES.items():
                n = f"{sn}_{o}_{sp}"
                out[f"rmw_{n}"] = (f"({ty} %p, ptr addrspace(1) %q) {{\n  %v = atomicrmw add "
                                   f"{ty} %p, i32 1 {s} {o}\n  store i32 %v, ptr addrspace(1) "
                                   "%q\n  ret void\n}")
                out[f"nr_{n}"] = (f"({ty} %p, ptr addrspace(1) %q, ptr addrspace(3) %l) {{\n"
                                  "  store i32 5, ptr addrspace(1) %q\n  store i32 6, ptr "
                                  f"addrspace(3) %l\n  %v = atomicrmw or {ty} %p, i32 2 {s} {o}"
                                  "\n  ret void\n}")
                if o not in ("release", "acq_rel"):
                    out[f"ld_{n}"] = (f"({ty} %p, ptr addrspace(1) %q) {{\n  %v = load atomic "
                                      f"i32, {ty} %p {s} {o}, align 4\n  store i32 %v, ptr "
                                      "addrspace(1) %q\n  ret void\n}")
                if o not in ("acquire", "acq_rel"):
                    out[f"st_{n}"] = (f"({ty} %p, i32 %x) {{\n  store atomic i32 %x, {ty} %p "
                                      f"{s} {o}, align 4\n  ret void\n}}")
            if o != "monotonic":
                out[f"cx_{sn}_{o}"] = ("(ptr addrspace(1) %p, ptr addrspace(1) %q) {\n"
                                       "  %x = load i32, ptr addrspace(1) %q\n  %r = cmpxchg "
                                       f"ptr addrspace(1) %p, i32 0, i32 %x {s} {o} monotonic\n"
                                       "  ret void\n}")
                out[f"fence_{sn}_{o}"] = (f"() {{\n  fence {s} {o}\n  ret void\n}}")
    return out


KERNELS = _kernels()
MODULE = "\n".join(f"define amdgpu_kernel void @{k}{body}" for k, body in KERNELS.items())


def _llc(cpu: str, level: int, kind: str) -> bytes:
    return subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", f"-O{level}",
                           f"-filetype={kind}", "-", "-o", "-"], input=MODULE.encode(),
                          capture_output=True, check=True).stdout


_ASM: dict[tuple[str, int], str] = {}


def _asm(cpu: str, name: str) -> list[str]:
    """The kernel's instructions as llc -O2 writes them (through its s_endpgm)."""
    if (cpu, 2) not in _ASM:
        _ASM[cpu, 2] = _llc(cpu, 2, "asm").decode()
    body = re.search(rf"^{name}:.*?\n(.*?)s_endpgm", _ASM[cpu, 2], re.S | re.M)
    assert body is not None, name
    return [*body.group(1).splitlines(), "s_endpgm"]


def _ir(name: str) -> str:
    return f"define amdgpu_kernel void @{name}{KERNELS[name]}"


@pytest.mark.parametrize("level", [0, 2])
@pytest.mark.parametrize("cpu", ["gfx942", "gfx90a", "gfx1100"])
def test_llvm_code_objects_pass(cpu: str, level: int) -> None:
    """Every kernel of the module, linked into one code object and disassembled by the
    project's decoder: LLVM's sequences are the tables' (no finding), and every machine
    atomic read-modify-write found its IR atomic."""
    report = check_code_object(link(_llc(cpu, level, "obj")), MODULE, cpu)
    assert report.findings == ()
    assert report.checked == sum(k.startswith(("rmw_", "nr_", "cx_")) for k in KERNELS)
    assert report.unchecked == 0


def _edit(lines: list[str], find: str, replace: str | None) -> list[str]:
    hits = [i for i, line in enumerate(lines) if re.search(find, line)]
    assert hits, (find, lines)
    i = hits[0]
    return lines[:i] + ([] if replace is None else [re.sub(find, replace, lines[i])]) \
        + lines[i + 1:]


EDITS = [
    # (cpu, kernel, line to find, replacement or None to drop, the row cited, what is missing)
    ("gfx942", "rmw_agent_acq_rel_g", r"buffer_inv sc1", None,
     "atomicrmw acquire - agent - global/generic", "buffer_inv sc1"),
    ("gfx942", "rmw_system_monotonic_g", r"(global_atomic_add.*) sc1", r"\1",
     "atomicrmw monotonic - system - global/generic", "cache bit sc1"),
    ("gfx942", "nr_agent_release_g", r"s_waitcnt vmcnt\(0\)", None,
     "atomicrmw release - agent - global/generic", "vmcnt(0)"),
    ("gfx942", "rmw_system_release_g", r"buffer_wbl2 sc0 sc1", "buffer_wbl2 sc1",
     "atomicrmw release - system - global/generic", "buffer_wbl2 sc0 sc1"),
    ("gfx942", "ld_agent_acquire_g", r"(global_load_dword.*) sc1", r"\1",
     "load atomic monotonic - agent - global/generic", "cache bits sc1"),
    ("gfx90a", "rmw_system_acquire_g", r"buffer_invl2", None,
     "atomicrmw acquire - system - global/generic", "buffer_invl2"),
    ("gfx90a", "ld_agent_monotonic_g", r"(global_load_dword.*) glc", r"\1",
     "load atomic monotonic - agent - global/generic", "cache bits glc"),
    ("gfx1100", "rmw_agent_acquire_g", r"buffer_gl1_inv", None,
     "atomicrmw acquire - agent - global/generic", "buffer_gl1_inv"),
    ("gfx1100", "nr_agent_seq_cst_g", r"s_waitcnt_vscnt null, 0x0", None,
     "atomicrmw release - agent - global/generic", "vscnt(0)"),
    ("gfx1100", "rmw_workgroup_acquire_l", r"buffer_gl0_inv", None,
     "atomicrmw acquire - workgroup - local", "buffer_gl0_inv"),
    ("gfx1100", "fence_agent_acquire", r"buffer_gl1_inv", None,
     "fence acquire - agent - global/generic", "buffer_gl1_inv"),
]


@pytest.mark.parametrize(("cpu", "kernel", "find", "replace", "row", "missing"), EDITS,
                         ids=[f"{e[0]}-{e[1]}" for e in EDITS])
def test_edited_sequence_is_reported(cpu: str, kernel: str, find: str, replace: str | None,
                                     row: str, missing: str) -> None:
    """LLVM's code for the kernel passes; with the edit, the finding cites the row (the
    rows are AMDGPUUsage's: e.g. GFX942 "atomicrmw acquire - agent": the atomic, `s_waitcnt
    vmcnt(0)`, `buffer_inv sc1`)."""
    lines = _asm(cpu, kernel)
    assert check_text(_ir(kernel), lines, cpu).findings == ()
    findings = check_text(_ir(kernel), _edit(lines, find, replace), cpu).findings
    assert findings, "the edit went unnoticed"
    assert any(f.row.row == row and missing in f.missing for f in findings), \
        [f.detail for f in findings]
    assert all(cpu in f.row.source or "GFX" in f.row.source for f in findings)


def test_pipeline_outcome_cites_the_row() -> None:
    """`compile_crash`, what amdgpu-sim returns: stage `memory-model`, signature naming the
    row, the log every mismatch; nothing for a code object without a mismatch."""
    name = "rmw_system_acquire_g"
    good = link(_llc("gfx942", 2, "obj"))
    assert compile_crash(good, MODULE, "gfx942") is None
    lines = _edit(_asm("gfx942", name), r"buffer_inv sc0 sc1", None)
    findings = check_text(_ir(name), lines, "gfx942").findings
    assert [f.row.source for f in findings] == [
        'AMDGPUUsage table "AMDHSA Memory Model Code Sequences GFX942", row "atomicrmw '
        'acquire - system - global/generic"']


def test_seeded_scope_bit_hook_is_found() -> None:
    """The seeded code-object hook (`bench/seeded/scope_bit.py`) clears `sc1` on the first
    atomic that has it; a gfx942 code object of one system-scope atomicrmw passes before
    and is a finding after, citing GFX942 "atomicrmw monotonic - system" (sc1=1)."""
    from rgpu_fuzz.bench.seeded.scope_bit import drop_scope_bit

    ir = ("define amdgpu_kernel void @k(ptr addrspace(1) %p, ptr addrspace(1) %q) {\n"
          "  %v = atomicrmw add ptr addrspace(1) %p, i32 1 monotonic\n"
          "  store i32 %v, ptr addrspace(1) %q\n  ret void\n}\n")
    obj = subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O2",
                          "-filetype=obj", "-", "-o", "-"], input=ir.encode(),
                         capture_output=True, check=True).stdout
    code_object = link(obj)
    assert check_code_object(code_object, ir, "gfx942").findings == ()
    hooked = drop_scope_bit(code_object)
    assert hooked != code_object
    findings = check_code_object(hooked, ir, "gfx942").findings
    assert [(f.row.row, f.missing) for f in findings] == [
        ("atomicrmw monotonic - system - global/generic", "cache bit sc1")]


@pytest.mark.parametrize("target", ["gfx942", "gfx90a", "gfx1100"])
def test_trap_record_cmpxchg_is_a_candidate_of_a_kernel_that_may_trap(target: str) -> None:
    """A kernel that may trap keeps the trap record (`rgpu.trap`): its system-scope
    monotonic cmpxchg (`sc0 sc1` on gfx942) is a machine atomic that implements the
    record's IR cmpxchg, not the kernel's agent acq_rel one; with the record left out of
    the candidates it was reported as missing the acq_rel's `buffer_wbl2`/`buffer_inv`.
    `atomic_one_winner` run alone (not in a batch, whose other cases' atomics hid it)."""
    from rgpu_fuzz.casefile import load
    from rgpu_fuzz.model.outcome import Ok
    from rgpu_fuzz.pipelines.registry import Registry
    from tests.semantics.expected_values import CASES

    case = load(CASES / "atomic_one_winner.toml")
    outcome = Registry().create(f"amdgpu-sim:{target}:O3").run(case)
    assert isinstance(outcome, Ok), outcome
