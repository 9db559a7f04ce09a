"""Emitters of VALU instructions in a fused run, one per operand layout of `valu.VALU`
(`VSpec.shape`), as `bound.alu` has one binder per layout: the table's function is called on
the operands `fused.code.RunCode` reads, with the result's definedness by `bound.alu`'s rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.alu import COPIES, LOW_HALF_OPS, VCC_OP, _omod_clamp, _with_vcc
from rgpu_fuzz.sim.bound.bitsel import PER_BIT
from rgpu_fuzz.sim.bound.operands import DTYPES, vcol
from rgpu_fuzz.sim.fused.code import M32, NotFusible, RunCode
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.valu import INT_CLAMP
from rgpu_fuzz.sim.state.bitdef32 import DECIDING as BITDEF_DECIDING
from rgpu_fuzz.sim.state.bitdef32 import RULES as BITDEF_RULES
from rgpu_fuzz.sim.state.defined64 import SHIFT64_OPS
from rgpu_fuzz.sim.state.partial import READS
from rgpu_fuzz.sim.state.wave import EXEC


def _vpart_bail(e: RunCode, ops: Sequence[Opnd]) -> None:
    """Per-bit definedness rules (`bitdef32`, `partial`) differ from the whole-register
    rule only for columns with partly defined lanes: the bound step handles those."""
    cols = [vcol(o) for o in ops if o.kind in (OpKind.VGPR, OpKind.AGPR)]
    if cols:
        test = " or ".join(f"{c} in w.vpart" for c in cols)
        e.line(f"if w.vpart and ({test}): {e.bail}")


def _low_def(e: RunCode, op: Opnd) -> str | None:
    """`operands.low_half_defined` of a source the run guards to be defined if scalar."""
    if op.kind in (OpKind.VGPR, OpKind.AGPR):
        return e.dcol(vcol(op))
    return None


def _v_plain(e: RunCode, inst: Inst, spec: Any) -> None:
    if not spec.dst:
        return
    ops = inst.operands
    if len(ops) != 1 + len(spec.src):
        raise NotFusible("operand count")
    copy_src = -1
    if inst.opcode in COPIES and len(ops) == 2 and ops[1].kind in (OpKind.VGPR, OpKind.AGPR) \
            and not inst.mods.get("dst_sel") and not getattr(ops[1], "sel", ""):
        copy_src = vcol(ops[1])
    halves = inst.opcode in SHIFT64_OPS
    srcs = list(zip(ops[1:], spec.src, strict=True))
    args = [e.vread(o, t, lanewise=halves) for o, t in srcs]
    fn: Any = spec.fn
    if spec.mode:
        args.insert(0, repr(e.env.ieee))
    if inst.mods.get("clamp", 0) and inst.opcode in INT_CLAMP:
        fn = INT_CLAMP[inst.opcode]
        post = None
    else:
        post = _omod_clamp(inst, spec.dst)
    if spec.mode and fn is not spec.fn:
        args.pop(0)  # INT_CLAMP functions take no float mode (bound.alu replaces fn whole)
    call = f"{e.name(fn)}({', '.join(args)})"
    if post is not None:
        call = f"{e.name(post)}({call})"
    dt = DTYPES[spec.dst][1]
    bitdef = inst.opcode in BITDEF_RULES and post is None and len(srcs) == 2 and \
        ops[0].kind is OpKind.VGPR and not inst.mods.get("dst_sel") and \
        not any(getattr(o, "sel", "") for o in ops[1:])
    if bitdef or inst.opcode in READS or halves or inst.opcode in PER_BIT or \
            any(getattr(o, "sel", "") not in ("", "DWORD") for o in ops[1:]):
        _vpart_bail(e, ops[1:])
    whole = "True" if halves else e.all_of([e.vdef(o, t) for o, t in srcs])
    if bitdef and inst.opcode in BITDEF_DECIDING and whole != "True":
        # `bitdef32.DECIDING`: an undefined active lane may still get defined bits
        e.line(f"if np.any(~({whole}) & E): {e.bail}")
    d: str | tuple[str, str] = whole
    if inst.opcode in LOW_HALF_OPS and post is None:
        # `bound.alu._low_half`: the low half is defined where the sources' low halves are
        low = e.all_of([_low_def(e, o) for o, _ in srcs])
        if inst.opcode == "V_MOV_B64":
            col = vcol(ops[1]) if ops[1].kind in (OpKind.VGPR, OpKind.AGPR) else -1
            d = (low, e.dcol(col + 1) if col >= 0 else "True")
        else:
            d = (low, whole)
    elif DTYPES[spec.dst][0] == 64 and " & " in whole:
        # both halves of the result take this one value: computed once (an AND of two to
        # six columns, ~0.5 us a column pair)
        e.dc_line(whole)
        d = "_dc"
    value = call if bitdef else f"np.asarray({call}, {e.name(dt)})"
    if copy_src >= 0:
        e.line(f"_part = w.vpart.get({copy_src}) if w.vpart else None")
    e.vwrite(ops[0], spec.dst, inst, value, d, array=not bitdef)
    if copy_src >= 0:
        e.line(f"if _part: _move_part(w, _part, {vcol(ops[0])})")


def _v_fmac(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    if len(ops) == 3:
        ops = (*ops, ops[0])
    _v_plain(e, replace(inst, operands=ops), spec)


def _v_cmp(e: RunCode, inst: Inst, spec: Any) -> None:
    writes_exec = spec.shape == "cmpx"
    exec_only = writes_exec and len(inst.operands) == 2
    ops = [VCC_OP, *inst.operands] if exec_only else _with_vcc(inst.operands, 3, (0,))
    if len(ops) != 3:
        raise NotFusible("operand count")
    srcs = list(zip(ops[1:], spec.src, strict=True))
    a, b = (e.vread(o, t) for o, t in srcs)
    d = e.all_of([e.vdef(o, t) for o, t in srcs])
    e.line(f"_res = {e.lanewise_value(f'{e.name(spec.fn)}({a}, {b})')}")
    if d != "True":
        e.dc_line(d)
        d = "_dc"
    if writes_exec and d != "True":
        # the bound step raises sim-uninit-read after its destination write: it runs it
        e.line(f"if {'not _fd and ' if e.fd_ok else ''}not np.all(_dc | ~E): {e.bail}")
    if not exec_only and (ops[0].index != EXEC or not writes_exec):
        e.mask_write(ops[0], "_res", d)
    if writes_exec:
        e.may_raise()
        e.line("w.set_exec(_mask_of(_res & E & _FULLV))")
        e.refresh_exec()


def _v_cndmask(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = _with_vcc(inst.operands, 4, (3,))
    if len(ops) != 4:
        raise NotFusible("operand count")
    if spec.dst == "b32":
        _vpart_bail(e, ops[1:3])  # `bitdef32.cndmask_step`: per-bit definedness
    srcs = list(zip(ops[1:3], spec.src, strict=True))
    a, b = (e.vread(o, t) for o, t in srcs)
    d0, d1 = (e.vdef(o, t) for o, t in srcs)
    e.line(f"_m = {e.lane_mask(ops[3])}")
    d = "True" if d0 is None and d1 is None else \
        f"np.where(_m, {d1 or 'True'}, {d0 or 'True'})"
    e.vwrite(ops[0], spec.dst, inst, f"np.where(_m, {b}, {a})", d)


def _v_carry(e: RunCode, inst: Inst, spec: Any, *, carry_in: bool) -> None:
    """VOP2/VOP3b add/sub with a carry-out mask, and with a carry-in mask when `carry_in`."""
    n = 5 if carry_in else 4
    ops = _with_vcc(inst.operands, n, (1, 4) if carry_in else (1,))
    if len(ops) != n:
        raise NotFusible("operand count")
    srcs = list(zip(ops[2:4], spec.src, strict=True))
    a, b = (e.vread(o, t) for o, t in srcs)
    d = e.all_of([e.vdef(o, t) for o, t in srcs])
    if carry_in:
        e.line(f"_cin = {e.lane_mask(ops[4])}")
    cin = ", _cin" if carry_in else ""
    e.line(f"_r2, _c = {e.name(spec.fn)}(np.asarray({a}), np.asarray({b}){cin})")
    if d != "True":
        e.dc_line(d)
        d = "_dc"
    e.mask_write(ops[1], e.lanewise_value("_c"), d)
    e.vwrite(ops[0], "u32", inst, "_r2", d)


def _v_carry_out(e: RunCode, inst: Inst, spec: Any) -> None:
    _v_carry(e, inst, spec, carry_in=False)


def _v_carry_in(e: RunCode, inst: Inst, spec: Any) -> None:
    _v_carry(e, inst, spec, carry_in=True)


def _v_mad64(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    if len(ops) != 5:
        raise NotFusible("operand count")
    srcs = list(zip(ops[2:5], spec.src, strict=True))
    args = [f"np.asarray({e.vread(o, t)})" for o, t in srcs]
    d = e.all_of([e.vdef(o, t) for o, t in srcs])
    low = e.all_of([_low_def(e, o) for o, _ in srcs])
    e.line(f"_r2, _c = {e.name(spec.fn)}({', '.join(args)})")
    if d != "True":
        e.dc_line(d)
        d = "_dc"
    e.mask_write(ops[1], e.lanewise_value("_c"), d)
    e.vwrite(ops[0], spec.dst, inst, "_r2", (low, d))


def _v_pk_mov(e: RunCode, inst: Inst, spec: Any) -> None:
    """`bound.alu._pk_mov` for VGPR sources: D.lo = S0's op_sel half, D.hi = S1's, each
    with that half's definedness (gfx90a's 64-bit move)."""
    ops = inst.operands
    if len(ops) != 3 or inst.mods.get("clamp", 0):
        raise NotFusible("pk_mov form")
    cols = []
    for o in ops[1:3]:
        if o.kind not in (OpKind.VGPR, OpKind.AGPR) or o.neg or o.abs or bool(
                getattr(o, "sel", "")):
            raise NotFusible("pk_mov source")
        cols.append(vcol(o) + int(bool(getattr(o, "hi", False))))
    e.vregs.update(cols)
    e.read_cols(cols)
    e.vector = True
    e.line(f"_r = np.empty({e.lanes}, _U64)")
    e.line("_h = _r.view(_U32)")
    # little-endian: the low dword of each lane's pair comes first
    e.line(f"_h[0::2] = {e.view(cols[0], np.uint32)}")
    e.line(f"_h[1::2] = {e.view(cols[1], np.uint32)}")
    e.vwrite(ops[0], "b64", inst, "_r", (e.dcol(cols[0]), e.dcol(cols[1])), array=True)


def _plain_vgpr(op: Opnd) -> int:
    if op.kind not in (OpKind.VGPR, OpKind.AGPR) or bool(getattr(op, "sel", "")) or \
            bool(getattr(op, "hi", False)):
        raise NotFusible("lane read of a non-VGPR or part of one")
    return vcol(op)


def _v_readlane(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    col = _plain_vgpr(ops[1])
    e.vregs.add(col)
    if spec.shape == "readfirstlane":
        e.line("_l = int(np.argmax(E)) if ef or E.any() else 0")
        e.line(f"if not VD[_l, {col}]: {e.bail}")
        e.swrite(ops[0], 32, f"int(V[_l, {col}])")
        return
    # `bound.alu._readlane`'s one-lane path: a partly defined lane keeps its defined bits
    sel, sel_def = e.sread_bits(ops[2], 32)
    e.line(f"_l = {sel} % {e.lanes}")
    e.line(f"_sd = {sel_def} == {M32}")
    e.line(f"if _sd and VD[_l, {col}]: _dl = {M32}")
    e.line(f"elif _sd and w.vpart and {col} in w.vpart: _dl = w.vpart[{col}].get(_l, 0)")
    e.line("else: _dl = 0")
    e.swrite(ops[0], 32, f"int(V[_l, {col}])", "_dl")


def _v_writelane(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    if ops[0].kind not in (OpKind.VGPR, OpKind.AGPR):
        raise NotFusible("writelane destination")
    col = ops[0].index + (256 if ops[0].kind is OpKind.AGPR else 0)
    e.vregs.add(col)
    value, bits = e.sread_bits(ops[1], 32)
    e.line(f"_l = {e.sread(ops[2], 32)} % {e.lanes}")
    e.line(f"V[_l, {col}] = {value}")
    e.line(f"_b = {bits}")
    e.line(f"VD[_l, {col}] = _b == {M32}")
    e.known.discard(col)
    e.active.discard(col)
    e.written.add(col)
    e.line(f"if 0 < _b < {M32}: w.vpart.setdefault({col}, {{}})[_l] = _b")
    e.line(f"elif {col} in w.vpart: w.vpart[{col}].pop(_l, None)")


VALU_EMITTERS: dict[str, Callable[[RunCode, Inst, Any], None]] = {
    "plain": _v_plain, "fmac": _v_fmac, "cmp": _v_cmp, "cmpx": _v_cmp,
    "cndmask": _v_cndmask, "carry_out": _v_carry_out, "carry_in": _v_carry_in,
    "mad64": _v_mad64, "readlane": _v_readlane, "readfirstlane": _v_readlane,
    "pk_mov": _v_pk_mov,
    "writelane": _v_writelane,
}


__all__ = ["VALU_EMITTERS"]
