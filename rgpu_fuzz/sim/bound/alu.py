"""Binding vector ALU instructions to closures: one binder per operand layout (`shape`) of the
semantic table `valu.VALU`. A closure takes the wave and returns None (fall through); control
flow is `bind_flow`'s, scalar ALU binding `bound.salu`'s. `Step` and `Unbindable` are what
every binder shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound import lane_steps
from rgpu_fuzz.sim.bound.bitsel import SCANS, bind_bfi, bind_scan
from rgpu_fuzz.sim.bound.defined import (
    CONSTS,
    _all,
    _and_defined,
    _and_of,
    _halves_defined,
    _vec,
)
from rgpu_fuzz.sim.bound.inflight import span
from rgpu_fuzz.sim.bound.operands import (
    DTYPES,
    Env,
    _forget,
    hazard,
    lane_mask_source,
    low_half_defined,
    scalar_bits_source,
    scalar_dest,
    scalar_source,
    uninit,
    vcol,
    vector_dest,
    vector_source,
)
from rgpu_fuzz.sim.bound.packed import bind_fma_mix, bind_pk16, bind_pkf32
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics import fp
from rgpu_fuzz.sim.semantics.valu import INT_CLAMP, VALU, VOp
from rgpu_fuzz.sim.state.bitdef32 import RULES as BITDEF_RULES
from rgpu_fuzz.sim.state.bitdef32 import bitdef_step, cndmask_step
from rgpu_fuzz.sim.state.defined64 import SHIFT64_OPS, shift64_step
from rgpu_fuzz.sim.state.partial import narrowed
from rgpu_fuzz.sim.state.wave import EXEC, VCC, Wave, lanes_of, mask_of

Step = Callable[[Wave], Any]
VCC_OP = Opnd(OpKind.SGPR, VCC, 2)


class Unbindable(Exception):
    """The instruction's operands do not fit its table entry (a decoder/table gap)."""


_BOOL = np.dtype(bool)


def _with_vcc(ops: tuple[Opnd, ...], want: int, at: tuple[int, ...]) -> list[Opnd]:
    """Insert the implicit VCC operands of a 32-bit encoding where assembler syntax omits
    them, so both spellings bind the same way."""
    out = list(ops)
    for pos in at:
        if len(out) < want:
            out.insert(pos, VCC_OP)
    return out


def _omod_clamp(inst: Inst, ty: str) -> Callable[[Any], Any] | None:
    omod = inst.mods.get("omod", 0)
    clamp = inst.mods.get("clamp", 0)
    if isinstance(omod, str):
        omod = {"mul:2": 1, "mul:4": 2, "div:2": 3}.get(omod, 0)
    if not omod and not clamp:
        return None
    if DTYPES[ty][1] not in (np.float32, np.float64, np.float16):
        if clamp:
            raise Unbindable("integer clamp")
        return None
    scale = {0: 1.0, 1: 2.0, 2: 4.0, 3: 0.5}[int(omod)]

    def post(r: Any) -> Any:
        if scale != 1.0:
            r = r * r.dtype.type(scale)
        if clamp:
            r = np.where(np.isnan(r), r.dtype.type(0), np.clip(r, 0, 1)).astype(r.dtype)
        return r
    return post


COPIES = frozenset({"V_MOV_B32", "V_ACCVGPR_WRITE", "V_ACCVGPR_READ", "V_ACCVGPR_MOV_B32"})
"""Moves that carry partly defined lanes (`Wave.vpart`) along with the value."""


def bind_valu(inst: Inst, env: Env) -> Step:
    spec = VALU[inst.opcode]
    if env.flush64 and (spec.dst == "f16" or "f16" in spec.src):
        # semantics.f16: binary16 denormal flushing is not modelled
        raise Unbindable("FLOAT_DENORM_MODE_16_64 flushes binary16 denormals: not modelled")
    binder = _VALU_SHAPES[spec.shape]
    ops = inst.operands
    copies = inst.opcode in COPIES and len(ops) == 2 and \
        ops[1].kind in (OpKind.VGPR, OpKind.AGPR) and not inst.mods.get("dst_sel") and \
        not getattr(ops[1], "sel", "")
    if copies:
        src, dst = vcol(ops[1]), vcol(ops[0])
        if src != dst and not ops[1].abs and not ops[1].neg and not inst.mods.get("clamp") \
                and not inst.mods.get("omod") and not getattr(ops[0], "hi", False) and \
                spec.shape == "plain":
            # decided before `_plain` binds the step `copy` below would wrap: for such a
            # copy (one whole-register source, no modifier) nothing in it can fail, and a
            # quarter of the VALU instructions cold O0 code binds are such spill copies
            return _copy32(src, dst)
    step = binder(inst, spec, env)
    if inst.opcode == "V_BFI_B32":
        return bind_bfi(inst, env, step)
    if inst.opcode in SCANS:
        return bind_scan(inst, env, step)
    if copies:
        def copy(w: Wave) -> None:
            part = w.vpart.get(src) if w.vpart else None
            step(w)
            if part:
                moved = {ln: m for ln, m in part.items() if w.exec[ln]}
                if moved:
                    w.vpart.setdefault(dst, {}).update(moved)
        return copy
    return step


