"""The AMDGPU target table (`rgpu_fuzz.targets`, `gpu.toml`): its facts against LLVM's own
tools (Debian llvm-22: llc, llvm-mc, llvm-readelf), every consumer's view against the table,
no GPU wave size stated anywhere else, and the loader's refusal of malformed rows.

The expected values come from LLVM, not from the table: which SGPRs llvm-mc accepts, how it
encodes `s_waitcnt`, which syntax it accepts per target (true16 halves, a VOP3 literal, DPP8,
SDWA, `s_waitcnt_vscnt`), which wave sizes and which work-item id layout llc emits, and the
processor name llvm-readelf prints for an object's e_flags.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rgpu_fuzz import targets as table
from rgpu_fuzz.codeobj import read_code_object, target_by_name
from rgpu_fuzz.codeobj.targets import target_by_mach
from rgpu_fuzz.lower.amdgcn import AmdgcnTarget
from rgpu_fuzz.pipelines.amdgpu_sim import TARGETS as AMDGPU_SIM_TARGETS
from rgpu_fuzz.pipelines.gpu_build import GPU_CPUS, gpu_target
from rgpu_fuzz.pipelines.rustc_amdgpu import TARGETS as RUSTC_AMDGPU_TARGETS
from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.sim import target_config
from rgpu_fuzz.sim.isa import TARGETS as DECODER_TARGETS
from rgpu_fuzz.sim.isa.tables import tables
from rgpu_fuzz.targets import Generation, GpuTarget, TargetTableError, load_table
from tests.toolchain import debian_llvm_tool

ROOT = Path(__file__).resolve().parents[2]
ROWS = table.TARGETS
ISA_ROWS = tuple(t for t in ROWS if t.isa is not None)

_KERNEL_IR = """
declare i32 @llvm.amdgcn.workitem.id.y()
define amdgpu_kernel void @k(ptr addrspace(1) %o) {
  %y = call i32 @llvm.amdgcn.workitem.id.y()
  store i32 %y, ptr addrspace(1) %o
  ret void
}
"""
"""A kernel that reads its work-item id y: packed ids are unpacked from v0 by `v_bfe_u32
vN, v0, 10, 10` (AMDGPUUsage "Initial Kernel Execution State"); unpacked, y arrives in v1."""


def _llc(target: GpuTarget, tmp_path: Path, *args: str) -> str | bytes:
    src = tmp_path / "k.ll"
    src.write_text(_KERNEL_IR)
    out = tmp_path / ("k.o" if "-filetype=obj" in args else "k.s")
    proc = run_bounded([debian_llvm_tool("llc", 22), f"-mtriple={target.triple}",
                        f"-mcpu={target.name}", *args, str(src), "-o", str(out)], timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out.read_bytes() if out.suffix == ".o" else out.read_text()


def _mc(target: GpuTarget, line: str, tmp_path: Path) -> bytes | None:
    """llvm-mc's encoding of one instruction for `target`, None when it rejects it."""
    src = tmp_path / "in.s"
    src.write_text(line + "\n")
    proc = run_bounded([debian_llvm_tool("llvm-mc", 22), "-arch=amdgcn",
                        f"-mcpu={target.name}", "--show-encoding", str(src)], timeout=60)
    if proc.returncode != 0:
        assert "error:" in proc.stderr, proc.stderr
        return None
    m = re.search(r"; encoding: \[(.*)\]", proc.stdout)
    assert m, proc.stdout
    return bytes(int(b, 16) for b in m.group(1).split(","))


# --- the table against LLVM ----------------------------------------------------------------


@pytest.mark.parametrize("target", ROWS, ids=lambda t: t.name)
def test_mach_and_name_equal_llvm(target: GpuTarget, tmp_path: Path) -> None:
    """llc's object for the row's processor carries the row's EF_AMDGPU_MACH, which
    llvm-readelf names as the row does; our code-object reader maps it back to the row."""
    obj = _llc(target, tmp_path, "-filetype=obj")
    assert isinstance(obj, bytes)
    (tmp_path / "k.o").write_bytes(obj)
    proc = run_bounded([debian_llvm_tool("llvm-readelf", 22), "-h", str(tmp_path / "k.o")],
                       timeout=60)
    flags = next(ln for ln in proc.stdout.splitlines() if "Flags:" in ln).split(":", 1)[1]
    value, name = (p.strip() for p in flags.split(",")[:2])
    assert (int(value, 16) & 0xFF, name) == (target.mach, target.name)
    co = read_code_object(obj)
    assert co.target is target
    assert co.kernels[0].descriptor.wavefront_size == target.wave_size


