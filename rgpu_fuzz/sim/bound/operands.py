"""Operand access, bound once per instruction: each source becomes a pair of closures
(value, definedness) and each destination a writer that honours EXEC, so executing an
instruction is a few calls on numpy views with no decoding left.

Definedness is tracked as memcheck does: a value computed from
an undefined register is itself undefined, and only its observation is a fault
(`sim-uninit-read`): as an address, a branch condition, EXEC, or data stored to global or
LDS memory. Compiled code legitimately copies undefined lanes around (spilling a VGPR
whose inactive lanes were never written, a 64-bit pair whose unused half is undefined);
reporting every read of an unwritten register would report those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.fp import flush as _flush
from rgpu_fuzz.sim.state.halves import bits_defined, half_mask, write_bits
from rgpu_fuzz.sim.state.wave import AGPR_BASE, EXEC, VCC, Wave, lanes_of, mask_of, span

DTYPES: dict[str, tuple[int, Any]] = {
    "b32": (32, np.uint32), "u32": (32, np.uint32), "i32": (32, np.int32),
    "f32": (32, np.float32), "b64": (64, np.uint64), "u64": (64, np.uint64),
    "i64": (64, np.int64), "f64": (64, np.float64), "u16": (16, np.uint16),
    "i16": (16, np.int16), "f16": (16, np.float16), "b16": (16, np.uint16),
}
RAW = {16: np.uint16, 32: np.uint32, 64: np.uint64}

SCC_SRC = 253
VCCZ_SRC = 251
EXECZ_SRC = 252


@dataclass(frozen=True, slots=True)
class Env:
    """What binding needs to know about the target and the launch."""

    lanes: int
    ieee: bool
    flush32: bool
    flush64: bool
    constants: tuple[tuple[int, int], ...]
    """Scalar source codes that read launch constants (src_shared_base ...)."""
    waitcnt: Callable[[int], tuple[int, int]]
    """simm16 of s_waitcnt → (vmcnt, lgkmcnt) on this target."""
    true16: bool = False
    """16-bit results write one half of the VGPR and keep the other (GFX11)."""
    stores_in_vmcnt: bool = True
    """A store enters the queue `s_waitcnt vmcnt` counts (GFX9); on RDNA it does not
    (vscnt, which the simulator needs no queue for: stores complete at issue)."""
    code_base: int = 0
    """Where the code object is loaded: the PC the code sees is `code_base` + the
    instruction's ELF address (`s_getpc`, `s_setpc`, `s_swappc`)."""
    keeps_high16: bool = False
    """16-bit results keep D[31:16] (GFX10+) rather than zero it (GFX9); with `true16` the
    destination names the half written instead."""

    @property
    def halves(self) -> bool:
        """A 16-bit result writes one half of its VGPR and keeps the other."""
        return self.true16 or self.keeps_high16


_CONSTS: dict[tuple[tuple[int, int], ...], dict[int, int]] = {}


def _consts(env: Env) -> dict[int, int]:
    got = _CONSTS.get(env.constants)
    if got is None:
        got = _CONSTS[env.constants] = dict(env.constants)
    return got


def hazard(w: Wave, what: str) -> SimStop:
    return SimStop(Fault(FaultKind.WAITCNT_HAZARD, what, w.pc))


def uninit(w: Wave, what: str) -> SimStop:
    return SimStop(Fault(FaultKind.UNINIT_READ, what, w.pc))


def const_bits(op: Opnd, ty: str) -> int:
    """The bits a constant operand reads as at type `ty`."""
    bits, dtype = DTYPES[ty]
    mask = (1 << bits) - 1
    if op.kind is OpKind.BITS:
        return op.value & mask
    if op.kind is OpKind.FLOAT:
        ft = {16: np.float16, 32: np.float32, 64: np.float64}[bits]
        return int(np.array(op.fvalue, ft).view(RAW[bits]))
    if op.literal and bits == 64 and np.dtype(dtype).kind == "f" and op.value >> 32 == 0:
        return (op.value & 0xFFFF_FFFF) << 32  # a 32-bit literal is an f64's high half
    return op.value & mask