def _copy32(src: int, dst: int) -> Step:
    """A 32-bit VGPR/AGPR copy to another register: what `_plain`'s step and `bind_valu`'s
    `copy` do for it (hazard on the source, then on the destination; the destination's
    partly defined active lanes forgotten, then the source's carried over), with two column
    copies and EXEC tested as an int instead of the layers of getters and writers."""
    read_msg = f"v{src} read before the s_waitcnt covering its load"
    write_msg = f"v{dst} written before its load completed"

    def copy32(w: Wave) -> None:
        pv = w.pend_v
        if pv:
            if src in pv:
                raise hazard(w, read_msg)
            if dst in pv:
                raise hazard(w, write_msg)
        vp = w.vpart
        part = None
        if vp:
            part = vp.get(src)
            if dst in vp:
                _forget(w, dst, 1)
        V, vdef = w.V, w.vdef
        if w.exec_full:
            V[:, dst] = V[:, src]
            vdef[:, dst] = vdef[:, src]
            if part:
                vp.setdefault(dst, {}).update(part)
            return
        e = w.exec
        lo, hi = span(e)
        if lo >= 0:
            V[lo:hi, dst] = V[lo:hi, src]
            vdef[lo:hi, dst] = vdef[lo:hi, src]
        else:
            np.copyto(V[:, dst], V[:, src], where=e)
            np.copyto(vdef[:, dst], vdef[:, src], where=e)
        if part:
            em = mask_of(e)
            moved = {ln: m for ln, m in part.items() if em >> ln & 1}
            if moved:
                vp.setdefault(dst, {}).update(moved)
    return copy32


def _plain(inst: Inst, spec: VOp, env: Env) -> Step:
    if not spec.dst:
        return lambda w: None
    ops = inst.operands
    if len(ops) != 1 + len(spec.src):
        raise Unbindable(f"{len(ops)} operands, table says {1 + len(spec.src)}")
    put = vector_dest(ops[0], spec.dst, inst, env)
    srcs = narrowed(inst, [vector_source(o, t, env) for o, t in zip(ops[1:], spec.src,
                                                                     strict=True)])
    fn = spec.fn
    if spec.mode:
        ieee = env.ieee
        fn = (lambda f: lambda *a: f(ieee, *a))(spec.fn)
    if inst.mods.get("clamp", 0) and inst.opcode in INT_CLAMP:
        fn = INT_CLAMP[inst.opcode]  # type: ignore[assignment]
        post = None
    else:
        post = _omod_clamp(inst, spec.dst)
    if post is not None:
        f0 = fn
        fn = lambda *a: post(f0(*a))  # noqa: E731
    dt = DTYPES[spec.dst][1]
    if inst.opcode in BITDEF_RULES and post is None and len(srcs) == 2 and \
            ops[0].kind is OpKind.VGPR and not inst.mods.get("dst_sel") and \
            not any(getattr(o, "sel", "") for o in ops[1:]):
        return bitdef_step(inst, srcs, fn, env.lanes, put)
    if inst.opcode in SHIFT64_OPS and post is None:
        return shift64_step(inst, srcs[0], srcs[1], fn, dt, put)
    if inst.opcode in LOW_HALF_OPS and post is None:
        return _low_half(inst, spec, env, put, srcs, fn, dt)
    dd = _and_defined(ops[1:], [d for _, d in srcs])
    if len(srcs) == 1:
        (g0, _), = srcs
        return lambda w: put(w, np.asarray(fn(g0(w)), dt), dd(w))
    if len(srcs) == 2:
        (g0, _), (g1, _) = srcs
        return lambda w: put(w, np.asarray(fn(g0(w), g1(w)), dt), dd(w))
    (g0, _), (g1, _), (g2, _) = srcs
    return lambda w: put(w, np.asarray(fn(g0(w), g1(w), g2(w)), dt), dd(w))