@pytest.mark.parametrize("target", ROWS, ids=lambda t: t.name)
def test_wave_sizes_equal_llc(target: GpuTarget, tmp_path: Path) -> None:
    """The default wave size is what llc emits without features; the allowed ones are what
    `+wavefrontsize32` / `+wavefrontsize64` give (GFX9 has no wave32 descriptor bit, so llc
    keeps wave64 there)."""
    def emitted(*args: str) -> int:
        asm = _llc(target, tmp_path, *args)
        assert isinstance(asm, str)
        m = re.search(r"\.amdhsa_wavefront_size32 (\d)", asm)
        return 32 if m and m.group(1) == "1" else 64

    assert emitted() == target.wave_size
    assert sorted({emitted(f"-mattr=+wavefrontsize{w}") for w in (32, 64)}) == sorted(
        target.wave_sizes)


@pytest.mark.parametrize("target", ROWS, ids=lambda t: t.name)
def test_addressable_sgprs_equal_llvm_mc(target: GpuTarget, tmp_path: Path) -> None:
    """llvm-mc accepts s[sgprs-1] and rejects s[sgprs]."""
    assert _mc(target, f"s_mov_b32 s{target.sgprs - 1}, 0", tmp_path) is not None
    assert _mc(target, f"s_mov_b32 s{target.sgprs}, 0", tmp_path) is None


@pytest.mark.parametrize("target", ISA_ROWS, ids=lambda t: t.name)
def test_isa_facts_equal_llvm(target: GpuTarget, tmp_path: Path) -> None:
    """Per row with ISA facts: the `s_waitcnt` field layout decodes llvm-mc's encoding of
    vmcnt(37) lgkmcnt(9) (SOPP: simm16 in the low half-word); true16, VOP3 literal, DPP8 and
    SDWA are what llvm-mc accepts; stores outside vmcnt ⇔ `s_waitcnt_vscnt` (GFX12:
    `s_wait_storecnt`) exists; packed
    work-item ids ⇔ llc unpacks y from v0."""
    isa = target.isa
    assert isa is not None
    enc = _mc(target, "s_waitcnt vmcnt(37) lgkmcnt(9)", tmp_path)
    assert enc is not None
    assert target_config(target.name).waitcnt(int.from_bytes(enc[:2], "little")) == (37, 9)
    _check_waitcnt_widths(target, tmp_path)
    accepted = {
        "true16": "v_add_f16 v0.l, v1.l, v2.h",
        "vop3_literal": "v_add_f32_e64 v0, 0x12345678, v1",
        "dpp8": "v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]",
        "sdwa": "v_mov_b32_sdwa v0, v1 dst_sel:WORD_1",
        # stores counted apart from loads: vscnt (GFX10-11) or STOREcnt (GFX12)
        "vscnt": ("s_wait_storecnt 0" if target.generation is Generation.GFX12
                  else "s_waitcnt_vscnt null, 0"),
    }
    said = {"true16": isa.true16, "vop3_literal": isa.vop3_literal, "dpp8": isa.dpp8,
            "sdwa": isa.sdwa, "vscnt": not isa.stores_in_vmcnt}
    assert {k: _mc(target, line, tmp_path) is not None for k, line in accepted.items()} == said
    asm = _llc(target, tmp_path)
    assert isinstance(asm, str)
    assert bool(re.search(r"v_bfe_u32 v\d+, v0, 10, 10", asm)) == isa.packed_workitem_ids


def _check_waitcnt_widths(target: GpuTarget, tmp_path: Path) -> None:
    """Each count bit alone: llvm-mc takes `vmcnt(1 << k)` exactly while k is below the
    field's width ("too large value" past it) and fills the counter it was not given with
    all ones (no wait); the table's layout must decode both."""
    isa = target.isa
    assert isa is not None
    widths = {"vmcnt": sum(w for _, w in isa.vmcnt), "lgkmcnt": sum(w for _, w in isa.lgkmcnt)}
    for k in range(7):
        for i, counter in enumerate(("vmcnt", "lgkmcnt")):
            enc = _mc(target, f"s_waitcnt {counter}({1 << k})", tmp_path)
            assert (enc is not None) == (k < widths[counter]), (counter, k)
            if enc is None:
                continue
            other = "lgkmcnt" if counter == "vmcnt" else "vmcnt"
            want = [0, 0]
            want[i], want[1 - i] = 1 << k, (1 << widths[other]) - 1
            got = target_config(target.name).waitcnt(int.from_bytes(enc[:2], "little"))
            assert got == tuple(want), (counter, k)


# --- every consumer's view against the table -----------------------------------------------


@pytest.mark.parametrize("target", ROWS, ids=lambda t: t.name)
def test_code_object_view_is_the_row(target: GpuTarget) -> None:
    assert target_by_name(target.name) is target
    assert target_by_name(f"{target.name}:xnack-") is target
    assert target_by_mach(target.mach) is target


