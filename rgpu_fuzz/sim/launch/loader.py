"""The launch as the ROCm loader and command processor set it up: the code object's kernel
descriptor and metadata → the dispatch packet, the kernarg segment's place in memory, and
each wave's initial registers.

Everything comes from the descriptor and the target's properties (AMDGPUUsage "Initial
Kernel Execution State", "Kernel Descriptor", "Processors"): user SGPRs in the order the
descriptor enables them (`KernelDescriptor.user_sgprs`, then preloaded kernargs), system
SGPRs after USER_SGPR_COUNT (work-group ids X, Y, Z, work-group info, private segment
wavefront offset — the last only without architected flat scratch), work-item ids in
VGPRs (packed `x | y << 10 | z << 20` in v0 where the target packs them, else v0, v1, v2),
as many id VGPRs as ENABLE_VGPR_WORKITEM_ID asks for. Nothing else is defined at entry:
every other register reads as undefined to the definedness checks.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Callable, Sequence
from collections.abc import Mapping as MappingOf
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np

from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.launch.image import (
    LoadedImage,
    load_code_object,
    relocated,
)
from rgpu_fuzz.sim.state.memory import AddressSpace, Mapping, mapping
from rgpu_fuzz.sim.state.wave import EXEC, FLAT_SCRATCH, FULL, Wave
from rgpu_fuzz.targets import PIPELINE_TARGETS, by_name

DISPATCH_PACKET_SIZE = 64
HSA_PACKET_TYPE_KERNEL_DISPATCH = 2
KERNARG_POOL_GRANULE = 4096
"""The kernarg segment starts a 4 KiB page and is mapped through its end, bytes past
`kernarg_segment_size` undefined. HIP's runtime (clr `VirtualGPU::allocKernArg`)
sub-allocates each dispatch's segment from a per-queue kernarg pool (AMDGPUUsage "Kernel
Dispatch" step 3: the memory region with the kernarg property), aligned and packed one after
another, so the bytes after a segment are mapped pool memory holding other dispatches'
arguments; GPU virtual memory maps whole pages. LLVM relies on it: a uniform 3-dword
kernarg load is widened to `s_load_dwordx4` (AMDGPUTargetLowering::WidenOrSplitVectorLoad:
"widen from vec3 to vec4 when the load is at least 8-byte aligned"; gfx9 has no
s_load_dwordx3), reading up to 4 bytes past the segment. Reading them is no fault; using
what was read is `sim-uninit-read` (the values belong to no argument)."""
HIP_STACK_SIZE = 1024
HIP_STACK_SIZE_MAX = 16 * 1024
"""A kernel whose stack LLVM cannot bound (recursion, indirect calls, dynamic allocas:
descriptor bit USES_DYNAMIC_STACK, metadata `.uses_dynamic_stack`) gets more than its
private_segment_fixed_size: HIP's runtime sets the dispatch packet's private_segment_size
to max(device stack size, fixed size), at most 16 KiB (clr `rocvirtual.cpp`
submitKernelInternal, `usedStackSize_ & 1`); the device stack size is 1024 bytes per
work-item unless hipDeviceSetLimit(hipLimitStackSize) changes it (clr `device.hpp`
`stack_size_{1024}`; OpenCL uses 16 KiB)."""


def private_segment_size(kd: Any) -> int:
    """Scratch bytes per work-item the runtime gives a launch of the kernel with descriptor
    `kd` (and puts in the dispatch packet): the fixed size, or for a dynamic stack the HIP
    default stack size (HIP_STACK_SIZE)."""
    fixed = int(kd.private_segment_fixed_size)
    if kd.has_field("USES_DYNAMIC_STACK") and kd.field("USES_DYNAMIC_STACK"):
        return min(max(HIP_STACK_SIZE, fixed), HIP_STACK_SIZE_MAX)
    return fixed


@dataclass(frozen=True, slots=True)
class TargetConfig:
    name: str
    wave_size: int
    packed_workitem_ids: bool
    architected_flat_scratch: bool
    agprs: bool
    vmcnt: tuple[tuple[int, int], ...]
    lgkmcnt: tuple[tuple[int, int], ...]
    true16: bool = False
    stores_in_vmcnt: bool = True
    flat_scratch_sgprs: bool = False
    """FLAT_SCRATCH is the SGPR pair s[102:103] (GFX9: CDNA3 ISA "Scalar registers"), which
    architected flat scratch sets at entry; on GFX11 it is a hardware register the scratch
    instructions use and s102, s103 are ordinary SGPRs nothing initialises."""
    architected_sgprs: bool = False
    """GFX12: the work-group ids are in TTMP9 and TTMP7 at entry (`GpuIsa.architected_sgprs`)."""
    keeps_high16: bool = False
    """GFX10+: a 16-bit result keeps D[31:16] (`GpuIsa.keeps_high16`)."""

    def waitcnt(self, simm16: int) -> tuple[int, int]:
        """(vmcnt, lgkmcnt) of an `s_waitcnt` immediate."""
        def read(fields: tuple[tuple[int, int], ...]) -> int:
            out, pos = 0, 0
            for lo, width in fields:
                out |= ((simm16 >> lo) & ((1 << width) - 1)) << pos
                pos += width
            return out
        return read(self.vmcnt), read(self.lgkmcnt)


@cache
def target_config(name: str) -> TargetConfig:
    """The loader's and executor's view of a target-table row (`rgpu_fuzz.targets`)."""
    target = by_name(name)
    if target is None or target.isa is None or target.name != name:
        raise KeyError(f"no simulator configuration for {name} "
                       f"(have: {', '.join(PIPELINE_TARGETS)})")
    isa = target.isa
    return TargetConfig(name, target.wave_size, isa.packed_workitem_ids,
                        isa.architected_flat_scratch, target.agprs > 0, isa.vmcnt, isa.lgkmcnt,
                        isa.true16, isa.stores_in_vmcnt,
                        isa.architected_flat_scratch and isa.tables == "cdna",
                        isa.architected_sgprs, isa.keeps_high16)


def kernel_config(cfg: TargetConfig, descriptor: Any) -> TargetConfig:
    """`cfg` with the wave size `descriptor` was compiled for: ENABLE_WAVEFRONT_SIZE32
    (KERNEL_CODE_PROPERTIES bit 10, GFX10+; AMDGPUUsage "Kernel Descriptor") clear on gfx1100
    is a wave64 kernel (`-mattr=+wavefrontsize64`), which the hardware runs 64 lanes wide.
    The same object for the same size (the engine keys its envs by identity)."""
    size = descriptor.wavefront_size
    if size == cfg.wave_size:
        return cfg
    return _resized(cfg, size)


@cache
def _resized(cfg: TargetConfig, size: int) -> TargetConfig:
    target = by_name(cfg.name)
    if target is None or size not in target.wave_sizes:
        raise SimStop(Fault(FaultKind.LOAD_FAILURE, f"a wave{size} kernel on {cfg.name}, "
                            f"whose wave sizes are {target.wave_sizes if target else ()}", 0))
    return replace(cfg, wave_size=size)


def dispatch_packet(grid: tuple[int, int, int], block: tuple[int, int, int], dims: int,
                    private_size: int, group_size: int, kernel_object: int,
                    kernarg_address: int) -> bytes:
    """hsa_kernel_dispatch_packet_t (HSA Platform System Architecture spec §2.9.6; AMDGPUUsage
    "Kernel Dispatch"): grid size in work-items, as the packet carries it."""
    return struct.pack(
        "<HHHHHHIIIIIQQQQ",
        HSA_PACKET_TYPE_KERNEL_DISPATCH, dims, block[0], block[1], block[2], 0,
        grid[0] * block[0], grid[1] * block[1], grid[2] * block[2],
        private_size, group_size, kernel_object, kernarg_address, 0, 0)


KernargBuilder = Callable[[Callable[[str], int]], Any]
"""Packs the kernarg segment once the launch's buffers have addresses: given
`address_of(buffer name)`, a `rgpu_fuzz.codeobj.kernarg.KernargSegment` (the code-object
launch path: `codeobj.launch.kernel_arguments` + `pack_launch`), or anything else — a
`CompileCrash` — when the arguments do not fit the kernel's metadata."""


