"""The memory-model code-sequence check (`rgpu_fuzz.memmodel`) against LLVM, the reference
implementation of AMDGPUUsage's code-sequence tables: kernels with every atomic kind at every
scope and ordering, compiled by `llc-22` for gfx942, gfx950, gfx90a, gfx1100 and gfx1200, are
accepted as LLVM writes them, and the same code with one instruction of a table row edited
out or one scope bit cleared is a finding that cites that row. The GFX942 and GFX12 rows are
also compared with their tables read by hand."""

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


def _link(obj: bytes) -> bytes:
    linked = link(obj)
    assert isinstance(linked, bytes), linked
    return linked


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
@pytest.mark.parametrize("cpu", ["gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1200"])
def test_llvm_code_objects_pass(cpu: str, level: int) -> None:
    """Every kernel of the module, linked into one code object and disassembled by the
    project's decoder: LLVM's sequences are the tables' (no finding), and every machine
    atomic read-modify-write found its IR atomic."""
    report = check_code_object(_link(_llc(cpu, level, "obj")), MODULE, cpu)
    assert report.findings == ()
    assert report.checked == sum(k.startswith(("rmw_", "nr_", "cx_")) for k in KERNELS)
    assert report.unchecked == 0


@pytest.mark.parametrize("level", [0, 2])
def test_gfx950_code_is_gfx942_code(level: int) -> None:
    """gfx950 takes the GFX942 table (`rows.SHARED`: AMDGPUUsage has no GFX950 table, and
    LLVM's memory legalizer gives it the GFX940 cache control): llc-22 writes every kernel
    of the module for gfx950 instruction for instruction as for gfx942, so the rows LLVM
    follows for one are the rows it follows for the other."""
    def body(cpu: str) -> list[str]:
        text = _llc(cpu, level, "asm").decode()
        return [line for line in text.splitlines()
                if line.startswith("\t") and not line.startswith("\t.")]

    assert body("gfx950") == body("gfx942")


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
    # gfx950: the GFX942 table's rows
    ("gfx950", "rmw_agent_acq_rel_g", r"buffer_inv sc1", None,
     "atomicrmw acquire - agent - global/generic", "buffer_inv sc1"),
    ("gfx950", "st_system_monotonic_g", r"(global_store_dword.*) sc0 sc1", r"\1 sc1",
     "store atomic monotonic - system - global/generic", "cache bits sc0 sc1"),
    # gfx1200: GFX12's scopes (one narrowed, one dropped), split waits (one dropped, one
    # half of a combined wait dropped, the wait after the write-back dropped), invalidates
    # and write-backs
    ("gfx1200", "rmw_system_monotonic_g", r"scope:SCOPE_SYS", "scope:SCOPE_DEV",
     "atomicrmw monotonic - system - global/generic", "cache bit scope:SCOPE_SYS"),
    ("gfx1200", "ld_workgroup_acquire_g", r"(global_load_b32.*) scope:SCOPE_SE", r"\1",
     "load atomic monotonic - workgroup - global/generic", "cache bits scope:SCOPE_SE"),
    ("gfx1200", "rmw_agent_acq_rel_g", r"global_inv scope:SCOPE_DEV", None,
     "atomicrmw acquire - agent - global/generic", "global_inv scope:SCOPE_DEV"),
    ("gfx1200", "rmw_agent_acquire_g", r"s_wait_loadcnt 0x0", None,
     "atomicrmw acquire - agent - global/generic", "s_wait_loadcnt 0x0"),
    ("gfx1200", "nr_agent_release_g", r"s_wait_storecnt_dscnt 0x0", "s_wait_dscnt 0x0",
     "atomicrmw release - agent - global/generic", "s_wait_storecnt 0x0 after `global_store"),
    ("gfx1200", "nr_agent_release_g", r"s_wait_storecnt_dscnt 0x0", "s_wait_storecnt 0x0",
     "atomicrmw release - agent - global/generic", "s_wait_dscnt 0x0 after `ds_store"),
    ("gfx1200", "st_system_release_g", r"global_wb scope:SCOPE_SYS", None,
     "store atomic release - system - global/generic", "global_wb scope:SCOPE_SYS"),
    ("gfx1200", "rmw_system_release_g", r"s_wait_storecnt 0x0", None,
     "atomicrmw release - system - global/generic",
     "s_wait_storecnt 0x0 after `global_wb scope:SCOPE_SYS`"),
    ("gfx1200", "rmw_workgroup_acquire_l", r"global_inv scope:SCOPE_SE", None,
     "atomicrmw acquire - workgroup - local", "global_inv scope:SCOPE_SE"),
    ("gfx1200", "fence_system_acquire", r"global_inv scope:SCOPE_SYS", "global_inv scope:SCOPE_DEV",
     "fence acquire - system - global/generic", "global_inv scope:SCOPE_SYS"),
]


