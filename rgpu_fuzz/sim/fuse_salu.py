"""Emitters of SALU instructions in a fused run, one per operand layout of `salu.SALU`
(`SSpec.shape`): scalar operands as Python ints read by `fuse_code.RunCode`, the table's
function called on them, SCC and per-bit definedness by `bind_alu`'s rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rgpu_fuzz.sim.bind_alu import _hwreg_field
from rgpu_fuzz.sim.fuse_code import NotFusible, RunCode
from rgpu_fuzz.sim.inst import Inst
from rgpu_fuzz.sim.wave import EXEC


def _scc_from(e: RunCode, var: str) -> None:
    e.line(f"if {var} is not None:")
    e.line(f"    w.scc = {var}")
    e.line("    w.scc_def = True")


def _s_cmp(e: RunCode, inst: Inst, spec: Any) -> None:
    a, b = (e.sread(o, b if b != 16 else 32)
            for o, b in zip(inst.operands[-2:], spec.src_bits, strict=True))
    e.line(f"_r, w.scc = {e.name(spec.fn)}({a}, {b})")
    e.line("w.scc_def = True")


def _s_movk(e: RunCode, inst: Inst, spec: Any) -> None:
    r, _ = spec.fn(inst.operands[-1].value & 0xFFFF)
    if spec.shape == "cmovk":
        e.line("if w.scc:")
        mark = len(e.body)
        e.swrite(inst.operands[0], 32, repr(r))
        e.body[mark:] = ["    " + x for x in e.body[mark:]]
        return
    e.swrite(inst.operands[0], 32, repr(r))


def _s_addk(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    a = e.sread(ops[0], 32)
    e.line(f"_r, _c = {e.name(spec.fn)}({a}, {ops[-1].value & 0xFFFF})")
    e.swrite(ops[0], 32, "_r")
    _scc_from(e, "_c")


def _s_getreg(e: RunCode, inst: Inst, spec: Any) -> None:
    e.swrite(inst.operands[0], 32, repr(_hwreg_field(inst.operands[-1].value & 0xFFFF, e.env)))


def _s_saveexec(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    bits = spec.dst_bits
    lanes = (1 << e.lanes) - 1
    e.sregs.update((EXEC, EXEC + 1))
    s = e.sread(ops[1], bits)
    hi = " | (S[127] << 32)" if bits == 64 else ""
    e.line(f"_old = S[126]{hi}")
    e.line(f"_s = {s}")
    e.line(f"_new, _ = {e.name(spec.fn)}(_old, _s)")
    e.line(f"if {e.name(spec.bitdef)}(_old, _s, {(1 << bits) - 1}) & {lanes} != {lanes}: "
           f"{e.bail}")
    e.swrite(ops[0], bits, "_old")
    e.may_raise()
    e.line(f"w.set_exec(_new{' | (S[127] << 32)' if bits == 32 else ''})")
    e.line("w.scc = int(_new != 0)")
    e.line("w.scc_def = True")
    e.refresh_exec()


def _s_general(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    shape = spec.shape
    if len(ops) != 1 + len(spec.src_bits):
        raise NotFusible("operand count")
    dst_bits = spec.dst_bits
    fn = e.name(spec.fn)
    if shape == "cselect":
        e.line(f"if not w.scc_def: {e.bail}")
        a, b = (e.sread(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True))
        e.swrite(ops[0], dst_bits, f"({a} if w.scc else {b})")
        return
    if shape == "cmov":
        e.line("if w.scc:")
        mark = len(e.body)
        a = e.sread(ops[1], spec.src_bits[0])
        e.swrite(ops[0], dst_bits, a)
        e.body[mark:] = ["    " + x for x in e.body[mark:]]
        return
    if shape == "bitset":
        a = e.sread(ops[1], spec.src_bits[0])
        d = e.sread(ops[0], 32)
        e.line(f"_r, _ = {fn}({a}, {d})")
        e.swrite(ops[0], dst_bits, "_r")
        return
    if shape == "addc" or inst.opcode in ("S_ADD_U32", "S_SUB_U32"):
        a, b = (e.sread(o, 32) for o in ops[1:3])
        if shape == "addc":
            e.line(f"if not w.scc_def: {e.bail}")
            e.line(f"_r, _c = {fn}({a}, {b}, w.scc)")
        else:
            e.line(f"_r, _c = {fn}({a}, {b})")
        e.swrite(ops[0], 32, "_r")
        e.line("w.scc = _c")
        e.line("w.scc_def = True")
        return
    if shape != "plain":
        raise NotFusible(f"SALU shape {shape}")
    if spec.bitdef is not None:
        # `bind_alu._bitwise`: per-bit definedness by the table's rule
        full = (1 << dst_bits) - 1
        pairs = [e.sread_bits(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True)]
        for n, (value, _) in enumerate(pairs):
            e.line(f"_a{n} = {value}")
        e.line(f"_r, _c = {fn}({', '.join(f'_a{n}' for n in range(len(pairs)))})")
        bargs = ", ".join(f"_a{n}, {bits}" for n, (_, bits) in enumerate(pairs))
        e.line(f"_d = {e.name(spec.bitdef)}({bargs}) & {full}")
        e.swrite(ops[0], dst_bits, "_r", "_d")
        if len(pairs) == 1:
            e.line("if _c is not None:")
            e.line("    w.scc = _c")
            e.line(f"    w.scc_def = _d == {full} or bool(_r & _d)")
        else:
            e.line("w.scc = _c")
            e.line(f"w.scc_def = _d == {full} or bool(_r & _d)")
        return
    args = [e.sread(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True)]
    e.line(f"_r, _c = {fn}({', '.join(args)})")
    if dst_bits:
        e.swrite(ops[0], dst_bits, "_r")
    _scc_from(e, "_c")


SALU_EMITTERS: dict[str, Callable[[RunCode, Inst, Any], None]] = {
    "cmp": _s_cmp, "cmpk": _s_cmp, "movk": _s_movk, "cmovk": _s_movk, "addk": _s_addk,
    "getreg": _s_getreg, "saveexec": _s_saveexec, "plain": _s_general,
    "cselect": _s_general, "cmov": _s_general, "bitset": _s_general, "addc": _s_general,
}


__all__ = ["SALU_EMITTERS"]
