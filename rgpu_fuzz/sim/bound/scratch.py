"""SCRATCH and MUBUF accesses whose address is the same in every lane, bound as row copies.

At O0 nearly every scratch access is a spill, a reload or an alloca slot: `off` for the
VGPR address (or SVE=0), one SGPR base and an immediate offset. In the swizzled private
layout (`memory.Private`: offset `o` of lane `l` at wave-relative byte `(o // 4) * 4 *
lanes + l * 4 + o % 4`) byte `o % 4` of dword `o // 4` of every lane is one strided row,
and dword `o // 4` of every lane one contiguous row, so such an access is a row copy.

The steps here check what `bound.mem.bind_vmem`'s general step checks, in its order:
an empty EXEC does nothing; the SGPR base undefined is `sim-uninit-read`, pending
`sim-waitcnt-hazard`; then (stores) a data register still pending is
`sim-waitcnt-hazard`. Anything they do not reproduce bit for bit is handed to the general
step, which reports it as before: an offset out of range (`sim-oob-access`) or not
aligned to the access, a private size that is not a whole number of dwords, D16 halves.
Partly defined values (`Wave.vpart` entries, loaded dwords with some defined
bits) keep their defined bits through private memory as the general step keeps them; a
sub-dword access of a register with such lanes takes the general step.

MUBUF over the private segment buffer (gfx90a spills: no architected flat scratch) with one
offset for every lane reaches the same rows once its swizzled address is a private offset
(`buffer_rows`, `bound.mem.bind_buffer`); its loads keep definedness per bit, as its general
step and SCRATCH's do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz.sim.bound.inflight import STORED, all_bits, issue_vector_load, span
from rgpu_fuzz.sim.bound.operands import (
    EXECZ_SRC,
    SCC_SRC,
    VCCZ_SRC,
    Env,
    _consts,
    hazard,
    scalar_source,
    uninit,
    vcol,
)
from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.isa.inst import Inst, OpKind, Opnd
from rgpu_fuzz.sim.semantics.memops import MemOp
from rgpu_fuzz.sim.state.halves import half_mask
from rgpu_fuzz.sim.state.wave import Pending, Wave, mask_of

Step = Callable[[Wave], Any]
M32 = 0xFFFF_FFFF
FULL64 = (1 << 64) - 1
U32 = np.uint32
DEFINED_WORD = np.uint32(M32)
"""Four fully defined bytes of the private-memory shadow (a uint8 of defined bits per
byte) read as one uint32."""

ONE = np.uint32(1)

_ALL_DEFINED: dict[tuple[int, int], np.ndarray] = {}
_ONES: dict[int, bytes] = {}


def all_defined(lanes: int, n: int) -> np.ndarray:
    """A read-only (lanes, n) bool array of True: the definedness of a load whose every
    dword is defined (`complete` only reads it)."""
    got = _ALL_DEFINED.get((lanes, n))
    if got is None:
        got = _ALL_DEFINED[(lanes, n)] = np.ones((lanes, n), bool)
        got.flags.writeable = False
    return got


def ones(nbytes: int) -> bytes:
    """`nbytes` bytes of 0xFF: a shadow row compared whole (`tobytes`) is fully defined."""
    got = _ONES.get(nbytes)
    if got is None:
        got = _ONES[nbytes] = b"\xff" * nbytes
    return got


def views(w: Wave) -> tuple[Any, ...]:
    """The wave's private memory and shadow as rows, cached on the wave: (private, data
    dwords (rows, lanes), shadow dwords, data bytes (rows, lanes, 4), shadow bytes, data
    halves (rows, lanes, 2), shadow halves). The caller has checked `size % 4 == 0`."""
    priv = w.private
    got = w.scratch_views
    if got is None or got[0] is not priv:
        n = w.lanes
        data, shadow = priv.data, priv.defined
        got = w.scratch_views = (priv, data.view(U32).reshape(-1, n),
                                 shadow.view(U32).reshape(-1, n), data.reshape(-1, n, 4),
                                 shadow.reshape(-1, n, 4), data.view(np.uint16).reshape(-1, n, 2),
                                 shadow.view(np.uint16).reshape(-1, n, 2))
    return got


def issue_load(w: Wave, col: int, n: int, data: np.ndarray, defined: np.ndarray) -> None:
    """`bound.mem._issue_vector_load` of a whole-register vmcnt load when no VGPR load is in
    flight (then it has no hazard to report and no older load to remember). EXEC itself
    is kept, not a copy: the EXEC vector is read-only and replaced when EXEC changes."""
    p = Pending(vm=True, lgkm=False, smem=False, vcol=col, vdata=data, vdef=defined,
                vmask=None if w.exec_full else w.exec)
    pend = w.pend_v
    for c in range(col, col + n):
        pend[c] = p
    w.vm_queue.append(p)


def exec_lanes(w: Wave) -> tuple[int, int]:
    """EXEC as one run of lanes `[lo, hi)` (`wave.span`; all lanes when full)."""
    return (0, w.lanes) if w.exec_full else span(w.exec)


def signed_offset(inst: Inst) -> int:
    """The instruction's `offset` modifier: the decoder has already read it as signed at the
    format's own width (13 bits on GFX9 and GFX11 GLOBAL/SCRATCH, 24 on GFX12: RDNA4 ISA
    §10.1), so it is used as it is. Sign-extending it again at 13 bits turned a GFX12
    `offset:4100` into -4092."""
    return int(inst.mods.get("offset", 0))


OFF = Opnd(OpKind.OFF, 0, 0)


@dataclass(frozen=True, slots=True)
class ScratchForm:
    """A SCRATCH access of the uniform form: no VGPR address (`off`, or SVE=0)."""

    col: int
    """The data (store) or destination (load) VGPR column."""
    saddr: Opnd | None
    """The SGPR base (None: `off`, base 0)."""
    sreg: int | None
    """`saddr`'s index where it is a plain SGPR (`is_plain_sgpr`)."""
    offset: int


