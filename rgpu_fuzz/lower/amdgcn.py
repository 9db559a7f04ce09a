"""The amdgcn target: SIMT lowering for `amdgcn-amd-amdhsa` (docs/design.md §1, §3).

Every work-item runs the kernel body (no thread loops, no regions): the expression and
statement lowering is the host's (`exprs`, `stmts`), only the hooks of `AmdgcnTarget` and the
kernel entry (`lower_simt_entry`) differ.

FIXED KERNEL ABI (the code-object, simulator, HIP and rustc-amdgpu work code against it):

* Symbol: the entry's name. Calling convention `amdgpu_kernel`. Module flag
  `amdhsa_code_object_version` = 500 (LLVM 22 would otherwise emit v6).
* IR parameters, named so the code object's `.args` metadata carries the names, in the kernel
  signature's order (`rgpu_fuzz.model.kernel_abi.flatten`): a slice `a` is
  `ptr addrspace(1) noalias %a` then `i64 %a.len` (element count); a scalar is passed by
  value with its IR type (`bool` as `i1`); last, `ptr addrspace(1) %rgpu.trap`, the address
  of the trap record: 8 × u32 {code (0 = none; `kernel_abi.TRAP_CODES`), location id, block
  x, y, z, thread x, y, z}, zero-initialised by the executor.
* A trap: the first trapping lane wins an atomic compare-exchange of the code word (0 →
  code, system scope), writes location, block and thread ids, makes its stores visible
  (release fence, system scope) and calls `llvm.trap`; a lane that loses the exchange calls
  `llvm.trap` without writing. Location ids index `LoweredKernel.locations` (source line,
  column) exactly as on the host target.
* Work-item ids: `llvm.amdgcn.workitem.id.{x,y,z}`; work-group ids:
  `llvm.amdgcn.workgroup.id.{x,y,z}`.
* Block and grid sizes come from the code-object-v5 *hidden kernel arguments*, read through
  `llvm.amdgcn.implicitarg.ptr` (AMDGPUUsage, "Code Object V5 Metadata", kernel argument
  metadata map table v5: `hidden_block_count_{x,y,z}` u32 at implicit-argument offsets
  0/4/8 = `grid_dim_*()`, `hidden_group_size_{x,y,z}` u16 at 12/14/16 = `block_dim_*()`;
  LLVM's AMDGPULowerKernelAttributes uses the same offsets). Why these rather than the HSA
  dispatch packet (`llvm.amdgcn.dispatch.ptr`): v5 made the hidden arguments the way the
  compiler reads sizes (the packet holds the grid size in work-items, not blocks, and
  needs a division); the kernarg segment is filled by the loader from metadata the code
  object itself declares, so an executor (simulator or HIP) fills it from `.args` alone.
* `sync_threads()`: `fence syncscope("workgroup") release`, `llvm.amdgcn.s.barrier`,
  `fence syncscope("workgroup") acquire` (the AMDGPU memory model's barrier idiom).
* Memory: slices in `addrspace(1)` (global), `#[shared]` arrays as `addrspace(3)` globals
  (LDS; uninitialised, `undef` initialiser), locals and temporaries in `addrspace(5)` allocas
  (private/scratch). `#[inline(never)]` helpers are `noinline` functions: real calls.
* Float mode: no fast-math flags anywhere; every function asks for IEEE denormals
  explicitly (`"denormal-fp-math"="ieee,ieee"`, `"denormal-fp-math-f32"="ieee,ieee"`).
  The kernel carries `"amdgpu-flat-work-group-size"="1,1024"` (any launch the case format
  allows, `casefile.MAX_THREADS_PER_BLOCK`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.types import ArrayTy
from rgpu_fuzz.lower.amdgcn_waves import AmdgcnWaves
from rgpu_fuzz.lower.context import (
    TCTX_BDIM,
    TCTX_BID,
    TCTX_GDIM,
    TCTX_TID,
    FnState,
    LowerError,
    storage_type,
)
from rgpu_fuzz.lower.host import AllocaState
from rgpu_fuzz.lower.irapi import ir
from rgpu_fuzz.lower.stmts import BodyLowerer
from rgpu_fuzz.lower.targets import TargetHooks
from rgpu_fuzz.lower.values import (
    I16,
    I32,
    I64,
    PTR,
    VOID,
    store_scalar,
    string_attribute,
    value_type,
)
from rgpu_fuzz.lower.waves import WaveOps
from rgpu_fuzz.model.kernel_abi import LEN_SUFFIX, TRAP_PARAM
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.targets import Generation, GpuTarget, by_name

if TYPE_CHECKING:
    from rgpu_fuzz.lower.context import ModuleState

AMDHSA_TRIPLE = "amdgcn-amd-amdhsa"

DATA_LAYOUT = (
    "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32"
    "-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128"
    "-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9")
"""LLVM 22's AMDGPU data layout (`AMDGPUTargetMachine.cpp`; tests compare it with the
target machine's). The module must carry it: llvmlite emits with the module's layout."""

CODE_OBJECT_VERSION = 500
FLAT_WORK_GROUP_SIZE = "1,1024"

# AMDGPUUsage "Code Object V5 Metadata": implicit-argument offsets (bytes) and widths
_HIDDEN_BLOCK_COUNT = 0   # hidden_block_count_{x,y,z}: u32 at 0, 4, 8
_HIDDEN_GROUP_SIZE = 12   # hidden_group_size_{x,y,z}:  u16 at 12, 14, 16

_ADDRSPACE_CONSTANT = 4   # AMDGPUUsage "Address Spaces": the implicit-argument pointer's


@dataclass(frozen=True)
class AmdgcnTarget(TargetHooks):
    """`amdgcn-amd-amdhsa` for one processor (`gfx942`, `gfx90a`, `gfx1100`); see the
    module docstring for the kernel ABI. The processor does not change the IR (it is
    chosen again when the target machine is made); it is kept for naming."""

    cpu: str = "gfx942"
    wave_size: int = 0
    """The wave size the code is built for; 0: the processor's default (`rgpu_fuzz.targets`).
    gfx1100 with `+wavefrontsize64` is 64."""
    waveops: WaveOps = WaveOps.INTRINSIC
    """How reductions and scans are lowered (`rgpu_fuzz.lower.amdgcn_waves`)."""
    name: str = "amdgcn"
    addrspace_global: int = 1
    addrspace_shared: int = 3
    addrspace_private: int = 5
    trap_returns: bool = False
    atomic_scope: str | None = "agent"
    """The `syncscope` of every atomic of the kernel (lower/atomics.py `AMDGPU_SCOPES`);
    agent is what HIP's device-scope atomics use."""
    atomic_flat: bool = False

    @property
    def triple(self) -> str:
        return AMDHSA_TRIPLE

    @property
    def data_layout(self) -> str:
        return DATA_LAYOUT

    @property
    def serialises_threads(self) -> bool:
        return False

    def thread_word(self, st: FnState, index: int) -> ir.Value:
        kind, axis = _WORD_KIND[index - index % 3], "xyz"[index % 3]
        b = st.b
        if kind in ("workitem", "workgroup"):
            fn = st.ms.intrinsics.get(f"llvm.amdgcn.{kind}.id.{axis}", I32, [])
            return b.call(fn, [])
        implicit = st.ms.intrinsics.get("llvm.amdgcn.implicitarg.ptr",
                                        ir.PointerType(addrspace=_ADDRSPACE_CONSTANT), [])
        base = b.call(implicit, [])
        if kind == "block_count":
            at = b.gep(base, [ir.Constant(I64, _HIDDEN_BLOCK_COUNT + 4 * "xyz".index(axis))],
                       source_etype=ir.IntType(8))
            return b.load(at, typ=I32)
        at = b.gep(base, [ir.Constant(I64, _HIDDEN_GROUP_SIZE + 2 * "xyz".index(axis))],
                   source_etype=ir.IntType(8))
        return b.zext(b.load(at, typ=I16), I32)

    def _row(self) -> GpuTarget:
        row = by_name(self.cpu)
        if row is None:
            raise LowerError(f"wave operations on unknown processor {self.cpu}")
        return row

    @property
    def lanes(self) -> int:
        return self.wave_size or self._row().wave_size

    def wave_op(self, st: FnState, op: str, args: list[ir.Value],
                types: list[Scalar]) -> ir.Value:
        row = self._row()
        gfx9 = not row.is_gfx10_plus  # GFX9 has DPP row broadcasts
        # GFX10/GFX11 wave64: ds_bpermute reaches a 32-lane half (amdgcn_waves docstring)
        halves = self.lanes == 64 and row.generation in (Generation.GFX10, Generation.GFX11)
        waves = AmdgcnWaves(st, self.lanes, self.waveops, gfx9, halves,
                            permlane64=row.generation is not Generation.GFX10)
        return waves.op(op, args, types)

    def emit_barrier(self, st: FnState) -> None:
        st.b.fence("release", "workgroup")
        st.b.call(st.ms.intrinsics.get("llvm.amdgcn.s.barrier", VOID, []), [])
        st.b.fence("acquire", "workgroup")

    kernel_calling_convention: str = "amdgpu_kernel"

    def define_trap_fn(self, ms: ModuleState) -> ir.Function:
        return gpu_trap_fn(ms, self.global_ptr, "llvm.amdgcn.workgroup.id.{}",
                           "llvm.amdgcn.workitem.id.{}")

    def decorate_kernel(self, fn: ir.Function) -> None:
        string_attribute(fn, "amdgpu-flat-work-group-size", FLAT_WORK_GROUP_SIZE)

    def decorate_function(self, fn: ir.Function) -> None:
        string_attribute(fn, "denormal-fp-math", "ieee,ieee")
        string_attribute(fn, "denormal-fp-math-f32", "ieee,ieee")

    def finish_module(self, module: ir.Module) -> None:
        module.add_named_metadata("llvm.module.flags", [
            ir.Constant(I32, 1), "amdhsa_code_object_version",
            ir.Constant(I32, CODE_OBJECT_VERSION)])