LOW_HALF_OPS = frozenset({"V_MOV_B64", "V_LSHL_ADD_U64", "V_ADD_U64"})
"""64-bit operations whose low result half depends only on the low halves of their 64-bit
sources (and their 32-bit sources): definedness is tracked per half for them, as memcheck
does for additions, so a pair whose unused high half was never written stays usable."""


def _low_half(inst: Inst, spec: VOp, env: Env, put: Any, srcs: list[Any], fn: Any,
              dt: Any) -> Step:
    lows = [low_half_defined(o, t, env) for o, t in zip(inst.operands[1:], spec.src,
                                                       strict=True)]
    if inst.opcode == "V_MOV_B64":
        (g0, d0), = srcs
        lo0 = lows[0]
        col = vcol(inst.operands[1]) if inst.operands[1].kind in (OpKind.VGPR,
                                                                   OpKind.AGPR) else -1

        def mov(w: Wave) -> None:
            hi = w.vdef[:, col + 1] if col >= 0 else d0(w)
            put(w, np.asarray(fn(g0(w)), dt), (lo0(w), hi))
        return mov

    halves = _halves_defined(inst.operands[1:], spec.src, env)
    if len(srcs) == 3:
        (g0, _), (g1, _), (g2, _) = srcs

        def step3(w: Wave) -> None:
            r = fn(g0(w), g1(w), g2(w))
            put(w, np.asarray(r, dt), halves(w))
        return step3

    def step(w: Wave) -> None:
        vals = [g(w) for g, _ in srcs]
        put(w, np.asarray(fn(*vals), dt), halves(w))
    return step


def _bitop3(inst: Inst, spec: VOp, env: Env) -> Step:
    """V_BITOP3_*: the row's function with the instruction's truth table fixed
    (`semantics.bitop3`), bound as a plain three-source operation."""
    table = inst.mods.get("bitop3", 0)
    return _plain(inst, replace(spec, shape="plain", fn=partial(spec.fn, table)), env)


def _fmac(inst: Inst, spec: VOp, env: Env) -> Step:
    """V_FMAC: D = S0 * S1 + D (the destination is the addend)."""
    ops = inst.operands
    if len(ops) == 3:
        ops = (*ops, ops[0])
    return _plain(replace(inst, operands=ops), spec, env)


def _lane_mask_dest(op: Opnd, env: Env) -> Callable[[Wave, np.ndarray, Any], None]:
    """A lane mask result: bit n for active lane n, 0 for inactive lanes; a bit is defined
    where the lane is inactive or its inputs were defined (`d`, per lane)."""
    put = scalar_dest(op, 64 if env.lanes == 64 else 32)
    n = env.lanes
    ones = (1 << n) - 1
    high = ((1 << 64) - 1) ^ ones
    every = (1 << 64) - 1

    def dest(w: Wave, lanes: np.ndarray, d: Any) -> None:
        # bool lane vectors go to masks first (`mask_of` is cached) and combine as ints:
        # mask_of(x & e) == mask_of(x) & mask_of(e), mask_of(x | ~e) == mask_of(x) | ~EXEC
        e = w.exec
        em = mask_of(e)
        if lanes.dtype == _BOOL:
            value = mask_of(lanes) & em
        else:
            value = mask_of(lanes & e)
        if type(d) is not np.ndarray:  # all lanes or none (`np.broadcast_to(d) | ~EXEC`)
            dm = every if d else (ones ^ em) | high
        elif d.dtype == _BOOL and d.shape == (n,):
            dm = mask_of(d) | (ones ^ em) | high
        else:
            dm = mask_of(d | _inactive(e)) | high
        put(w, value, dm)
    return dest


_NOT_EXEC: list[Any] = [None, None]


def _inactive(e: np.ndarray) -> np.ndarray:
    """`~e` for the EXEC vector `e`, kept for the last one (EXEC vectors are `lanes_of`'s
    read-only arrays, replaced rather than written)."""
    c = _NOT_EXEC
    if c[0] is not e:
        if e.flags.writeable:  # `Wave.full`, or a vector not from `lanes_of`
            return ~e
        c[0], c[1] = e, ~e
    return c[1]  # type: ignore[no-any-return]