def vcol(op: Opnd) -> int:
    return op.index + (AGPR_BASE if op.kind is OpKind.AGPR else 0)


def _sel(raw: np.ndarray, sel: str, sext: bool) -> np.ndarray:
    """SDWA source selection (DWORD, WORD_0/1, BYTE_0..3) with optional sign extension."""
    if not sel or sel == "DWORD":
        return raw
    shift = {"BYTE_0": 0, "BYTE_1": 8, "BYTE_2": 16, "BYTE_3": 24, "WORD_0": 0,
             "WORD_1": 16}[sel]
    width = 8 if sel.startswith("BYTE") else 16
    v = (raw >> np.uint32(shift)) & np.uint32((1 << width) - 1)
    if sext:
        v = ((v << np.uint32(32 - width)).view(np.int32) >> (32 - width)).view(np.uint32)
    return v


Getter = Callable[[Wave], Any]

_SEL_BITS = {"BYTE_0": 0xFF, "BYTE_1": 0xFF00, "BYTE_2": 0xFF_0000, "BYTE_3": 0xFF00_0000,
             "WORD_0": 0xFFFF, "WORD_1": 0xFFFF_0000}
"""The bits of a VGPR an SDWA source selection reads."""

_PAIRS: list[Any] = [None, None, None]
"""The last register file `pair` was asked for, and its two uint64 views (pairs starting
at an even column, at an odd one): a wave runs many steps in a row, and making the view of
a column pair (`V[:, c:c + 2].view(np.uint64)`) costs as much as the operation on it."""


def pair(V: np.ndarray, col: int) -> np.ndarray:
    """Columns `col` and `col + 1` of `V` as one uint64 per lane (a view, little-endian:
    `col` is the low half)."""
    c = _PAIRS
    if c[0] is not V:
        c[0], c[1], c[2] = V, V.view(np.uint64), V[:, 1:V.shape[1] - 1].view(np.uint64)
    return c[2][:, col >> 1] if col & 1 else c[1][:, col >> 1]  # type: ignore[no-any-return]


def vector_source(op: Opnd, ty: str, env: Env) -> tuple[Getter, Getter]:
    """(value, defined) closures for a VALU source of type `ty`: numpy arrays over lanes (or
    numpy scalars for uniform operands), already viewed as the type, with neg/abs applied."""
    bits, dtype = DTYPES[ty]
    get, defined = _raw_source(op, bits, env)
    sel, sext = getattr(op, "sel", ""), getattr(op, "sext", False)
    if sel and sel != "DWORD":
        g0 = get
        get = lambda w: _sel(np.asarray(g0(w), np.uint32), sel, sext)  # noqa: E731
        if op.kind in (OpKind.VGPR, OpKind.AGPR) and bits <= 32:
            # the selected byte or word is all the instruction reads: a register partly
            # defined elsewhere (a scratch load past what was stored; bucket
            # a8b8660435, `v_cmp_ne_u16_sdwa ... src0_sel:BYTE_0`) is defined for it
            col_s, mask_s = vcol(op), _SEL_BITS[sel]
            defined = lambda w: bits_defined(w, col_s, mask_s)  # noqa: E731
    if bits == 16:
        g1 = get
        hi = getattr(op, "hi", False)
        get = ((lambda w: (np.asarray(g1(w)) >> np.uint32(16)).astype(np.uint16)) if hi
               else (lambda w: np.asarray(g1(w)).astype(np.uint16)))
        if op.kind in (OpKind.VGPR, OpKind.AGPR) and not (sel and sel != "DWORD"):
            col, mask = vcol(op), half_mask(hi)
            defined = lambda w: bits_defined(w, col, mask)  # noqa: E731
        elif op.kind is OpKind.SGPR and not (sel and sel != "DWORD"):
            # a 16-bit source reads one half of the SGPR: the other half may be undefined
            # (a uniform i16 that a D16 load and v_readfirstlane_b32 brought into an SGPR
            # and SALU code shifted: `v_xor_b16 v0.l, s0, v0.l`)
            _, sbits = scalar_bits_source(op, 32, env)
            smask = 0xFFFF_0000 if hi else 0x0000_FFFF
            defined = lambda w: sbits(w) & smask == smask  # noqa: E731
    typed = get if dtype is RAW[bits] else (lambda w: get(w).view(dtype))
    if np.dtype(dtype).kind == "f":
        flush = env.flush32 if bits == 32 else env.flush64 if bits == 64 else False
        if flush:
            t0 = typed
            typed = lambda w: _flush(np.asarray(t0(w)))  # noqa: E731
        if op.abs:
            t1 = typed
            typed = lambda w: np.abs(t1(w))  # noqa: E731
        if op.neg:
            t2 = typed
            typed = lambda w: -t2(w)  # noqa: E731
    elif ty[0] == "b" and (op.abs or op.neg):
        # VOP3 abs/neg on an untyped move (V_CNDMASK_B32/B16: LLVM folds fneg/fabs of a
        # select's operands into them) clear / flip the sign bit, abs first; no flush.
        sign = dtype(1 << (bits - 1))
        t3 = typed
        if op.abs and op.neg:
            typed = lambda w: (t3(w) & ~sign) | sign  # noqa: E731
        elif op.abs:
            typed = lambda w: t3(w) & ~sign  # noqa: E731
        else:
            typed = lambda w: t3(w) ^ sign  # noqa: E731
    return typed, defined


