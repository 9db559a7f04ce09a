"""Target hooks: what the shared lowering asks of a target and never decides itself.

The lowering of expressions and statements is target-neutral. A target says where things live
(address spaces: slices in `addrspace_global`, shared arrays in `addrspace_shared`, locals
and temporaries in `addrspace_private`), how a thread learns its ids (`thread_word`), what
`sync_threads()` is (`emit_barrier`), what a trap does (`define_trap_fn`, `trap_returns`),
which attributes every function carries (`decorate_function`) and what the module needs
(`finish_module`). The host target runs every work-item of a block inside the generated code,
one after another (`rgpu_fuzz.lower.host`); the amdgcn (`rgpu_fuzz.lower.amdgcn`) and nvptx
(`rgpu_fuzz.lower.nvptx`) targets are SIMT: every work-item runs the kernel body.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llvmlite.binding as llvm

from rgpu_fuzz.lower.context import LowerError
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.values import I32, PTR
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.context import FnState, ModuleState


class TargetHooks(abc.ABC):
    """What a target contributes to lowering."""

    name: str

    @property
    @abc.abstractmethod
    def triple(self) -> str:
        """The LLVM target triple written into the module."""

    @property
    def data_layout(self) -> str:
        """The module's data layout ("" leaves LLVM's default)."""
        return ""

    addrspace_global: int = 0
    addrspace_shared: int = 0
    addrspace_private: int = 0
    atomic_scope: str | None = None
    """The `syncscope` of every atomic (None: none written, LLVM's system scope;
    lower/atomics.py)."""
    atomic_flat: bool = False
    """Atomics address their element through the generic address space (lower/atomics.py)."""

    @property
    def global_ptr(self) -> ir.PointerType:
        """The type of a slice's data pointer and of the trap record's address."""
        return ir.PointerType(addrspace=self.addrspace_global)

    @property
    @abc.abstractmethod
    def serialises_threads(self) -> bool:
        """True when the threads of a block run one after another inside the generated code,
        so barriers become region boundaries instead of instructions."""

    trap_returns: bool = True
    """Whether a trapping thread returns to its caller (which then checks the record) or
    ends there (the GPU: `llvm.trap`)."""

    @abc.abstractmethod
    def thread_word(self, st: FnState, index: int) -> ir.Value:
        """The i32 value of thread-context word `index` (`context.TCTX_*` + axis)."""

    @abc.abstractmethod
    def emit_barrier(self, st: FnState) -> None:
        """`sync_threads()` in straight-line code (LowerError where it cannot be)."""

    @abc.abstractmethod
    def define_trap_fn(self, ms: ModuleState) -> ir.Function:
        """`rgpu.trap(record, tctx, code, location)`: fill the trap record."""

    kernel_calling_convention: str = ""
    """The SIMT kernel entry's calling convention (`amdgpu_kernel`, `ptx_kernel`)."""

    def decorate_kernel(self, fn: ir.Function) -> None:
        """Attributes only the SIMT kernel entry gets (none by default)."""
        return None

    @property
    def lanes(self) -> int:
        """The wave size the lowering assumes (`wave_size()`, ballot width, ladders)."""
        return 32

    def wave_op(self, st: FnState, op: str, args: list[ir.Value],
                types: list[Scalar]) -> ir.Value:
        """A wave operation (`rgpu_fuzz.lower.waves`) with its lowered arguments and their
        types; LowerError where the target has none."""
        raise LowerError(f"wave operation {op}")

    def decorate_function(self, fn: ir.Function) -> None:
        """Attributes every function of the module gets (none by default)."""
        return None

    def finish_module(self, module: ir.Module) -> None:
        """Module-level facts (flags, metadata) added once everything is lowered."""
        return None


@dataclass(frozen=True)
class HostTarget(TargetHooks):
    """The machine running this process, for MCJIT.

    Kernel ABI (all pointers in address space 0):
    `void @<symbol>(ptr args, ptr launch, ptr shared, ptr frames, ptr trap)` where
    * `args` is an array of 64-bit slots, one per flattened argument
      (`rgpu_fuzz.model.kernel_abi.flatten`): a slice takes two (data address, length), a
      scalar one (its bits, zero-extended, little-endian);
    * `launch` is `i32[6]`: grid x, y, z then block x, y, z (`Launch.dims`);
    * `shared` is `shared_bytes` of scratch reused by every block (uninitialised by contract);
    * `frames` is `frame_bytes` per thread of a block, the kernel's locals when it has
      barriers;
    * `trap` is the trap record (`kernel_abi`): code (0 = none), location id, block x, y, z,
      thread x, y, z.
    """

    name: str = "host"
    wave_size: int = 64
    """How many consecutive threads of a block form a wave (`lower.host_waves`)."""

    @property
    def triple(self) -> str:
        return llvm.get_process_triple()

    @property
    def lanes(self) -> int:
        return self.wave_size

    def wave_op(self, st: FnState, op: str, args: list[ir.Value],
                types: list[Scalar]) -> ir.Value:
        from rgpu_fuzz.lower.host_waves import lane_query

        return lane_query(self, st, op)

    @property
    def serialises_threads(self) -> bool:
        return True

    def thread_word(self, st: FnState, index: int) -> ir.Value:
        return st.b.load(st.b.gep(st.tctx, [ir.Constant(I32, index)], source_etype=I32),
                         typ=I32)

    def emit_barrier(self, st: FnState) -> None:
        # the host lowers barriers structurally (`host.py`); one here is misplaced
        raise LowerError("sync_threads in expression position")

    def define_trap_fn(self, ms: ModuleState) -> ir.Function:
        from rgpu_fuzz.lower.host import host_trap_fn

        return host_trap_fn(ms.module)


__all__ = ["PTR", "HostTarget", "TargetHooks"]