@dataclass(frozen=True, slots=True)
class Launched:
    """The launch's memory as the runtime leaves it before the first wave: buffers, code
    object, kernarg segment, dispatch packet; and what the waves' SGPRs point at."""

    buffers: dict[str, Mapping]
    image: LoadedImage
    entry: EntryState


def set_up_launch(space: AddressSpace, co: Any, kernel: Any, grid: tuple[int, int, int],
                  block: tuple[int, int, int], args: Sequence[Any] | KernargBuilder,
                  buffers: MappingOf[str, bytes], scratch_base: int, *,
                  group_size: int | None = None) -> Launched:
    """Map `buffers`, load `co`, pack the kernarg segment (from `args`: a `KernargBuilder`,
    or a list of `rgpu_fuzz.sim.launch.engine.Arg` packed by `codeobj.kernarg.pack_kernargs`),
    map it with a queue and the dispatch packet (AMDGPUUsage "Kernel Dispatch"). A kernarg
    segment that does not fit the metadata stops the launch with `kernarg-mismatch`.
    `group_size`: the packet's group segment size (default the kernel's fixed size; a launch
    with dynamic group memory adds it).

    Every address depends only on the code object, the kernel, the launch's shape and the
    buffers' names and sizes (`AddressSpace.map` places by size), so a launch like an
    earlier one into an empty space takes the places that one found (`_Layout`): it copies
    its buffers and packs its kernarg segment, and places, relocates and builds nothing."""
    group = kernel.descriptor.group_segment_fixed_size if group_size is None else group_size
    key = None
    if not space.mappings and all(isinstance(d, bytes) for d in buffers.values()):
        key = (id(co), id(kernel), grid, block, group, scratch_base, tuple(buffers),
               tuple(len(d) for d in buffers.values()))
        held = _LAYOUTS.get(key)
        if held is not None and held.co is co and held.kernel is kernel:
            _LAYOUTS.move_to_end(key)
            got = _replay(held, space, kernel, grid, block, args, buffers, scratch_base)
            if got is not None:
                return got
    launched, seg = _set_up(space, co, kernel, grid, block, args, buffers, scratch_base, group)
    if key is not None:
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            _LAYOUTS.popitem(last=False)
        _LAYOUTS[key] = _recorded(space, co, kernel, launched, seg)
    return launched


