"""Wave operations on amdgcn: the LLVM intrinsics (AMDGPUUsage; `IntrinsicsAMDGPU.td`).

A wave is `wave_size` consecutive work-items (64 on gfx942/gfx90a, 32 on gfx1100 unless
`+wavefrontsize64`); every intrinsic here is `convergent` in LLVM's own declaration.

* `wave_size()`: `llvm.amdgcn.wavefrontsize` (folded by the back end for the subtarget);
  `lane_id()`: `llvm.amdgcn.mbcnt.lo(-1, 0)`, then `mbcnt.hi(-1, ·)` on wave64 (the count of
  lanes below this one, AMDGPUUsage / ISA "V_MBCNT_LO_U32_B32").
* `read_first_lane`, `read_lane`: `llvm.amdgcn.readfirstlane`/`readlane` on the value's own
  type (LLVM splits 64-bit and widens 16-bit ones); `bool` and 8-bit values travel as i32.
* `ballot`: `llvm.amdgcn.ballot.i64` on wave64, `ballot.i32` zero-extended on wave32.
* `shuffle`, `shuffle_xor`, `shuffle_down`: `llvm.amdgcn.ds.bpermute` (byte address = source
  lane × 4), one per 32-bit word. `shuffle_down`'s source past the last active lane (the
  highest set bit of `ballot(true)`) is the lane itself, as CUDA's `__shfl_down_sync`.
  On GFX10/GFX11 in wave64 a `ds_bpermute_b32` reaches only the lane's own 32-lane half
  (RDNA3 ISA "DS_BPERMUTE_B32": the lane index is "MOD 32 regardless of wave size"; LLVM's
  `GCNSubtarget::supportsWaveWideBPermute`), so there a word is also moved through its
  `llvm.amdgcn.permlane64` copy (the halves swapped) and each lane picks the own-half or the
  swapped read by bit 5 of `lane_id ^ source` — the shape LLVM gives
  `llvm.amdgcn.wave.shuffle` there. The swapped read runs in whole-wave mode
  (`set.inactive`, `strict.wwm`): the lane it reads stands in for the source lane across
  the halves and must be enabled. GFX10 has no `v_permlane64_b32`: wave64 shuffles there
  are a lowering error.
* reductions (`WaveOps.INTRINSIC`): `llvm.amdgcn.wave.reduce.<op>.{i32,i64}(v, 0)`, strategy 0
  (the back end's choice), after widening 8/16-bit values to i32; `wave_all`/`wave_any` as
  `wave.reduce.umin`/`umax` of the zero-extended bool.
  (`WaveOps.LADDER`): the DPP scan below, then `readlane(scan, wave_size - 1)`; `wave_all`/
  `wave_any` from two ballots.
* `wave_prefix_sum` (`INTRINSIC`): a Hillis–Steele ladder of `ds.bpermute` (lane − 1, 2, 4,
  …; a lane below the step keeps its sum). Only lower lanes are read, which are active: the
  inactive lanes of a wave are its last ones (lanes past the block's end).
  (`LADDER`): the DPP scan.

The DPP scan is the shape of LLVM's `AMDGPUAtomicOptimizer::buildScan`: in whole-wave mode
(`llvm.amdgcn.set.inactive(v, identity)` gives inactive lanes the identity, the result leaves
through `llvm.amdgcn.strict.wwm`), four `update.dpp(identity, v, row_shr:1/2/4/8, 0xf, 0xf,
bound_ctrl=0)` steps scan each row of 16 (a lane whose source is outside its row keeps
`old`, the identity; ISA "DPP": row_shr), then rows are joined: on GFX9 by `row_bcast:15`
(row mask 0xa) and `row_bcast:31` (row mask 0xc); on GFX10+, which has no broadcasts, by
`permlanex16(v, v, -1, -1)` (every lane reads lane 15 of the other row of its pair) moved
into rows 1 and 3 by `update.dpp` quad_perm identity with row mask 0xa, and on wave64 by
`readlane(v, 31)` moved into rows 2 and 3 (row mask 0xc).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rgpu_fuzz.lower.context import LowerError
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I1, I32, I64, type_suffix, value_type
from rgpu_fuzz.lower.waves import (
    SCAN,
    WaveOps,
    binop,
    identity,
    narrow,
    reduce_op,
    unwords,
    widen,
    widened,
    words,
)
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.context import FnState

# ISA "DPP_CTRL" encodings (LLVM `AMDGPU::DPP::DppCtrl`)
QUAD_PERM_ID = 0xE4
ROW_SHR0 = 0x110
ROW_BCAST15 = 0x142
ROW_BCAST31 = 0x143


class AmdgcnWaves:
    """The wave operations of one function being lowered for amdgcn."""

    def __init__(self, st: FnState, wave_size: int, strategy: WaveOps,
                 dpp_broadcasts: bool, permute_halves: bool = False, *,
                 permlane64: bool = True) -> None:
        self.st = st
        self.b = st.b
        self.ws = wave_size
        self.strategy = strategy
        self.dpp_broadcasts = dpp_broadcasts
        """GFX9 has DPP row broadcasts; GFX10+ joins rows with permlanex16 / readlane."""
        self.permute_halves = permute_halves
        """`ds_bpermute` reaches only a 32-lane half (GFX10/GFX11 wave64, module docstring)."""
        self.permlane64 = permlane64
        """The target has `v_permlane64_b32` (GFX11+)."""

    def intr(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        fn = self.st.ms.intrinsics.get(name, ret, [a.type for a in args])
        return self.b.call(fn, args)

    def i32(self, n: int) -> ir.Constant:
        return ir.Constant(I32, n)

    # ------------------------------------------------------------------ dispatch
    def op(self, name: str, args: list[ir.Value], types: list[Scalar]) -> ir.Value:
        b = self.b
        match name:
            case "wave_size":
                return self.intr("llvm.amdgcn.wavefrontsize", I32, [])
            case "lane_id":
                return self.lane_id()
            case "ballot":
                return self.ballot(args[0])
            case "read_first_lane":
                return self.read_lane(args[0], types[0], None)
            case "read_lane":
                return self.read_lane(args[0], types[0], args[1])
            case "shuffle":
                return self.bpermute(self.mod_ws(args[1]), args[0], types[0])
            case "shuffle_xor":
                return self.bpermute(self.mod_ws(b.xor(self.lane_id(), args[1])), args[0],
                                     types[0])
            case "shuffle_down":
                return self.shuffle_down(args[0], types[0], args[1])
            case "wave_all" | "wave_any":
                return self.vote(name, args[0])
            case "wave_sum" | "wave_min" | "wave_max" | "wave_and" | "wave_or" | "wave_xor":
                return self.reduce(name, args[0], types[0])
            case _ if name == SCAN:
                if self.strategy is WaveOps.LADDER:
                    return self.dpp_scan(name, args[0], types[0], reduce=False)
                return self.bpermute_scan(args[0], types[0])
        raise LowerError(f"wave operation {name}")

    # ------------------------------------------------------------------ lanes
    def lane_id(self) -> ir.Value:
        lo = self.intr("llvm.amdgcn.mbcnt.lo", I32, [self.i32(-1), self.i32(0)])
        if self.ws == 32:
            return lo
        return self.intr("llvm.amdgcn.mbcnt.hi", I32, [self.i32(-1), lo])

    def mod_ws(self, lane: ir.Value) -> ir.Value:
        return self.b.and_(lane, self.i32(self.ws - 1))

    def ballot(self, c: ir.Value) -> ir.Value:
        if self.ws == 64:
            return self.intr("llvm.amdgcn.ballot.i64", I64, [c])
        return self.b.zext(self.intr("llvm.amdgcn.ballot.i32", I32, [c]), I64)

    def read_lane(self, v: ir.Value, s: Scalar, lane: ir.Value | None) -> ir.Value:
        """`readfirstlane` (lane None) or `readlane`, on the value's type where LLVM takes
        it (16 bits and up), as an i32 word below that."""
        b = self.b
        small = s is Scalar.BOOL or s.bits < 16
        x = b.zext(v, I32) if small else v
        base = "readfirstlane" if lane is None else "readlane"
        got = self.intr(f"llvm.amdgcn.{base}.{type_suffix(x.type)}", x.type,
                        [x] if lane is None else [x, lane])
        return b.trunc(got, value_type(s)) if small else got

    def bpermute(self, lane: ir.Value, v: ir.Value, s: Scalar) -> ir.Value:
        """Each lane gets `v` of lane `lane` (ISA "DS_BPERMUTE_B32": byte address / 4)."""
        b = self.b
        addr = b.shl(lane, self.i32(2))
        moved = [self.intr("llvm.amdgcn.ds.bpermute", I32, [addr, w]) for w in words(b, v, s)]
        if self.permute_halves:
            moved = self.across_halves(lane, addr, words(b, v, s), moved)
        return unwords(b, moved, s)

    def across_halves(self, lane: ir.Value, addr: ir.Value, ws: list[ir.Value],
                      own: list[ir.Value]) -> list[ir.Value]:
        """Where a `ds_bpermute` reaches only the lane's own half (`own`: those reads), the
        same read of each word's `permlane64` copy gives the lane at the same position in the
        other half; a lane whose source is in the other half (bit 5 of `lane_id ^ lane`)
        takes that. Whole-wave mode, with inactive lanes' addresses and data 0, so the lane
        read on the source's behalf is enabled (module docstring)."""
        b = self.b
        if not self.permlane64:
            raise LowerError("a wave64 lane move across halves needs v_permlane64_b32 "
                             "(GFX11+)")
        wide = self.intr("llvm.amdgcn.set.inactive.i32", I32, [addr, self.i32(0)])
        crosses = b.icmp_unsigned("!=", b.and_(b.xor(self.lane_id(), lane), self.i32(32)),
                                  self.i32(0))
        out = []
        for w, mine in zip(ws, own, strict=True):
            x = self.intr("llvm.amdgcn.set.inactive.i32", I32, [w, self.i32(0)])
            swapped = self.intr("llvm.amdgcn.permlane64.i32", I32, [x])
            theirs = self.intr("llvm.amdgcn.ds.bpermute", I32, [wide, swapped])
            theirs = self.intr("llvm.amdgcn.strict.wwm.i32", I32, [theirs])
            out.append(b.select(crosses, theirs, mine))
        return out

    def last_active(self) -> ir.Value:
        """The highest active lane (i32): wave_size − 1 − ctlz(ballot(true))."""
        b = self.b
        mask = self.ballot(ir.Constant(I1, 1))
        lz = self.intr("llvm.ctlz.i64", I64, [mask, ir.Constant(I1, 0)])
        return b.trunc(b.sub(ir.Constant(I64, 63), lz), I32)

    def shuffle_down(self, v: ir.Value, s: Scalar, delta: ir.Value) -> ir.Value:
        b = self.b
        lane = self.lane_id()
        room = b.sub(self.last_active(), lane)
        src = b.select(b.icmp_unsigned("<=", delta, room), b.add(lane, delta), lane)
        return self.bpermute(src, v, s)

    # ------------------------------------------------------------------ folds
    def vote(self, name: str, c: ir.Value) -> ir.Value:
        b = self.b
        if self.strategy is WaveOps.INTRINSIC:
            kind = "umin" if name == "wave_all" else "umax"
            got = self.intr(f"llvm.amdgcn.wave.reduce.{kind}.i32", I32,
                            [b.zext(c, I32), self.i32(0)])
            return b.icmp_unsigned("!=", got, self.i32(0))
        votes = self.ballot(c)
        if name == "wave_any":
            return b.icmp_unsigned("!=", votes, ir.Constant(I64, 0))
        return b.icmp_unsigned("==", votes, self.ballot(ir.Constant(I1, 1)))

    def reduce(self, name: str, v: ir.Value, s: Scalar) -> ir.Value:
        if self.strategy is WaveOps.LADDER:
            return self.dpp_scan(name, v, s, reduce=True)
        b = self.b
        kind = reduce_op(name, s)
        w = widen(b, v, s)
        llvm_kind = {"smin": "min", "smax": "max"}.get(kind, kind)
        got = self.intr(f"llvm.amdgcn.wave.reduce.{llvm_kind}.{type_suffix(w.type)}", w.type,
                        [w, self.i32(0)])
        return narrow(b, got, s)

    def bpermute_scan(self, v: ir.Value, s: Scalar) -> ir.Value:
        b = self.b
        lane = self.lane_id()
        acc = v
        step = 1
        while step < self.ws:
            below = self.bpermute(b.sub(lane, self.i32(step)), acc, s)
            acc = b.select(b.icmp_unsigned(">=", lane, self.i32(step)), b.add(acc, below), acc)
            step *= 2
        return acc

    def dpp(self, old: ir.Value, src: ir.Value, ctrl: int, row_mask: int) -> ir.Value:
        t = src.type
        return self.intr(f"llvm.amdgcn.update.dpp.{type_suffix(t)}", t,
                         [old, src, self.i32(ctrl), self.i32(row_mask), self.i32(0xF),
                          ir.Constant(I1, 0)])

    def dpp_scan(self, name: str, v: ir.Value, s: Scalar, *, reduce: bool) -> ir.Value:
        """The inclusive scan of `v` over the wave in whole-wave mode (module docstring);
        with `reduce`, its last lane's value, read inside whole-wave mode."""
        b = self.b
        ws_ = self.st.ms.intrinsics
        kind = reduce_op(name, s)
        w = widen(b, v, s)
        t = w.type
        sfx = type_suffix(t)
        ident = identity(kind, widened(s))
        x = self.intr(f"llvm.amdgcn.set.inactive.{sfx}", t, [w, ident])
        for i in range(4):
            x = binop(b, ws_, kind, x, self.dpp(ident, x, ROW_SHR0 + (1 << i), 0xF))
        if self.dpp_broadcasts:
            x = binop(b, ws_, kind, x, self.dpp(ident, x, ROW_BCAST15, 0xA))
            x = binop(b, ws_, kind, x, self.dpp(ident, x, ROW_BCAST31, 0xC))
        else:
            perm = self.intr(f"llvm.amdgcn.permlanex16.{sfx}", t,
                             [x, x, self.i32(-1), self.i32(-1), ir.Constant(I1, 0),
                              ir.Constant(I1, 0)])
            x = binop(b, ws_, kind, x, self.dpp(ident, perm, QUAD_PERM_ID, 0xA))
            if self.ws == 64:
                lane31 = self.intr(f"llvm.amdgcn.readlane.{sfx}", t, [x, self.i32(31)])
                x = binop(b, ws_, kind, x, self.dpp(ident, lane31, QUAD_PERM_ID, 0xC))
        if reduce:
            x = self.intr(f"llvm.amdgcn.readlane.{sfx}", t, [x, self.i32(self.ws - 1)])
        x = self.intr(f"llvm.amdgcn.strict.wwm.{sfx}", t, [x])
        return narrow(b, x, s)


__all__ = ["QUAD_PERM_ID", "ROW_BCAST15", "ROW_BCAST31", "ROW_SHR0", "AmdgcnWaves"]
