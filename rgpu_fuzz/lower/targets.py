"""Target hooks: what the shared lowering asks of a target and never decides itself.

The lowering of expressions and statements is target-neutral. A target says where things live
(address spaces), how a thread learns its ids, and how a kernel is entered. The host target
runs every work-item of a block inside the generated code, one after another (see
`rgpu_fuzz.lower.host`); a GPU target (amdgcn, later) reads ids from intrinsics and lowers
`sync_threads` to a real barrier instead.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import llvmlite.binding as llvm


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

    @property
    @abc.abstractmethod
    def serialises_threads(self) -> bool:
        """True when the threads of a block run one after another inside the generated code,
        so barriers become region boundaries instead of instructions."""


@dataclass(frozen=True)
class HostTarget(TargetHooks):
    """The machine running this process, for MCJIT.

    Kernel ABI (all pointers in address space 0):
    `void @<symbol>(ptr args, ptr launch, ptr shared, ptr frames, ptr trap)` where
    * `args` is an array of 64-bit slots: a slice takes two (data address, length), a scalar
      one (its bits, zero-extended, little-endian);
    * `launch` is `i32[6]`: grid x, y, z then block x, y, z;
    * `shared` is `shared_bytes` of scratch reused by every block (uninitialised by contract);
    * `frames` is `frame_bytes` per thread of a block, the kernel's locals when it has
      barriers;
    * `trap` is `i32[8]`: code (0 = none), location id, block x, y, z, thread x, y, z.
    """

    name: str = "host"

    @property
    def triple(self) -> str:
        return llvm.get_process_triple()

    @property
    def serialises_threads(self) -> bool:
        return True