def scratch_form(inst: Inst, op: MemOp, env: Env, d16: bool = False) -> ScratchForm | None:
    """`inst` as a uniform-address SCRATCH access of whole dwords or of one byte or short
    (not D16, unless `d16` and a D16 load), or None. Operands as `bound.mem.bind_vmem`
    reads them (CDNA3 ISA §10.1: `vdst, vaddr, saddr` for loads, `vaddr, vdata, saddr` for
    stores)."""
    if op.segment != "scratch" or (op.d16 and not (d16 and not op.store and op.width < 4)) \
            or not (op.width % 4 == 0 or op.width < 4):
        return None
    ops = [*inst.operands, OFF, OFF, OFF]
    data, vaddr, saddr = (ops[1], ops[0], ops[2]) if op.store else (ops[0], ops[1], ops[2])
    if vaddr.kind is not OpKind.OFF and inst.mods.get("sve", 1):
        return None
    if data.kind is not OpKind.VGPR and data.kind is not OpKind.AGPR:
        return None
    has = saddr.kind is OpKind.SGPR
    return ScratchForm(vcol(data), saddr if has else None,
                       saddr.index if has and is_plain_sgpr(saddr, env) else None,
                       signed_offset(inst))


def is_plain_sgpr(op: Opnd, env: Env) -> bool:
    """Whether `operands.scalar_bits_source` reads `op` as `Wave.S[op.index]` with its
    `Wave.sdef` bits (not a constant, SCC, VCCZ or EXECZ)."""
    return op.kind is OpKind.SGPR and op.index not in _consts(env) and \
        op.index not in (SCC_SRC, VCCZ_SRC, EXECZ_SRC)