def _raw_source(op: Opnd, bits: int, env: Env) -> tuple[Getter, Getter]:
    raw = RAW[max(bits, 32)]
    if op.kind in (OpKind.VGPR, OpKind.AGPR):
        col = vcol(op)
        if bits <= 32:
            def get(w: Wave) -> np.ndarray:
                if w.pend_v and col in w.pend_v:
                    raise hazard(w, f"v{col} read before the s_waitcnt covering its load")
                return w.V[:, col]

            def defined(w: Wave) -> np.ndarray:
                return w.vdef[:, col]
            return get, defined

        def get64(w: Wave) -> np.ndarray:
            if w.pend_v and (col in w.pend_v or col + 1 in w.pend_v):
                raise hazard(w, f"v[{col}:{col + 1}] read before the s_waitcnt covering "
                                "its load")
            return pair(w.V, col)

        def defined64(w: Wave) -> np.ndarray:
            d = w.vdef[:, col:col + 2]
            return d[:, 0] & d[:, 1]
        return get64, defined64
    if op.kind is OpKind.SGPR:
        sget, sdef = scalar_source(op, 64 if bits == 64 else 32, env)
        return (lambda w: raw(sget(w))), sdef
    if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
        ty = {16: "u16", 32: "u32", 64: "u64"}[bits]
        value = raw(const_bits(op, ty) if bits != 16 else const_bits(op, "u16"))
        return (lambda w: value), (lambda w: True)
    raise ValueError(f"operand {op} cannot be a vector source")


def low_half_defined(op: Opnd, ty: str, env: Env) -> Getter:
    """Defined lanes of the low 32 bits of a source (the whole source when it is 32-bit):
    for 64-bit operations whose low result half depends on low source halves only."""
    bits = DTYPES[ty][0]
    if op.kind in (OpKind.VGPR, OpKind.AGPR):
        col = vcol(op)
        return lambda w: w.vdef[:, col]
    if op.kind is OpKind.SGPR and bits == 64:
        i = op.index
        consts = _consts(env)
        if i not in consts and i < 250:
            return lambda w: w.sdef[i] == 0xFFFF_FFFF
    return vector_source(op, ty, env)[1]