_WORD_KIND = {TCTX_TID: "workitem", TCTX_BID: "workgroup", TCTX_BDIM: "group_size",
              TCTX_GDIM: "block_count"}


def gpu_trap_fn(ms: ModuleState, global_ptr: ir.PointerType, block_id: str,
                thread_id: str) -> ir.Function:
    """`rgpu.trap(record, tctx, code, loc)`: first lane wins the record, then `llvm.trap`.
    `block_id`/`thread_id` name the target's i32 id intrinsics, `{}` standing for the axis."""
    fn = ir.Function(ms.module, ir.FunctionType(VOID, [global_ptr, PTR, I32, I32]),
                     name="rgpu.trap")
    fn.linkage = "internal"
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    fn.attributes.add("noreturn")
    rec, _tctx, code, loc = fn.args
    entry = fn.append_basic_block("entry")
    write = fn.append_basic_block("write")
    done = fn.append_basic_block("trap")
    b = ir.IRBuilder(entry)
    pair = b.cmpxchg(rec, ir.Constant(I32, 0), code, "monotonic", "monotonic")
    b.cbranch(b.extract_value(pair, 1), write, done)
    b.position_at_end(write)

    def put(i: int, v: ir.Value) -> None:
        b.store(v, b.gep(rec, [ir.Constant(I32, i)], source_etype=I32))

    put(1, loc)
    for i, axis in enumerate("xyz"):
        put(2 + i, b.call(ms.intrinsics.get(block_id.format(axis), I32, []), []))
        put(5 + i, b.call(ms.intrinsics.get(thread_id.format(axis), I32, []), []))
    b.fence("release")
    b.branch(done)
    b.position_at_end(done)
    b.call(ms.intrinsics.get("llvm.trap", VOID, []), [])
    b.unreachable()
    return fn


