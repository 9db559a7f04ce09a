"""Wave operations on nvptx: a warp of 32 threads is the wave (PTX ISA "Warp Vote and Match",
"shfl.sync", "redux.sync"; LLVM's `IntrinsicsNVVM.td`).

Every `.sync` instruction takes a member mask; ours is `activemask` (PTX `activemask.b32`):
wave operations stand only where control flow is wave-uniform, so the active lanes are the
warp's lanes that exist (the trailing lanes of a partial last warp are absent).

* `lane_id()`: `%laneid`; `wave_size()`: 32.
* moves: `shfl.sync.idx.b32` per 32-bit word (`c` = 0x1f: the source lane is `b[4:0]`);
  `shuffle_xor` is `shfl.sync.bfly`; `read_first_lane` reads lane `ctz(activemask)`;
  `shuffle_down` computes its source as amdgcn does (past the last active lane: itself) and
  moves with `idx`, since `shfl.sync.down` from an absent lane is undefined.
* `ballot`: `vote.sync.ballot.b32`, zero-extended; `wave_all`/`wave_any`: `vote.sync.all`/
  `.any`.
* reductions: `redux.sync.{add,min,max,umin,umax,and,or,xor}` on 32 bits (8/16-bit values
  widened) where the SM has it (sm_80 and up) and `waveops=intrinsic`; otherwise, and for
  64-bit values, the scan below read at the last active lane.
* `wave_prefix_sum` (and the ladder reductions): a Hillis–Steele ladder of `shfl.sync.up`
  (`c` = 0: a lane below the step gets its own value back and keeps its sum).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rgpu_fuzz.lower.context import LowerError
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I1, I32, I64
from rgpu_fuzz.lower.waves import (
    SCAN,
    WaveOps,
    binop,
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

WARP = 32
_CLAMP_ALL = 0x1F
"""shfl's `c` operand: segment mask 0, clamp 31 (the whole warp)."""


class NvptxWaves:
    """The wave operations of one function being lowered for nvptx."""

    def __init__(self, st: FnState, sm: int, strategy: WaveOps) -> None:
        self.st = st
        self.b = st.b
        self.sm = sm
        self.strategy = strategy

    def intr(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        fn = self.st.ms.intrinsics.get(name, ret, [a.type for a in args])
        return self.b.call(fn, args)

    def i32(self, n: int) -> ir.Constant:
        return ir.Constant(I32, n)

    def mask(self) -> ir.Value:
        """The warp's active lanes: `activemask` from sm_80 (PTX 6.2 has it, LLVM's default
        PTX version for sm_70 does not), else the lanes of the warp that exist in the
        block (`min(32, block threads − warp base)` low bits), the same set here."""
        if self.sm >= 80:
            return self.intr("llvm.nvvm.activemask", I32, [])
        b = self.b

        def sreg(kind: str, axis: str) -> ir.Value:
            return self.intr(f"llvm.nvvm.read.ptx.sreg.{kind}.{axis}", I32, [])

        nx, ny = sreg("ntid", "x"), sreg("ntid", "y")
        linear = b.add(sreg("tid", "x"), b.mul(nx, b.add(sreg("tid", "y"),
                                                         b.mul(ny, sreg("tid", "z")))))
        count = b.sub(b.mul(b.mul(nx, ny), sreg("ntid", "z")),
                      b.and_(linear, self.i32(-WARP)))
        full = b.icmp_unsigned(">=", count, self.i32(WARP))
        low = b.sub(b.shl(self.i32(1), b.and_(count, self.i32(WARP - 1))), self.i32(1))
        return b.select(full, self.i32(-1), low)

    def lane_id(self) -> ir.Value:
        return self.intr("llvm.nvvm.read.ptx.sreg.laneid", I32, [])

    def op(self, name: str, args: list[ir.Value], types: list[Scalar]) -> ir.Value:
        b = self.b
        match name:
            case "wave_size":
                return self.i32(WARP)
            case "lane_id":
                return self.lane_id()
            case "ballot":
                got = self.intr("llvm.nvvm.vote.ballot.sync", I32, [self.mask(), args[0]])
                return b.zext(got, I64)
            case "wave_all" | "wave_any":
                kind = "all" if name == "wave_all" else "any"
                return self.intr(f"llvm.nvvm.vote.{kind}.sync", I1, [self.mask(), args[0]])
            case "read_first_lane":
                first = self.intr("llvm.cttz.i32", I32, [self.mask(), ir.Constant(I1, 0)])
                return self.shfl("idx", args[0], types[0], first)
            case "read_lane" | "shuffle":
                return self.shfl("idx", args[0], types[0], args[1])
            case "shuffle_xor":
                return self.shfl("bfly", args[0], types[0], args[1])
            case "shuffle_down":
                lane = self.lane_id()
                room = b.sub(self.last_active(), lane)
                src = b.select(b.icmp_unsigned("<=", args[1], room), b.add(lane, args[1]), lane)
                return self.shfl("idx", args[0], types[0], src)
            case "wave_sum" | "wave_min" | "wave_max" | "wave_and" | "wave_or" | "wave_xor":
                return self.reduce(name, args[0], types[0])
            case _ if name == SCAN:
                return self.scan(name, args[0], types[0])
        raise LowerError(f"wave operation {name}")

    def shfl(self, mode: str, v: ir.Value, s: Scalar, b_operand: ir.Value,
             c: int = _CLAMP_ALL) -> ir.Value:
        b = self.b
        mask = self.mask()
        moved = [self.intr(f"llvm.nvvm.shfl.sync.{mode}.i32", I32,
                           [mask, w, b_operand, self.i32(c)]) for w in words(b, v, s)]
        return unwords(b, moved, s)

    def last_active(self) -> ir.Value:
        lz = self.intr("llvm.ctlz.i32", I32, [self.mask(), ir.Constant(I1, 0)])
        return self.b.sub(self.i32(WARP - 1), lz)

    def reduce(self, name: str, v: ir.Value, s: Scalar) -> ir.Value:
        b = self.b
        kind = reduce_op(name, s)
        if self.strategy is WaveOps.INTRINSIC and self.sm >= 80 and widened(s).bits == 32:
            llvm_kind = {"smin": "min", "smax": "max"}.get(kind, kind)
            got = self.intr(f"llvm.nvvm.redux.sync.{llvm_kind}", I32,
                            [widen(b, v, s), self.mask()])
            return narrow(b, got, s)
        return self.shfl("idx", self.scan(name, v, s), s, self.last_active())

    def scan(self, name: str, v: ir.Value, s: Scalar) -> ir.Value:
        b = self.b
        kind = reduce_op(name, s)
        lane = self.lane_id()
        acc = v
        step = 1
        while step < WARP:
            below = self.shfl("up", acc, s, self.i32(step), c=0)
            more = binop(b, self.st.ms.intrinsics, kind, acc, below)
            acc = b.select(b.icmp_unsigned(">=", lane, self.i32(step)), more, acc)
            step *= 2
        return acc


__all__ = ["WARP", "NvptxWaves"]
