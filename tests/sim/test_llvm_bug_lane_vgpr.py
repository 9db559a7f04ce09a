"""LLVM 22's -O0 lane-VGPR bug (docs/llvm-bugs/lane_vgpr_implicit_def_in_loop_header.ll;
campaign bucket 8081e0ac57, docs/findings/8081e0ac57.md): SILowerSGPRSpills puts the
IMPLICIT_DEF of an SGPR-spill lane VGPR inside the loop, so the SGPRs the loop carries
through it are lost across the back edge. Each test says "fixed upstream?" when the bug
stops reproducing.

Independent expected values: the reproducer's output computed by hand (see its header), and
`ref` (the reference interpreter) for the fuzzer's case. The causal check: the same LLVM with
the one misplaced MIR instruction moved to the entry block
(`triage/llc_lane_vgpr_defs.py`, which triage's known-bug recheck uses; the
placement of LLVM 19 and of the upstream fix) agrees with those values, and the unchanged
MIR round trip does not. And the simulator's side: the lane-mask spill sequence the trace runs,
on hand-built instructions, against the CDNA3 definitions."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from rgpu_fuzz import casefile
from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.model.outcome import Ok, Trap
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.runner import run_case
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_program
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.launch.engine import Arg, Status
from rgpu_fuzz.sim.state.wave import AGPR_BASE, EXEC, Wave
from tests.sim.kernels import build, out, run
from tests.toolchain import debian_llvm_tool

ROOT = Path(__file__).parents[2]
REPRODUCER = ROOT / "docs" / "llvm-bugs" / "lane_vgpr_implicit_def_in_loop_header.ll"
CASE = ROOT / "corpus" / "526d09799032.toml"
EDIT = ROOT / "triage" / "llc_lane_vgpr_defs.py"
N = 3
# by hand: iteration 0 selects <100k + j>, iterations 1 .. N-1 add 1 each
BY_HAND = [100 * (i // 32) + i % 32 + (N - 1) for i in range(64)]


def _outputs(code: bytes) -> list[int]:
    res = run(code, (1, 1, 1), (1, 1, 1), [Arg("out"), Arg(data=struct.pack("<I", N))],
              {"out": np.zeros(64, np.uint32)})
    assert res.status is Status.OK, res.fault
    return [int(x) for x in out(res, "out", np.uint32)]


def _llc_build(llc: list[str], opt: int = 0) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*llc, f"-O{opt}", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942",
                        "-filetype=obj", "-o", "k.o", str(REPRODUCER)], cwd=tmp, check=True,
                       capture_output=True, timeout=120)
        linked = link(Path(tmp, "k.o").read_bytes())
    assert not isinstance(linked, LinkFailure), linked.log
    return linked


def _edit_llc(tmp: Path, llc22: str, keep: bool) -> str:
    """An executable `llc` (the pipeline's `llc=` takes a path) running the MIR edit."""
    path = tmp / ("llc_keep" if keep else "llc_hoist")
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{EDIT}" "{llc22}"'
                    f'{" --keep" if keep else ""} "$@"\n')
    os.chmod(path, 0o755)
    return str(path)


def test_reproducer_loses_the_loop_carried_lanes_at_o0_only() -> None:
    """The project's LLVM (llvmlite 22.1): O1 computes the values by hand, O0 does not."""
    ir = REPRODUCER.read_text()
    assert _outputs(build(ir, opt=1)) == BY_HAND
    got = _outputs(build(ir, opt=0))
    assert got != BY_HAND, "LLVM 22's O0 lane-VGPR bug no longer reproduces (fixed upstream?)"


def test_reproducer_is_right_with_the_lane_vgpr_defs_in_the_entry_block() -> None:
    """Debian llc-22 -O0: wrong; the same llc with only the lane VGPR IMPLICIT_DEFs moved to
    bb.0 after si-lower-sgpr-spills: the hand values; the round trip alone: still wrong;
    llc-19 -O0 (IMPLICIT_DEFs in bb.0 by itself): the hand values."""
    llc22 = debian_llvm_tool("llc", 22)
    assert _outputs(_llc_build([llc22])) != BY_HAND, (
        "llc-22's O0 lane-VGPR bug no longer reproduces (fixed upstream?)")
    assert _outputs(_llc_build([sys.executable, str(EDIT), llc22])) == BY_HAND
    assert _outputs(_llc_build([sys.executable, str(EDIT), llc22, "--keep"])) != BY_HAND
    assert _outputs(_llc_build([debian_llvm_tool("llc", 19)])) == BY_HAND


