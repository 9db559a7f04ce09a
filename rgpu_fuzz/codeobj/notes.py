"""ELF notes and the `NT_AMDGPU_METADATA` note (AMDGPUUsage "Code Object V3 Metadata" and
"Code Object V5 Metadata").

The note is a msgpack map (`amdhsa.version`, `amdhsa.target`, `amdhsa.kernels`, ...). It is
read into frozen values; keys this module does not model are kept, verbatim and sorted, in
`extra`, so nothing in the note is silently dropped. This is the only module that touches
msgpack; every msgpack failure and every ill-typed entry is one `CodeObjectError`.
"""

from __future__ import annotations

import builtins
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgpack

from rgpu_fuzz.codeobj.errors import CodeObjectError

__all__ = [
    "NT_AMDGPU_METADATA",
    "CodeObjectMetadata",
    "KernelArg",
    "KernelMetadata",
    "Note",
    "parse_metadata",
    "parse_notes",
]

NT_AMDGPU_METADATA: Final = 32
_NOTE_HEADER = struct.Struct("<III")


@dataclass(frozen=True, slots=True)
class Note:
    """One ELF note: owner name (without the NUL), type, descriptor bytes."""

    name: str
    type: int
    desc: bytes


def _align4(n: int) -> int:
    return (n + 3) & ~3


def parse_notes(data: bytes) -> tuple[Note, ...]:
    """Split a note section or segment into notes (ELF gABI "Note Section"; 4-byte
    alignment, as AMDGPU code objects use)."""
    out: list[Note] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < _NOTE_HEADER.size:
            raise CodeObjectError(f"truncated note header at offset {pos}")
        namesz, descsz, ntype = _NOTE_HEADER.unpack_from(data, pos)
        pos += _NOTE_HEADER.size
        name_end = pos + namesz
        desc_start = pos + _align4(namesz)
        desc_end = desc_start + descsz
        if desc_end > len(data):
            raise CodeObjectError(f"note at offset {pos - _NOTE_HEADER.size} runs past the "
                                  f"end of its section (name {namesz}, desc {descsz} bytes)")
        name = data[pos:name_end].rstrip(b"\0").decode("ascii", errors="replace")
        out.append(Note(name, ntype, bytes(data[desc_start:desc_end])))
        pos = desc_start + _align4(descsz)
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelArg:
    """One entry of a kernel's `.args` (AMDGPUUsage "AMDHSA Code Object V3 Kernel Argument
    Metadata Map", value kinds extended by "V5")."""

    offset: int
    size: int
    value_kind: str
    name: str | None = None
    type_name: str | None = None
    address_space: str | None = None
    access: str | None = None
    actual_access: str | None = None
    pointee_align: int | None = None
    is_const: bool = False
    is_restrict: bool = False
    is_volatile: bool = False
    is_pipe: bool = False
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def is_hidden(self) -> bool:
        """Hidden arguments are filled by the runtime (AMDGPUUsage: value kinds `hidden_*`)."""
        return self.value_kind.startswith("hidden_")


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelMetadata:
    """One entry of `amdhsa.kernels` (AMDGPUUsage "AMDHSA Code Object V3 Kernel Metadata Map")."""

    name: str
    symbol: str
    kernarg_segment_size: int
    kernarg_segment_align: int
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    wavefront_size: int
    sgpr_count: int
    vgpr_count: int
    max_flat_workgroup_size: int
    args: tuple[KernelArg, ...] = ()
    agpr_count: int | None = None
    sgpr_spill_count: int | None = None
    vgpr_spill_count: int | None = None
    uses_dynamic_stack: bool | None = None
    workgroup_processor_mode: int | None = None
    uniform_work_group_size: int | None = None
    reqd_workgroup_size: tuple[int, ...] | None = None
    workgroup_size_hint: tuple[int, ...] | None = None
    language: str | None = None
    language_version: tuple[int, ...] | None = None
    kind: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def explicit_args(self) -> tuple[KernelArg, ...]:
        return tuple(a for a in self.args if not a.is_hidden)

    @property
    def hidden_args(self) -> tuple[KernelArg, ...]:
        return tuple(a for a in self.args if a.is_hidden)


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeObjectMetadata:
    """The whole `NT_AMDGPU_METADATA` map."""

    version: tuple[int, ...]
    target: str | None
    kernels: tuple[KernelMetadata, ...]
    printf: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()

    def kernel(self, name: str) -> KernelMetadata | None:
        return next((k for k in self.kernels if k.name == name), None)


