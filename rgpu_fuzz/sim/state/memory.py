"""The launch's memory: a sparse 64-bit global address space of named mappings, one LDS per
workgroup, and per-lane private memory.

Every access is checked: an address outside every mapping (or past the LDS or private size)
stops the launch with a `sim-oob-access` fault naming the address and the nearest mapping.
Hardware would fault or silently drop the access; either way the compiled code was wrong.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from rgpu_fuzz.sim.common.fault import Fault, FaultKind, SimStop

PAGE = 4096

_BYTES: dict[int, np.ndarray] = {}


def _bytes(width: int) -> np.ndarray:
    """`np.arange(width)` (int64), read-only, made once per width: an access's byte
    offsets, added to each lane's address to gather or scatter its bytes."""
    got = _BYTES.get(width)
    if got is None:
        got = _BYTES[width] = np.arange(width, dtype=np.int64)
        got.flags.writeable = False
    return got


@dataclass(slots=True)
class Mapping:
    name: str
    base: int
    data: np.ndarray  # uint8
    writable: bool = True
    defined_size: int | None = None
    """Bytes from `base` that hold the mapping's contents; the rest of `data` is mapped but
    holds nothing the launch put there (a pool the runtime sub-allocates from): reading it
    is no fault, using what it read is `sim-uninit-read`. None: all of `data`."""

    @property
    def end(self) -> int:
        return self.base + len(self.data)


def _oob(what: str, detail: str) -> SimStop:
    return SimStop(Fault(FaultKind.OOB_ACCESS, f"{what}: {detail}"))


def mapping(name: str, base: int, data: np.ndarray | bytes, *, writable: bool = True,
            pad_to: int = 0) -> Mapping:
    """A mapping at `base` of a copy of `data` (bytes or any array, taken as raw bytes).
    `pad_to`: zeros after it up to the next multiple of `pad_to` bytes, as undefined
    contents (`Mapping.defined_size`). A read-only mapping of a read-only byte array maps
    the array itself: nothing can write it (`AddressSpace.write` refuses, numpy too), so
    every launch of a code object shares its `.text` instead of copying it."""
    if not writable and isinstance(data, np.ndarray) and not data.flags.writeable \
            and data.dtype == np.uint8 and data.ndim == 1 and not pad_to:
        return Mapping(name, base, data, writable)
    raw = np.frombuffer(data if isinstance(data, bytes | bytearray)
                        else np.ascontiguousarray(data).tobytes(), np.uint8).copy()
    size = len(raw)
    if pad_to and size % pad_to:
        raw = np.concatenate([raw, np.zeros(pad_to - size % pad_to, np.uint8)])
        return Mapping(name, base, raw, writable, size)
    return Mapping(name, base, raw, writable)


