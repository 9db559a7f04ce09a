"""The state one LLVM function carries while its body is lowered.

`FnState` is what `exprs` and `stmts` share: the builder, where each local lives, the loop
targets of `break`/`continue`, and what `return` and a trap do in this kind of function. The
three kinds differ only in those hooks:
* a helper `fn` — locals are allocas, `return` is `ret`, a trap returns to the caller, which
  checks the trap record after the call;
* the per-thread function of a kernel without barriers — locals are allocas, `return` is
  `ret void`;
* the block function of a kernel with barriers — locals live in per-thread frames (they must
  survive from one region to the next), `return` marks the thread done (`host.py`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rgpu_fuzz.lang.source import Span
from rgpu_fuzz.lang.types import ArrayTy
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I32, I64, PTR, Intrinsics, memory_type, private_alloca
from rgpu_fuzz.model.kernel_abi import TRAP_CODES
from rgpu_fuzz.model.outcome import TrapKind
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.targets import TargetHooks

TCTX_TID, TCTX_BID, TCTX_BDIM, TCTX_GDIM = 0, 3, 6, 9
"""Word offsets in the thread context `i32[12]`: thread id, block id, block dims, grid dims."""


class LowerError(Exception):
    """The kernel uses something this lowering does not implement (becomes `Unsupported`)."""

    def __init__(self, feature: str) -> None:
        super().__init__(feature)
        self.feature = feature


def storage_type(ty: Scalar | ArrayTy) -> ir.Type:
    if isinstance(ty, ArrayTy):
        return ir.ArrayType(memory_type(ty.elem), ty.len)
    return memory_type(ty)


@dataclass
class ModuleState:
    """What every function of one module shares. Shared arrays live either at
    `shared_offsets` in the block's shared-memory buffer (host) or in `shared_globals`
    (a GPU target's `addrspace(3)` globals)."""

    module: ir.Module
    intrinsics: Intrinsics
    consts: dict[str, object]
    shared_offsets: dict[str, tuple[int, ArrayTy]]
    target: TargetHooks
    shared_globals: dict[str, tuple[ir.GlobalVariable, ArrayTy]] = field(default_factory=dict)
    helpers: dict[str, ir.Function] = field(default_factory=dict)
    locations: list[tuple[int, int]] = field(default_factory=list)
    trap_fn: ir.Function | None = None

    def location_id(self, span: Span) -> int:
        self.locations.append((span.line, span.col))
        return len(self.locations) - 1


class LoopTarget(abc.ABC):
    """Where `break` and `continue` go for one enclosing loop."""

    @abc.abstractmethod
    def emit_break(self, st: FnState) -> None: ...

    @abc.abstractmethod
    def emit_continue(self, st: FnState) -> None: ...


@dataclass
class BranchTarget(LoopTarget):
    """A loop lowered to ordinary branches."""

    break_bb: ir.Block
    continue_bb: ir.Block

    def emit_break(self, st: FnState) -> None:
        st.b.branch(self.break_bb)

    def emit_continue(self, st: FnState) -> None:
        st.b.branch(self.continue_bb)


class FnState(abc.ABC):
    """One function being lowered; subclasses say where locals live and what `return` does."""

    def __init__(self, ms: ModuleState, fn: ir.Function, tctx: ir.Value, shared: ir.Value,
                 trap: ir.Value) -> None:
        self.ms = ms
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.entry)
        self.tctx = tctx
        self.shared = shared
        self.trap_rec = trap
        self.loops: list[LoopTarget] = []
        self.slices: dict[int, tuple[ir.Value, ir.Value]] = {}
        self.trap_exit = fn.append_basic_block("trap.exit")

    # ---- locals
    @abc.abstractmethod
    def slot(self, binding: int, ty: Scalar | ArrayTy) -> ir.Value:
        """A pointer to the storage of local `binding` (created on first use)."""

    def temp(self, t: ir.Type, name: str = "tmp") -> ir.Value:
        """An entry-block alloca, in the target's private address space, for a value that
        lives within one thread's evaluation."""
        with self.b.goto_entry_block():
            self.b.position_at_start(self.entry)
            slot = private_alloca(self.b, t, name, self.ms.target.addrspace_private)
        return slot

    # ---- control flow
    @abc.abstractmethod
    def emit_return(self, value: ir.Value | None) -> None:
        """Leave the function body for this thread (the builder's block gets a terminator)."""

    def dead(self) -> None:
        """Continue in a fresh unreachable block after a terminator."""
        self.b.position_at_end(self.fn.append_basic_block("dead"))

    def trap_if(self, cond: ir.Value, kind: TrapKind, span: Span) -> None:
        """If `cond`, record the trap for this thread and leave through `trap_exit`."""
        trap_bb = self.fn.append_basic_block(f"trap.{kind}")
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(cond, trap_bb, cont)
        self.b.position_at_end(trap_bb)
        assert self.ms.trap_fn is not None
        self.b.call(self.ms.trap_fn, [self.trap_rec, self.tctx,
                                      ir.Constant(I32, TRAP_CODES[kind]),
                                      ir.Constant(I32, self.ms.location_id(span))])
        self.b.branch(self.trap_exit)
        self.b.position_at_end(cont)

    def propagate_trap(self) -> None:
        """After a call to a helper: leave too if it trapped (only where a trap returns)."""
        if not self.ms.target.trap_returns:
            return
        code = self.b.load(self.trap_rec, typ=I32)
        self.trap_if_code(self.b.icmp_unsigned("!=", code, ir.Constant(I32, 0)))

    def trap_if_code(self, cond: ir.Value) -> None:
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(cond, self.trap_exit, cont)
        self.b.position_at_end(cont)

    def tctx_word(self, index: int) -> ir.Value:
        """Word `index` of the thread context (`TCTX_*`), as the target provides it."""
        return self.ms.target.thread_word(self, index)

    def finish(self) -> None:
        """Terminate every open block: the trap exit and unreachable leftovers."""
        for block in self.fn.blocks:
            if not block.is_terminated:
                self.b.position_at_end(block)
                if block is self.trap_exit:
                    self._emit_trap_exit()
                else:
                    self.b.unreachable()

    @abc.abstractmethod
    def _emit_trap_exit(self) -> None: ...


def shared_ptr(st: FnState, name: str) -> tuple[ir.Value, ArrayTy]:
    """The address of shared array `name`: its global (SIMT targets) or its offset in the
    block's shared buffer `st.shared` (host). SIMT functions get a null `st.shared`, and their
    `shared_offsets` are empty, so a global missing there fails here instead of indexing
    null."""
    if name in st.ms.shared_globals:
        return st.ms.shared_globals[name]
    if name not in st.ms.shared_offsets:
        raise AssertionError(f"shared array {name} has neither a global nor an offset")
    offset, ty = st.ms.shared_offsets[name]
    return st.b.gep(st.shared, [ir.Constant(I64, offset)], source_etype=ir.IntType(8)), ty


__all__ = ["PTR", "BranchTarget", "FnState", "LoopTarget", "LowerError", "ModuleState",
           "storage_type"]