def partly_defined_store(w: Wave, col: int, n: int, rows: np.ndarray,
                         shadow: np.ndarray) -> None:
    """Store dwords `col ...` of which some lanes hold partly defined values (`Wave.vpart`)
    into `rows` (n, lanes) for the lanes in EXEC: their shadow dwords are those lanes'
    defined bits, the others' all or nothing by `vdef` (`bound.memdata._byte_definedness`: an
    O0 SGPR lane mask spilled by v_writelane, then its VGPR spilled, comes back as it
    went)."""
    d = np.negative(w.vdef[:, col:col + n].T, dtype=U32, casting="unsafe")
    for j in range(n):
        for lane, bits in w.vpart.get(col + j, {}).items():
            d[j, lane] = bits
    if w.exec_full:
        rows[...] = w.V[:, col:col + n].T
        shadow[...] = d
    else:
        e = w.exec
        np.copyto(rows, w.V[:, col:col + n].T, where=e)
        np.copyto(shadow, d, where=e)


def forget_lanes(w: Wave, col: int, n: int) -> None:
    """Remove the `Wave.vpart` entries of columns `col ...` (n) in EXEC's lanes, which a load
    replaces (EXEC as an int, -1 for every lane: `mask_of` is cached, numpy's per-element
    indexing is not)."""
    em = -1 if w.exec_full else mask_of(w.exec)
    vpart = w.vpart
    for c in range(col, col + n):
        part = vpart.get(c)
        if part:
            if em == -1:
                part.clear()
            else:
                for lane in [ln for ln in part if em >> ln & 1]:
                    del part[lane]


def partly_defined_load(w: Wave, col: int, words: np.ndarray) -> None:
    """`Wave.vpart` after a load of the shadow dwords `words` (n, lanes) into `col ...`
    (`bound.memdata._dword_definedness`, at issue): the lanes in EXEC lose their entries, and
    those whose dword is partly defined get its defined bits."""
    forget_lanes(w, col, words.shape[0])
    e = None if w.exec_full else w.exec
    for j in range(words.shape[0]):
        row = words[j]
        # neither 0 (no bit defined) nor all ones: `+ 1` wraps those two to 1 and 0
        some = (row + ONE) > ONE
        if e is not None:
            some &= e
        if b"\x01" in some.tobytes():  # `some.any()` without its dispatch
            got = w.vpart.setdefault(col + j, {})
            idx = np.nonzero(some)[0]
            got.update(zip(idx.tolist(), row[idx].tolist(), strict=True))


def row_access(op: MemOp, col: int, bits: bool = False,
               counted: bool = True) -> Callable[[Wave, int], bool]:
    """The access `op` of VGPRs `col ...` at private offset `o`, the same in every lane, as
    row copies: `access(w, o)` is False where the general step must take it (out of
    range or misaligned, D16, sub-dword data with partly defined lanes). `bits`: a MUBUF
    load, whose general step keeps the defined bits of each dword as they are in the
    shadow and settles `Wave.vpart` at completion (`inflight.all_bits`,
    `inflight.complete`), not at issue as SCRATCH's does.

    EXEC as one run of lanes (`wave.span`, nearly every partial EXEC) is copied with
    slices; other masks with `np.copyto(where=)`. Only the lanes in EXEC are read for
    definedness: a load writes no other lane (`inflight.complete`), so when every byte
    it reads in EXEC is defined its lanes are all defined, whatever the others hold."""
    width = op.width
    if op.d16:
        return _sub_dword_access(op, col, counted) if width < 4 and not op.store \
            else lambda w, o: False
    if not (width % 4 == 0 or width < 4):
        return lambda w, o: False
    if width < 4:
        return _sub_dword_access(op, col, counted)
    return _dword_access(op, col, bits, counted)


