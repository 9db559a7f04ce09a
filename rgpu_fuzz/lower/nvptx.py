"""The nvptx target: the SIMT lowering for `nvptx64-nvidia-cuda`.

Everything but these hooks is shared with the amdgcn target (`rgpu_fuzz.lower.amdgcn`): the
expression and statement lowering, the kernel entry (`lower_simt_entry`) and the trap path
(`gpu_trap_fn`). The kernel ABI is amdgcn's (its module docstring), with these differences:

* Calling convention `ptx_kernel` (LLVM ≥ 20; older LLVM marked kernels with
  `!nvvm.annotations`). The PTX entry's parameters are the IR parameters in order
  (`kernel_abi.flatten`, the trap record's pointer last), each 8 bytes wide except scalars,
  which keep their IR width (`bool` as `.u8` per the PTX ISA's `.param` rules).
* Ids and sizes are PTX special registers (PTX ISA §10 "Special Registers"):
  `llvm.nvvm.read.ptx.sreg.tid.{x,y,z}` (thread in block), `ctaid` (block), `ntid` (block
  size), `nctaid` (grid size). No hidden arguments.
* `sync_threads()` is `llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)` (PTX
  `barrier.sync.aligned 0`, printed as `bar.sync 0`): LLVM 22's name; `llvm.nvvm.barrier0`
  is still accepted but auto-upgraded to it. `bar.sync` orders shared and global memory
  among the block's threads (PTX ISA "Memory Consistency Model": a barrier is a
  morally-strong fence at CTA scope), so no explicit fences surround it.
* Memory: slices in `addrspace(1)` (`.global`), `#[shared]` arrays as `addrspace(3)`
  globals (`.shared`, no initialiser), locals and temporaries as generic (`addrspace(0)`)
  allocas: LLVM's NVPTX data layout has no alloca address space and its `NVPTXLowerAlloca`
  pass moves them to `.local` itself.
* A trap: the record is written exactly as on amdgcn (first thread wins a system-scope
  compare-exchange, release fence at system scope), then `llvm.trap` (PTX `trap;`), which
  ends the kernel with an error that leaves the CUDA context unusable: the executor must
  place the record where it survives that (host memory mapped into the device).
* Float mode: no fast-math flags; every function carries
  `"denormal-fp-math-f32"="ieee,ieee"` (and the f64 default spelled out), which LLVM's NVPTX
  back end reads to choose the non-`.ftz` forms of f32 instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rgpu_fuzz.lower.amdgcn import gpu_trap_fn
from rgpu_fuzz.lower.context import TCTX_BDIM, TCTX_BID, TCTX_GDIM, TCTX_TID, FnState
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.nvptx_waves import WARP, NvptxWaves
from rgpu_fuzz.lower.targets import TargetHooks
from rgpu_fuzz.lower.values import I32, VOID, string_attribute
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.scalars import Scalar

if TYPE_CHECKING:
    from rgpu_fuzz.lower.context import ModuleState

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"

DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
"""LLVM 22's NVPTX64 data layout (`NVPTXTargetMachine.cpp`, 64-bit pointers, generic shared
pointers; tests compare it with the target machine's)."""

PTX_SM_DEFAULT = "sm_90"
PTX_SMS = ("sm_90", "sm_80", "sm_70")
"""The PTX targets the pipeline offers (`nvptx-gpu:<sm>`); the IR does not depend on them."""

BARRIER = "llvm.nvvm.barrier.cta.sync.aligned.all"
_SREG = "llvm.nvvm.read.ptx.sreg.{kind}.{axis}"
_WORD_KIND = {TCTX_TID: "tid", TCTX_BID: "ctaid", TCTX_BDIM: "ntid", TCTX_GDIM: "nctaid"}


@dataclass(frozen=True)
class NvptxTarget(TargetHooks):
    """`nvptx64-nvidia-cuda` for one SM (`sm_90`, ...); the SM is chosen again when the
    target machine is made and is kept here for naming."""

    cpu: str = PTX_SM_DEFAULT
    waveops: WaveOps = WaveOps.INTRINSIC
    """How reductions are lowered (`rgpu_fuzz.lower.nvptx_waves`)."""
    name: str = "nvptx"
    addrspace_global: int = 1
    addrspace_shared: int = 3
    addrspace_private: int = 0
    trap_returns: bool = False
    kernel_calling_convention: str = "ptx_kernel"

    @property
    def triple(self) -> str:
        return NVPTX_TRIPLE

    @property
    def data_layout(self) -> str:
        return DATA_LAYOUT

    @property
    def serialises_threads(self) -> bool:
        return False

    def thread_word(self, st: FnState, index: int) -> ir.Value:
        kind, axis = _WORD_KIND[index - index % 3], "xyz"[index % 3]
        fn = st.ms.intrinsics.get(_SREG.format(kind=kind, axis=axis), I32, [])
        return st.b.call(fn, [])

    @property
    def lanes(self) -> int:
        return WARP

    def wave_op(self, st: FnState, op: str, args: list[ir.Value],
                types: list[Scalar]) -> ir.Value:
        sm = int(self.cpu.removeprefix("sm_").rstrip("a"))
        return NvptxWaves(st, sm, self.waveops).op(op, args, types)

    def emit_barrier(self, st: FnState) -> None:
        st.b.call(st.ms.intrinsics.get(BARRIER, VOID, [I32]), [ir.Constant(I32, 0)])

    def define_trap_fn(self, ms: ModuleState) -> ir.Function:
        return gpu_trap_fn(ms, self.global_ptr, _SREG.format(kind="ctaid", axis="{}"),
                           _SREG.format(kind="tid", axis="{}"))

    def decorate_function(self, fn: ir.Function) -> None:
        string_attribute(fn, "denormal-fp-math", "ieee,ieee")
        string_attribute(fn, "denormal-fp-math-f32", "ieee,ieee")


__all__ = ["BARRIER", "DATA_LAYOUT", "NVPTX_TRIPLE", "PTX_SMS", "PTX_SM_DEFAULT",
           "NvptxTarget"]