@pytest.mark.parametrize(("cpu", "kernel", "find", "replace", "row", "missing"), EDITS,
                         ids=[f"{e[0]}-{e[1]}" for e in EDITS])
def test_edited_sequence_is_reported(cpu: str, kernel: str, find: str, replace: str | None,
                                     row: str, missing: str) -> None:
    """LLVM's code for the kernel passes; with the edit, the finding cites the row (the
    rows are AMDGPUUsage's: e.g. GFX942 "atomicrmw acquire - agent": the atomic, `s_waitcnt
    vmcnt(0)`, `buffer_inv sc1`; GFX12 "atomicrmw acquire - agent - global": the atomic with
    `scope:SCOPE_DEV`, `s_wait_loadcnt 0x0`, `global_inv scope:SCOPE_DEV`), and gfx950's
    findings cite the GFX942 table."""
    lines = _asm(cpu, kernel)
    assert check_text(_ir(kernel), lines, cpu).findings == ()
    findings = check_text(_ir(kernel), _edit(lines, find, replace), cpu).findings
    assert findings, "the edit went unnoticed"
    assert any(f.row.row == row and missing in f.missing for f in findings), \
        [f.detail for f in findings]
    table = {"gfx950": "GFX942", "gfx1100": "GFX10-GFX11", "gfx1200": "GFX12"}.get(
        cpu, cpu.upper())
    assert all(f.row.source.startswith(
        f'AMDGPUUsage table "AMDHSA Memory Model Code Sequences {table}"')
        for f in findings), [f.row.source for f in findings]


@pytest.mark.parametrize(("cpu", "kernel", "find", "replace", "row", "missing"), EDITS,
                         ids=[f"{e[0]}-{e[1]}" for e in EDITS])
def test_alu_instructions_left_out_change_no_report(cpu: str, kernel: str, find: str,
                                                    replace: str | None, row: str,
                                                    missing: str) -> None:
    """`check_code_object` renders only the instructions `machine.matters` keeps; on llc's
    listing of each edited kernel (a finding) and of the kernel as llc wrote it (none), the
    report from the instructions it keeps is the report from all of them."""
    from rgpu_fuzz.memmodel.machine import matters

    for lines in (_asm(cpu, kernel), _edit(_asm(cpu, kernel), find, replace)):
        kept = [x for x in lines if matters(x.split(";")[0].strip().split(" ")[0])]
        assert check_text(_ir(kernel), kept, cpu) == check_text(_ir(kernel), lines, cpu)


def test_pipeline_outcome_cites_the_row() -> None:
    """`compile_crash`, what amdgpu-sim returns: stage `memory-model`, signature naming the
    row, the log every mismatch; nothing for a code object without a mismatch."""
    name = "rmw_system_acquire_g"
    good = _link(_llc("gfx942", 2, "obj"))
    assert compile_crash(good, MODULE, "gfx942") is None
    lines = _edit(_asm("gfx942", name), r"buffer_inv sc0 sc1", None)
    findings = check_text(_ir(name), lines, "gfx942").findings
    assert [f.row.source for f in findings] == [
        'AMDGPUUsage table "AMDHSA Memory Model Code Sequences GFX942", row "atomicrmw '
        'acquire - system - global/generic"']


@pytest.mark.parametrize(("cpu", "missing"), [("gfx942", "cache bit sc1"),
                                               ("gfx1200", "cache bit scope:SCOPE_SYS")])
