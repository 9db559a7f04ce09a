"""Emitters of SALU instructions in a fused run, one per operand layout of `salu.SALU`
(`SSpec.shape`): scalar operands as Python ints read by `fused.code.RunCode`, the table's
function called on them, SCC and per-bit definedness by `bound.salu`'s rules.

Bitwise operations, moves and shifts (the table's `expr`) and the SAVEEXEC forms are the
lane-mask arithmetic of every branch and loop; they are emitted as the table's expression,
with the definedness work of their bound steps (`scalar_steps.bitwise`: every source bit
defined, so is the result) reduced to one test of the sources' defined bits, or to none
where the segment has made sure of them (`fused.code.Scalars`); the per-bit rule
(`SOp.bitdef`) runs only where a source is partly defined."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rgpu_fuzz.sim.bound.salu import _hwreg_field
from rgpu_fuzz.sim.fused.code import M32, NULL_SGPR, NotFusible, RunCode
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.state.wave import EXEC

EXEC_PAIR = Opnd(OpKind.SGPR, EXEC, 2)


def _scc(e: RunCode, value: str, defined: str) -> None:
    """Write SCC and its definedness (`defined`: an expression, or "True"), the latter left
    out where this segment has set it True already."""
    known = e.scalars()
    e.line(f"w.scc = {value}")
    if defined != "True" or not known.scc_def:
        e.line(f"w.scc_def = {defined}")
    known.scc_def = defined == "True"


def _scc_from(e: RunCode, var: str) -> None:
    e.line(f"if {var} is not None:")
    e.line(f"    w.scc = {var}")
    if not e.scalars().scc_def:
        e.line("    w.scc_def = True")


def _under(e: RunCode, test: str, emit: Callable[[], None]) -> None:
    """`emit`'s lines under `if test:`; what the segment knows after is what held before
    and holds after them."""
    e.line(f"if {test}:")
    known = e.scalars()
    before = known.copy()
    mark = len(e.body)
    emit()
    e.body[mark:] = ["    " + x for x in e.body[mark:]] or ["    pass"]
    known.meet(before)


def _s_cmp(e: RunCode, inst: Inst, spec: Any) -> None:
    # S_CMPK's SIMM16 read at 32 bits; a 16-bit register source (S_CMP_*_F16) is not fused
    wide = spec.shape == "cmpk"
    a, b = (e.sread(o, 32 if wide and b == 16 else b)
            for o, b in zip(inst.operands[-2:], spec.src_bits, strict=True))
    e.line(f"_r, w.scc = {e.name(spec.fn)}({a}, {b})")
    if not e.scalars().scc_def:
        e.line("w.scc_def = True")
        e.scalars().scc_def = True


def _scc_defined(e: RunCode) -> None:
    """An instruction that branches on SCC hands over to its bound step (which reports
    `sim-uninit-read`) where SCC may be undefined."""
    if not e.scalars().scc_def:
        e.line(f"if not w.scc_def: {e.bail}")
        e.scalars().scc_def = True


def _s_movk(e: RunCode, inst: Inst, spec: Any) -> None:
    r, _ = spec.fn(inst.operands[-1].value & 0xFFFF)
    if spec.shape == "cmovk":
        _scc_defined(e)
        _under(e, "w.scc", lambda: e.swrite(inst.operands[0], 32, repr(r)))
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
    dst = ops[0].index
    if bits == 64 == e.lanes and spec.expr is not None and \
            e.sregs_of(ops[1], 64) is not None and dst + 1 < EXEC and dst != NULL_SGPR:
        # `scalar_steps.saveexec`: the source checked defined, EXEC taken as defined, so
        # every bit of the new EXEC is (`SOp.bitdef`)
        s = e.sread(ops[1], 64)
        old = e.sread_bits(EXEC_PAIR, 64)[0]
        e.line(f"_new = {spec.expr.format(old, s, m=lanes)}")
        e.swrite(ops[0], 64, old)
        e.swrite(EXEC_PAIR, 64, "_new")
        _scc(e, "1 if _new else 0", "True")
        return
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
    _scc(e, "int(_new != 0)", "True")
    e.refresh_exec()


def _s_expr(e: RunCode, inst: Inst, spec: Any) -> bool:
    """A bitwise operation, move or shift as the table's expression (`SOp.expr`) where its
    sources are plain SGPRs or constants: its result is defined where every source is
    (tested once, or known), else by the per-bit rule. False: not of that form."""
    ops = inst.operands
    bits = spec.dst_bits
    full = (1 << bits) - 1
    srcs = list(zip(ops[1:], spec.src_bits, strict=True))
    regs = [e.sregs_of(o, b) for o, b in srcs]
    if any(r is None for r in regs) or ops[0].kind is not OpKind.SGPR:
        return False
    unknown = sorted({x for r in regs for x in r or ()})
    pairs = [e.sread_bits(o, b) for o, b in srcs]
    e.line(f"_r = {spec.expr.format(*(v for v, _ in pairs), m=full)}")
    sets_scc = spec.fn(*(0 for _ in srcs))[1] is not None

    def defined() -> None:
        e.scalars().defined.update(unknown)
        e.swrite(ops[0], bits, "_r")
        if sets_scc:
            _scc(e, "1 if _r else 0", "True")
    if not unknown:
        defined()
        return True
    known = e.scalars()
    before = known.copy()
    e.line(" & ".join(f"if SD[{x}]" if n == 0 else f"SD[{x}]" for n, x in enumerate(unknown))
           + f" == {M32}:")
    mark = len(e.body)
    defined()
    e.body[mark:] = ["    " + x for x in e.body[mark:]]
    fast = known.copy()
    known.load(before)
    e.line("else:")
    mark = len(e.body)
    bargs = ", ".join(f"{v}, {d}" for v, d in pairs)
    e.line(f"_d = {e.name(spec.bitdef)}({bargs}) & {full}")
    e.swrite(ops[0], bits, "_r", "_d")
    if sets_scc:
        _scc(e, "1 if _r else 0", f"_d == {full} or bool(_r & _d)")
    e.body[mark:] = ["    " + x for x in e.body[mark:]]
    known.meet(fast)
    return True


def _s_general(e: RunCode, inst: Inst, spec: Any) -> None:
    ops = inst.operands
    shape = spec.shape
    if len(ops) != 1 + len(spec.src_bits):
        raise NotFusible("operand count")
    dst_bits = spec.dst_bits
    fn = e.name(spec.fn)
    if shape == "cselect":
        _scc_defined(e)
        a, b = (e.sread(o, bb) for o, bb in zip(ops[1:], spec.src_bits, strict=True))
        e.swrite(ops[0], dst_bits, f"({a} if w.scc else {b})")
        return
    if shape == "cmov":
        _scc_defined(e)
        _under(e, "w.scc", lambda: e.swrite(ops[0], dst_bits, e.sread(ops[1], spec.src_bits[0])))
        return
    if shape == "bitset":
        a = e.sread(ops[1], spec.src_bits[0])
        d = e.sread(ops[0], dst_bits)
        e.line(f"_r, _ = {fn}({a}, {d})")
        e.swrite(ops[0], dst_bits, "_r")
        return
    if shape == "addc" or inst.opcode in ("S_ADD_U32", "S_SUB_U32"):
        a, b = (e.sread(o, 32) for o in ops[1:3])
        if shape == "addc":
            if not e.scalars().scc_def:
                e.line(f"if not w.scc_def: {e.bail}")
                e.scalars().scc_def = True
            e.line(f"_r, _c = {fn}({a}, {b}, w.scc)")
        else:
            e.line(f"_r, _c = {fn}({a}, {b})")
        e.swrite(ops[0], 32, "_r")
        _scc(e, "_c", "True")
        return
    if shape != "plain":
        raise NotFusible(f"SALU shape {shape}")
    if spec.expr is not None and _s_expr(e, inst, spec):
        return
    if spec.bitdef is not None:
        # `bound.salu._bitwise`: per-bit definedness by the table's rule
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
            e.scalars().scc_def = False
        else:
            _scc(e, "_c", f"_d == {full} or bool(_r & _d)")
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
