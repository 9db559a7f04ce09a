"""rustc-amdgpu's reading of the kernel ABI and the trap record, on hand-made metadata and
records (no rustc needed): the kernarg segment is filled from the metadata's names, a
metadata that does not carry the signature is a `kernarg-mismatch`, and a trap record maps
back to the kernel line through the crate's kernel ranges."""

from __future__ import annotations

import struct
from pathlib import Path

from rgpu_fuzz.casefile import case_from_dict
from rgpu_fuzz.codeobj import KernelArg, KernelMetadata
from rgpu_fuzz.model.outcome import RunCrash, Stats, Trap, TrapKind
from rgpu_fuzz.pipelines.rustc_amdgpu import _trap_outcome, kernel_ir
from rgpu_fuzz.pipelines.rustc_amdgpu_build import TRAP_BUFFER, kernarg_plan
from rgpu_fuzz.pipelines.rustc_amdgpu_program import amdgpu_program_source
from rgpu_fuzz.pipelines.rustc_batch import first_error_line
from rgpu_fuzz.pipelines.rustc_program import ProgramCase, printed_program_case

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], out: &mut [u32], n: u32, flag: bool) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] / n;
}
"""


def _unit() -> ProgramCase:
    case = case_from_dict({
        "format": "rgpu-case/1", "entry": "k", "kernel": KERNEL,
        "launch": {"grid": [1, 1, 1], "block": [2, 1, 1]},
        "args": [{"name": "a", "buffer": "u32", "len": 2, "init": {"values": [6, 8]}},
                 {"name": "out", "buffer": "u32", "len": 2, "init": {"fill": 0}},
                 {"name": "n", "scalar": "u32", "value": 2},
                 {"name": "flag", "scalar": "bool", "value": True}]})
    unit = printed_program_case(case)
    assert isinstance(unit, ProgramCase), unit
    return unit


def _meta(args: list[tuple[str, str, int]]) -> KernelMetadata:
    offset, out = 0, []
    for name, kind, size in args:
        offset = (offset + size - 1) // size * size
        out.append(KernelArg(offset=offset, size=size, value_kind=kind, name=name))
        offset += size
    return KernelMetadata(name="rgpu_case_0", symbol="rgpu_case_0.kd",
                          kernarg_segment_size=offset, kernarg_segment_align=8,
                          group_segment_fixed_size=0, private_segment_fixed_size=0,
                          wavefront_size=64, sgpr_count=8, vgpr_count=8,
                          max_flat_workgroup_size=1024, args=tuple(out))


RUSTC_1_95 = [("rgpu_trap", "global_buffer", 8), ("a.0", "global_buffer", 8),
              ("a.1", "by_value", 8), ("out.0", "global_buffer", 8), ("out.1", "by_value", 8),
              ("n", "by_value", 4), ("flag", "by_value", 1)]
"""What rustc 1.95 makes of `k`'s signature (see test_rustc_amdgpu_codeobj)."""


def test_kernargs_follow_the_metadata_names() -> None:
    plan = kernarg_plan(_unit(), _meta(RUSTC_1_95))
    assert not isinstance(plan, str), plan
    assert plan.values({"a": 2, "out": 2}) == [
        TRAP_BUFFER, "a", struct.pack("<Q", 2), "out", struct.pack("<Q", 2),
        struct.pack("<I", 2), b"\x01"]


def test_metadata_in_another_order_is_followed_not_assumed() -> None:
    reordered = [RUSTC_1_95[0], RUSTC_1_95[2], RUSTC_1_95[1], *RUSTC_1_95[3:]]
    plan = kernarg_plan(_unit(), _meta(reordered))
    assert not isinstance(plan, str), plan
    assert plan.values({"a": 2, "out": 2})[1:3] == [struct.pack("<Q", 2), "a"]


def test_metadata_that_does_not_carry_the_signature_is_a_mismatch() -> None:
    assert "no metadata argument carries len of `a`" in str(
        kernarg_plan(_unit(), _meta([a for a in RUSTC_1_95 if a[0] != "a.1"])))
    assert "`bogus`" in str(kernarg_plan(_unit(), _meta([*RUSTC_1_95, ("bogus", "by_value", 4)])))
    wrong_width = [("n", "by_value", 8) if a[0] == "n" else a for a in RUSTC_1_95]
    assert "has 8 bytes" in str(kernarg_plan(_unit(), _meta(wrong_width)))