def test_seeded_scope_bit_hook_is_found(cpu: str, missing: str) -> None:
    """The seeded code-object hook (`bench/seeded/scope_bit.py`) narrows the scope of the
    first atomic at agent or system scope (gfx942: clears `sc1`; gfx1200: clears SCOPE's
    high bit, SYS -> SE); a code object of one system-scope atomicrmw passes before and is a
    finding after, citing "atomicrmw monotonic - system" (GFX942: sc1=1; GFX12: the scopes
    table's system row, `scope:SCOPE_SYS`)."""
    from rgpu_fuzz.bench.seeded.scope_bit import drop_scope_bit
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    ir = ("define amdgpu_kernel void @k(ptr addrspace(1) %p, ptr addrspace(1) %q) {\n"
          "  %v = atomicrmw add ptr addrspace(1) %p, i32 1 monotonic\n"
          "  store i32 %v, ptr addrspace(1) %q\n  ret void\n}\n")
    obj = subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-O2",
                          "-filetype=obj", "-", "-o", "-"], input=ir.encode(),
                         capture_output=True, check=True).stdout
    code_object = _link(obj)
    assert check_code_object(code_object, ir, cpu).findings == ()
    hooked = drop_scope_bit(code_object)
    assert hooked != code_object
    findings = check_code_object(hooked, ir, cpu).findings
    assert [(f.row.row, f.missing) for f in findings] == [
        ("atomicrmw monotonic - system - global/generic", missing)]
    if cpu == "gfx1200":
        # SYS (3) lost its high bit: SE (1), as the decoder reads the hooked code object
        code = decode_text(read_code_object(hooked))
        atomic = [i.text for i in code if "_atomic_" in i.text]
        assert [t.split()[-1] for t in atomic] == ["scope:SCOPE_SE"], atomic


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "gfx90a", "gfx1100",
                                    "gfx1200"])
def test_trap_record_cmpxchg_is_a_candidate_of_a_kernel_that_may_trap(target: str) -> None:
    """A kernel that may trap keeps the trap record (`rgpu.trap`): its system-scope
    monotonic cmpxchg (`sc0 sc1` on gfx942, `scope:SCOPE_SYS` on gfx1200) is a machine
    atomic that implements the record's IR cmpxchg, not the kernel's agent acq_rel one;
    with the record left out of the candidates it was reported as missing the acq_rel's
    `buffer_wbl2`/`buffer_inv`.
    `atomic_one_winner` run alone (not in a batch, whose other cases' atomics hid it)."""
    from rgpu_fuzz.casefile import load
    from rgpu_fuzz.model.outcome import Ok
    from rgpu_fuzz.pipelines.registry import Registry
    from tests.semantics.expected_values import CASES

    case = load(CASES / "atomic_one_winner.toml")
    outcome = Registry().create(f"amdgpu-sim:{target}:O3").run(case)
    assert isinstance(outcome, Ok), outcome


# Rows of AMDGPUUsage's GFX942 code-sequence table (llvm/docs/AMDGPUUsage.rst, table "AMDHSA
# Memory Model Code Sequences GFX940, GFX941, GFX942", the GFX942 column, non-TgSplit, not
# OpenCL), transcribed by hand: (op, side, scope, space) -> what the row asks for.
GFX942_TABLE: dict[tuple[str, str, str, str], dict[str, tuple[str, ...]]] = {
    # "load atomic monotonic - workgroup/agent/system - global/generic": buffer/global/flat_load
    # sc0=1 / sc1=1 / sc0=1 sc1=1; "store atomic monotonic" the same bits on the store
    ("load", "monotonic", "workgroup", "global"): {"bits": ("sc0",)},
    ("load", "monotonic", "agent", "global"): {"bits": ("sc1",)},
    ("load", "monotonic", "system", "global"): {"bits": ("sc0", "sc1")},
    ("store", "monotonic", "workgroup", "global"): {"bits": ("sc0",)},
    ("store", "monotonic", "agent", "global"): {"bits": ("sc1",)},
    ("store", "monotonic", "system", "global"): {"bits": ("sc0", "sc1")},
    # "atomicrmw monotonic - system - global/generic": flat_atomic sc1=1
    ("rmw", "monotonic", "system", "global"): {"bits": ("sc1",)},
    # "load atomic acquire - workgroup - global": 2. s_waitcnt vmcnt(0), 3. buffer_inv sc0=1,
    # both "If not TgSplit execution mode, omit."
    ("load", "acquire", "workgroup", "global"): {"after": ()},
    # "load atomic acquire - agent - global": 1. global_load sc1=1, 2. s_waitcnt vmcnt(0),
    # 3. buffer_inv sc1=1
    ("load", "acquire", "agent", "global"): {"after": ("own", "buffer_inv sc1")},
    # "load atomic acquire - workgroup - local": 1. ds_load, 2. s_waitcnt lgkmcnt(0)
    ("load", "acquire", "workgroup", "lds"): {"after": ("own",)},
    # "store atomic release - workgroup - global": 1. s_waitcnt lgkm/vmcnt(0) ("Use lgkmcnt(0)
    # if not TgSplit")
    ("store", "release", "workgroup", "global"): {"before": ("lgkm",)},
    # "store atomic release - agent - global": 1. buffer_wbl2 sc1=1, 2. s_waitcnt lgkmcnt(0) &
    # vmcnt(0)
    ("store", "release", "agent", "global"): {"before": ("vm", "lgkm", "buffer_wbl2 sc1")},
    # "fence release - agent": buffer_wbl2 sc1=1, s_waitcnt lgkmcnt(0) & vmcnt(0); "- system":
    # buffer_wbl2 sc0=1 sc1=1 and the same wait
    ("fence", "release", "agent", "global"): {"before": ("vm", "lgkm", "buffer_wbl2 sc1")},
    ("fence", "release", "system", "global"): {"before": ("vm", "lgkm",
                                                           "buffer_wbl2 sc0 sc1")},
    # "fence acquire - agent": s_waitcnt ..., buffer_inv sc1=1; "- system": buffer_inv sc0=1
    # sc1=1 (the fence's waits are for its paired atomic, which the check does not see)
    ("fence", "acquire", "agent", "global"): {"after": ("buffer_inv sc1",)},
    ("fence", "acquire", "system", "global"): {"after": ("buffer_inv sc0 sc1",)},
}


