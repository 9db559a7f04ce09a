"""The memory-model code-sequence check: every atomic of a code object, with the ordering
and scope its LLVM IR gave it, against LLVM AMDGPUUsage's "Memory Model" code-sequence
tables for its target (GFX90A; GFX942, which gfx950 takes too; GFX10-GFX11; GFX12). A
mismatch is the finding `memory-model-sequence`, its detail citing the table row (`rows`).
This catches a memory legalizer that drops a scope bit, a wait or a cache invalidate — bugs
no sequential simulator can show, since their effect needs weak-memory hardware.

Face: `check_text` (assembly lines, e.g. from `llc`), `check_code_object` (a linked code
object, disassembled by the project's decoder), `Finding`, `Report`, `FAMILIES`."""

from __future__ import annotations

from rgpu_fuzz.memmodel.check import SIGNATURE, Finding, Report, check_text
from rgpu_fuzz.memmodel.machine import matters
from rgpu_fuzz.memmodel.rows import SHARED, TABLES, family_of
from rgpu_fuzz.model.outcome import CompileCrash

STAGE = "memory-model"
"""The pipeline stage whose outcome a mismatch is."""

FAMILIES = (*TABLES, *SHARED)
"""The processors the check knows a table for."""


def uses_atomics(ir_text: str) -> bool:
    """Whether the IR has an atomic (cheap: the check runs only then)."""
    return any(w in ir_text for w in ("atomicrmw", "cmpxchg", "load atomic", "store atomic",
                                      "fence"))


def check_code_object(code_object: bytes, ir_text: str, target: str) -> Report:
    """The check of a linked code object compiled for `target` from `ir_text`; a target
    without a table gives an empty report. Only the instructions the check can tell from
    nothing (`machine.matters`) are rendered: rendering decodes an instruction again, and
    rendering all of them cost more than the rest of a campaign case's O0 pipeline."""
    if family_of(target) is None:
        return Report((), 0)
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    code = decode_text(read_code_object(code_object))
    return check_text(ir_text, [inst.text for inst in code if matters(inst.mnemonic)], target)


def compile_crash(code_object: bytes, ir_text: str, target: str) -> CompileCrash | None:
    """The pipelines' outcome for a code object whose atomics break their table: a
    `CompileCrash` in stage `memory-model` (a wrong code object is a finding against the
    compiler, like `codeobj-invalid`), signature `memory-model-sequence: <row>`, every
    mismatch in the log; None when the kernel has no atomic or all match."""
    if not uses_atomics(ir_text):
        return None
    findings = check_code_object(code_object, ir_text, target).findings
    if not findings:
        return None
    return CompileCrash(stage=STAGE, signature=f"{SIGNATURE}: {findings[0].row.row}",
                        log="\n".join(f.detail for f in findings))


__all__ = ["FAMILIES", "SIGNATURE", "STAGE", "Finding", "Report", "check_code_object",
           "check_text", "compile_crash", "uses_atomics"]
