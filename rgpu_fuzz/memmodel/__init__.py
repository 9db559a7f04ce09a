"""The memory-model code-sequence check: every atomic of a code object, with the ordering
and scope its LLVM IR gave it, against LLVM AMDGPUUsage's "Memory Model" code-sequence
tables for its target (GFX90A; GFX942, which gfx950 takes too; GFX10-GFX11; GFX12). A
mismatch is the finding `memory-model-sequence`, its detail citing the table row (`rows`).
This catches a memory legalizer that drops a scope bit, a wait or a cache invalidate — bugs
no sequential simulator can show, since their effect needs weak-memory hardware.

Face: `check_text` (assembly lines, e.g. from `llc`), `check_code_object` (a linked code
object, disassembled by the project's decoder), `Finding`, `Report`, `FAMILIES`."""

from __future__ import annotations

from typing import Any

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
    nothing (`machine.matters`) are rendered (`listing`)."""
    if family_of(target) is None:
        return Report((), 0)
    from rgpu_fuzz.codeobj.reader import read_code_object
    from rgpu_fuzz.sim import decode_text

    return check_text(ir_text, listing(decode_text(read_code_object(code_object))), target)


_KEEP: dict[str, bool] = {}
"""`machine.matters` by mnemonic."""
_TEXT: dict[tuple[Any, ...], str] = {}
"""LLVM-syntax text by (target, dwords) of the decoded instruction."""
_TEXT_LIMIT = 100_000


def listing(code: Any) -> list[str]:
    """The text (`Inst.text`) of each instruction of `code` (what `rgpu_fuzz.sim.decode_text`
    gives) that `machine.matters` keeps, in order: the lines of rendering every instruction
    at its address and keeping those, made without walking `code` as a sequence (which
    moves each memoised instruction to its address, `Code.__getitem__`) or rendering
    anything twice: rendering every instruction cost more than the rest of a campaign
    case's O0 pipeline. The memoised instructions (`Code.templates`) are walked with their
    addresses, `matters` is decided once per mnemonic, and a kept instruction is rendered
    once per process for its dwords: the address is no input to its text (`Inst.text`
    decodes the dwords again at the address, and the rendering, `rgpu_fuzz.sim.isa.render`,
    reads no address: a branch prints its raw simm16, as LLVM does, not its target)."""
    keep, texts = _KEEP, _TEXT
    out: list[str] = []
    for inst, address in zip(code.templates, code.addresses, strict=True):
        m = inst.mnemonic
        kept = keep.get(m)
        if kept is None:
            kept = keep[m] = matters(m)
        if not kept:
            continue
        key = inst.share_key or inst.origin
        if inst.rendered or not key:
            out.append(inst.at(address).text)
            continue
        text = texts.get(key)
        if text is None:
            if len(texts) > _TEXT_LIMIT:
                texts.clear()
            text = texts[key] = inst.at(address).text
        out.append(text)
    return out


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
           "check_text", "compile_crash", "listing", "uses_atomics"]