def scalar_bits_source(op: Opnd, bits: int, env: Env) -> tuple[Getter, Getter]:
    """(value, defined bits) closures for a scalar operand: Python ints; the second is the
    mask of bits whose value is defined."""
    full = (1 << bits) - 1
    if op.kind is OpKind.SGPR:
        i = op.index
        consts = _consts(env)
        if i in consts:
            v = consts[i]
            if bits < 64 and v >> 32:
                raise ValueError(narrow_aperture_read(i, bits))
            return (lambda w: v), (lambda w: full)
        if i == SCC_SRC:
            return (lambda w: w.scc), (lambda w: full if w.scc_def else 0)
        if i == VCCZ_SRC:
            def vccz_def(w: Wave) -> int:
                lanes = (1 << w.lanes) - 1
                vcc = (w.S[VCC] | w.S[VCC + 1] << 32) & lanes
                d = (w.sdef[VCC] | w.sdef[VCC + 1] << 32) & lanes
                return full if d == lanes or vcc & d else 0
            return (lambda w: int((w.S[VCC] | w.S[VCC + 1] << 32) & ((1 << w.lanes) - 1) == 0),
                    vccz_def)
        if i == EXECZ_SRC:
            return (lambda w: int(w.exec_mask == 0)), (lambda w: full)
        if bits == 64:
            def get64(w: Wave) -> int:
                if w.pend_s and (i in w.pend_s or i + 1 in w.pend_s):
                    raise hazard(w, f"s[{i}:{i + 1}] read before the s_waitcnt covering "
                                    "its load")
                return w.S[i] | w.S[i + 1] << 32
            return get64, (lambda w: w.sdef[i] | w.sdef[i + 1] << 32)

        def get(w: Wave) -> int:
            if w.pend_s and i in w.pend_s:
                raise hazard(w, f"s{i} read before the s_waitcnt covering its load")
            return w.S[i]
        return get, (lambda w: w.sdef[i] & full)
    if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
        v = const_scalar(op, bits)
        return (lambda w: v), (lambda w: full)
    raise ValueError(f"operand {op} cannot be a scalar source")


def narrow_aperture_read(i: int, bits: int) -> str:
    """Why a 32-bit (or 16-bit) read of a 64-bit launch constant (`src_shared_base`,
    `src_shared_limit`, `src_private_base`, `src_private_limit`) cannot be bound: what
    hardware returns for it is not documented in any source we found (the CDNA3/RDNA3
    operand tables were not checked line by line), and LLVM
    (SIISelLowering::getSegmentAperture) calls the register "broken" as a 32-bit operand,
    returning "a wrong value (all zeroes?)", so LLVM itself only reads it with a 64-bit
    move. Binding fails, and the step reports
    `unsupported-instruction:<mnemonic>`: a value made up here could be one hardware never
    gives."""
    return (f"a {bits}-bit read of the 64-bit aperture constant {_APERTURES.get(i, i)}: "
            "hardware's value is undocumented (LLVM: broken as a 32-bit operand)")


_APERTURES = {235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base",
              238: "src_private_limit"}


def const_scalar(op: Opnd, bits: int) -> int:
    """The value a constant scalar operand (INT, FLOAT, BITS) reads as at `bits`: a 64-bit
    read of an inline integer is its sign extension to 64 bits."""
    v = const_bits(op, "u64" if bits == 64 else "u32" if bits == 32 else "u16")
    if op.kind is OpKind.INT and bits == 64 and not op.literal:
        v = op.value & (2**64 - 1)
    return v


def scalar_source(op: Opnd, bits: int, env: Env) -> tuple[Getter, Getter]:
    """(value, fully defined) closures for a scalar operand: a Python int and a bool. For a
    constant and a plain SGPR the second reads the answer directly (one call, not two: the
    bound steps of cold O0 code call it ~5,000 times a case)."""
    get, dbits = scalar_bits_source(op, bits, env)
    full = (1 << bits) - 1
    if op.kind in (OpKind.INT, OpKind.FLOAT, OpKind.BITS):
        return get, _always
    i = op.index
    if op.kind is OpKind.SGPR and i not in _consts(env) and i < 250:
        if bits == 64:
            j = i + 1
            return get, (lambda w: (w.sdef[i] | w.sdef[j] << 32) == full)
        if bits == 32:
            return get, (lambda w: (w.sdef[i] & full) == full)
    return get, (lambda w: dbits(w) == full)