class AddressSpace:
    """Global memory: mappings placed at page-aligned addresses with unmapped guard pages
    between them, so an access just past a buffer is caught rather than landing in the next."""

    def __init__(self, first: int = 0x7F00_0000_0000) -> None:
        self._maps: list[Mapping] = []
        self._bases: list[int] = []
        self._next = first
        self._last: tuple[int, int, Mapping] | None = None
        """(start, end, mapping) of the last vector access (`_locate`)."""
        self._hit: tuple[int, int, Mapping] | None = None
        """(start, end, mapping) of the last `holding` answer: a launch reads its few
        buffers over and over, and mappings are never removed, so it stays true."""
        self._elem: tuple[int, int, memoryview] | None = None
        """(start, end, bytes) of the writable mapping of the last `element` answer."""

    def map(self, name: str, data: np.ndarray | bytes, *, writable: bool = True,
            align: int = PAGE, pad_to: int = 0) -> Mapping:
        """Place a copy of `data` (`mapping`) at the next free aligned address after a guard
        page."""
        base = (self._next + align - 1) // align * align
        m = mapping(name, base, data, writable=writable, pad_to=pad_to)
        n = len(m.data)
        self._next = base + (n or 1) + PAGE
        bases = self._bases
        i = bisect.bisect_right(bases, base)
        if i < len(bases) and base + n + PAGE > bases[i]:
            raise ValueError(f"{name} at {base:#x} runs into {self._maps[i].name}")
        self._maps.insert(i, m)
        bases.insert(i, base)
        return m

    def map_at(self, name: str, base: int, data: bytes | np.ndarray, *,
               writable: bool) -> Mapping:
        """Place a copy of `data` (`mapping`) at exactly `base` (a loaded code object's
        segments sit where its program headers put them, relative to the load address);
        overlapping an existing mapping is an error of the caller."""
        m = mapping(name, base, data, writable=writable)
        i = bisect.bisect_right(self._bases, base)
        if (i > 0 and self._maps[i - 1].end > base) or \
                (i < len(self._maps) and m.end > self._bases[i]):
            raise ValueError(f"{name} at {base:#x} overlaps another mapping")
        self._maps.insert(i, m)
        self._bases.insert(i, base)
        return m

    @property
    def mappings(self) -> tuple[Mapping, ...]:
        """Every mapping, by base address."""
        return tuple(self._maps)

    @property
    def next_free(self) -> int:
        """Where `map` starts looking for room."""
        return self._next

    def adopt(self, maps: list[Mapping], next_free: int) -> None:
        """Make `maps` the mappings of this empty space, `next_free` its `next_free`: `maps`
        are sorted by base and placed as `map` and `map_at` placed an earlier space's (a
        launch laid out like an earlier one, `loader.set_up_launch`, places nothing)."""
        assert not self._maps, "adopt into a space with mappings"
        self._maps = maps
        self._bases = [m.base for m in maps]
        self._next = next_free

    def find(self, address: int) -> Mapping | None:
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0:
            m = self._maps[i]
            if address < m.base + len(m.data):
                return m
        return None

    def holding(self, address: int, width: int) -> Mapping | None:
        """The mapping that holds all `width` bytes from `address` as contents (not past its
        `defined_size`), or None (then `find`, `describe` and the checks of each access
        say what is there)."""
        hit = self._hit
        if hit is not None and hit[0] <= address and address + width <= hit[1]:
            return hit[2]
        m = self.find(address)
        if m is None:
            return None
        end = m.end if m.defined_size is None else m.base + m.defined_size
        if address + width > end:
            return None
        self._hit = (m.base, end, m)
        return m

    def describe(self, address: int) -> str:
        i = bisect.bisect_right(self._bases, address) - 1
        if i < 0:
            return f"{address:#x} (below every mapping)"
        m = self._maps[i]
        return f"{address:#x} ({address - m.base:+#x} from {m.name} of {len(m.data)} bytes)"

    def _locate(self, addrs: np.ndarray, width: int,
                 what: str) -> tuple[Mapping, np.ndarray] | list[tuple[Mapping, np.ndarray,
                                                                     np.ndarray]]:
        """The mapping that holds every access of `width` bytes at `addrs` (uint64) and the
        offsets into it, or the `sim-oob-access` of the first lane outside every mapping.
        The mapping of the first lane is the last one located when it holds that lane (a
        launch's buffers are few), else `find`s; its offsets, taken modulo 2^64, are all
        below its size less `width` exactly when every access lies inside it. Lanes in
        different mappings, each access inside its own (LLVM selects a pointer per lane and
        loads once: `if c { a[0] } else { b[0] }`), give (mapping, lanes, offsets) groups."""
        first = int(addrs[0])
        last = self._last
        m = last[2] if last is not None and last[0] <= first < last[1] else self.find(first)
        if m is not None:
            off = addrs - np.uint64(m.base)
            if int(off.max()) + width <= len(m.data):
                if last is None or last[2] is not m:
                    self._last = (m.base, m.base + len(m.data), m)
                return m, off
        lo = int(addrs.min())
        hi = int(addrs.max()) + width
        m = self.find(lo)
        if m is None or hi > m.end:
            groups: dict[int, tuple[Mapping, list[int]]] = {}
            for lane, a in enumerate(addrs.tolist()):
                mm = self.find(a)
                if mm is None or a + width > mm.end:
                    raise _oob(what, f"{width}-byte access at {self.describe(a)}")
                groups.setdefault(mm.base, (mm, []))[1].append(lane)
            return [(mm, np.array(lanes, np.int64), addrs[lanes] - np.uint64(mm.base))
                    for mm, lanes in groups.values()]
        return m, addrs - np.uint64(m.base)  # unreachable: the first lane's mapping holds all

    def read(self, addrs: np.ndarray, width: int, what: str) -> np.ndarray:
        """Bytes at each address: uint8 array (len(addrs), width)."""
        got = self._locate(addrs, width, what)
        if isinstance(got, tuple):
            m, off = got
            return m.data[off.view(np.int64)[:, None] + _bytes(width)]
        out = np.empty((len(addrs), width), np.uint8)
        for m, lanes, off in got:
            out[lanes] = m.data[off.view(np.int64)[:, None] + _bytes(width)]
        return out

    def write(self, addrs: np.ndarray, data: np.ndarray, what: str) -> None:
        """Store `data` (uint8, (len(addrs), width)); lanes in order, so the highest lane wins
        where addresses collide (as in hardware, where the order is unspecified)."""
        width = data.shape[1]
        got = self._locate(addrs, width, what)
        groups = [(got[0], None, got[1])] if isinstance(got, tuple) else got
        for m, _, off in groups:
            if not m.writable:
                raise _oob(what, f"store to read-only {m.name} at "
                                 f"{self.describe(int(m.base + off[0]))}")
        for m, lanes, off in groups:
            m.data[off.view(np.int64)[:, None] + _bytes(width)] = \
                data if lanes is None else data[lanes]

    def element(self, address: int, width: int, what: str) -> memoryview:
        """The `width` bytes at `address` as a writable view into its mapping: one lane's
        read-modify-write (an atomic) without a `read` and a `write` of one-lane arrays.
        It checks what that `read` then `write` check, in their order and with their
        `sim-oob-access` texts: every byte inside one mapping (bytes past `defined_size` are
        mapped, as for `read`), then the mapping writable."""
        hit = self._elem
        if hit is not None and hit[0] <= address and address + width <= hit[1]:
            off = address - hit[0]
            return hit[2][off:off + width]
        m = self.find(address)
        if m is None or address + width > m.end:
            raise _oob(what, f"{width}-byte access at {self.describe(address)}")
        if not m.writable:
            raise _oob(what, f"store to read-only {m.name} at {self.describe(address)}")
        view = m.data.data  # the array's buffer, as a memoryview
        self._elem = (m.base, m.end, view)
        off = address - m.base
        return view[off:off + width]

    def read_scalar(self, address: int, width: int, what: str) -> bytes:
        m = self.find(address)
        if m is None or address + width > m.end:
            raise _oob(what, f"{width}-byte scalar load at {self.describe(address)}")
        off = address - m.base
        return m.data[off:off + width].tobytes()

    def scalar_defined(self, address: int, width: int) -> tuple[int, ...] | None:
        """The defined bits of each dword of a scalar load `read_scalar` allowed: None when
        all are (every mapping but a padded one)."""
        m = self.find(address)
        if m is None or m.defined_size is None or address + width <= m.base + m.defined_size:
            return None
        valid = m.base + m.defined_size - address
        return tuple((1 << 8 * max(0, min(4, valid - k))) - 1 for k in range(0, width, 4))