class SimtEntryState(AllocaState):
    """The kernel body as one work-item runs it: `return` and a trap both end the kernel."""

    def emit_return(self, value: ir.Value | None) -> None:
        self.b.ret_void()

    def _emit_trap_exit(self) -> None:
        self.b.ret_void()


def declare_shared_globals(ms: ModuleState, shared: Mapping[str, ArrayTy]) -> None:
    """One `addrspace(3)` global per `#[shared]` static. They must exist before any function
    body is lowered: a helper reaches shared memory through them exactly as the kernel does
    (a SIMT helper's shared-memory base argument is null; when the globals were made only
    with the kernel entry, after the helpers, a helper indexed that null base and stored
    through it: `sim-oob-access` at O0, the store deleted at O3)."""
    target = ms.target
    for name in sorted(shared):
        ty = shared[name]
        var = ir.GlobalVariable(ms.module, storage_type(ty), name=f"rgpu.shared.{name}",
                                addrspace=target.addrspace_shared)
        var.linkage = "internal"
        var.initializer = ir.Constant(storage_type(ty), ir.Undefined)
        var.align = 16
        var.type = ir.PointerType(addrspace=target.addrspace_shared)  # opaque, not `T*`
        ms.shared_globals[name] = (var, ty)


def lower_simt_entry(ms: ModuleState, kernel: ast.Fn) -> str:
    """Define the SIMT kernel entry (ABI in the module docstring; the calling convention and
    kernel attributes are the target's); its symbol. The shared globals are declared
    already (`declare_shared_globals`)."""
    target = ms.target
    types: list[ir.Type] = []
    names: list[str] = []
    for p in kernel.params:
        if isinstance(p.ty, ast.SliceType):
            types += [target.global_ptr, I64]
            names += [p.name, p.name + LEN_SUFFIX]
        else:
            assert isinstance(p.ty, ast.ScalarType), p
            types.append(value_type(p.ty.scalar))
            names.append(p.name)
    types.append(target.global_ptr)
    names.append(TRAP_PARAM)
    fn = ir.Function(ms.module, ir.FunctionType(VOID, types), name=kernel.name)
    fn.calling_convention = target.kernel_calling_convention
    target.decorate_kernel(fn)
    for arg, name in zip(fn.args, names, strict=True):
        arg.name = name
    null = ir.Constant(PTR, None)
    st = SimtEntryState(ms, fn, null, null, fn.args[-1])
    at = 0
    for p in kernel.params:
        assert p.binding is not None, p
        if isinstance(p.ty, ast.SliceType):
            fn.args[at].add_attribute("noalias")
            st.slices[p.binding] = (fn.args[at], fn.args[at + 1])
            at += 2
        else:
            assert isinstance(p.ty, ast.ScalarType)
            store_scalar(st.b, fn.args[at], st.slot(p.binding, p.ty.scalar), p.ty.scalar)
            at += 1
    BodyLowerer(st).block_value(kernel.body)
    if not st.b.block.is_terminated:
        st.b.ret_void()
    st.finish()
    return kernel.name


__all__ = ["AMDHSA_TRIPLE", "DATA_LAYOUT", "AmdgcnTarget", "declare_shared_globals",
           "gpu_trap_fn", "lower_simt_entry"]