def _set_up(space: AddressSpace, co: Any, kernel: Any, grid: tuple[int, int, int],
            block: tuple[int, int, int], args: Sequence[Any] | KernargBuilder,
            buffers: MappingOf[str, bytes], scratch_base: int,
            group_size: int) -> tuple[Launched, Any]:
    """`set_up_launch` placing every mapping; also the kernarg segment."""
    mapped = {name: space.map(name, data) for name, data in buffers.items()}
    image = load_code_object(space, co)
    seg = _kernargs(kernel, grid, block, args, lambda name: mapped[name].base)
    plan = entry_plan(kernel.descriptor)
    karg = space.map("kernarg segment", seg.data, align=max(seg.alignment, KERNARG_POOL_GRANULE),
                     pad_to=KERNARG_POOL_GRANULE)
    queue = space.map("queue", bytes(_QUEUE_SIZE))
    packet = dispatch_packet(grid, block, _grid_dims(grid, block), plan.private_size,
                             group_size, image.base + kernel.descriptor_symbol.value, karg.base)
    packet_map = space.map("dispatch packet", packet)
    st = EntryState(packet_map.base, queue.base, karg.base, 1, scratch_base, plan.private_size,
                    seg.data, plan.preload_offset)
    return Launched(mapped, image, st), seg


_TTMP7, _TTMP9 = 108 + 7, 108 + 9   # scalar operand codes of ttmp7, ttmp9 (TTMPs 108-123)
_QUEUE_SIZE = 256


def _grid_dims(grid: tuple[int, int, int], block: tuple[int, int, int]) -> int:
    from rgpu_fuzz.codeobj.kernarg import Dispatch

    return Dispatch(grid, block).grid_dims