class Lds:
    """One workgroup's LDS: `size` bytes (the descriptor's group segment size). Stores out of
    range are `sim-oob-access`; reads out of range are undefined values (see `read`)."""

    def __init__(self, size: int) -> None:
        self.data = np.zeros(max(size, 0), np.uint8)
        self.size = size
        self._view = self.data.data  # the array's buffer, as a memoryview

    def _index(self, addrs: np.ndarray, width: int, what: str) -> np.ndarray:
        a = addrs.astype(np.int64)
        if len(a) and (int(a.max()) + width > self.size or int(a.min()) < 0):
            bad = int(a[(a + width > self.size) | (a < 0)][0])
            raise _oob(what, f"{width}-byte LDS access at {bad:#x}, LDS size {self.size:#x}")
        return a[:, None] + _bytes(width)

    def read(self, addrs: np.ndarray, width: int, what: str) -> tuple[np.ndarray, np.ndarray]:
        """(bytes, defined per lane). An out-of-range read returns 0 on hardware (CDNA3 ISA
        §11.1 "LDS out-of-range": reads return zero, writes are dropped), and LLVM may
        speculate LDS loads that relies on it; such lanes read 0 marked undefined, so using
        the value is `sim-uninit-read` while discarding it is fine."""
        a = addrs.astype(np.int64)
        bad = (a + width > self.size) | (a < 0)
        if not bad.any():
            return self.data[a[:, None] + np.arange(width)], np.ones(len(a), bool)
        idx = np.where(bad, 0, a)[:, None] + np.arange(width)
        out = self.data[np.minimum(idx, max(self.size - 1, 0))] if self.size else \
            np.zeros((len(a), width), np.uint8)
        out[bad] = 0
        return out, ~bad

    def write(self, addrs: np.ndarray, data: np.ndarray, what: str) -> None:
        self.data[self._index(addrs, data.shape[1], what)] = data

    def element(self, address: int, width: int, what: str) -> memoryview:
        """The `width` bytes at `address` (0 <= address < 2^32) as a writable view: one
        lane's read-modify-write. Out of range it faults as `write` does: the `read` before
        it would give 0, undefined, and the write of the new value is the `sim-oob-access`."""
        if address + width > self.size:
            raise _oob(what, f"{width}-byte LDS access at {address:#x}, LDS size {self.size:#x}")
        return self._view[address:address + width]