@pytest.mark.parametrize("target", ISA_ROWS, ids=lambda t: t.name)
def test_decoder_and_simulator_views_equal_the_row(target: GpuTarget) -> None:
    isa = target.isa
    assert isa is not None
    spec = tables(target.name).spec
    assert (spec.name, spec.family, spec.wave_size, spec.sgprs, spec.vop3_literal, spec.sdwa,
            spec.dpp8, spec.true16) == (target.name, isa.tables, target.wave_size,
                                        target.sgprs, isa.vop3_literal, isa.sdwa, isa.dpp8,
                                        isa.true16)
    assert {f.__name__ for f in spec.formats} >= {"SOPP", "VOP1", "VOP3"}
    cfg = target_config(target.name)
    assert (cfg.name, cfg.wave_size, cfg.packed_workitem_ids, cfg.architected_flat_scratch,
            cfg.agprs, cfg.vmcnt, cfg.lgkmcnt, cfg.true16, cfg.stores_in_vmcnt,
            cfg.keeps_high16) == (
        target.name, target.wave_size, isa.packed_workitem_ids,
        isa.architected_flat_scratch, target.agprs > 0, isa.vmcnt, isa.lgkmcnt, isa.true16,
        isa.stores_in_vmcnt, isa.keeps_high16)
    # a 16-bit result keeps D[31:16] on GFX10+ (gpu.toml [ZH16]), true16 or not; gfx1200 is
    # simulated with GFX9's zeroing until packed operations track definedness per half
    assert isa.keeps_high16 == (target.generation.value in ("gfx10", "gfx11"))


def test_pipelines_support_the_rows_with_isa_facts() -> None:
    names = tuple(t.name for t in ISA_ROWS)
    assert GPU_CPUS == AMDGPU_SIM_TARGETS == RUSTC_AMDGPU_TARGETS == names
    assert tuple(DECODER_TARGETS) == names
    assert names[0] == "gfx942"  # the pipelines' default target (their `Choice` takes the first)


@pytest.mark.parametrize("target", ROWS, ids=lambda t: t.name)
def test_lowering_and_build_triples_are_the_rows(target: GpuTarget) -> None:
    """The amdgcn lowering writes the row's triple into the module, and the GPU build stage
    makes its target machine for it."""
    assert AmdgcnTarget(cpu=target.name).triple == target.triple
    assert gpu_target(target.name).triple == target.triple


def test_rows_without_isa_facts_have_no_simulator() -> None:
    for target in ROWS:
        if target.isa is None:
            with pytest.raises(KeyError, match="no simulator configuration"):
                target_config(target.name)


# --- one statement of each wave size ---------------------------------------------------------

_WAVE_LITERAL = re.compile(
    r"""wave_?sizes?\s*[:=]\s*[(\[]?\s*(32|64)\b"""       # wave_size=64, wave_sizes = (32, 64)
    r"""|["']gfx\d+\w*["']\s*:\s*(32|64)\b""")            # {"gfx942": 64}


def test_no_other_module_states_a_wave_size() -> None:
    """Outside the table, no source or data file of the package assigns a wave size literal
    or maps a processor name to one (code that branches on the size it was given is fine)."""
    for old in ('TargetSpec(name="gfx942", wave_size=64, sgprs=102)', "wave_size = 32",
                "wave_sizes=(32, 64)", '{"gfx1100": 32}'):
        assert _WAVE_LITERAL.search(old), old      # the pattern catches what was here before
    found = []
    for path in sorted((ROOT / "rgpu_fuzz").rglob("*")):
        if path.suffix not in (".py", ".toml") or path.parent == ROOT / "rgpu_fuzz" / "targets":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _WAVE_LITERAL.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


# --- the loader refuses malformed rows ---------------------------------------------------------

_ROW = """
[gfx9x]
triple = "amdgcn-amd-amdhsa"
mach = 0x02C
family = "GCN5"
generation = "gfx9"
wave_size = 64
wave_sizes = [64]
vgprs = 256
agprs = 0
sgprs = 102
max_sgprs = 112
lds_bytes = 65536
"""


def test_a_well_formed_row_loads() -> None:
    (row,) = load_table(_ROW)
    assert (row.name, row.mach, row.max_vgprs, row.isa) == ("gfx9x", 0x2C, 256, None)


@pytest.mark.parametrize(("edit", "message"), [
    (("lds_bytes = 65536\n", ""), r"missing \['lds_bytes'\]"),
    (("lds_bytes = 65536\n", "lds_bytes = 65536\nlds = 1\n"), r"unknown \['lds'\]"),
    (("vgprs = 256", 'vgprs = "256"'), "vgprs = '256' is not a int"),
    (("agprs = 0", "agprs = true"), "agprs = True is not a int"),
    (("wave_sizes = [64]", "wave_sizes = [32]"), "include the default"),
    (('generation = "gfx9"', 'generation = "gfx8"'), "unknown generation"),
])
def test_a_malformed_row_is_refused(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(TargetTableError, match=message):
        load_table(_ROW.replace(*edit))


def test_two_rows_with_one_machine_number_are_refused() -> None:
    with pytest.raises(TargetTableError, match="share a machine number"):
        load_table(_ROW + _ROW.replace("[gfx9x]", "[gfx9y]"))