def _kernargs(kernel: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
              args: Sequence[Any] | KernargBuilder, address_of: Callable[[str], int]) -> Any:
    """The kernarg segment of the launch, buffer `name` at `address_of(name)`; a segment
    that does not fit the metadata stops the launch with `kernarg-mismatch`."""
    from rgpu_fuzz.codeobj.kernarg import (
        ArgValue,
        Dispatch,
        KernargMismatch,
        KernargSegment,
        pack_kernargs,
    )

    if callable(args):
        seg = args(address_of)
        if not isinstance(seg, KernargSegment):
            raise SimStop(Fault(FaultKind.KERNARG_MISMATCH, getattr(seg, "log", str(seg))))
        return seg
    values = [ArgValue.pointer(address_of(a.buffer), a.buffer) if a.buffer is not None
              else ArgValue.raw(a.data) for a in args]
    packed = pack_kernargs(kernel.metadata, values, Dispatch(grid, block))
    if isinstance(packed, KernargMismatch):
        raise SimStop(Fault(FaultKind.KERNARG_MISMATCH, packed.detail))
    return packed


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where `_set_up` placed everything for one code object, kernel, launch shape and
    buffer names and sizes (the objects held, so that their ids, in the key, are not reused
    while the entry lives). `order`: the mappings by base address, as indices into the list
    a launch makes — its buffers in order, the code object's segments, the kernarg segment,
    the queue, the dispatch packet."""

    co: Any
    kernel: Any
    buffers: tuple[tuple[str, int], ...]
    """Each buffer's name and base."""
    image_base: int
    kernarg: tuple[int, int, int]
    """The kernarg segment's size, alignment and base."""
    queue_base: int
    packet: bytes
    packet_base: int
    order: tuple[int, ...]
    next_free: int
    private_size: int
    preload_offset: int


_LAYOUTS: OrderedDict[tuple[Any, ...], _Layout] = OrderedDict()
_LAYOUTS_KEPT = 256
"""The layouts of the launches made last, least recently used dropped first; a layout holds
its code object, so no more are kept than `engine._CODE_OBJECTS` keeps code objects."""


def _recorded(space: AddressSpace, co: Any, kernel: Any, launched: Launched,
              seg: Any) -> _Layout:
    made = [*launched.buffers.values(), *launched.image.segments]
    st = launched.entry
    karg, queue, packet = (space.find(a) for a in (st.kernarg_ptr, st.queue_ptr,
                                                   st.dispatch_ptr))
    assert karg is not None and queue is not None and packet is not None
    made += [karg, queue, packet]
    where = {id(m): k for k, m in enumerate(made)}
    order = tuple(where[id(m)] for m in space.mappings)
    assert len(order) == len(made)
    return _Layout(co, kernel, tuple((name, m.base) for name, m in launched.buffers.items()),
                   launched.image.base, (len(seg.data), seg.alignment, karg.base), queue.base,
                   packet.data.tobytes(), packet.base, order, space.next_free,
                   st.private_size, st.preload_offset)


def _replay(layout: _Layout, space: AddressSpace, kernel: Any, grid: tuple[int, int, int],
            block: tuple[int, int, int], args: Sequence[Any] | KernargBuilder,
            buffers: MappingOf[str, bytes], scratch_base: int) -> Launched | None:
    """`_set_up` at `layout`'s places; None when the kernarg segment has another size or
    alignment than the one the layout was made with, or the code object no longer loads
    (`_set_up` then places everything, or finds what is wrong)."""
    bases = dict(layout.buffers)
    seg = _kernargs(kernel, grid, block, args, bases.__getitem__)
    size, alignment, karg_base = layout.kernarg
    segments = relocated(layout.co, layout.image_base)
    if len(seg.data) != size or seg.alignment != alignment or isinstance(segments, str):
        return None
    mapped = {name: mapping(name, base, data)
              for (name, base), data in zip(layout.buffers, buffers.values(), strict=True)}
    image = LoadedImage(layout.image_base, tuple(
        mapping(name, address, raw, writable=writable)
        for name, address, raw, writable in segments))
    made = [*mapped.values(), *image.segments,
            mapping("kernarg segment", karg_base, seg.data, pad_to=KERNARG_POOL_GRANULE),
            mapping("queue", layout.queue_base, bytes(_QUEUE_SIZE)),
            mapping("dispatch packet", layout.packet_base, layout.packet)]
    space.adopt([made[k] for k in layout.order], layout.next_free)
    st = EntryState(layout.packet_base, layout.queue_base, karg_base, 1, scratch_base,
                    layout.private_size, seg.data, layout.preload_offset)
    return Launched(mapped, image, st)


