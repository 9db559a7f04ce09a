"""A code object in the launch's address space, as the ROCm loader maps it: every PT_LOAD
segment at the load base plus its p_vaddr, writable only with PF_W, and the dynamic
relocations of `.rela.dyn` applied (AMDGPUUsage "AMDGPU ELF Relocation Records"). Kept
apart from `loader`, which sets up the dispatch and the waves around the image."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop
from rgpu_fuzz.sim.state.memory import AddressSpace, Mapping

CODE_OBJECT_BASE = 0x7FF0_0000_0000
"""Where the code object is loaded: a page-aligned address in the upper half of the 47-bit
user range, as ROCr places its code-object allocations on Linux — far from address 0, so
code that took an ELF virtual address for a device address faults instead of working by
accident, and away from the launch's buffers (`AddressSpace`'s first mapping)."""

PF_W = 2
_MASK64 = (1 << 64) - 1

# AMDGPUUsage "AMDGPU ELF Relocation Records": the types a dynamic loader applies, as
# (field width in bytes, value from S = symbol address, A = addend, B = load base).
DYNAMIC_RELOCATIONS: dict[str, tuple[int, Callable[[int, int, int], int]]] = {
    "R_AMDGPU_ABS32_LO": (4, lambda s, a, b: (s + a) & 0xFFFF_FFFF),
    "R_AMDGPU_ABS32_HI": (4, lambda s, a, b: ((s + a) >> 32) & 0xFFFF_FFFF),
    "R_AMDGPU_ABS64": (8, lambda s, a, b: (s + a) & _MASK64),
    "R_AMDGPU_ABS32": (4, lambda s, a, b: (s + a) & 0xFFFF_FFFF),
    "R_AMDGPU_RELATIVE64": (8, lambda s, a, b: (b + a) & _MASK64),
}
_USES_SYMBOL = {"R_AMDGPU_ABS32_LO", "R_AMDGPU_ABS32_HI", "R_AMDGPU_ABS64", "R_AMDGPU_ABS32"}


@dataclass(frozen=True, slots=True)
class LoadedImage:
    """A code object in the launch's address space: its load base and one mapping per
    PT_LOAD segment."""

    base: int
    segments: tuple[Mapping, ...]


def _load_failure(detail: str) -> SimStop:
    return SimStop(Fault(FaultKind.LOAD_FAILURE, detail))


def _segment_name(co: Any, seg: Any) -> str:
    names = [s.name for s in co.elf.sections
             if s.addr and seg.vaddr <= s.addr < seg.vaddr + seg.memsz and s.size]
    flags = "".join(c for c, bit in (("R", 4), ("W", 2), ("X", 1)) if seg.flags & bit)
    return f"code object segment {flags} ({' '.join(names) or 'no sections'})"


def load_code_object(space: AddressSpace, co: Any, base: int = CODE_OBJECT_BASE) -> LoadedImage:
    """Map every PT_LOAD segment of `co` (a `rgpu_fuzz.codeobj.reader.CodeObject`, linked)
    at `base` + p_vaddr — file bytes, then zeros up to p_memsz; writable only with PF_W,
    so a store into .text or .rodata is `sim-oob-access` — and apply the dynamic
    relocations of `.rela.dyn` as the ROCm loader does. A relocation it cannot apply (a
    static-only type, an undefined symbol, a place outside every segment) stops the
    launch with `sim-load-failure`: the runtime would refuse to load the code object."""
    image = relocated(co, base)
    if isinstance(image, str):
        raise _load_failure(image)
    return LoadedImage(base, tuple(space.map_at(name, address, raw, writable=writable)
                                   for name, address, raw, writable in image))


_Segments = tuple[tuple[str, int, np.ndarray, bool], ...]
_IMAGES: OrderedDict[tuple[int, int], tuple[Any, _Segments | str]] = OrderedDict()
_IMAGES_KEPT = 256
"""The relocated segments of the code objects loaded last, by the object's id and the load
base (the object held, so that its id is not reused while it is kept): a batch launches
each of its kernels from one code object, and a kernel launched again (the engine keeps as
many code objects, `engine._CODE_OBJECTS`) would otherwise relocate it again — a pass over
its sections and relocations in Python per launch. An entry is about the size of the code
object's loadable segments (8-30 KB at O3)."""


def relocated(co: Any, base: int) -> _Segments | str:
    """(name, address, bytes as a read-only array, writable) of each loaded segment of `co`
    at `base`, its dynamic relocations applied; or why the runtime would refuse to load it."""
    key = (id(co), base)
    held = _IMAGES.get(key)
    if held is not None and held[0] is co:
        _IMAGES.move_to_end(key)
        return held[1]
    try:
        got: _Segments | str = _relocate(co, base)
    except SimStop as stop:
        got = stop.fault.detail
    if len(_IMAGES) >= _IMAGES_KEPT:
        _IMAGES.popitem(last=False)
    _IMAGES[key] = (co, got)
    return got


def _relocate(co: Any, base: int) -> _Segments:
    data = co.elf.data
    segments: list[tuple[str, int, bytearray, bool]] = []
    for seg in co.elf.segments:
        if seg.type != "PT_LOAD" or seg.memsz == 0:
            continue
        raw = bytearray(data[seg.offset:seg.offset + seg.filesz])
        raw += bytes(seg.memsz - seg.filesz)
        segments.append((_segment_name(co, seg), base + seg.vaddr, raw, bool(seg.flags & PF_W)))
    symbols = {s.name: s for s in co.elf.dynamic_symbols if s.name}
    for r in co.elf.relocations:
        if r.section not in (".rela.dyn", ".rel.dyn"):
            continue
        name = r.type_name
        if name == "R_AMDGPU_NONE":
            continue
        rule = DYNAMIC_RELOCATIONS.get(name)
        if rule is None:
            raise _load_failure(f"{name} at {r.offset:#x}: not a dynamic relocation type")
        width, value = rule
        sym_addr = 0
        if name in _USES_SYMBOL and r.symbol:
            sym = symbols.get(r.symbol)
            if sym is None or sym.section_index == "SHN_UNDEF":
                raise _load_failure(f"{name} at {r.offset:#x}: undefined symbol {r.symbol}")
            sym_addr = base + sym.value
        place = base + r.offset
        at = next((s for s in segments if s[1] <= place and place + width <= s[1] + len(s[2])),
                  None)
        if at is None:
            raise _load_failure(f"{name} at {r.offset:#x}: place outside every PT_LOAD segment")
        off = place - at[1]
        at[2][off:off + width] = value(sym_addr, r.addend, base).to_bytes(width, "little")
    return tuple((name, address, _frozen(raw), writable) for name, address, raw, writable
                 in segments)


def _frozen(raw: bytearray) -> np.ndarray:
    """A segment's bytes as a read-only array: mapped as it is where the segment is not
    writable, copied where it is (`AddressSpace.map_at`)."""
    out = np.frombuffer(bytes(raw), np.uint8)
    out.flags.writeable = False
    return out