class Private:
    """One wave's private (scratch) memory, per lane: `size` bytes each.

    The hardware interleaves lanes in the scratch backing store (AMDGPUUsage "Private
    Segment": swizzled in 4-byte elements with an index stride of the wavefront size), so a
    lane's private offset `o` sits at wave-relative byte `(o // 4) * 4 * lanes + lane * 4 +
    o % 4`; every per-lane access goes through that mapping, so scratch and swizzled buffer
    addressing see the same bytes. `defined` is a per-bit shadow (one uint8 mask per byte,
    0xFF defined): spills of partly undefined registers are legal (O0 lane masks are defined
    only in their lanes' bits), so definedness travels through private memory bit by bit."""

    def __init__(self, size: int, lanes: int) -> None:
        self.size = size
        self.lanes = lanes
        self.data = np.zeros(size * lanes, np.uint8)
        self.defined = np.zeros(size * lanes, np.uint8)
        self._lane = np.arange(lanes, dtype=np.int64)

    def _index(self, lanes: np.ndarray, offs: np.ndarray, width: int, what: str) -> np.ndarray:
        o = offs.astype(np.int64)[:, None] + np.arange(width)
        if o.size and (int(o.max()) >= self.size or int(o.min()) < 0):
            bad = int(offs.astype(np.int64)[((o >= self.size) | (o < 0)).any(axis=1)][0])
            raise _oob(what, f"{width}-byte private access at offset {bad:#x}, "
                             f"private segment size {self.size:#x}")
        return (o // 4) * (4 * self.lanes) + lanes[:, None] * 4 + o % 4

    def read(self, lanes: np.ndarray, offs: np.ndarray, width: int,
             what: str) -> tuple[np.ndarray, np.ndarray]:
        idx = self._index(lanes, offs, width, what)
        return self.data[idx], self.defined[idx] == 0xFF

    def read_bits(self, lanes: np.ndarray, offs: np.ndarray, width: int,
                  what: str) -> tuple[np.ndarray, np.ndarray]:
        """`read`, with each byte's defined bits (uint8 masks) instead of a bool."""
        idx = self._index(lanes, offs, width, what)
        return self.data[idx], self.defined[idx]

    def write(self, lanes: np.ndarray, offs: np.ndarray, data: np.ndarray,
              defined: np.ndarray, what: str) -> None:
        """`defined`: a bool per byte, or its defined bits (uint8 masks)."""
        idx = self._index(lanes, offs, data.shape[1], what)
        self.data[idx] = data
        self.defined[idx] = defined if defined.dtype == np.uint8 else \
            np.where(defined, np.uint8(0xFF), np.uint8(0))
