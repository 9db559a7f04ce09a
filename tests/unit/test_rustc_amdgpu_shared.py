"""`#[shared]` arrays under rustc-amdgpu: rustc 1.95 cannot place a static in the group
address space, so each array is a zero-sized handle into the launch's dynamically allocated
group segment, reached through the shared aperture that `s_getreg_b32
hwreg(HW_REG_SH_MEM_BASES, 16, 16)` reads (rustc_amdgpu_program, "Shared arrays").

Expected values: the layout and the kernel's outputs are computed by hand; the hwreg
encoding is LLVM's own (llvm-mc-22); the simulator's group segment is the launch's dynamic
size, so the same code object launched without it faults.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rgpu_fuzz.casefile import case_from_dict
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.registry import Registry
from rgpu_fuzz.pipelines.rustc_amdgpu_program import (
    SharedArray,
    amdgpu_program_source,
    minicore_source,
    shared_layout,
)
from rgpu_fuzz.pipelines.rustc_program import ProgramCase, find_rustc, printed_program_case
from rgpu_fuzz.process import run_bounded
from tests.toolchain import debian_llvm_tool

KERNEL = """use rgpu::*;

const N: usize = 4;

#[shared]
static mut FLAGS: [bool; 3] = [false; 3];

#[shared]
static mut TILE: [u32; N] = [0u32; N];

#[shared]
static mut WIDE: [u64; 2] = [0u64; 2];

#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let t: usize = thread_idx_x() as usize;
    let g: usize = block_idx_x() as usize * 4 + t;
    unsafe {
        TILE[t] = a[g] * 3u32;
    }
    if t < 2 {
        unsafe {
            WIDE[t] = a[g] as u64 + 1u64;
        }
    }
    sync_threads();
    out[g] = unsafe { TILE[3 - t] } + unsafe { TILE.len() } as u32
        + unsafe { WIDE[t % 2] } as u32 + unsafe { FLAGS.len() } as u32;
}
"""
A = [1, 2, 3, 4, 10, 20, 30, 40]


def _case(grid: int = 2) -> ProgramCase:
    case = case_from_dict({
        "format": "rgpu-case/1", "entry": "k", "kernel": KERNEL,
        "launch": {"grid": [grid, 1, 1], "block": [4, 1, 1]},
        "args": [{"name": "a", "buffer": "u32", "len": 8, "init": {"values": A}},
                 {"name": "out", "buffer": "u32", "len": 8, "init": {"fill": 0}}]})
    unit = printed_program_case(case)
    assert isinstance(unit, ProgramCase), unit
    return unit


def _by_hand() -> list[int]:
    out = []
    for b in range(2):
        blk = A[4 * b:4 * b + 4]
        for t in range(4):
            out.append(blk[3 - t] * 3 + 4 + (blk[t % 2] + 1) + 3)
    return out


def test_layout_in_declaration_order_aligned_to_the_element() -> None:
    """bool[3] at 0 (3 bytes), u32[4] at 4 (3 rounded up to 4), u64[2] at 24 (20 rounded up
    to 8): 40 bytes of dynamic group segment. The length `N` is the const's value."""
    layout = shared_layout(_case())
    assert layout.arrays == (SharedArray("FLAGS", Scalar.BOOL, 3, 0),
                             SharedArray("TILE", Scalar.U32, 4, 4),
                             SharedArray("WIDE", Scalar.U64, 2, 24))
    assert layout.size == 40


def test_statics_become_handles_on_the_same_lines() -> None:
    unit = _case()
    program = amdgpu_program_source([unit])
    first, end = program.kernel_lines[0]
    lines = program.source.splitlines()[first - 1:end - 1]
    assert len(lines) == unit.kernel_source.count("\n")
    want = {"FLAGS": "crate::Shared<[bool; 3], 0>", "TILE": "crate::Shared<[u32; 4], 4>",
            "WIDE": "crate::Shared<[u64; 2], 24>"}
    for name, ty in want.items():
        k = next(i for i, x in enumerate(unit.kernel_source.splitlines())
                 if f"static mut {name}:" in x)
        assert lines[k] == f"static mut {name}: {ty} = crate::Shared::NEW;"