@dataclass(frozen=True, slots=True)
class EntryState:
    """What a wave's user and system SGPRs hold: the addresses and sizes of the launch."""

    dispatch_ptr: int
    queue_ptr: int
    kernarg_ptr: int
    dispatch_id: int
    scratch_base: int
    private_size: int
    kernarg: bytes
    preload_offset: int


def _user_sgpr_values(name: str, count: int, st: EntryState) -> list[int]:
    if name == "private_segment_buffer":
        # V# of the swizzled private segment (AMDGPUUsage "Private Segment Buffer"):
        # base, SWIZZLE_ENABLE, NUM_RECORDS, ADD_TID_ENABLE with INDEX_STRIDE 64 and
        # ELEMENT_SIZE 4 (GFX9 buffer resource layout, CDNA3 ISA §9.1.7).
        base = st.scratch_base
        return [base & 0xFFFF_FFFF, ((base >> 32) & 0xFFFF) | (1 << 31), 0xFFFF_FFFF,
                (1 << 23) | (3 << 21) | (1 << 19)]
    value = {"dispatch_ptr": st.dispatch_ptr, "queue_ptr": st.queue_ptr,
             "kernarg_segment_ptr": st.kernarg_ptr, "dispatch_id": st.dispatch_id,
             "flat_scratch_init": st.scratch_base, "private_segment_size": st.private_size}
    if name == "kernarg_preload":
        raw = st.kernarg[st.preload_offset:st.preload_offset + 4 * count]
        raw = raw + bytes(4 * count - len(raw))
        return list(struct.unpack(f"<{count}I", raw))
    v = value[name]
    return [(v >> (32 * k)) & 0xFFFF_FFFF for k in range(count)]


def init_wave(wave: Wave, kernel: Any, cfg: TargetConfig, st: EntryState,
              group: tuple[int, int, int], block: tuple[int, int, int],
              first_item: int, wave_scratch_offset: int) -> None:
    """Set `wave` up as the dispatcher would for the work-items `first_item ...` of
    work-group `group` (`kernel` is a `rgpu_fuzz.codeobj.reader.Kernel`)."""
    wave_setup(kernel, cfg, st, block)(wave, group, first_item, wave_scratch_offset)


@dataclass(frozen=True, slots=True)
class EntryPlan:
    """What a kernel descriptor says about a launch's entry state (`set_up_launch`,
    `init_wave`), read once per descriptor (`entry_plan`): `KernelDescriptor.field` scans
    the descriptor's fields, and a launch's set-up asked it about twenty times per wave
    (~70 us per launch of a short O3 kernel, of ~2 ms)."""

    user: tuple[Any, ...]
    user_count: int
    group_axes: tuple[int, ...]
    workgroup_info: bool
    private_segment: bool
    dims: int
    private_size: int
    """`private_segment_size` of the descriptor."""
    preload_offset: int


_PLANS: dict[int, tuple[Any, EntryPlan]] = {}


def entry_plan(kd: Any) -> EntryPlan:
    """The `EntryPlan` of descriptor `kd`, kept with it (by identity) for later launches."""
    held = _PLANS.get(id(kd))
    if held is not None and held[0] is kd:
        return held[1]
    plan = EntryPlan(
        kd.user_sgprs(), kd.user_sgpr_count,
        tuple(axis for axis, name in enumerate(("X", "Y", "Z"))
              if kd.field(f"ENABLE_SGPR_WORKGROUP_ID_{name}")),
        bool(kd.field("ENABLE_SGPR_WORKGROUP_INFO")),
        bool(kd.field("ENABLE_PRIVATE_SEGMENT")),
        kd.field("ENABLE_VGPR_WORKITEM_ID"),
        private_segment_size(kd),
        kd.field("KERNARG_PRELOAD_SPEC_OFFSET") * 4
        if kd.has_field("KERNARG_PRELOAD_SPEC_OFFSET") else 0)
    if len(_PLANS) >= 512:
        _PLANS.clear()
    _PLANS[id(kd)] = (kd, plan)  # the descriptor is held: its id is not reused meanwhile
    return plan


_IDS: dict[tuple[Any, ...], tuple[tuple[tuple[int, np.ndarray, np.ndarray], ...], int]] = {}