def _always(w: Wave) -> bool:
    return True


def scalar_dest(op: Opnd, bits: int) -> Callable[[Wave, int, Any], None]:
    """A writer of a scalar destination: `d` is the defined-bits mask (True/False for all
    or none). Writing EXEC with an undefined bit in a lane of the wave is a fault."""
    i = op.index
    if op.kind is not OpKind.SGPR:
        raise ValueError(f"operand {op} cannot be a scalar destination")
    if i == 125:  # null (gfx10+): writes are dropped
        return lambda w, v, d: None
    touches_exec = i in (EXEC, EXEC + 1) or (bits == 64 and i + 1 == EXEC)
    full = (1 << bits) - 1
    j = i + 1
    if bits == 64:
        def put64(w: Wave, v: int, d: Any) -> None:
            if w.pend_s and (i in w.pend_s or j in w.pend_s):
                raise hazard(w, f"s[{i}:{j}] written before its load completed")
            dm = (full if d else 0) if isinstance(d, _BOOLS) else int(d)
            S, sdef = w.S, w.sdef
            S[i] = v & 0xFFFF_FFFF
            S[j] = (v >> 32) & 0xFFFF_FFFF
            sdef[i] = dm & 0xFFFF_FFFF
            sdef[j] = (dm >> 32) & 0xFFFF_FFFF
            if touches_exec:
                _check_exec(w)
                w.refresh_exec()
        return put64

    def put(w: Wave, v: int, d: Any) -> None:
        if w.pend_s and i in w.pend_s:
            raise hazard(w, f"s{i} written before its load completed")
        w.S[i] = v & 0xFFFF_FFFF
        w.sdef[i] = (0xFFFF_FFFF if d else 0) if isinstance(d, _BOOLS) \
            else int(d) & 0xFFFF_FFFF
        if touches_exec:
            _check_exec(w)
            w.refresh_exec()
    return put


_BOOLS = (bool, np.bool_)
"""A definedness given as all-or-nothing (a scalar writer's `d`; the other form is a mask)."""


def _check_exec(w: Wave) -> None:
    lanes = (1 << w.lanes) - 1
    if (w.sdef[EXEC] | w.sdef[EXEC + 1] << 32) & lanes != lanes:
        raise uninit(w, "EXEC set from an undefined value")


def exec_written(w: Wave) -> None:
    """`_check_exec` then `Wave.refresh_exec`, after a write to EXEC (either half), in one
    call: for a wave of 64 lanes, with `refresh_exec`'s body inline (O0 code writes EXEC
    around every spill)."""
    S, sd = w.S, w.sdef
    if w.lanes == 64:
        if sd[EXEC] & sd[EXEC + 1] != 0xFFFF_FFFF:
            raise uninit(w, "EXEC set from an undefined value")
        mask = S[EXEC] | S[EXEC + 1] << 32
        w.exec_bits = mask
        if mask == _M64:
            w.exec_full = True
            w.exec = w.full
        else:
            w.exec_full = False
            w.exec = lanes_of(mask, 64)
        return
    _check_exec(w)
    w.refresh_exec()


_M64 = (1 << 64) - 1


def _lane_shaped(x: Any, lanes: int) -> bool:
    """`x` is one value for all lanes or one per lane (not a (1,) array, which `np.copyto`
    broadcasts and a slice of lanes would not)."""
    return type(x) is not np.ndarray or x.ndim == 0 or x.shape == (lanes,)