def test_hwreg_operand_is_llvms_encoding(tmp_path: Path) -> None:
    """The minicore's `s_getreg` operand is what LLVM's assembler encodes for
    `hwreg(HW_REG_SH_MEM_BASES, 16, 16)` (SOPK: simm16 in the low half of the word)."""
    mc = debian_llvm_tool("llvm-mc", 22)
    src = tmp_path / "getreg.s"
    src.write_text("s_getreg_b32 s0, hwreg(HW_REG_SH_MEM_BASES, 16, 16)\n")
    proc = run_bounded([mc, "-arch=amdgcn", "-mcpu=gfx942", "-show-encoding", str(src)],
                       timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = re.search(r"encoding: \[(0x[0-9a-f]+),(0x[0-9a-f]+),", proc.stdout)
    assert got is not None, proc.stdout
    simm16 = int(got.group(1), 16) | int(got.group(2), 16) << 8
    ours = re.search(r"const HWREG_SH_MEM_BASES_SHARED: u32 = (\d+);",
                     minicore_source("gpu_amdgcn.rs"))
    assert ours is not None and int(ours.group(1)) == simm16


@pytest.mark.rustc
@pytest.mark.parametrize("opt_level", [0, 2])
def test_shared_arrays_compute_what_the_hand_computes(opt_level: int) -> None:
    if find_rustc() is None:
        pytest.skip("rustc not found")
    pipeline = Registry().create(f"rustc-amdgpu:gfx942:O{opt_level}")
    outcome = pipeline.run(_case().case)
    assert isinstance(outcome, Ok), outcome
    assert outcome.outputs["out"].values.tolist() == _by_hand()


@pytest.mark.rustc
def test_the_group_segment_is_the_launchs(tmp_path: Path) -> None:
    """The arrays live in LDS the launch allocates: the same code object launched with no
    dynamic group segment faults on its first LDS access (CDNA3 LDS bounds)."""
    rustc = find_rustc()
    if rustc is None:
        pytest.skip("rustc not found")
    from rgpu_fuzz.pipelines.rustc_amdgpu_build import TRAP_BUFFER, compile_units, kernarg_plan
    from rgpu_fuzz.pipelines.rustc_amdgpu_program import TRAP_RECORD_WORDS, entry_symbol
    from rgpu_fuzz.sim.isa.code import decode_text
    from rgpu_fuzz.sim.launch.engine import Arg, Status, simulate

    unit = _case(grid=1)
    built = compile_units([unit], rustc=rustc, target="gfx942", opt_level=2, root=tmp_path,
                          timeout=300)[0]
    assert built.build.binary is not None, built.build.signature
    co_bytes = built.build.binary.read_bytes()
    from rgpu_fuzz.codeobj import read_code_object
    meta = read_code_object(co_bytes).kernel(entry_symbol(0)).metadata
    plan = kernarg_plan(unit, meta)
    assert not isinstance(plan, str), plan
    args = [Arg(buffer=v) if isinstance(v, str) else Arg(data=v)
            for v in plan.values({"a": 8, "out": 8})]
    buffers = {TRAP_BUFFER: bytes(4 * TRAP_RECORD_WORDS),
               "a": np.array(A, "<u4").tobytes(), "out": bytes(32)}

    def launch(dynamic: int) -> object:
        return simulate(co_bytes, entry_symbol(0), (1, 1, 1), (4, 1, 1), args, buffers,
                        decode=decode_text, dynamic_lds=dynamic)

    ok = launch(40)
    assert ok.status is Status.OK, ok.fault
    assert np.frombuffer(ok.buffers["out"], "<u4")[:4].tolist() == _by_hand()[:4]
    short = launch(0)
    assert short.status is Status.FAULT and short.fault is not None
    assert "LDS" in short.fault.detail, short.fault