def _cmp(inst: Inst, spec: VOp, env: Env) -> Step:
    writes_exec = spec.shape == "cmpx"
    # GFX10+ V_CMPX writes EXEC only (RDNA3 ISA "VOPC": no SGPR or VCC result); the decoder
    # then gives no destination, where GFX9 has `vcc` (e32) or an SGPR pair (e64).
    exec_only = writes_exec and len(inst.operands) == 2
    ops = [VCC_OP, *inst.operands] if exec_only else _with_vcc(inst.operands, 3, (0,))
    dst = _lane_mask_dest(ops[0], env)
    (g0, d0), (g1, d1) = (vector_source(o, t, env) for o, t in
                          zip(ops[1:], spec.src, strict=True))
    fn = spec.fn
    full = np.ones(env.lanes, bool)

    dd = _and_defined(ops[1:], [d0, d1])
    lanes = env.lanes

    def step(w: Wave) -> None:
        res = _vec(fn(g0(w), g1(w)), lanes)
        d = dd(w)
        if not exec_only and (ops[0].index != EXEC or not writes_exec):
            dst(w, res, d)
        if writes_exec:
            if not bool(np.all(d | ~w.exec)):
                raise uninit(w, f"{inst.mnemonic}: EXEC set from an undefined value")
            w.set_exec(mask_of(res & w.exec & full))
    return step


def _cndmask(inst: Inst, spec: VOp, env: Env) -> Step:
    ops = _with_vcc(inst.operands, 4, (3,))
    put = vector_dest(ops[0], spec.dst, inst, env)
    (g0, d0), (g1, d1) = (vector_source(o, t, env) for o, t in zip(ops[1:3], spec.src,
                                                                   strict=True))
    gm, _ = lane_mask_source(ops[3], env)
    _, mbits = scalar_bits_source(ops[3], 64 if env.lanes == 64 else 32, env)
    lanes = env.lanes
    every = (1 << lanes) - 1
    if spec.dst == "b32" and ops[0].kind is OpKind.VGPR and len(ops) == 4:
        return cndmask_step(inst, ops, [(g0, d0), (g1, d1)], gm,
                            lane_mask_source(ops[3], env)[1], lanes, put)

    def step(w: Wave) -> None:
        m = gm(w)
        d: Any = np.where(m, d1(w), d0(w))  # numpy's stubs type `d & lanes_of(...)` as a tuple
        bits = mbits(w)
        if bits & every != every:  # `& lanes_of(bits)` changes nothing when all are set
            d = d & lanes_of(bits, lanes)
        put(w, np.where(m, g1(w), g0(w)), d)
    return step


def _carry_out(inst: Inst, spec: VOp, env: Env) -> Step:
    ops = _with_vcc(inst.operands, 4, (1,))
    put = vector_dest(ops[0], "u32", inst, env)
    cput = _lane_mask_dest(ops[1], env)
    srcs = [vector_source(o, t, env) for o, t in zip(ops[2:4], spec.src, strict=True)]
    (g0, d0), (g1, d1) = srcs
    dd = _and_defined(ops[2:4], [d0, d1])
    fn = spec.fn
    lanes = env.lanes

    def step(w: Wave) -> None:
        r, c = fn(np.asarray(g0(w)), np.asarray(g1(w)))
        d = dd(w)
        cput(w, _vec(c, lanes), d)
        put(w, r, d)
    return step


def _carry_in(inst: Inst, spec: VOp, env: Env) -> Step:
    ops = _with_vcc(inst.operands, 5, (1, 4))
    put = vector_dest(ops[0], "u32", inst, env)
    cput = _lane_mask_dest(ops[1], env)
    (g0, d0), (g1, d1) = (vector_source(o, t, env) for o, t in
                          zip(ops[2:4], spec.src, strict=True))
    gc, dc = lane_mask_source(ops[4], env)
    dd = _and_of([d for o, d in ((ops[2], d0), (ops[3], d1)) if o.kind not in CONSTS] + [dc],
                 [o.kind is OpKind.SGPR for o in (ops[2], ops[3]) if o.kind not in CONSTS]
                 + [False])
    fn = spec.fn
    lanes = env.lanes

    def step(w: Wave) -> None:
        cin = gc(w)
        r, c = fn(np.asarray(g0(w)), np.asarray(g1(w)), cin)
        d = dd(w)
        cput(w, _vec(c, lanes), d)
        put(w, r, d)
    return step