def test_fuzzer_case_agrees_with_ref_once_the_lane_vgpr_defs_dominate_the_loop(
        tmp_path: Path) -> None:
    """Corpus case 526d09799032 (bucket 8081e0ac57): lane 1 breaks out in iteration 1, and
    the exit masks the loop carries for it live in lanes 0-31 of a lane VGPR whose
    IMPLICIT_DEF si-lower-sgpr-spills put in the loop header, so iteration 2 reads another
    VGPR's lanes and lane 1 runs the bounds-check trap. Moving those IMPLICIT_DEFs to bb.0
    (nothing else changes) makes gfx942 and gfx90a O0 equal `ref`; the unchanged round
    trip still traps."""
    llc22 = debian_llvm_tool("llc", 22)
    hoisted, kept = _edit_llc(tmp_path, llc22, False), _edit_llc(tmp_path, llc22, True)
    specs = ["ref", f"amdgpu-sim:gfx942:O0:llc={hoisted}", f"amdgpu-sim:gfx90a:O0:llc={hoisted}",
             f"amdgpu-sim:gfx942:O0:llc={kept}"]
    outcomes = run_case(casefile.load_checked(CASE), Registry().create_all(specs))
    ref = outcomes["ref"]
    assert isinstance(ref, Ok), ref
    want = {k: v.values.tolist() for k, v in ref.outputs.items()}
    for spec in specs[1:3]:
        got = outcomes[spec]
        assert isinstance(got, Ok), (spec, got)
        assert {k: v.values.tolist() for k, v in got.outputs.items()} == want
    control = outcomes[specs[3]]
    assert isinstance(control, Trap) and control.kind.value == "out-of-bounds", (
        f"the unedited round trip no longer traps (fixed upstream?): {control}")



WAVE32 = ROOT / "tests" / "sim" / "data" / "cases"


def test_wave32_findings_agree_with_ref_once_the_lane_vgpr_defs_dominate_the_loop(
        tmp_path: Path) -> None:
    """gfx1100 (wave32) O0, campaign buckets 239c6f84fb, b48ac80b2f and 74c1155f4b
    (docs/findings/239c6f84fb.md): the loop carries more lane masks than one lane VGPR's 32
    lanes, and the second lane VGPR's IMPLICIT_DEF sits in the loop header. Moved to bb.0
    (nothing else), each kernel equals `ref`; the unedited round trip fails as llc-22 does.

    On the old wrapper the round trip could not run at all on wave32 (MIR parse error on
    `S_CBRANCH_VCCNZ ... implicit killed $vcc_lo`), and for a kernel with a call (the third)
    it lost the user SGPR count, so even the hoisted code read its workgroup id from an SGPR
    nothing wrote (`sim-uninit-read`)."""
    llc22 = debian_llvm_tool("llc", 22)
    hoisted, kept = _edit_llc(tmp_path, llc22, False), _edit_llc(tmp_path, llc22, True)
    expected_failure = {"o0_wave32_lane_vgpr_uninit_read.toml": "sim-uninit-read",
                        "o0_wave32_lane_vgpr_oob.toml": "out-of-bounds",
                        "o0_wave32_lane_vgpr_call_div.toml": "div-by-zero"}
    for name, failure in expected_failure.items():
        specs = ["ref", f"amdgpu-sim:gfx1100:O0:llc={hoisted}",
                 f"amdgpu-sim:gfx1100:O0:llc={kept}", "amdgpu-sim:gfx1100:O0"]
        outcomes = run_case(casefile.load_checked(WAVE32 / name), Registry().create_all(specs))
        ref, got = outcomes["ref"], outcomes[specs[1]]
        assert isinstance(ref, Ok) and isinstance(got, Ok), (name, ref, got)
        assert ({k: v.values.tolist() for k, v in got.outputs.items()}
                == {k: v.values.tolist() for k, v in ref.outputs.items()}), name
        for spec in specs[2:]:
            assert failure in str(outcomes[spec]), (
                f"{name}: {spec} no longer fails (fixed upstream?): {outcomes[spec]}")



def test_globalisel_o0_has_the_bug_too(tmp_path: Path) -> None:
    """Conformance kernel `cf_while` at `amdgpu-sim:gfx942:O0:isel=global` (and gfx90a)
    runs the `j % 2` division-by-zero trap although the divisor is the constant 2: after
    GlobalISel, si-lower-sgpr-spills puts a lane VGPR's IMPLICIT_DEF in
    `bb.31.while.head.1`, the second loop's header. Moved to the entry block it equals
    `ref`; the unedited round trip traps; Debian llc-19 (entry-block placement) is right.
    GlobalISel's MIR starts at `bb.1.entry`: the old wrapper looked for `bb.0` and stopped."""
    llc22 = debian_llvm_tool("llc", 22)
    hoisted, kept = _edit_llc(tmp_path, llc22, False), _edit_llc(tmp_path, llc22, True)
    case = casefile.load_checked(ROOT / "tests" / "semantics" / "cases" / "cf_while.toml")
    specs = ["ref", f"amdgpu-sim:gfx942:O0:isel=global:llc={hoisted}",
             f"amdgpu-sim:gfx942:O0:isel=global:llc={kept}", "amdgpu-sim:gfx942:O0:isel=global"]
    outcomes = run_case(case, Registry().create_all(specs))
    ref, got = outcomes["ref"], outcomes[specs[1]]
    assert isinstance(ref, Ok) and isinstance(got, Ok), (ref, got)
    assert ({k: v.values.tolist() for k, v in got.outputs.items()}
            == {k: v.values.tolist() for k, v in ref.outputs.items()})
    for spec in specs[2:]:
        got = outcomes[spec]
        assert isinstance(got, Trap) and got.kind.value == "div-by-zero", (
            f"{spec} no longer traps (fixed upstream?): {got}")


