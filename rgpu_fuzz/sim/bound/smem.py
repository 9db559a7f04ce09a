"""Binding scalar memory loads (SMEM) to closures: the data parks in a `Pending` until the
`s_waitcnt lgkmcnt` that covers it (`bound.inflight`); a load from a plain SGPR pair plus
constants (`smem_form`) takes a closure-free step."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from rgpu_fuzz.sim.bound.alu import Step, Unbindable
from rgpu_fuzz.sim.bound.operands import Env, _consts, hazard, scalar_source, uninit
from rgpu_fuzz.sim.bound.scratch import (
    is_plain_sgpr,
)
from rgpu_fuzz.sim.isa.inst import Inst, OpKind
from rgpu_fuzz.sim.semantics.memops import MemOp
from rgpu_fuzz.sim.state.wave import Pending, Wave

Memory = Any  # rgpu_fuzz.sim.launch.engine.LaunchMemory (avoids an import cycle)
FULL64 = (1 << 64) - 1


def smem_form(inst: Inst, op: MemOp, env: Env) -> tuple[int, int, tuple[int, ...]] | None:
    """An SMEM load from a plain SGPR pair plus constants (kernel arguments, O3's common
    form; gfx10+ encodes no SOFFSET as the constant register `null`) as (the pair's first
    SGPR, the constant byte offset, the destination SGPRs); None for any other form."""
    ops = inst.operands
    if op.store or len(ops) < 2 or not is_plain_sgpr(ops[1], env):
        return None
    consts = _consts(env)
    if any(o.kind is OpKind.SGPR and o.index not in consts for o in ops[2:]):
        return None
    offs = [o for o in ops[2:] if o.kind in (OpKind.INT, OpKind.SGPR)]
    k = sum(o.value if o.kind is OpKind.INT else consts[o.index] for o in offs) if offs \
        else int(inst.mods.get("offset", 0))
    return ops[1].index, k, tuple(range(ops[0].index, ops[0].index + op.width // 4))


def bind_smem(inst: Inst, op: MemOp, env: Env, mem: Memory) -> Step:
    ops = inst.operands
    if op.store:
        raise Unbindable("scalar stores")
    if op.width < 4:
        return _sub_dword(inst, op, env)
    dst = ops[0]
    n = op.width // 4
    base, based = scalar_source(ops[1], 64, env)
    offs: list[tuple[Callable[[Wave], int], Callable[[Wave], bool]]] = []
    for o in ops[2:]:
        if o.kind is OpKind.SGPR:
            offs.append(scalar_source(o, 32, env))
        elif o.kind is OpKind.INT:
            offs.append(((lambda k: lambda w: k)(o.value), lambda w: True))
    extra = int(inst.mods.get("offset", 0)) if not offs else 0
    regs = tuple(range(dst.index, dst.index + n))

    def step(w: Wave) -> None:
        if not (based(w) and all(d(w) for _, d in offs)):
            raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        addr = (base(w) + sum(g(w) for g, _ in offs) + extra) & 0xFFFF_FFFF_FFFF_FFFC
        data = w.mem.glob.read_scalar(addr, op.width, inst.mnemonic)
        vals = tuple(int.from_bytes(data[4 * k:4 * k + 4], "little") for k in range(n))
        p = Pending(vm=False, lgkm=True, smem=True, sregs=regs, svalues=vals,
                    sdefs=w.mem.glob.scalar_defined(addr, op.width))
        for r in regs:
            w.pend_s[r] = p
        w.lgkm_queue.append(p)

    form = smem_form(inst, op, env)
    if form is None:
        return step
    # `step` without its closures, same checks in the same order (a constant is always
    # defined)
    i, k, _ = form
    width = op.width
    unpack = struct.Struct(f"<{n}I").unpack_from
    mnemonic = inst.mnemonic

    def plain(w: Wave) -> None:
        sd = w.sdef
        if sd[i] | sd[i + 1] << 32 != FULL64:
            raise uninit(w, f"{mnemonic}: address from an undefined register")
        if w.pend_s and (i in w.pend_s or i + 1 in w.pend_s):
            raise hazard(w, f"s[{i}:{i + 1}] read before the s_waitcnt covering its load")
        addr = ((w.S[i] | w.S[i + 1] << 32) + k) & 0xFFFF_FFFF_FFFF_FFFC
        glob = w.mem.glob
        m = glob.holding(addr, width)
        if m is not None:
            sdefs = None
        else:
            m = glob.find(addr)
            if m is None or addr + width > m.end:
                glob.read_scalar(addr, width, mnemonic)  # raises its sim-oob-access
            sdefs = glob.scalar_defined(addr, width)
        p = Pending(vm=False, lgkm=True, smem=True, sregs=regs,
                    svalues=unpack(m.data, addr - m.base), sdefs=sdefs)
        pend = w.pend_s
        for r in regs:
            pend[r] = p
        w.lgkm_queue.append(p)
    return plain


def _sub_dword(inst: Inst, op: MemOp, env: Env) -> Step:
    """RDNA4's S_LOAD_U8/I8/U16/I16 (and S_BUFFER_ forms): one byte or half-word at the
    address rounded down to its size, zero- or sign-extended into one SGPR (RDNA4 ISA
    SMEM: `D0.u32 = 32'U(MEM[addr].u16)`, `D0.i32 = 32'I(signext(MEM[addr].i16))`);
    defined only when every byte read is."""
    ops = inst.operands
    width, signed, reg = op.width, op.signed, ops[0].index
    base, based = scalar_source(ops[1], 64, env)
    offs: list[tuple[Callable[[Wave], int], Callable[[Wave], bool]]] = []
    for o in ops[2:]:
        if o.kind is OpKind.SGPR:
            offs.append(scalar_source(o, 32, env))
        elif o.kind is OpKind.INT:
            offs.append(((lambda k: lambda w: k)(o.value), lambda w: True))
    extra = int(inst.mods.get("offset", 0)) if not offs else 0
    sign = 1 << (8 * width - 1)

    def step(w: Wave) -> None:
        if not (based(w) and all(d(w) for _, d in offs)):
            raise uninit(w, f"{inst.mnemonic}: address from an undefined register")
        addr = (base(w) + sum(g(w) for g, _ in offs) + extra) & (FULL64 ^ (width - 1))
        v = int.from_bytes(w.mem.glob.read_scalar(addr, width, inst.mnemonic), "little")
        if signed and v & sign:
            v -= sign << 1
        defined = w.mem.glob.scalar_defined(addr, width)
        whole = defined is None or defined[0] == (1 << 8 * width) - 1
        p = Pending(vm=False, lgkm=True, smem=True, sregs=(reg,), svalues=(v & 0xFFFF_FFFF,),
                    sdefs=None if whole else (0,))
        w.pend_s[reg] = p
        w.lgkm_queue.append(p)
    return step