def _mad64(inst: Inst, spec: VOp, env: Env) -> Step:
    ops = inst.operands
    put = vector_dest(ops[0], spec.dst, inst, env)
    cput = _lane_mask_dest(ops[1], env)
    srcs = [vector_source(o, t, env) for o, t in zip(ops[2:5], spec.src, strict=True)]
    fn = spec.fn
    lanes = env.lanes

    halves = _halves_defined(ops[2:5], spec.src, env)
    (g0, _), (g1, _), (g2, _) = srcs

    def step(w: Wave) -> None:
        r, c = fn(np.asarray(g0(w)), np.asarray(g1(w)), np.asarray(g2(w)))
        low, d = halves(w)
        cput(w, _vec(c, lanes), d)
        put(w, r, (low, d))
    return step


def _div_scale(inst: Inst, spec: VOp, env: Env) -> Step:
    ops = _with_vcc(inst.operands, 5, (1,))
    put = vector_dest(ops[0], spec.dst, inst, env)
    cput = _lane_mask_dest(ops[1], env)
    srcs = [vector_source(o, t, env) for o, t in zip(ops[2:5], spec.src, strict=True)]
    fn = spec.fn
    lanes = env.lanes

    def step(w: Wave) -> None:
        r, vcc = fn(*(np.asarray(g(w)) for g, _ in srcs))
        d = _all([dd(w) for _, dd in srcs])
        cput(w, _vec(vcc, lanes), d)
        put(w, r, d)
    return step


def _div_fmas(inst: Inst, spec: VOp, env: Env) -> Step:
    ops = inst.operands
    put = vector_dest(ops[0], spec.dst, inst, env)
    srcs = [vector_source(o, t, env) for o, t in zip(ops[1:4], spec.src, strict=True)]
    gm, dm = lane_mask_source(VCC_OP, env)
    fn = spec.fn
    dt = DTYPES[spec.dst][1]

    def step(w: Wave) -> None:
        vals = [np.asarray(g(w), dt) for g, _ in srcs]
        put(w, fn(*vals, gm(w)), _all([dd(w) for _, dd in srcs]) & dm(w))
    return step


def _readlane(inst: Inst, spec: VOp, env: Env) -> Step:
    fast = (lane_steps.readfirstlane if spec.shape == "readfirstlane"
            else lane_steps.readlane)(inst, env)
    if fast is not None:
        return fast
    ops = inst.operands
    sput = scalar_dest(ops[0], 32)
    g, d = vector_source(ops[1], "b32", env)
    plain = ops[1].kind in (OpKind.VGPR, OpKind.AGPR) and not getattr(ops[1], "sel", "") \
        and not getattr(ops[1], "hi", False)
    pcol = vcol(ops[1]) if plain else -1
    if spec.shape == "readfirstlane":
        def first(w: Wave) -> None:
            # a partly defined lane (`Wave.vpart`) gives its defined bits, as in `one_lane`
            e = w.exec
            lane = int(np.argmax(e)) if e.any() else 0
            vals = np.broadcast_to(g(w), (env.lanes,))
            dd = np.broadcast_to(d(w), (env.lanes,))
            defined: Any = bool(dd[lane])
            if not defined and pcol >= 0 and pcol in w.vpart:
                defined = w.vpart[pcol].get(lane, 0)
            sput(w, int(vals[lane]), defined)
        return first
    sel, seld = scalar_source(ops[2], 32, env)

    col = vcol(ops[1]) if ops[1].kind in (OpKind.VGPR, OpKind.AGPR) else -1
    if col >= 0 and not getattr(ops[1], "sel", "") and not getattr(ops[1], "hi", False):
        lanes = env.lanes

        def one_lane(w: Wave) -> None:
            # the same as `step` for a plain VGPR: one element read, no lane vectors
            lane = sel(w) % lanes
            if w.pend_v and col in w.pend_v:
                raise hazard(w, f"v{col} read before the s_waitcnt covering its load")
            sdefined = seld(w)
            defined: Any = bool(w.vdef[lane, col]) and sdefined
            if not defined and sdefined and col in w.vpart:
                defined = w.vpart[col].get(lane, 0)
            sput(w, int(w.V[lane, col]), defined)
        return one_lane

    def step(w: Wave) -> None:
        lane = sel(w) % env.lanes
        vals = np.broadcast_to(g(w), (env.lanes,))
        dd = np.broadcast_to(d(w), (env.lanes,))
        defined: Any = bool(dd[lane]) and seld(w)
        if not defined and seld(w) and col in w.vpart:
            defined = w.vpart[col].get(lane, 0)
        sput(w, int(vals[lane]), defined)
    return step