def _lane_inst(opcode: str, encoding: str, *ops: Opnd, tag: int = 0) -> Inst:
    return Inst(0, 8, opcode, encoding, opcode.lower(), ops,
                share_key=("lane-vgpr-test", opcode, ops, tag))


def _v(i: int) -> Opnd:
    return Opnd(OpKind.VGPR, i, 1)


def _a(i: int) -> Opnd:
    return Opnd(OpKind.AGPR, i, 1)


def _s(i: int, n: int = 1) -> Opnd:
    return Opnd(OpKind.SGPR, i, n)


def _k(x: int) -> Opnd:
    return Opnd(OpKind.INT, 0, 1, value=x)


def test_lane_vgpr_whole_wave_round_trip_under_partial_exec() -> None:
    """The instructions the trace of bucket 8081e0ac57 runs for a spilled lane mask, on a
    wave64 with EXEC = 0x1 (iteration 2: lane 1 has left), values by hand from the CDNA3
    definitions: V_WRITELANE_B32 writes VGPR[S1[5:0]] whatever EXEC is (lanes 0 and 40, both
    but one outside EXEC); S_OR_SAVEEXEC_B64 s[40:41], -1 saves EXEC and sets all 64 bits;
    V_ACCVGPR_WRITE/READ then copy all 64 lanes, lanes no work-item maps to included;
    S_MOV_B64 exec restores 0x1, so V_MOV_B32 changes lane 0 only; V_READLANE_B32 reads
    lane 40 of the restored copy. The suspects of the finding (a wrong lane, a write outside
    EXEC, a whole-wave copy that drops lanes) would each change one of these values."""
    env = Env(lanes=64, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
              waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))
    w = Wave(64, 0, 0)
    w.set_exec(0x1)
    w.V[:, 10] = np.arange(64) + 1000
    w.vdef[:, 10] = True
    w.S[34], w.sdef[34] = 0x2, 0xFFFF_FFFF
    run = [_lane_inst("V_WRITELANE_B32", "VOP3", _v(8), _s(34), _k(0)),
           _lane_inst("V_WRITELANE_B32", "VOP3", _v(10), _s(34), _k(40)),
           _lane_inst("S_OR_SAVEEXEC_B64", "SOP1", _s(40, 2), _k(-1)),
           _lane_inst("V_ACCVGPR_WRITE", "VOP3P", _a(17), _v(10)),
           _lane_inst("S_MOV_B64", "SOP1", _s(EXEC, 2), _s(40, 2)),
           _lane_inst("V_MOV_B32", "VOP1", _v(10), _k(7)),
           _lane_inst("S_OR_SAVEEXEC_B64", "SOP1", _s(40, 2), _k(-1), tag=1),
           _lane_inst("V_ACCVGPR_READ", "VOP3P", _v(11), _a(17)),
           _lane_inst("S_MOV_B64", "SOP1", _s(EXEC, 2), _s(40, 2), tag=1),
           _lane_inst("V_READLANE_B32", "VOP3", _s(20), _v(11), _k(40)),
           _lane_inst("V_READLANE_B32", "VOP3", _s(21), _v(8), _k(0))]
    prog = bind_program(run, env, None)
    for i in range(len(run)):
        prog.steps[i](w)
    want = [1000 + lane for lane in range(64)]
    want[40] = 0x2
    assert w.exec_mask == 0x1 and (w.S[40], w.S[41]) == (0x1, 0)
    assert w.V[:, AGPR_BASE + 17].tolist() == want and w.vdef[:, AGPR_BASE + 17].all()
    assert w.V[:, 11].tolist() == want
    assert w.V[:, 10].tolist() == [7, *want[1:]]
    assert (w.S[20], w.S[21]) == (0x2, 0x2)
    assert w.V[0, 8] == 0x2 and w.vdef[0, 8] and not w.vdef[1:, 8].any()