def test_trap_record_maps_to_the_kernel_line() -> None:
    unit = _unit()
    program = amdgpu_program_source([unit])
    first, _end = program.kernel_lines[0]
    div_line = next(i for i, t in enumerate(unit.kernel_source.splitlines(), 1) if "/" in t)
    record = struct.pack("<8I", 1, first + div_line - 1, 0, 0, 0, 1, 0, 0)
    out = _trap_outcome(record, program, 0, Stats())
    assert isinstance(out, Trap)
    assert out.kind is TrapKind.DIV_BY_ZERO
    assert out.where is not None and out.where.line == div_line
    assert out.where.thread == (1, 0, 0)
    assert isinstance(_trap_outcome(bytes(32), program, 0, Stats()), RunCrash)
    assert isinstance(_trap_outcome(struct.pack("<8I", 4, 0, 0, 0, 0, 0, 0, 0), program, 0,
                                    Stats()), RunCrash)


def test_llvm_fatal_errors_are_the_signature() -> None:
    stderr = ("warning: unused\nLLVM ERROR: Cannot select: 0x55d1c2a8f0e0: i32 = "
              "AMDGPUISD::FOO t1, /tmp/x/kernels.rs:12:3\n")
    assert first_error_line(stderr, Path("/tmp/x")) == \
        "LLVM ERROR: Cannot select: 0x…: i32 = AMDGPUISD::FOO t1, <dir>/kernels.rs"


def test_kernel_ir_keeps_the_kernel_functions() -> None:
    ir = ("define void @minicore_thing() {\nret void\n}\n"
          "; k\ndefine amdgpu_kernel void @rgpu_case_0(ptr %x) {\nstart:\n  ret void\n}\n")
    assert kernel_ir(ir) == "; k\ndefine amdgpu_kernel void @rgpu_case_0(ptr %x) {\nstart:\n" \
        "  ret void\n}"



def test_kernel_ir_reads_a_real_sized_module() -> None:
    """rustc's module: a `; Function Attrs` comment before every definition, hundreds of
    lines each. The comment part of the pattern once matched across lines (`.` with DOTALL)
    and backtracked without end on a 60-function module (`report` hung)."""
    body = "".join(f"  %v{i} = add i32 %a, {i}\n" for i in range(200))
    fn = "; Function Attrs: nounwind\ndefine internal i32 @helper_{n}(i32 %a) {{\n" + body + \
        "  ret i32 %a\n}}\n"
    ir = "".join(fn.format(n=n) for n in range(60))
    ir += "; Function Attrs: nounwind\ndefine amdgpu_kernel void @rgpu_case_0() {\n  ret void\n}\n"
    assert kernel_ir(ir) == ("; Function Attrs: nounwind\ndefine amdgpu_kernel void "
                             "@rgpu_case_0() {\n  ret void\n}")


def test_report_section_says_where_to_look_and_shows_rustcs_ir() -> None:
    """A wrong-code finding of rustc-amdgpu alone: the report section names the three
    suspects and shows rustc's own IR of the kernel (`--emit=llvm-ir`, needs rustc)."""
    import pytest

    from oracles import Signature, Verdict
    from oracles.verdict import Finding, FindingKind
    from rgpu_fuzz.model.outcome import Ok
    from rgpu_fuzz.pipelines.registry import Registry
    from rgpu_fuzz.pipelines.rustc_program import find_rustc

    if find_rustc() is None:
        pytest.skip("rustc not found")
    pipeline = Registry().create("rustc-amdgpu:gfx942:O2")
    finding = Finding(kind=FindingKind.WRONG_CODE, pipelines=("ref", pipeline.label),
                      signature=Signature.parse("wrong-code|rustc-amdgpu:gfx942:O2|div"))
    outcomes = {"ref": Ok(outputs={}), "rustc-cpu:O2": Ok(outputs={})}
    text = pipeline.report_section(_unit().case, outcomes, Verdict(findings=(finding,)),
                                   [pipeline])
    assert text is not None
    assert "## Where to look (rustc-amdgpu:gfx942:O2)" in text
    assert "minicore" in text and "rustc's amdgcn lowering" in text and "back end" in text
    assert "define amdgpu_kernel void @rgpu_case_0(" in text
    assert pipeline.report_section(_unit().case, outcomes, Verdict(), [pipeline]) is None