def _dword_access(op: MemOp, col: int, bits: bool, counted: bool) -> Callable[[Wave, int], bool]:
    """`row_access` of whole dwords."""
    n = max(1, op.width // 4)
    cols = tuple(range(col, col + n))
    end = col + n

    def store_dwords(w: Wave, o: int) -> bool:
        priv = w.private
        if o < 0 or o & 3 or o + 4 * n > priv.size or priv.size & 3:
            return False
        pv = w.pend_v
        if pv and (col in pv if n == 1 else any(c in pv for c in cols)):
            raise hazard(w, f"v{col} stored before the s_waitcnt covering its load")
        v = views(w)
        rows, shadow = v[1], v[2]
        r = o >> 2
        vp = w.vpart
        # an empty entry (left by a load's `forget_lanes`) stores as no entry does
        if vp and (vp.get(col) if n == 1 else any(vp.get(c) for c in cols)):
            partly_defined_store(w, col, n, rows[r:r + n], shadow[r:r + n])
        # per dword, as `_store_bytes` does: one register's state per 4 bytes
        elif w.exec_full:
            if n == 1:
                rows[r] = w.V[:, col]
                np.negative(w.vdef[:, col], out=shadow[r], dtype=U32, casting="unsafe")
            else:
                rows[r:r + n] = w.V[:, col:end].T
                np.negative(w.vdef[:, col:end].T, out=shadow[r:r + n], dtype=U32,
                            casting="unsafe")
        else:
            lo, hi = span(w.exec)
            if lo >= 0 and n == 1:
                rows[r, lo:hi] = w.V[lo:hi, col]
                d1 = w.vdef[lo:hi, col]
                if b"\x00" not in d1.tobytes():
                    shadow[r, lo:hi] = M32
                else:
                    np.negative(d1, out=shadow[r, lo:hi], dtype=U32, casting="unsafe")
            elif lo >= 0:
                rows[r:r + n, lo:hi] = w.V[lo:hi, col:end].T
                d = w.vdef[lo:hi, col:end]
                if b"\x00" not in d.tobytes():  # every lane defined: all-ones shadow words
                    shadow[r:r + n, lo:hi] = DEFINED_WORD
                else:
                    np.negative(d.T, out=shadow[r:r + n, lo:hi], dtype=U32, casting="unsafe")
            else:
                e = w.exec
                np.copyto(rows[r:r + n], w.V[:, col:end].T, where=e)
                np.copyto(shadow[r:r + n], np.negative(w.vdef[:, col:end].T, dtype=U32,
                                                       casting="unsafe"), where=e)
        if counted:
            w.vm_queue.append(STORED)
        return True

    def load_dwords(w: Wave, o: int) -> bool:
        priv = w.private
        if o < 0 or o & 3 or o + 4 * n > priv.size or priv.size & 3:
            return False
        v = views(w)
        r = o >> 2
        words = v[2][r:r + n]
        lo, hi = (0, w.lanes) if w.exec_full else span(w.exec)
        defined: np.ndarray
        if lo >= 0 and (words if hi - lo == w.lanes else words[:, lo:hi]).tobytes() == \
                ones(4 * n * (hi - lo)):
            if bits:
                defined = all_bits(w.lanes, n)
            else:
                defined = all_defined(w.lanes, n)
                vp = w.vpart
                if vp and (vp.get(col) if n == 1 else any(vp.get(c) for c in cols)):
                    # every dword read in EXEC defined: no lane of EXEC is partly defined
                    forget_lanes(w, col, n)
        elif bits:
            # the shadow dwords are the defined bits (a spilled partly defined lane mask
            # comes back as it went, as SCRATCH's does); `complete` settles `Wave.vpart`
            defined = np.ascontiguousarray(words.T)
        else:
            defined = (words == DEFINED_WORD).T
            partly_defined_load(w, col, words)
        data = v[1][r:r + n].copy().T
        if w.pend_v:
            issue_vector_load(w, col, data, defined, vm=True, lgkm=False)
        else:
            issue_load(w, col, n, data, defined)
        return True

    return store_dwords if op.store else load_dwords


def _sub_dword_access(op: MemOp, col: int, counted: bool) -> Callable[[Wave, int], bool]:
    """`row_access` of a byte or a short (D16 loads included)."""
    width = op.width
    half = width == 2
    signed = op.signed
    dt = np.uint16 if half else np.uint8
    whole = 0xFFFF if half else 0xFF

    def sub_row(w: Wave, o: int) -> tuple[np.ndarray, np.ndarray]:
        v = views(w)
        if half:
            return v[5][o >> 2, :, (o >> 1) & 1], v[6][o >> 2, :, (o >> 1) & 1]
        return v[3][o >> 2, :, o & 3], v[4][o >> 2, :, o & 3]

    def store_sub(w: Wave, o: int) -> bool:
        priv = w.private
        if o < 0 or o + width > priv.size or priv.size & 3 or (half and o & 1):
            return False
        if w.vpart and col in w.vpart:
            return False
        if w.pend_v and col in w.pend_v:
            raise hazard(w, f"v{col} stored before the s_waitcnt covering its load")
        data, shadow = sub_row(w, o)
        # the register's low byte or half (little-endian), its definedness per byte
        src = w.V.view(np.uint16)[:, 2 * col] if half else w.V.view(np.uint8)[:, 4 * col]
        lo, hi = exec_lanes(w)
        if lo >= 0:
            data[lo:hi] = src[lo:hi]
            d = w.vdef[lo:hi, col]
            if b"\x00" not in d.tobytes():
                shadow[lo:hi] = whole
            else:
                np.negative(d, out=shadow[lo:hi], dtype=dt, casting="unsafe")
        else:
            e = w.exec
            np.copyto(data, src, where=e)
            np.copyto(shadow, np.negative(w.vdef[:, col], dtype=dt, casting="unsafe"),
                      where=e)
        if counted:
            w.vm_queue.append(STORED)
        return True

    def read_sub(w: Wave, o: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The byte or short at `o` of every lane's row, extended to 32 bits, and each lane's
        definedness; None where the row path does not apply (the general step decides)."""
        priv = w.private
        if o < 0 or o + width > priv.size or priv.size & 3 or (half and o & 1):
            return None
        if w.vpart and col in w.vpart:
            return None
        data, shadow = sub_row(w, o)
        # a sub-dword load's lane is defined when all its bytes are (`bind_vmem`)
        lo, hi = exec_lanes(w)
        if lo >= 0 and shadow[lo:hi].tobytes() == ones(width * (hi - lo)):
            defined = all_defined(w.lanes, 1)
        else:
            defined = (shadow == whole)[:, None]
        if signed:
            return data.view(np.int16 if half else np.int8).astype(np.int32).view(U32), defined
        return data.astype(U32), defined

    def load_sub(w: Wave, o: int) -> bool:
        got = read_sub(w, o)
        if got is None:
            return False
        val, defined = got
        if w.pend_v:
            issue_vector_load(w, col, val[:, None], defined, vm=True, lgkm=False)
        else:
            issue_load(w, col, 1, val[:, None], defined)
        return True

    hi16 = op.d16 == "hi"
    wmask = half_mask(hi16)

    def load_d16(w: Wave, o: int) -> bool:
        """A D16 load: the byte or short, extended to 16 bits, into one half of the
        register, merged with the other half at completion (`_to_words`, `complete`)."""
        got = read_sub(w, o)
        if got is None:
            return False
        val, defined = got
        if hi16:
            val <<= U32(16)
        elif signed:
            val &= U32(0xFFFF)
        issue_vector_load(w, col, val[:, None], defined, vm=True, lgkm=False, wmask=wmask)
        return True

    if op.d16:
        return load_d16
    return store_sub if op.store else load_sub


def uniform_scratch(inst: Inst, op: MemOp, general: Step, sget: Step, sdef: Step,
                    offset: int, col: int, sreg: int | None = None,
                    based: bool = True, counted: bool = True) -> Step:
    """The step of a uniform-address SCRATCH access of whole dwords or of one byte or
    short (or a D16 load of one); `general` is `bind_vmem`'s step for the same
    instruction. `based`: False where the SGPR base is `off` (base 0: the private offset
    is the immediate alone, as gfx942's O0 spills address their slots)."""
    mnemonic = inst.mnemonic
    access = row_access(op, col, counted=counted)

    def undefined(w: Wave) -> Exception:
        return uninit(w, f"{mnemonic}: address from an undefined register")

    if not based:
        fixed = offset & M32

        def unbased(w: Wave) -> Any:
            if not w.exec_bits:  # EXEC empty (`Wave.exec` is made from `exec_bits`)
                return None
            if not access(w, fixed):
                return general(w)
            return None
        return unbased
    if sreg is None:
        def step(w: Wave) -> Any:
            if not w.exec_bits:  # EXEC empty (`Wave.exec` is made from `exec_bits`)
                return None
            if not sdef(w):
                raise undefined(w)
            if not access(w, (int(sget(w)) + offset) & M32):
                return general(w)
            return None
        return step
    i = sreg

    def plain(w: Wave) -> Any:
        if not w.exec_bits:  # EXEC empty (`Wave.exec` is made from `exec_bits`)
            return None
        if w.sdef[i] & M32 != M32:
            raise undefined(w)
        if w.pend_s and i in w.pend_s:
            raise hazard(w, f"s{i} read before the s_waitcnt covering its load")
        if not access(w, (w.S[i] + offset) & M32):
            return general(w)
        return None
    return plain


def uniform_buffer(env: Env, offen: bool, srsrc: Opnd,
                   soff: Opnd) -> tuple[int, int, int] | None:
    """The uniform form of MUBUF (`bound.mem.bind_buffer`) as (the V#'s first SGPR, the
    soffset SGPR or -1, the constant soffset): no VGPR offset, the V# in plain SGPRs,
    soffset a plain SGPR, a constant or absent; None for any other form."""
    if offen or not is_plain_sgpr(srsrc, env) or srsrc.index >= 250:
        return None
    if soff.kind is OpKind.OFF:
        return srsrc.index, -1, 0
    if soff.kind in (OpKind.INT, OpKind.BITS):
        return srsrc.index, -1, int(scalar_source(soff, 32, env)[0](None))  # type: ignore[arg-type]
    if is_plain_sgpr(soff, env) and soff.index < 250:
        return srsrc.index, soff.index, 0
    return None


def buffer_rows(inst: Inst, general: Step, access: Callable[[Wave, int], bool], ioff: int,
                i: int, k: int, const: int) -> Step:
    """`bound.mem.bind_buffer`'s step `general` for its uniform form (`uniform_buffer`),
    without its closures: the same checks in the same order (an empty EXEC does nothing;
    the V# or soffset undefined is `sim-uninit-read`; the V# pending is
    `sim-waitcnt-hazard`; its base outside the private segment is `sim-oob-access`;
    soffset pending is `sim-waitcnt-hazard`), then the row copies (`row_access`) where
    the wave's part of the segment is a whole number of swizzled rows away, else
    `general` itself, which checks again and finds the same."""
    mnemonic = inst.mnemonic
    j = i + 1

    def uniform(w: Wave) -> Any:
        if not w.exec_bits:  # EXEC empty (`Wave.exec` is made from `exec_bits`)
            return None
        sd = w.sdef
        if sd[i] | sd[j] << 32 != FULL64 or (k >= 0 and sd[k] & M32 != M32):
            raise uninit(w, f"{mnemonic}: resource or offset undefined")
        ps = w.pend_s
        if ps and (i in ps or j in ps):
            raise hazard(w, f"s[{i}:{j}] read before the s_waitcnt covering its load")
        S = w.S
        base = (S[i] | S[j] << 32) & 0xFFFF_FFFF_FFFF
        mem = w.mem
        rel = base - mem.scratch_base
        if not 0 <= rel < mem.scratch_span:
            raise SimStop(Fault(FaultKind.OOB_ACCESS, f"{mnemonic}: buffer resource base "
                                f"{base:#x} is outside the private segment", w.pc))
        if k >= 0:
            if ps and k in ps:
                raise hazard(w, f"s{k} read before the s_waitcnt covering its load")
            rel += S[k]
        else:
            rel += const
        rel -= mem.wave_scratch_offset(w)
        lanes = w.lanes
        if rel % (4 * lanes) == 0 and access(w, rel // lanes + ioff):
            return None
        return general(w)
    return uniform