def _writelane(inst: Inst, spec: VOp, env: Env) -> Step:
    """V_WRITELANE_B32: one lane, whatever EXEC says."""
    fast = lane_steps.writelane(inst, env)
    if fast is not None:
        return fast
    ops = inst.operands
    col = ops[0].index + (256 if ops[0].kind is OpKind.AGPR else 0)
    val, vd = scalar_bits_source(ops[1], 32, env)
    sel, sd = scalar_source(ops[2], 32, env)

    def step(w: Wave) -> None:
        lane = sel(w) % env.lanes
        if not sd(w):
            raise uninit(w, "v_writelane_b32 lane select is undefined")
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} written before its load completed")
        w.V[lane, col] = val(w)
        bits = vd(w)
        w.vdef[lane, col] = bits == 0xFFFF_FFFF
        if 0 < bits < 0xFFFF_FFFF:
            w.vpart.setdefault(col, {})[lane] = bits
        elif col in w.vpart:
            w.vpart[col].pop(lane, None)
    return step


def _mbcnt(inst: Inst, spec: VOp, env: Env) -> Step:
    """V_MBCNT_LO/HI_U32_B32: bits of S0 below this lane (in the low/high 32 lanes) + S1."""
    ops = inst.operands
    put = vector_dest(ops[0], "u32", inst, env)
    (g0, d0), (g1, d1) = (vector_source(o, "u32", env) for o in ops[1:3])
    hi = spec.shape == "mbcnt_hi"
    lane = np.arange(env.lanes)
    below = np.clip(lane - (32 if hi else 0), 0, 32).astype(np.uint64)
    lowmask = ((np.uint64(1) << below) - np.uint64(1)).astype(np.uint64)
    lowmask = np.where(below >= 32, np.uint64(0xFFFF_FFFF), lowmask)

    def step(w: Wave) -> None:
        m = np.asarray(g0(w)).astype(np.uint64) & lowmask
        cnt = np.bitwise_count(m).astype(np.uint32)
        put(w, cnt + g1(w), d0(w) & d1(w))
    return step


def _pk_mov(inst: Inst, spec: VOp, env: Env) -> Step:
    """V_PK_MOV_B32 (gfx90a/gfx942): D.lo = op_sel[0] ? S0.hi : S0.lo, D.hi = op_sel[1] ?
    S1.hi : S1.lo (the decoder gives op_sel as each source's `hi`)."""
    ops = inst.operands
    put = vector_dest(ops[0], "b64", inst, env)
    halves = []
    for o in ops[1:3]:
        g, _ = vector_source(o, "b64", env)
        hi = bool(getattr(o, "hi", False))
        col = vcol(o) + int(hi) if o.kind in (OpKind.VGPR, OpKind.AGPR) else -1
        halves.append((g, hi, col))

    def step(w: Wave) -> None:
        parts, defs = [], []
        for g, hi, col in halves:
            v = np.asarray(g(w), np.uint64)
            parts.append((v >> np.uint64(32)) if hi else (v & np.uint64(0xFFFF_FFFF)))
            defs.append(w.vdef[:, col] if col >= 0 else True)
        lo, hi_part = np.broadcast_arrays(parts[0], parts[1])
        put(w, lo | (hi_part << np.uint64(32)), (defs[0], defs[1]))
    return step


_VALU_SHAPES: dict[str, Callable[[Inst, VOp, Env], Step]] = {
    "swap": lane_steps.swap,
    "pk_mov": _pk_mov, "pk16": bind_pk16, "pkf32": bind_pkf32, "fma_mix": bind_fma_mix,
    "plain": _plain, "bitop3": _bitop3, "fmac": _fmac, "cmp": _cmp, "cmpx": _cmp,
    "cndmask": _cndmask,
    "carry_out": _carry_out, "carry_in": _carry_in, "mad64": _mad64,
    "div_scale": _div_scale, "div_fmas": _div_fmas, "readlane": _readlane,
    "readfirstlane": _readlane, "writelane": _writelane, "mbcnt_lo": _mbcnt,
    "mbcnt_hi": _mbcnt,
}


__all__ = ["Unbindable", "bind_valu", "fp", "lanes_of"]