def vector_dest(op: Opnd, ty: str, inst: Inst, env: Env) -> Callable[[Wave, Any, Any], None]:
    """A writer of a VALU destination: lanes outside EXEC keep their value. A partial EXEC
    that is one run of lanes (`wave.span`: nearly every one) is written with slices,
    twice as fast in numpy as `np.copyto(where=)`."""
    bits, _ = DTYPES[ty]
    col = vcol(op)
    lanes = env.lanes
    dst_sel = inst.mods.get("dst_sel", "")
    if isinstance(dst_sel, int):
        dst_sel = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"][dst_sel]
    if bits == 64:
        return _put64(col, lanes)
    conv: Callable[[Any], Any]
    if bits == 16 and env.halves:
        return _put16(op, col, lanes)
    if bits == 16 and getattr(op, "hi", False):
        # GFX9 VOP3 op_sel[3]: the result goes to D[31:16]; what D[15:0] keeps is not
        # documented in a source we have, so it is unsupported rather than guessed
        raise ValueError("op_sel dst (16-bit result into the high half) on a target "
                         "without true16: what the low half keeps is not modelled")
    if bits == 16:
        conv = lambda r: np.asarray(r).view(np.uint16).astype(np.uint32)  # noqa: E731
    else:
        conv = lambda r: np.asarray(r).view(np.uint32)  # noqa: E731
    if dst_sel and dst_sel != "DWORD":
        return _put_sel(inst, col, dst_sel, conv)

    if bits == 16:
        def put(w: Wave, r: Any, d: Any) -> None:
            if w.pend_v and col in w.pend_v:
                raise hazard(w, f"v{col} written before its load completed")
            raw = conv(r)
            if w.vpart and col in w.vpart:
                _forget(w, col, 1)
            if w.exec_full:
                w.V[:, col] = raw
                w.vdef[:, col] = d
            else:
                np.copyto(w.V[:, col], raw, where=w.exec)
                np.copyto(w.vdef[:, col], d, where=w.exec)
        return put

    def put32(w: Wave, r: Any, d: Any) -> None:
        # `conv` inlined: a uint32 array is written as it is (most results)
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} written before its load completed")
        if type(r) is not np.ndarray or r.dtype != _U32:
            r = np.asarray(r).view(np.uint32)
        vp = w.vpart
        if vp and col in vp:
            _forget(w, col, 1)
        if w.exec_full:
            w.V[:, col] = r
            w.vdef[:, col] = d
            return
        e = w.exec
        lo, hi = span(e)
        if lo >= 0 and (r.ndim == 0 or r.shape == (lanes,)) and _lane_shaped(d, lanes):
            w.V[lo:hi, col] = r[lo:hi] if r.ndim else r
            w.vdef[lo:hi, col] = d[lo:hi] if type(d) is np.ndarray and d.ndim else d
            return
        np.copyto(w.V[:, col], r, where=e)
        np.copyto(w.vdef[:, col], d, where=e)
    return put32


def _put64(col: int, lanes: int) -> Callable[[Wave, Any, Any], None]:
    """`vector_dest` of a 64-bit result."""

    def put64(w: Wave, r: Any, d: Any) -> None:
        """`d`: defined lanes, or a (low half, high half) pair of them. The value goes
        into the pair as one uint64 column (a view of both dwords of each lane's row);
        `np.copyto` copies first where the result is a view of the pair itself."""
        if w.pend_v and (col in w.pend_v or col + 1 in w.pend_v):
            raise hazard(w, f"v[{col}:{col + 1}] written before its load completed")
        if type(r) is not np.ndarray or r.dtype != _U64:
            r = np.asarray(r).view(np.uint64)
        dlo, dhi = d if isinstance(d, tuple) else (d, d)
        if w.vpart:
            _forget(w, col, 2)
        vdef = w.vdef
        if w.exec_full:
            pair(w.V, col)[:] = r
            vdef[:, col] = dlo
            vdef[:, col + 1] = dhi
            return
        e = w.exec
        lo, hi = span(e)
        if lo >= 0 and (r.ndim == 0 or r.shape == (lanes,)) \
                and _lane_shaped(dlo, lanes) and _lane_shaped(dhi, lanes):
            pair(w.V, col)[lo:hi] = r[lo:hi] if r.ndim else r
            vdef[lo:hi, col] = dlo[lo:hi] if type(dlo) is np.ndarray and dlo.ndim else dlo
            vdef[lo:hi, col + 1] = dhi[lo:hi] if type(dhi) is np.ndarray and dhi.ndim \
                else dhi
            return
        np.copyto(pair(w.V, col), r, where=e)
        np.copyto(vdef[:, col], dlo, where=e)
        np.copyto(vdef[:, col + 1], dhi, where=e)
    return put64


