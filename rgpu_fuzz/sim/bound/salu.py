"""Binding scalar ALU instructions (`salu.SALU`) to closures, one binder per operand layout
(`SOp.shape`): the general binder composes a step from the table's function and the operands'
getters, with SCC and per-bit definedness by the table's rules; `scalar_steps` holds the
specialised steps it prefers where they apply. Vector ALU binding is `bound.alu`'s."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rgpu_fuzz.sim.bound import scalar_steps
from rgpu_fuzz.sim.bound.alu import Step, Unbindable
from rgpu_fuzz.sim.bound.operands import (
    Env,
    scalar_bits_source,
    scalar_dest,
    scalar_source,
    uninit,
)
from rgpu_fuzz.sim.isa.inst import Inst
from rgpu_fuzz.sim.semantics.rdna4_salu16 import RDNA4_SALU16
from rgpu_fuzz.sim.semantics.salu import M32, SALU, SOp
from rgpu_fuzz.sim.state.wave import EXEC, Wave

_SRC_SHARED_BASE, _SRC_PRIVATE_BASE = 235, 237
HW_REG_SH_MEM_BASES = 15


def _hwreg_field(simm16: int, env: Env) -> int:
    """`s_getreg_b32`'s value: `hwreg(id, offset, size)` is simm16 = id | offset << 6 |
    (size - 1) << 11 (CDNA3 ISA §5.5 S_GETREG_B32). Only SH_MEM_BASES is implemented: bits
    31:16 SHARED_BASE, 15:0 PRIVATE_BASE, the high 16 bits of the 64-bit apertures (the
    launch's `src_shared_base`/`src_private_base`); LLVM read the apertures this way on GFX9
    before it used those registers, and rustc-amdgpu reads the shared one to reach its
    dynamic group segment. Any other hardware register is Unbindable (unsupported)."""
    reg, offset, size = simm16 & 0x3F, (simm16 >> 6) & 0x1F, ((simm16 >> 11) & 0x1F) + 1
    if reg != HW_REG_SH_MEM_BASES:
        raise Unbindable(f"s_getreg_b32 of hardware register {reg}")
    consts = dict(env.constants)
    bases = ((consts[_SRC_SHARED_BASE] >> 48) << 16) | (consts[_SRC_PRIVATE_BASE] >> 48)
    return (bases >> offset) & ((1 << size) - 1)


def _cmp(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_CMP*/S_CMPK*: SCC from the two sources, defined when both are."""
    ops = inst.operands
    fn = spec.compare_fn
    fast = scalar_steps.compare(inst, spec, env)
    if fast is not None:
        return fast
    # a 16-bit source is read as 16 bits (S_CMP_*_F16: `S0.f16`, a constant at binary16);
    # S_CMPK's SIMM16 is bound as the table's 32-bit view of it
    wide = spec.shape == "cmpk"
    (g0, d0), (g1, d1) = (scalar_source(o, 32 if wide and b == 16 else b, env)
                          for o, b in zip(ops[-2:], spec.src_bits, strict=True))

    def cmp(w: Wave) -> None:
        _, w.scc = fn(g0(w), g1(w))
        w.scc_def = d0(w) and d1(w)
    return cmp


def _movk(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_MOVK_I32/S_CMOVK_I32: the sign-extended SIMM16, S_CMOVK only where SCC is set."""
    ops = inst.operands
    fn = spec.write_fn
    shape = spec.shape
    put = scalar_dest(ops[0], 32)
    k = ops[-1].value & 0xFFFF
    r, _ = fn(k)
    if shape == "cmovk":
        def cmovk(w: Wave) -> None:
            if not w.scc_def:
                raise uninit(w, f"{inst.mnemonic}: SCC is undefined")
            if w.scc:
                put(w, r, True)
        return cmovk
    return lambda w: put(w, r, True)


def _addk(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_ADDK_I32/S_MULK_I32: the destination with SIMM16, per-bit definedness by `SOp.lowdef`."""
    ops = inst.operands
    fn = spec.write_fn
    put = scalar_dest(ops[0], 32)
    g, d = scalar_bits_source(ops[0], 32, env)
    k = ops[-1].value & 0xFFFF
    lowdef = spec.lowdef
    assert lowdef is not None
    kx = (k - ((k >> 15) << 16)) & M32  # SIMM16 sign-extended (CDNA3/RDNA3 "SOPK")

    def addk(w: Wave) -> None:
        v, dv = g(w), d(w)
        r, c = fn(v, k)
        every = dv == M32
        put(w, r, M32 if every else lowdef(v, dv, kx, M32) & M32)
        if c is not None:
            w.scc = c
            w.scc_def = every
    return addk


def _getreg(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_GETREG_B32: a hardware register field, known at bind time (`_hwreg_field`)."""
    ops = inst.operands
    put = scalar_dest(ops[0], 32)
    value = _hwreg_field(ops[-1].value & 0xFFFF, env)
    return lambda w: put(w, value, True)


def _getpc(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_GETPC_B64: the address of the next instruction."""
    ops = inst.operands
    put = scalar_dest(ops[0], 64)
    nxt = env.code_base + inst.address + inst.size
    return lambda w: put(w, nxt, True)


def _saveexec(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_*_SAVEEXEC: the old EXEC to the destination, EXEC from the operation; an EXEC bit
    set from an undefined bit is an error."""
    ops = inst.operands
    fn = spec.write_fn
    fast = scalar_steps.saveexec(inst, spec, env)
    if fast is not None:
        return fast
    put = scalar_dest(ops[0], spec.dst_bits)
    g, d = scalar_bits_source(ops[1], spec.dst_bits, env)
    bits = spec.dst_bits
    bitdef = spec.bitdef
    assert bitdef is not None
    lanes = (1 << env.lanes) - 1

    def saveexec(w: Wave) -> None:
        old = w.S[EXEC] | (w.S[EXEC + 1] << 32 if bits == 64 else 0)
        s = g(w)
        new, _ = fn(old, s)
        if bitdef(old, s, d(w)) & lanes != lanes:
            raise uninit(w, f"{inst.mnemonic}: EXEC set from an undefined value")
        put(w, old, True)
        w.set_exec(new | (w.S[EXEC + 1] << 32 if bits == 32 else 0))
        w.scc = int(new != 0)
        w.scc_def = True
    return saveexec


def _accumulate(inst: Inst, spec: SOp, env: Env) -> Step:
    """S_FMAC_F32 / S_FMAC_F16 (RDNA4): `D = fma(S0, S1, D)`, the destination read as the
    third source (at the table's source width: `D0.f16` is bits 15:0); the result is
    defined when all three are."""
    ops = inst.operands
    put = scalar_dest(ops[0], spec.dst_bits)
    srcs = [scalar_source(o, b, env)
            for o, b in zip((ops[1], ops[2], ops[0]), spec.src_bits, strict=True)]
    fn = spec.write_fn

    def step(w: Wave) -> None:
        r, _ = fn(*(g(w) for g, _ in srcs))
        put(w, r, all(d(w) for _, d in srcs))
    return step


_SHAPED: dict[str, Callable[[Inst, SOp, Env], Step]] = {
    "cmp": _cmp, "cmpk": _cmp, "movk": _movk, "cmovk": _movk, "addk": _addk,
    "getreg": _getreg, "getpc": _getpc, "saveexec": _saveexec, "accumulate": _accumulate,
}
"""The shapes with a binder of their own; `bind_salu` binds the others."""


def bind_salu(inst: Inst, env: Env) -> Step:
    spec = SALU[inst.opcode]
    ops = inst.operands
    fn = spec.write_fn
    shape = spec.shape
    if env.flush64 and inst.opcode in RDNA4_SALU16:
        # semantics.rdna4_salu16: binary16 denormal flushing is not modelled (as bound.alu)
        raise Unbindable("FLOAT_DENORM_MODE_16_64 flushes binary16 denormals: not modelled")
    shaped = _SHAPED.get(shape)
    if shaped is not None:
        return shaped(inst, spec, env)
    # a specialised step binds only operands the general path below takes without error
    fast = _fast_salu(inst, spec, env) if len(ops) == 1 + len(spec.src_bits) else None
    if fast is not None:
        return fast
    dst_bits = spec.dst_bits
    put = scalar_dest(ops[0], dst_bits) if dst_bits else None
    srcs = [scalar_source(o, b, env) for o, b in zip(ops[1:], spec.src_bits, strict=True)]
    if len(ops) != 1 + len(spec.src_bits):
        raise Unbindable(f"{len(ops)} operands, table says {1 + len(spec.src_bits)}")
    if shape in ("cselect", "cmov"):
        # copies: the selected source's defined bits go with it (S_CSELECT of a partly
        # defined SGPR: a uniform i8 whose high half a D16 load left undefined)
        srcs = [scalar_bits_source(o, b, env)
                for o, b in zip(ops[1:], spec.src_bits, strict=True)]
    if shape == "cselect":
        (g0, d0), (g1, d1) = srcs

        def cselect(w: Wave) -> None:
            if not w.scc_def:
                raise uninit(w, f"{inst.mnemonic}: SCC is undefined")
            if w.scc:
                put(w, g0(w), d0(w))  # type: ignore[misc]
            else:
                put(w, g1(w), d1(w))  # type: ignore[misc]
        return cselect
    if shape == "addc" or inst.opcode in ("S_ADD_U32", "S_SUB_U32"):
        return _carry_chain(inst, spec, env, put)
    if shape == "cmov":
        (g0, d0), = srcs

        def cmov(w: Wave) -> None:
            if not w.scc_def:
                raise uninit(w, f"{inst.mnemonic}: SCC is undefined")
            if w.scc:
                put(w, g0(w), d0(w))  # type: ignore[misc]
        return cmov
    if shape == "bitset":
        (g0, d0), = srcs
        gd, dd = scalar_source(ops[0], spec.dst_bits, env)

        def bitset(w: Wave) -> None:
            r, _ = fn(g0(w), gd(w))
            put(w, r, d0(w) and dd(w))  # type: ignore[misc]
        return bitset
    if shape in ("setpc", "swappc"):
        raise Unbindable("control flow is bound by bind_flow")
    assert shape == "plain", shape
    if spec.bitdef is not None:
        return _bitwise(inst, spec, env, put)
    if spec.lowdef is not None:
        return _lowdef(inst, spec, env, put)
    if len(srcs) == 1:
        (g0, d0), = srcs

        def one(w: Wave) -> None:
            r, c = fn(g0(w))
            d = d0(w)
            put(w, r, d)  # type: ignore[misc]
            if c is not None:
                w.scc, w.scc_def = c, d
        return one
    if len(srcs) == 3:
        return _three(srcs, fn, put)
    (g0, d0), (g1, d1) = srcs

    def two(w: Wave) -> None:
        r, c = fn(g0(w), g1(w))
        d = d0(w) and d1(w)
        if put is not None:
            put(w, r, d)
        if c is not None:
            w.scc, w.scc_def = c, d
    return two


def _three(srcs: list[tuple[Any, Any]], fn: Any, put: Any) -> Step:
    """A three-source operation that writes a register and leaves SCC (S_FMAAK_F32,
    S_FMAMK_F32: the literal is one of the sources); defined when all three are."""
    (g0, d0), (g1, d1), (g2, d2) = srcs

    def three(w: Wave) -> None:
        r, _ = fn(g0(w), g1(w), g2(w))
        put(w, r, d0(w) and d1(w) and d2(w))
    return three


def _carry_chain(inst: Inst, spec: SOp, env: Env, put: Any) -> Step:
    """S_ADD_U32/S_SUB_U32/S_ADDC_U32/S_SUBB_U32 with memcheck's treatment of additions:
    result bits from the lowest undefined source bit up are undefined, and the carry (SCC)
    is defined when it is the same for the smallest and the largest values the undefined
    bits allow (a 64-bit add whose low halves are 0 + undefined still carries 0)."""
    (g0, d0), (g1, d1) = (scalar_bits_source(o, 32, env) for o in inst.operands[1:3])
    fn = spec.result_scc_fn
    with_carry = spec.shape == "addc"
    undefined = _carry_undefined(inst, spec)
    m = 0xFFFF_FFFF

    def step(w: Wave) -> None:
        a, b = g0(w), g1(w)
        da, db = d0(w), d1(w)
        cin = w.scc if with_carry else None
        r, c = fn(a, b, cin) if with_carry else fn(a, b)
        cdef = not with_carry or w.scc_def
        if (~da | ~db) & m:
            d, same = undefined(a, da, b, db, cin)
            cdef = cdef and same
        else:
            d = m
        if with_carry and not w.scc_def:
            d = 0
        put(w, r, d)
        w.scc, w.scc_def = c, cdef
    return step


def _carry_undefined(inst: Inst, spec: SOp) -> Callable[[int, int, int, int, Any],
                                                        tuple[int, bool]]:
    """`_carry_chain`'s rule where a source bit is undefined: (defined result bits, whether
    the carry is the same at both ends of what the undefined bits allow)."""
    fn = spec.result_scc_fn
    sub = inst.opcode in ("S_SUB_U32", "S_SUBB_U32")
    with_carry = spec.shape == "addc"
    m = 0xFFFF_FFFF

    def undefined(a: int, da: int, b: int, db: int, cin: Any) -> tuple[int, bool]:
        undef = (~da | ~db) & m
        a_lo, a_hi = a & da, a | (~da & m)
        b_lo, b_hi = b & db, b | (~db & m)
        lo, hi = ((a_lo, b_hi), (a_hi, b_lo)) if sub else ((a_lo, b_lo), (a_hi, b_hi))
        c_lo = (fn(*lo, cin) if with_carry else fn(*lo))[1]
        c_hi = (fn(*hi, cin) if with_carry else fn(*hi))[1]
        low = undef & -undef
        return (low - 1) & m, c_lo == c_hi
    return undefined


def _fast_salu(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """`scalar_steps`' step for the shapes it specialises (None: the general binders')."""
    shape = spec.shape
    if shape == "plain":
        if spec.bitdef is None:
            if inst.opcode in ("S_ADD_U32", "S_SUB_U32"):
                return scalar_steps.carry(inst, spec, env, _carry_undefined(inst, spec))
            return scalar_steps.arith(inst, spec, env)
        if inst.opcode in ("S_MOV_B32", "S_MOV_B64"):
            return scalar_steps.mov(inst, spec, env)
        return scalar_steps.bitwise(inst, spec, env)
    if shape == "addc":
        return scalar_steps.carry(inst, spec, env, _carry_undefined(inst, spec))
    if shape == "cselect":
        return scalar_steps.cselect(inst, spec, env)
    return None


def _lowdef(inst: Inst, spec: SOp, env: Env, put: Any) -> Step:
    """An arithmetic SALU operation with per-bit definedness (`SOp.lowdef`) where a source is
    partly defined; SCC, where written, is defined only when every source bit is."""
    srcs = [scalar_bits_source(o, b, env) for o, b in zip(inst.operands[1:], spec.src_bits,
                                                           strict=True)]
    fn, lowdef = spec.write_fn, spec.lowdef
    assert lowdef is not None
    fulls = [(1 << b) - 1 for b in spec.src_bits]
    if len(srcs) == 1:
        (g0, d0), = srcs
        f0 = fulls[0]

        def one(w: Wave) -> None:
            a, da = g0(w), d0(w)
            r, c = fn(a)
            every = da == f0
            put(w, r, M32 if every else lowdef(a, da) & M32)
            if c is not None:
                w.scc, w.scc_def = c, every
        return one
    (g0, d0), (g1, d1) = srcs
    f0, f1 = fulls

    def two(w: Wave) -> None:
        a, b, da, db = g0(w), g1(w), d0(w), d1(w)
        r, c = fn(a, b)
        every = da == f0 and db == f1
        put(w, r, M32 if every else lowdef(a, da, b, db) & M32)
        if c is not None:
            w.scc, w.scc_def = c, every
    return two


def _bitwise(inst: Inst, spec: SOp, env: Env, put: Any) -> Step:
    """A bitwise SALU operation with per-bit definedness (`SOp.bitdef`); SCC (result != 0)
    is defined when every bit is, or when a defined bit of the result is 1."""
    srcs = [scalar_bits_source(o, b, env) for o, b in zip(inst.operands[1:], spec.src_bits,
                                                           strict=True)]
    fn, bitdef = spec.write_fn, spec.bitdef
    assert bitdef is not None
    full = (1 << spec.dst_bits) - 1
    if len(srcs) == 1:
        (g0, d0), = srcs

        def one(w: Wave) -> None:
            a = g0(w)
            r, c = fn(a)
            d = bitdef(a, d0(w)) & full
            put(w, r, d)
            if c is not None:
                w.scc, w.scc_def = c, d == full or bool(r & d)
        return one
    (g0, d0), (g1, d1) = srcs
    fn2 = spec.result_scc_fn

    def two(w: Wave) -> None:
        a, b = g0(w), g1(w)
        r, c = fn2(a, b)
        d = bitdef(a, d0(w), b, d1(w)) & full
        put(w, r, d)
        w.scc, w.scc_def = c, d == full or bool(r & d)
    return two


__all__ = ["bind_salu"]