@pytest.mark.parametrize("key", list(GFX942_TABLE), ids=lambda k: "-".join(k))
def test_gfx942_rows_say_what_the_table_says(key: tuple[str, str, str, str]) -> None:
    """`memmodel.rows` against the GFX942 table read by hand (above), independently of
    llc: the bits, the waits and write-backs before a release, the wait and invalidate
    after an acquire."""
    from rgpu_fuzz.memmodel.rows import row

    op, side, scope, space = key
    r = row("gfx942", op, side, scope, space)
    assert r is not None, key
    for field_name, want in GFX942_TABLE[key].items():
        assert sorted(getattr(r, field_name)) == sorted(want), (key, field_name)


# Rows of AMDGPUUsage's GFX12 code-sequence table (llvm/docs/AMDGPUUsage.rst, tables "AMDHSA
# Memory Model Code Sequences GFX12" and "... GFX12 - Instruction Scopes", WGP wavefront
# execution mode, not OpenCL), transcribed by hand: (op, side, scope, space) -> what the row
# asks for. The scopes table maps workgroup to SCOPE_SE, agent to SCOPE_DEV, system to
# SCOPE_SYS in WGP mode.
_SE, _DEV, _SYS = "scope:SCOPE_SE", "scope:SCOPE_DEV", "scope:SCOPE_SYS"
GFX12_TABLE: dict[tuple[str, str, str, str], dict[str, tuple[str, ...]]] = {
    # "load/store atomic monotonic - ... - global/generic", "atomicrmw monotonic": the
    # instruction, "Apply ...-gfx12-scopes-table"
    ("load", "monotonic", "workgroup", "global"): {"bits": (_SE,)},
    ("load", "monotonic", "agent", "global"): {"bits": (_DEV,)},
    ("store", "monotonic", "system", "global"): {"bits": (_SYS,)},
    ("rmw", "monotonic", "workgroup", "global"): {"bits": (_SE,)},
    ("rmw", "monotonic", "system", "global"): {"bits": (_SYS,)},
    # "load atomic acquire - workgroup - global": 1. buffer/global_load scope:SCOPE_SE,
    # 2. s_wait_loadcnt 0x0, 3. global_inv scope:SCOPE_SE ("If CU wavefront execution mode,
    # omit": not omitted in WGP mode)
    ("load", "acquire", "workgroup", "global"): {"after": ("own", f"global_inv {_SE}")},
    # "load atomic acquire - agent/system - global": 2. s_wait_loadcnt 0x0, 3. global_inv
    # (scopes table)
    ("load", "acquire", "agent", "global"): {"after": ("own", f"global_inv {_DEV}")},
    ("load", "acquire", "system", "global"): {"after": ("own", f"global_inv {_SYS}")},
    # "load atomic acquire - workgroup - local": 1. ds_load, 2. s_wait_dscnt 0x0,
    # 3. global_inv scope:SCOPE_SE; "atomicrmw acquire - workgroup - local" the same
    ("load", "acquire", "workgroup", "lds"): {"after": ("own", f"global_inv {_SE}")},
    ("rmw", "acquire", "workgroup", "lds"): {"after": ("own", f"global_inv {_SE}")},
    # "store atomic release - workgroup - global": 1. s_wait_bvhcnt, s_wait_samplecnt,
    # s_wait_storecnt, s_wait_loadcnt, s_wait_dscnt (all 0x0); then the store
    ("store", "release", "workgroup", "global"): {"before": ("load", "store", "ds")},
    # "store atomic release - agent/system - global": 1. global_wb scope:SCOPE_SYS ("If
    # agent scope, omit"), 2. the same waits; "atomicrmw release" and "fence release" alike
    ("store", "release", "agent", "global"): {"before": ("load", "store", "ds")},
    ("store", "release", "system", "global"): {"before": ("load", "store", "ds",
                                                           f"global_wb {_SYS}")},
    ("rmw", "release", "system", "global"): {"before": ("load", "store", "ds",
                                                         f"global_wb {_SYS}")},
    ("fence", "release", "agent", "global"): {"before": ("load", "store", "ds")},
    ("fence", "release", "system", "global"): {"before": ("load", "store", "ds",
                                                           f"global_wb {_SYS}")},
    # "store atomic release - workgroup - local": the five waits, then ds_store
    ("store", "release", "workgroup", "lds"): {"before": ("load", "store", "ds")},
    # "fence acquire - workgroup": waits (for the paired atomic), 2. global_inv
    # scope:SCOPE_SE; "- agent": 2. global_inv (scopes table)
    ("fence", "acquire", "workgroup", "global"): {"after": (f"global_inv {_SE}",)},
    ("fence", "acquire", "agent", "global"): {"after": (f"global_inv {_DEV}",)},
}


