"""Bound steps specialised to the scalar operand shapes cold O0 code runs most: moves,
bitwise and integer operations on SGPRs, SGPR pairs and constants, compares, selects, and
the EXEC updates of `s_*_saveexec_b64` and `s_mov_b64 exec, ...` (`lane_steps` has the lane
moves).

Why: 73 % of O0 wave-instructions run on the bound tier, and O0 code is mostly
spill sequences (`s_or_saveexec_b64 s[n:n+1], -1`, `v_writelane_b32`, `v_readlane_b32`,
`s_mov_b64 exec, s[n:n+1]`). The general binder (`bound.salu.bind_salu`) composes a step from
one closure per source value, per source definedness and per destination, and builds a
64-bit operand from its halves to split it again; a step here reads and writes
`Wave.S`/`Wave.sdef` directly, knows at bind time that a constant is defined, and applies the
per-bit definedness rule (`salu.SOp.bitdef`) only when some source bit is undefined (with
every source bit defined every rule gives a fully defined result: tests/sim/test_scalar_steps).

Each step computes what the general binder's step computes, faults included, in the same
order: the read hazard of each source in operand order, then what the operation checks
itself, then the destination's write hazard, then the check of a write to EXEC. A factory
returns None for a shape it does not take, and the caller binds the general step.

Invariant relied on: every entry of `Wave.S` and `Wave.sdef` is a Python int in [0, 2**32)
(every writer masks), so a register copied whole needs no mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rgpu_fuzz.sim.bound.operands import Env, _consts, const_scalar, exec_written, hazard, uninit
from rgpu_fuzz.sim.common.fault import SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.salu import SOp
from rgpu_fuzz.sim.state.wave import EXEC, Wave

Step = Callable[[Wave], Any]
M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1
_PLAIN_END = 250
"""SGPR operand codes below this read and write `Wave.S` directly (250 and up are SCC, VCCZ,
EXECZ, literals and the like); launch constants (`Env.constants`) are excluded by name."""


def _reg(op: Opnd, wide: bool, env: Env) -> int:
    """The SGPR (first of a pair when `wide`) that `op` reads as `Wave.S[i]` (and `S[i + 1]`)
    with its definedness in `Wave.sdef`, or -1."""
    if type(op) is not Opnd or op.kind is not OpKind.SGPR:
        return -1
    i = op.index
    if i + wide >= _PLAIN_END or i in _consts(env):
        return -1
    return i


def _const(op: Opnd, bits: int, env: Env) -> int | None:
    """A constant source's value (`operands.const_scalar`), fully defined; None for anything
    else, including launch constants (a 32-bit read of one is not masked to 32 bits)."""
    if type(op) is not Opnd or op.kind not in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
        return None
    return const_scalar(op, bits)


def _dest(op: Opnd, wide: bool) -> tuple[int, bool] | None:
    """(first register, whether the write reaches EXEC) of a plain scalar destination; None
    for null and the encodings past the register file (the general writer's)."""
    if type(op) is not Opnd or op.kind is not OpKind.SGPR:
        return None
    i = op.index
    if i == 125 or i + wide >= _PLAIN_END:
        return None
    return i, i in (EXEC, EXEC + 1) or (wide and i + 1 == EXEC)


def _hazards(w: Wave, reads: tuple[tuple[int, bool], ...], write: tuple[int, bool] | None
             ) -> None:
    """Raise the first waitcnt hazard of `reads` (SGPRs or pairs, in operand order), then of
    `write`, with the general readers' and writers' messages (`operands.scalar_bits_source`,
    `operands.scalar_dest`)."""
    ps = w.pend_s
    for i, wide in reads:
        if wide:
            if i in ps or i + 1 in ps:
                raise hazard(w, f"s[{i}:{i + 1}] read before the s_waitcnt covering its load")
        elif i in ps:
            raise hazard(w, f"s{i} read before the s_waitcnt covering its load")
    if write is not None:
        i, wide = write
        if wide:
            if i in ps or i + 1 in ps:
                raise hazard(w, f"s[{i}:{i + 1}] written before its load completed")
        elif i in ps:
            raise hazard(w, f"s{i} written before its load completed")


class _Src:
    """A source bound to a register (`reg` >= 0) or a constant (`value`), `wide` for 64 bits."""

    __slots__ = ("full", "reg", "value", "wide")

    def __init__(self, reg: int, value: int, wide: bool) -> None:
        self.reg, self.value, self.wide = reg, value, wide
        self.full = M64 if wide else M32


def _source(op: Opnd, bits: int, env: Env) -> _Src | None:
    wide = bits == 64
    if bits not in (32, 64):
        return None
    i = _reg(op, wide, env)
    if i >= 0:
        return _Src(i, 0, wide)
    k = _const(op, bits, env)
    return None if k is None else _Src(-1, k, wide)


def _reads(*srcs: _Src) -> tuple[tuple[int, bool], ...]:
    return tuple((s.reg, s.wide) for s in srcs if s.reg >= 0)


# ---------------------------------------------------------------------------- moves


def _binary(inst: Inst, bits: tuple[int, int], wide: bool, env: Env
            ) -> tuple[int, bool, _Src, _Src] | None:
    """(destination, it is EXEC, source 0, source 1) of a two-source instruction whose
    operands all have a specialised form; None sends it to the general binder."""
    ops = inst.operands
    if len(ops) != 3:
        return None
    dst = _dest(ops[0], wide)
    s0, s1 = _source(ops[1], bits[0], env), _source(ops[2], bits[1], env)
    if dst is None or s0 is None or s1 is None:
        return None
    return dst[0], dst[1], s0, s1


def mov(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """S_MOV_B32/S_MOV_B64 (`SOp.bitdef` is the identity: the defined bits move along)."""
    bits = spec.dst_bits
    wide = bits == 64
    ops = inst.operands
    if len(ops) != 2:
        return None
    dst = _dest(ops[0], wide)
    src = _source(ops[1], bits, env)
    if dst is None or src is None:
        return None
    o, ex = dst
    o1 = o + 1
    write = (o, wide)
    if src.reg < 0:
        lo, hi = src.value & M32, (src.value >> 32) & M32
        if ex:
            return _mov_const_exec(o, wide, lo, hi, write)
        if wide:
            def movk64(w: Wave) -> None:
                if w.pend_s:
                    _hazards(w, (), write)
                S, sd = w.S, w.sdef
                S[o] = lo
                S[o1] = hi
                sd[o] = sd[o1] = M32
            return movk64

        def movk32(w: Wave) -> None:
            if w.pend_s:
                _hazards(w, (), write)
            w.S[o] = lo
            w.sdef[o] = M32
        return movk32
    i = src.reg
    i1 = i + 1
    reads = ((i, wide),)
    if ex:
        if wide and o == EXEC:
            return _mov_exec(i, reads, write)
        return None
    if wide:
        def mov64(w: Wave) -> None:
            if w.pend_s:
                _hazards(w, reads, write)
            S, sd = w.S, w.sdef
            S[o], S[o1] = S[i], S[i1]
            sd[o], sd[o1] = sd[i], sd[i1]
        return mov64

    def mov32(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, write)
        w.S[o] = w.S[i]
        w.sdef[o] = w.sdef[i]
    return mov32


def _mov_exec(i: int, reads: tuple[tuple[int, bool], ...], write: tuple[int, bool]) -> Step:
    """`s_mov_b64 exec, s[i:i+1]`: O0 restores EXEC this way after every spill."""
    i1 = i + 1

    def mov_exec(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, write)
        S, sd = w.S, w.sdef
        S[EXEC], S[EXEC + 1] = S[i], S[i1]
        sd[EXEC], sd[EXEC + 1] = sd[i], sd[i1]
        exec_written(w)
    return mov_exec


def _mov_const_exec(o: int, wide: bool, lo: int, hi: int, write: tuple[int, bool]) -> Step:
    """A constant written to EXEC (`s_mov_b64 exec, -1`; `s_mov_b32 exec_lo, 0` checks the
    other half's definedness as the general writer does)."""
    def movk_exec(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, (), write)
        S, sd = w.S, w.sdef
        S[o] = lo
        sd[o] = M32
        if wide:
            S[o + 1] = hi
            sd[o + 1] = M32
        exec_written(w)
    return movk_exec


# ------------------------------------------------------------------------- bitwise


def bitwise(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """A two-source operation with per-bit definedness (`SOp.bitdef`) and `SOp.raw`: AND, OR,
    XOR and their negated forms, shifts, bit-field extracts. SCC is result != 0, defined when
    every result bit is or a defined result bit is 1 (`bound.salu._bitwise`)."""
    raw, bitdef = spec.raw, spec.bitdef
    if raw is None or bitdef is None or len(spec.src_bits) != 2:
        return None
    bits = spec.dst_bits
    wide = bits == 64
    got = _binary(inst, (spec.src_bits[0], spec.src_bits[1]), wide, env)
    if got is None:
        return None
    o, ex, s0, s1 = got
    o1 = o + 1
    write = (o, wide)
    reads = _reads(s0, s1)
    full = (1 << bits) - 1
    if wide and s0.wide and s1.wide and s0.reg >= 0 and s1.reg >= 0:
        i, j = s0.reg, s1.reg
        i1, j1 = i + 1, j + 1

        def pairs(w: Wave) -> None:
            if w.pend_s:
                _hazards(w, reads, write)
            S, sd = w.S, w.sdef
            a = S[i] | S[i1] << 32
            b = S[j] | S[j1] << 32
            r = raw(a, b)
            S[o] = r & M32
            S[o1] = r >> 32
            if sd[i] & sd[i1] & sd[j] & sd[j1] == M32:
                sd[o] = sd[o1] = M32
                if ex:
                    exec_written(w)
                w.scc = int(r != 0)
                w.scc_def = True
                return
            d = bitdef(a, sd[i] | sd[i1] << 32, b, sd[j] | sd[j1] << 32) & full
            sd[o] = d & M32
            sd[o1] = d >> 32
            if ex:
                exec_written(w)
            w.scc = int(r != 0)
            w.scc_def = d == full or bool(r & d)
        return pairs
    r0, k0, w0, f0 = s0.reg, s0.value, s0.wide, s0.full
    r1, k1, w1, f1 = s1.reg, s1.value, s1.wide, s1.full

    def mixed(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, write)
        S, sd = w.S, w.sdef
        if r0 < 0:
            a, da = k0, f0
        elif w0:
            a, da = S[r0] | S[r0 + 1] << 32, sd[r0] | sd[r0 + 1] << 32
        else:
            a, da = S[r0], sd[r0]
        if r1 < 0:
            b, db = k1, f1
        elif w1:
            b, db = S[r1] | S[r1 + 1] << 32, sd[r1] | sd[r1 + 1] << 32
        else:
            b, db = S[r1], sd[r1]
        r = raw(a, b)
        d = full if da == f0 and db == f1 else bitdef(a, da, b, db) & full
        S[o] = r & M32
        sd[o] = d & M32
        if wide:
            S[o1] = r >> 32
            sd[o1] = d >> 32
        if ex:
            exec_written(w)
        w.scc = int(r != 0)
        w.scc_def = d == full or bool(r & d)
    return mixed


# ---------------------------------------------------------------------- integer ops


def arith(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """A 32-bit two-source operation whose result is defined only when both sources are
    (S_MUL_HI_U32, S_MIN_U32 ...: `bound.salu.bind_salu`'s `two`) or, with `SOp.lowdef`
    (S_MUL_I32, S_ADD_I32, ...), has the bits that rule gives defined; SCC either way
    defined only when both sources are (`bound.salu._lowdef`)."""
    if spec.dst_bits != 32 or spec.src_bits != (32, 32):
        return None
    got = _binary(inst, (32, 32), False, env)
    if got is None:
        return None
    o, ex, s0, s1 = got
    write = (o, False)
    reads = _reads(s0, s1)
    fn: Callable[..., Any] = spec.fn
    lowdef = spec.lowdef
    r0, k0, r1, k1 = s0.reg, s0.value, s1.reg, s1.value

    def two(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, write)
        S, sd = w.S, w.sdef
        a, b = S[r0] if r0 >= 0 else k0, S[r1] if r1 >= 0 else k1
        r, c = fn(a, b)
        d = (r0 < 0 or sd[r0] == M32) and (r1 < 0 or sd[r1] == M32)
        S[o] = r & M32
        if d:
            sd[o] = M32
        elif lowdef is None:
            sd[o] = 0
        else:
            sd[o] = lowdef(a, sd[r0] if r0 >= 0 else M32, b, sd[r1] if r1 >= 0 else M32) & M32
        if ex:
            exec_written(w)
        if c is not None:
            w.scc, w.scc_def = c, d
    return two


def carry(inst: Inst, spec: SOp, env: Env,
          undefined: Callable[[int, int, int, int, Any], tuple[int, bool]]
          ) -> Step | None:
    """S_ADD_U32/S_SUB_U32/S_ADDC_U32/S_SUBB_U32 on registers and constants; `undefined`
    gives (defined result bits, carry defined) when a source bit is undefined
    (`bound.salu._carry_chain`'s rule)."""
    got = _binary(inst, (32, 32), False, env)
    if got is None:
        return None
    o, ex, s0, s1 = got
    write = (o, False)
    reads = _reads(s0, s1)
    fn: Callable[..., Any] = spec.fn
    with_carry = spec.shape == "addc"
    r0, k0, r1, k1 = s0.reg, s0.value, s1.reg, s1.value

    def step(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, write)
        S, sd = w.S, w.sdef
        a = S[r0] if r0 >= 0 else k0
        b = S[r1] if r1 >= 0 else k1
        da = sd[r0] if r0 >= 0 else M32
        db = sd[r1] if r1 >= 0 else M32
        if with_carry:
            cin = w.scc
            r, c = fn(a, b, cin)
            cdef = w.scc_def
        else:
            cin = None
            r, c = fn(a, b)
            cdef = True
        if da & db == M32:
            d = M32
        else:
            d, same = undefined(a, da, b, db, cin)
            cdef = cdef and same
        if with_carry and not w.scc_def:
            d = 0
        S[o] = r & M32
        sd[o] = d
        if ex:
            exec_written(w)
        w.scc, w.scc_def = c, cdef
    return step


def cselect(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """S_CSELECT_B32/B64: only the selected source is read (and can be a hazard); its
    defined bits are copied with it."""
    bits = spec.dst_bits
    wide = bits == 64
    got = _binary(inst, (bits, bits), wide, env)
    if got is None or got[1]:
        return None
    o, _, s0, s1 = got
    write = (o, wide)
    mnemonic = inst.mnemonic
    picks = tuple((s.reg, s.value & M32, (s.value >> 32) & M32, _reads(s)) for s in (s1, s0))

    def csel(w: Wave) -> None:
        if not w.scc_def:
            raise uninit(w, f"{mnemonic}: SCC is undefined")
        i, lo, hi, reads = picks[1 if w.scc else 0]
        if w.pend_s:
            _hazards(w, reads, write)
        S, sd = w.S, w.sdef
        if i < 0:
            S[o] = lo
            sd[o] = M32
            if wide:
                S[o + 1] = hi
                sd[o + 1] = M32
        elif wide:
            # a copy: the selected source's defined bits go with it (the general step's)
            S[o], S[o + 1] = S[i], S[i + 1]
            sd[o], sd[o + 1] = sd[i], sd[i + 1]
        else:
            S[o] = S[i]
            sd[o] = sd[i]
    return csel


def compare(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """S_CMP_*/S_CMPK_*/S_BITCMP*: SCC from two sources, defined when both are."""
    ops = inst.operands
    if len(ops) < 2:
        return None
    if spec.shape == "cmp" and 16 in spec.src_bits:
        return None  # S_CMP_*_F16: 16-bit sources, `bound.salu._cmp`'s
    b0, b1 = (b if b != 16 else 32 for b in spec.src_bits)
    s0, s1 = _source(ops[-2], b0, env), _source(ops[-1], b1, env)
    if s0 is None or s1 is None:
        return None
    reads = _reads(s0, s1)
    fn: Callable[..., Any] = spec.fn
    r0, k0, w0, r1, k1, w1 = s0.reg, s0.value, s0.wide, s1.reg, s1.value, s1.wide

    def cmp(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, None)
        S, sd = w.S, w.sdef
        if r0 < 0:
            a, d0 = k0, True
        elif w0:
            a, d0 = S[r0] | S[r0 + 1] << 32, sd[r0] & sd[r0 + 1] == M32
        else:
            a, d0 = S[r0], sd[r0] == M32
        if r1 < 0:
            b, d1 = k1, True
        elif w1:
            b, d1 = S[r1] | S[r1 + 1] << 32, sd[r1] & sd[r1 + 1] == M32
        else:
            b, d1 = S[r1], sd[r1] == M32
        _, w.scc = fn(a, b)
        w.scc_def = d0 and d1
    return cmp


def saveexec(inst: Inst, spec: SOp, env: Env) -> Step | None:
    """S_*_SAVEEXEC_B64 with an SGPR pair or a constant: D = EXEC, EXEC = op(EXEC, S0),
    SCC = EXEC != 0. With a constant every source bit is defined and EXEC is taken as
    defined, so the EXEC check cannot fail; each result bit depends on the same bit of EXEC
    and S0 only, so where op(0, S0) = op(~0, S0) the new EXEC is known at bind time (the
    `s_or_saveexec_b64 s[n:n+1], -1` of every spill)."""
    ops = inst.operands
    if spec.dst_bits != 64 or env.lanes != 64 or len(ops) != 2:
        return None
    dst = _dest(ops[0], True)
    src = _source(ops[1], 64, env)
    bitdef = spec.bitdef
    if dst is None or src is None or dst[1] or bitdef is None:
        return None
    o = dst[0]
    o1 = o + 1
    write = (o, True)
    fn: Callable[..., Any] = spec.fn
    mnemonic = inst.mnemonic
    if src.reg < 0:
        k = src.value
        new0, new1 = fn(0, k)[0], fn(M64, k)[0]
        if new0 == new1:
            lo, hi = new0 & M32, new0 >> 32
            scc = int(new0 != 0)
            if new0 == M64:
                return _saveexec_all(o, write, scc)

            def saveexec_k(w: Wave) -> None:
                if w.pend_s:
                    _hazards(w, (), write)
                S, sd = w.S, w.sdef
                S[o], S[o1] = S[EXEC], S[EXEC + 1]
                sd[o] = sd[o1] = M32
                S[EXEC] = lo
                S[EXEC + 1] = hi
                sd[EXEC] = sd[EXEC + 1] = M32
                w.refresh_exec(new0)
                w.scc = scc
                w.scc_def = True
            return saveexec_k

        def saveexec_c(w: Wave) -> None:
            if w.pend_s:
                _hazards(w, (), write)
            S, sd = w.S, w.sdef
            lo, hi = S[EXEC], S[EXEC + 1]
            new, _ = fn(lo | hi << 32, k)
            S[o], S[o1] = lo, hi
            sd[o] = sd[o1] = M32
            S[EXEC] = new & M32
            S[EXEC + 1] = new >> 32
            sd[EXEC] = sd[EXEC + 1] = M32
            w.refresh_exec(new)
            w.scc = int(new != 0)
            w.scc_def = True
        return saveexec_c
    i = src.reg
    i1 = i + 1
    reads = ((i, True),)

    def saveexec_s(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, reads, None)
        S, sd = w.S, w.sdef
        lo, hi = S[EXEC], S[EXEC + 1]
        old = lo | hi << 32
        s = S[i] | S[i1] << 32
        new, _ = fn(old, s)
        if sd[i] & sd[i1] != M32 and bitdef(old, s, sd[i] | sd[i1] << 32) & M64 != M64:
            raise uninit(w, f"{mnemonic}: EXEC set from an undefined value")
        if w.pend_s:
            _hazards(w, (), write)
        S[o], S[o1] = lo, hi
        sd[o] = sd[o1] = M32
        S[EXEC] = new & M32
        S[EXEC + 1] = new >> 32
        sd[EXEC] = sd[EXEC + 1] = M32
        w.refresh_exec(new)
        w.scc = int(new != 0)
        w.scc_def = True
    return saveexec_s


def _saveexec_all(o: int, write: tuple[int, bool], scc: int) -> Step:
    """`saveexec`'s step where the new EXEC is every lane (`s_or_saveexec_b64 s[n:n+1], -1`,
    the first instruction of every O0 spill): `Wave.refresh_exec` of all lanes, inline."""
    o1 = o + 1

    def saveexec_all(w: Wave) -> None:
        if w.pend_s:
            _hazards(w, (), write)
        S, sd = w.S, w.sdef
        S[o], S[o1] = S[EXEC], S[EXEC + 1]
        sd[o] = sd[o1] = M32
        S[EXEC] = S[EXEC + 1] = M32
        sd[EXEC] = sd[EXEC + 1] = M32
        w.exec_bits = M64
        w.exec_full = True
        w.exec = w.full
        w.scc = scc
        w.scc_def = True
    return saveexec_all


__all__ = ["SimStop", "arith", "bitwise", "carry", "compare", "cselect", "mov", "saveexec"]