class _Map:
    """Typed reads from one msgpack map; each read consumes its key, the rest is `extra`.

    The readers are named after the types they return (`int`, `str`, `bool`, `list`), so inside
    the class body those names are the methods: annotations below them spell `builtins.int` etc.
    """

    def __init__(self, raw: Any, where: str) -> None:
        if not isinstance(raw, Mapping):
            raise CodeObjectError(f"{where}: expected a map, got {type(raw).__name__}")
        self._raw = dict(raw)
        self._where = where

    def _take(self, key: str, required: bool) -> Any:
        if key not in self._raw:
            if required:
                raise CodeObjectError(f"{self._where}: missing {key}")
            return None
        return self._raw.pop(key)

    def int(self, key: str, required: bool = False) -> int | None:
        v = self._take(key, required)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise CodeObjectError(f"{self._where}: {key} is not an integer ({v!r:.40})")
        return v

    def req_int(self, key: str) -> builtins.int:
        v = self.int(key, required=True)
        assert v is not None
        return v

    def str(self, key: str, required: bool = False) -> str | None:
        v = self._take(key, required)
        if v is not None and not isinstance(v, str):
            raise CodeObjectError(f"{self._where}: {key} is not a string ({v!r:.40})")
        return v

    def req_str(self, key: builtins.str) -> builtins.str:
        v = self.str(key, required=True)
        assert v is not None
        return v

    def bool(self, key: builtins.str) -> builtins.bool | None:
        v = self._take(key, False)
        if v is not None and not isinstance(v, bool):
            raise CodeObjectError(f"{self._where}: {key} is not a boolean ({v!r:.40})")
        return v

    def ints(self, key: builtins.str) -> tuple[builtins.int, ...] | None:
        v = self._take(key, False)
        if v is None:
            return None
        if not isinstance(v, list | tuple) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise CodeObjectError(f"{self._where}: {key} is not a list of integers")
        return tuple(v)

    def list(self, key: builtins.str) -> list[Any]:
        v = self._take(key, False)
        if v is None:
            return []
        if not isinstance(v, list | tuple):
            raise CodeObjectError(f"{self._where}: {key} is not a list")
        return list(v)

    def rest(self) -> tuple[tuple[builtins.str, Any], ...]:
        return tuple(sorted(((str(k), _freeze(v)) for k, v in self._raw.items()), key=_first))


def _freeze(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, Mapping):
        return tuple(sorted(((str(k), _freeze(x)) for k, x in v.items()), key=_first))
    return v


def _first(item: tuple[str, Any]) -> str:
    return item[0]


def _arg(raw: Any, where: str) -> KernelArg:
    m = _Map(raw, where)
    return KernelArg(
        offset=m.req_int(".offset"), size=m.req_int(".size"),
        value_kind=m.req_str(".value_kind"), name=m.str(".name"),
        type_name=m.str(".type_name"), address_space=m.str(".address_space"),
        access=m.str(".access"), actual_access=m.str(".actual_access"),
        pointee_align=m.int(".pointee_align"), is_const=bool(m.bool(".is_const")),
        is_restrict=bool(m.bool(".is_restrict")), is_volatile=bool(m.bool(".is_volatile")),
        is_pipe=bool(m.bool(".is_pipe")), extra=m.rest())


def _kernel(raw: Any, where: str) -> KernelMetadata:
    m = _Map(raw, where)
    name = m.req_str(".name")
    where = f"kernel {name}"
    args = tuple(_arg(a, f"{where} arg {i}") for i, a in enumerate(m.list(".args")))
    return KernelMetadata(
        name=name, symbol=m.req_str(".symbol"),
        kernarg_segment_size=m.req_int(".kernarg_segment_size"),
        kernarg_segment_align=m.req_int(".kernarg_segment_align"),
        group_segment_fixed_size=m.req_int(".group_segment_fixed_size"),
        private_segment_fixed_size=m.req_int(".private_segment_fixed_size"),
        wavefront_size=m.req_int(".wavefront_size"), sgpr_count=m.req_int(".sgpr_count"),
        vgpr_count=m.req_int(".vgpr_count"),
        max_flat_workgroup_size=m.req_int(".max_flat_workgroup_size"), args=args,
        agpr_count=m.int(".agpr_count"), sgpr_spill_count=m.int(".sgpr_spill_count"),
        vgpr_spill_count=m.int(".vgpr_spill_count"),
        uses_dynamic_stack=m.bool(".uses_dynamic_stack"),
        workgroup_processor_mode=m.int(".workgroup_processor_mode"),
        uniform_work_group_size=m.int(".uniform_work_group_size"),
        reqd_workgroup_size=m.ints(".reqd_workgroup_size"),
        workgroup_size_hint=m.ints(".workgroup_size_hint"),
        language=m.str(".language"), language_version=m.ints(".language_version"),
        kind=m.str(".kind"), extra=m.rest())


def parse_metadata(desc: bytes) -> CodeObjectMetadata:
    """Decode the msgpack descriptor of an `NT_AMDGPU_METADATA` note."""
    try:
        raw = msgpack.unpackb(desc, raw=False, strict_map_key=False,
                              use_list=True)
    except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError,
            TypeError, UnicodeDecodeError) as e:
        raise CodeObjectError(f"NT_AMDGPU_METADATA is not valid msgpack: {e}") from e
    m = _Map(raw, "NT_AMDGPU_METADATA")
    version = m.ints("amdhsa.version")
    if version is None:
        raise CodeObjectError("NT_AMDGPU_METADATA: missing amdhsa.version")
    kernels = tuple(_kernel(k, f"amdhsa.kernels[{i}]")
                    for i, k in enumerate(m.list("amdhsa.kernels")))
    printf = m.list("amdhsa.printf")
    if not all(isinstance(p, str) for p in printf):
        raise CodeObjectError("NT_AMDGPU_METADATA: amdhsa.printf is not a list of strings")
    return CodeObjectMetadata(version=version, target=m.str("amdhsa.target"),
                              kernels=kernels, printf=tuple(printf), extra=m.rest())