def _work_item_ids(lanes: int, block: tuple[int, int, int], first_item: int, dims: int,
                   packed: bool) -> tuple[tuple[tuple[int, np.ndarray, np.ndarray], ...], int]:
    """The work-item id VGPRs of the wave whose first work-item is `first_item` — (column,
    values, defined lanes) each — and its EXEC mask (the lanes with a work-item); the same
    for every work-group and launch of that block shape."""
    key = (lanes, block, first_item, dims, packed)
    got = _IDS.get(key)
    if got is not None:
        return got
    flat = first_item + np.arange(lanes)
    total = block[0] * block[1] * block[2]
    active = flat < total
    x = (flat % block[0]).astype(np.uint32)
    y = ((flat // block[0]) % block[1]).astype(np.uint32)
    z = (flat // (block[0] * block[1])).astype(np.uint32)
    ids = [x, y, z][:dims + 1]
    columns: tuple[tuple[int, np.ndarray, np.ndarray], ...]
    if packed:
        value = ids[0].copy()
        for k, v in enumerate(ids[1:], start=1):
            value |= v << np.uint32(10 * k)
        columns = ((0, value, active),)
    else:
        columns = tuple((k, v, active) for k, v in enumerate(ids))
    for _, v, d in columns:
        v.flags.writeable = False
        d.flags.writeable = False
    mask = int.from_bytes(np.packbits(active, bitorder="little").tobytes(), "little")
    if len(_IDS) >= 1024:
        _IDS.clear()
    got = _IDS[key] = (columns, mask)
    return got


def wave_setup(kernel: Any, cfg: TargetConfig, st: EntryState,
               block: tuple[int, int, int]) -> Callable[[Wave, tuple[int, int, int], int, int],
                                                         None]:
    """`init_wave` for every wave of one launch: what is the same for all of them (the user
    SGPRs' values, what the descriptor enables) is worked out once, here."""
    plan = entry_plan(kernel.descriptor)
    user = [(u.first + k, v) for u in plan.user
            for k, v in enumerate(_user_sgpr_values(u.name, u.count, st))]
    architected = cfg.flat_scratch_sgprs
    ttmp_ids = cfg.architected_sgprs
    scratch_base = st.scratch_base
    packed = cfg.packed_workitem_ids
    axes, info, nxt0 = plan.group_axes, plan.workgroup_info, plan.user_count
    private_offset = plan.private_segment and not cfg.architected_flat_scratch
    dims = plan.dims

    def init(wave: Wave, group: tuple[int, int, int], first_item: int,
             wave_scratch_offset: int) -> None:
        S, sdef = wave.S, wave.sdef
        for r, v in user:
            S[r] = v
            sdef[r] = FULL
        nxt = nxt0
        system = [group[axis] for axis in axes]
        if info:
            system.append(0)
        if private_offset:
            system.append(wave_scratch_offset)
        for v in system:
            S[nxt] = v & 0xFFFF_FFFF
            sdef[nxt] = FULL
            nxt += 1
        if ttmp_ids:
            # AMDGPUUsage "Initial Kernel Execution State", architected SGPRs (GFX12):
            # TTMP9 = work-group id X, TTMP7 = id Y in bits 15:0 and id Z in bits 31:16
            S[_TTMP9] = group[0] & 0xFFFF_FFFF
            S[_TTMP7] = (group[1] & 0xFFFF) | (group[2] & 0xFFFF) << 16
            sdef[_TTMP9] = sdef[_TTMP7] = FULL
        if architected:
            base = scratch_base + wave_scratch_offset
            S[FLAT_SCRATCH], S[FLAT_SCRATCH + 1] = base & 0xFFFF_FFFF, base >> 32
            sdef[FLAT_SCRATCH] = sdef[FLAT_SCRATCH + 1] = FULL
        lanes = wave.lanes
        columns, mask = _work_item_ids(lanes, block, first_item, dims, packed)
        for col, values, active in columns:
            wave.V[:, col] = values
            wave.vdef[:, col] = active
        wave.set_exec(mask)
        if lanes == 32:
            S[EXEC + 1] = 0
        wave.scc, wave.scc_def = 0, False
    return init