def _put16(op: Opnd, col: int, lanes: int) -> Callable[[Wave, Any, Any], None]:
    """`vector_dest` of a 16-bit result on a GFX10+ target: the half `op` names (a true16
    `.h`, or VOP3's OP_SEL[3]), the other kept."""
    hi = bool(getattr(op, "hi", False))
    mask = half_mask(hi)

    def put16(w: Wave, r: Any, d: Any) -> None:
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} written before its load completed")
        v = np.broadcast_to(np.asarray(r).view(np.uint16).astype(np.uint32), (lanes,))
        write_bits(w, col, (v << np.uint32(16)) if hi else v,
                   np.broadcast_to(np.asarray(d, bool), (lanes,)), mask,
                   None if w.exec_full else w.exec)
    return put16


def _put_sel(inst: Inst, col: int, dst_sel: str, base_conv: Callable[[Any], Any]
             ) -> Callable[[Wave, Any, Any], None]:
    """`vector_dest` of an SDWA `dst_sel` field (a byte or word of the dword), the rest by
    `dst_unused`."""
    shift = {"BYTE_0": 0, "BYTE_1": 8, "BYTE_2": 16, "BYTE_3": 24, "WORD_0": 0,
             "WORD_1": 16}[dst_sel]
    width = 8 if dst_sel.startswith("BYTE") else 16
    unused = inst.mods.get("dst_unused", "UNUSED_PAD")
    if isinstance(unused, int):
        unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"][unused]
    field_mask = np.uint32(((1 << width) - 1) << shift)

    def conv(r: Any, w: Wave | None = None) -> Any:
        v = (base_conv(r) << np.uint32(shift)) & field_mask
        if unused == "UNUSED_PRESERVE" and w is not None:
            return v | (w.V[:, col] & ~field_mask)
        if unused == "UNUSED_SEXT":
            top = shift + width
            v = ((v << np.uint32(32 - top)).view(np.int32) >> (32 - top)).view(np.uint32)
            return v
        return v

    def put_sel(w: Wave, r: Any, d: Any) -> None:
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} written before its load completed")
        raw = conv(r, w)
        if w.vpart:
            _forget(w, col, 1)
        if w.exec_full:
            w.V[:, col] = raw
            w.vdef[:, col] = d
        else:
            np.copyto(w.V[:, col], raw, where=w.exec)
            np.copyto(w.vdef[:, col], d, where=w.exec)
    return put_sel


_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)


def _forget(w: Wave, col: int, n: int) -> None:
    """A VALU write to `col..col+n-1` replaces the partly defined values of active lanes
    (EXEC tested as an int: `mask_of` is cached, numpy's per-element indexing is not)."""
    em = -1 if w.exec_full else mask_of(w.exec)
    for c in range(col, col + n):
        part = w.vpart.get(c)
        if part:
            for lane in [ln for ln in part if em >> ln & 1]:
                del part[lane]
            if not part:
                del w.vpart[c]


def lane_mask_source(op: Opnd, env: Env) -> tuple[Getter, Getter]:
    """A lane mask operand (VCC or an SGPR pair) as bool vectors over the lanes: its bits
    and which of them are defined."""
    get, dbits = scalar_bits_source(op, 64 if env.lanes == 64 else 32, env)
    lanes = env.lanes
    return (lambda w: lanes_of(get(w), lanes)), (lambda w: lanes_of(dbits(w), lanes))