@pytest.mark.parametrize("key", list(GFX12_TABLE), ids=lambda k: "-".join(k))
def test_gfx12_rows_say_what_the_table_says(key: tuple[str, str, str, str]) -> None:
    """`memmodel.rows` against the GFX12 table read by hand (above), independently of
    llc."""
    from rgpu_fuzz.memmodel.rows import row

    op, side, scope, space = key
    r = row("gfx1200", op, side, scope, space)
    assert r is not None, key
    for field_name, want in GFX12_TABLE[key].items():
        assert sorted(getattr(r, field_name)) == sorted(want), (key, field_name)


@pytest.mark.parametrize(("line", "zeroed"), [
    ("s_wait_loadcnt_dscnt 0x0", {"load", "ds"}),
    ("s_wait_loadcnt_dscnt 0x100", {"ds"}),
    ("s_wait_storecnt_dscnt 0x1", {"store"}),
    ("s_wait_storecnt 0x0", {"store"}),
    ("s_wait_loadcnt 0x1", set()),
])
def test_gfx12_waits_zero_the_counters_their_fields_name(line: str, zeroed: set[str]) -> None:
    """A GFX12 combined wait holds the first counter in bits 13:8 and DScnt in bits 5:0:
    llc-22 waits for the first of two global loads and one LDS load with `s_wait_loadcnt_dscnt
    0x100` (LOADcnt 1 left outstanding, DScnt 0), before a `v_add` of those two."""
    from rgpu_fuzz.memmodel.machine import parse

    assert parse(0, line, "gfx1200").waits == zeroed


@pytest.mark.parametrize(("cpu", "level"), [("gfx942", 0), ("gfx942", 2), ("gfx1200", 0)])
def test_listing_is_every_kept_instruction_rendered_at_its_address(cpu: str, level: int) -> None:
    """`listing` (what `check_code_object` checks) walks the decoder's memoised
    instructions, decides `matters` per mnemonic and renders a kept instruction once per
    process for its dwords; on llc's code object of every kernel, its lines are those of
    rendering each instruction at its own address (the decoder's `Inst.text`) and keeping
    what `matters` keeps, and the report is the report from every instruction's text. The
    same dwords kept at several addresses (one text, rendered once) are in the listing, so
    that an address the text depended on would show."""
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.memmodel import listing
    from rgpu_fuzz.memmodel.machine import matters
    from rgpu_fuzz.sim import decode_text

    code = decode_text(read_code_object(_link(_llc(cpu, level, "obj"))))
    every = [inst.text for inst in code]
    kept = [inst.text for inst in code if matters(inst.mnemonic)]
    for _ in range(2):          # rendered, then from the memo
        assert listing(code) == kept
    places: dict[tuple[object, ...], set[int]] = {}
    for inst, address in zip(code.templates, code.addresses, strict=True):
        if matters(inst.mnemonic):
            places.setdefault(inst.share_key or inst.origin, set()).add(address)
    assert sum(len(at) > 1 for at in places.values()) > 10
    assert check_code_object(_link(_llc(cpu, level, "obj")), MODULE, cpu) == \
        check_text(MODULE, every, cpu)
