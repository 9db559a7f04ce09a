"""The ELF container of a code object: linked code objects as `ld.lld` writes them read with
`struct` (`_read_plain`), everything else (relocatable objects, files it does not vouch for)
with pyelftools — the only module that imports it; tests hold the two to equal images.

Returns plain frozen values (header, sections, segments, symbols, relocations, notes) and
converts every pyelftools failure, and every offset that points outside the file, into one
`CodeObjectError` here, so truncated or fuzzed bytes never surface a third-party traceback.
The header checks follow AMDGPUUsage "ELF Header": ELFCLASS64, little-endian, `EM_AMDGPU`,
`ELFOSABI_AMDGPU_HSA`.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import Any

from elftools.common.exceptions import ELFError, ELFParseError, ELFRelocationError
from elftools.construct.core import ConstructError
from elftools.elf.elffile import ELFFile
from elftools.elf.enums import (
    ENUM_P_TYPE_BASE,
    ENUM_SH_TYPE_BASE,
    ENUM_ST_INFO_BIND,
    ENUM_ST_INFO_TYPE,
    ENUM_ST_SHNDX,
    ENUM_ST_VISIBILITY,
)
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import NoteSection, StringTableSection, SymbolTableSection

from rgpu_fuzz.codeobj.errors import CodeObjectError
from rgpu_fuzz.codeobj.notes import Note, parse_notes
from rgpu_fuzz.codeobj.targets import ELFOSABI_AMDGPU_HSA, EM_AMDGPU

__all__ = ["ElfImage", "ElfSection", "ElfSegment", "ElfSymbol", "Relocation", "read_elf"]

_IDENT = struct.Struct("<4sBBBBB7sHHIQQQIHHHHHH")
ET_REL, ET_DYN = 1, 3
SHT_NOBITS = 8
SHF_EXECINSTR = 0x4

_THIRD_PARTY_ERRORS = (ELFError, ELFParseError, ELFRelocationError, ConstructError,
                       struct.error, ValueError, KeyError, IndexError, TypeError,
                       AttributeError, UnicodeDecodeError, OverflowError, AssertionError,
                       RecursionError)
"""What pyelftools raises on malformed input (found by fuzz/codeobj.py): its own errors,
construct's, and plain Python errors from unchecked table indices and sizes."""


@dataclass(frozen=True, slots=True)
class ElfSection:
    index: int
    name: str
    type: str
    addr: int
    offset: int
    size: int
    flags: int
    align: int

    @property
    def is_exec(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)

    def contains(self, addr: int, size: int = 1) -> bool:
        return self.addr <= addr and addr + size <= self.addr + self.size


@dataclass(frozen=True, slots=True)
class ElfSegment:
    type: str
    offset: int
    vaddr: int
    filesz: int
    memsz: int
    flags: int
    align: int


@dataclass(frozen=True, slots=True)
class ElfSymbol:
    name: str
    value: int
    size: int
    type: str
    bind: str
    visibility: str
    section_index: int | str


R_AMDGPU_NAMES = {0: "R_AMDGPU_NONE", 1: "R_AMDGPU_ABS32_LO", 2: "R_AMDGPU_ABS32_HI",
                  3: "R_AMDGPU_ABS64", 4: "R_AMDGPU_REL32", 5: "R_AMDGPU_REL64",
                  6: "R_AMDGPU_ABS32", 7: "R_AMDGPU_GOTPCREL", 8: "R_AMDGPU_GOTPCREL32_LO",
                  9: "R_AMDGPU_GOTPCREL32_HI", 10: "R_AMDGPU_REL32_LO",
                  11: "R_AMDGPU_REL32_HI", 13: "R_AMDGPU_RELATIVE64", 14: "R_AMDGPU_REL16"}
"""AMDGPUUsage "AMDHSA ELF Relocation Records" (12 is unused)."""


@dataclass(frozen=True, slots=True)
class Relocation:
    section: str
    offset: int
    type: int
    symbol: str
    addend: int

    @property
    def type_name(self) -> str:
        return R_AMDGPU_NAMES.get(self.type, f"R_AMDGPU_UNKNOWN({self.type})")


@dataclass(frozen=True, slots=True, kw_only=True)
class ElfImage:
    """Everything the code-object reader needs from the ELF container."""

    data: bytes
    elf_type: int
    os_abi: int
    abi_version: int
    machine: int
    flags: int
    entry: int
    sections: tuple[ElfSection, ...]
    segments: tuple[ElfSegment, ...]
    symbols: tuple[ElfSymbol, ...]
    dynamic_symbols: tuple[ElfSymbol, ...]
    relocations: tuple[Relocation, ...]
    notes: tuple[Note, ...]

    @property
    def is_relocatable(self) -> bool:
        return self.elf_type == ET_REL

    def section(self, name: str) -> ElfSection | None:
        return next((s for s in self.sections if s.name == name), None)

    def section_bytes(self, section: ElfSection) -> bytes:
        if section.type == "SHT_NOBITS":
            return bytes(section.size)
        return self.data[section.offset:section.offset + section.size]

    def symbol(self, name: str) -> ElfSymbol | None:
        """A symbol by name, dynamic symbols first (what the loader sees)."""
        for table in (self.dynamic_symbols, self.symbols):
            for s in table:
                if s.name == name:
                    return s
        return None

    def symbol_bytes(self, sym: ElfSymbol, size: int) -> bytes:
        """`size` bytes at a symbol: by section index and offset in a relocatable object, by
        virtual address (the section holding it) in a shared one."""
        if self.is_relocatable:
            if not isinstance(sym.section_index, int) or not (
                    0 < sym.section_index < len(self.sections)):
                raise CodeObjectError(f"symbol {sym.name} is not defined in a section")
            sec = self.sections[sym.section_index]
            start = sym.value
        else:
            sec_or_none = next((s for s in self.sections
                                if s.addr and s.contains(sym.value, size)), None)
            if sec_or_none is None:
                raise CodeObjectError(f"symbol {sym.name} at {sym.value:#x} is in no section")
            sec = sec_or_none
            start = sym.value - sec.addr
        body = self.section_bytes(sec)
        if start < 0 or start + size > len(body):
            raise CodeObjectError(f"symbol {sym.name} ({size} bytes at {start:#x}) lies outside "
                                  f"section {sec.name}")
        return body[start:start + size]


def _check_header(data: bytes) -> tuple[Any, ...]:
    if len(data) < _IDENT.size:
        raise CodeObjectError(f"not an ELF file: {len(data)} bytes, shorter than an ELF64 "
                              "header")
    fields = _IDENT.unpack_from(data)
    magic, ei_class, ei_data, _version, os_abi = fields[:5]
    e_type, e_machine = fields[7], fields[8]
    if magic != b"\x7fELF":
        raise CodeObjectError("not an ELF file (bad magic)")
    if ei_class != 2 or ei_data != 1:
        raise CodeObjectError("not an AMDGPU code object: ELF class/data is not "
                              "ELFCLASS64/ELFDATA2LSB")
    if e_machine != EM_AMDGPU:
        raise CodeObjectError(f"not an AMDGPU code object: e_machine {e_machine}, "
                              f"expected EM_AMDGPU ({EM_AMDGPU})")
    if os_abi != ELFOSABI_AMDGPU_HSA:
        raise CodeObjectError(f"not an HSA code object: EI_OSABI {os_abi}, expected "
                              f"ELFOSABI_AMDGPU_HSA ({ELFOSABI_AMDGPU_HSA})")
    if e_type not in (ET_REL, ET_DYN):
        raise CodeObjectError(f"e_type {e_type} is neither ET_REL nor ET_DYN")
    return fields


def _in_file(data: bytes, what: str, offset: int, size: int) -> None:
    if offset < 0 or size < 0 or offset + size > len(data):
        raise CodeObjectError(f"{what} ({size} bytes at offset {offset:#x}) runs past the end "
                              f"of the file ({len(data)} bytes)")


def _symbols(section: SymbolTableSection, data: bytes) -> tuple[ElfSymbol, ...]:
    h = section.header
    table = section.stringtable
    fast = None if not isinstance(table, StringTableSection) else _symbols_from_bytes(
        data, h["sh_offset"], h["sh_size"], h["sh_entsize"], table.header["sh_offset"])
    if fast is not None:
        return fast
    return tuple(ElfSymbol(s.name, s["st_value"], s["st_size"], s["st_info"]["type"],
                           s["st_info"]["bind"], s["st_other"]["visibility"], s["st_shndx"])
                 for s in section.iter_symbols())


def _names(enum: Any) -> dict[int, str]:
    """pyelftools' decoding of one of its symbol enums: value → name (a value it has no
    name for stays the number)."""
    return {v: k for k, v in enum.items() if k != "_default_"}


_BIND, _TYPE = _names(ENUM_ST_INFO_BIND), _names(ENUM_ST_INFO_TYPE)
_VISIBILITY, _SHNDX = _names(ENUM_ST_VISIBILITY), _names(ENUM_ST_SHNDX)
_SYM = struct.Struct("<IBBHQQ")
"""Elf64_Sym: st_name, st_info (bind << 4 | type), st_other (visibility in bits 2:0, as
pyelftools reads it), st_shndx, st_value, st_size (System V gABI "Symbol Table")."""


def _symbols_from_bytes(data: bytes, offset: int, size: int, entsize: int,
                        strings: int) -> tuple[ElfSymbol, ...] | None:
    """The symbols of a symbol table read with `struct` from `data` (`strings`: the file
    offset of its linked string table): what pyelftools' `iter_symbols` gives (names from
    the linked string table, undecodable bytes replaced), at a tenth of its cost (its
    per-field parsers were a third of reading a batch's code object). None, for pyelftools
    to read them and fail as it does, when the table is not a well-formed array of
    Elf64_Sym inside the file."""
    if entsize != _SYM.size or size % entsize or offset < 0 or size < 0 or \
            offset + size > len(data):
        return None
    out = []
    for k in range(size // entsize):
        name_at, info, other, shndx, value, sym_size = _SYM.unpack_from(data, offset + k * entsize)
        start = strings + name_at
        end = data.find(b"\0", start)
        name = data[start:end].decode("utf-8", errors="replace") if end > start else ""
        out.append(ElfSymbol(name, value, sym_size, _TYPE.get(info & 0xF, info & 0xF),
                             _BIND.get(info >> 4, info >> 4),
                             _VISIBILITY.get(other & 7, other & 7),
                             _SHNDX.get(shndx, shndx)))
    return tuple(out)


_SHDR = struct.Struct("<IIQQQQIIQQ")
"""Elf64_Shdr: sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info,
sh_addralign, sh_entsize (System V gABI "Section Header")."""
_PHDR = struct.Struct("<IIQQQQQQ")
"""Elf64_Phdr: p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align."""
_SH_TYPES, _P_TYPES = _names(ENUM_SH_TYPE_BASE), _names(ENUM_P_TYPE_BASE)
"""pyelftools' names for EM_AMDGPU (it has machine tables for ARM, AArch64, x86-64, MIPS
and RISC-V only): a type it has no name for stays the number."""
SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_HASH = 0, 1, 2, 3, 5
SHT_DYNAMIC, SHT_NOTE = 6, 7
SHT_DYNSYM, SHT_GNU_HASH = 11, 0x6FFF_FFF6
_LINKED = {SHT_HASH: SHT_DYNSYM, SHT_GNU_HASH: SHT_DYNSYM, SHT_DYNAMIC: SHT_STRTAB,
           SHT_SYMTAB: SHT_STRTAB, SHT_DYNSYM: SHT_STRTAB}
"""The section types `ld.lld` puts in a code object that pyelftools builds from a linked
section (`ELFFile._make_section`), and the type that section must have here. Any other
type but NULL, PROGBITS (not `.stab`), STRTAB, NOTE and NOBITS, and any compressed
section (SHF_COMPRESSED: pyelftools reads its Elf64_Chdr), sends the file to pyelftools."""
SHF_COMPRESSED = 0x800


def _cstring(data: bytes, at: int) -> str | None:
    """pyelftools' `StringTableSection.get_string`; None where it would find no NUL."""
    end = data.find(b"\0", at)
    if at < 0 or end < 0:
        return None
    return data[at:end].decode("utf-8", errors="replace")


def _hash_fits(data: bytes, sh_type: int, offset: int, size: int) -> bool:
    """Whether the header pyelftools parses when it builds a hash section (the words and
    arrays of `Gnu_Hash`, or of `Elf_Hash` unless the section is empty) lies in the file;
    True for the other types."""
    if sh_type == SHT_GNU_HASH:
        if offset + 16 > len(data):
            return False
        buckets, _, bloom, _ = struct.unpack_from("<4I", data, offset)
        return offset + 16 + 8 * bloom + 4 * buckets <= len(data)
    if sh_type == SHT_HASH and size:
        if offset + 8 > len(data):
            return False
        buckets, chains = struct.unpack_from("<2I", data, offset)
        return offset + 8 + 4 * (buckets + chains) <= len(data)
    return True


def _read_plain(data: bytes, fields: tuple[Any, ...]) -> ElfImage | None:
    """`_read` with `struct` instead of pyelftools (a tenth of its cost, which was 1.0-1.5 ms
    of every launch's code-object read) for the well-formed shared objects `ld.lld` links:
    every header inside the file, no relocation section. None for anything else, which
    then goes through pyelftools and its errors; tests check the two give equal images."""
    e_phoff, e_shoff, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx = (
        fields[11], fields[12], fields[15], fields[16], fields[17], fields[18], fields[19])
    if (e_shentsize != _SHDR.size or not 0 < e_shstrndx < e_shnum
            or e_shoff + e_shnum * _SHDR.size > len(data)
            or (e_phnum and (e_phentsize != _PHDR.size
                             or e_phoff + e_phnum * _PHDR.size > len(data)))):
        return None
    headers = [_SHDR.unpack_from(data, e_shoff + k * _SHDR.size) for k in range(e_shnum)]
    names_at = headers[e_shstrndx][4]
    sections: list[ElfSection] = []
    symbols: tuple[ElfSymbol, ...] | None = ()
    dynamic: tuple[ElfSymbol, ...] | None = ()
    notes: list[Note] = []
    for index, (name_at, sh_type, flags, addr, offset, size, link, _info, align,
                entsize) in enumerate(headers):
        name = _cstring(data, names_at + name_at)
        if name is None or (sh_type == SHT_PROGBITS and name == ".stab") or (
                flags & SHF_COMPRESSED):
            return None
        if sh_type != SHT_NOBITS and sh_type != SHT_NULL and (
                offset + size > len(data)):
            return None
        if sh_type in _LINKED:
            if not 0 <= link < e_shnum or headers[link][1] != _LINKED[sh_type] or \
                    not _hash_fits(data, sh_type, offset, size):
                return None
        elif sh_type not in (SHT_NULL, SHT_PROGBITS, SHT_STRTAB, SHT_NOTE, SHT_NOBITS):
            return None
        sections.append(ElfSection(index, name, _SH_TYPES.get(sh_type, str(sh_type)), addr,
                                   offset, size, flags, align))
        if sh_type in (SHT_SYMTAB, SHT_DYNSYM):
            table = _symbols_from_bytes(data, offset, size, entsize, headers[link][4])
            if sh_type == SHT_DYNSYM:
                dynamic = table
            else:
                symbols = table
        elif sh_type == SHT_NOTE:
            try:
                notes.extend(parse_notes(data[offset:offset + size]))
            except (CodeObjectError, *_THIRD_PARTY_ERRORS):
                return None
    if symbols is None or dynamic is None:
        return None
    segments = []
    for k in range(e_phnum):
        p_type, p_flags, p_offset, p_vaddr, _paddr, filesz, memsz, p_align = _PHDR.unpack_from(
            data, e_phoff + k * _PHDR.size)
        segments.append(ElfSegment(_P_TYPES.get(p_type, str(p_type)), p_offset, p_vaddr,
                                   filesz, memsz, p_flags, p_align))
    return ElfImage(data=bytes(data), elf_type=fields[7], os_abi=fields[4],
                    abi_version=fields[5], machine=fields[8], flags=fields[13],
                    entry=fields[10], sections=tuple(sections), segments=tuple(segments),
                    symbols=symbols, dynamic_symbols=dynamic, relocations=(),
                    notes=tuple(notes))


def _read(data: bytes, plain: bool = True) -> ElfImage:
    fields = _check_header(data)
    if plain and fields[7] == ET_DYN:
        got = _read_plain(data, fields)
        if got is not None:
            return got
    elf = ELFFile(io.BytesIO(data))
    sections: list[ElfSection] = []
    symbols: tuple[ElfSymbol, ...] = ()
    dynamic: tuple[ElfSymbol, ...] = ()
    relocs: list[Relocation] = []
    notes: list[Note] = []
    for index, sec in enumerate(elf.iter_sections()):
        h = sec.header
        if h["sh_type"] != "SHT_NOBITS" and h["sh_type"] != "SHT_NULL":
            _in_file(data, f"section {sec.name or index}", h["sh_offset"], h["sh_size"])
        sections.append(ElfSection(index, sec.name, str(h["sh_type"]), h["sh_addr"],
                                   h["sh_offset"], h["sh_size"], h["sh_flags"],
                                   h["sh_addralign"]))
        if isinstance(sec, SymbolTableSection):
            if h["sh_type"] == "SHT_DYNSYM":
                dynamic = _symbols(sec, data)
            else:
                symbols = _symbols(sec, data)
        elif isinstance(sec, RelocationSection):
            symtab = elf.get_section(h["sh_link"])
            for r in sec.iter_relocations():
                sym = ""
                if isinstance(symtab, SymbolTableSection) and r["r_info_sym"]:
                    target = symtab.get_symbol(r["r_info_sym"])
                    sym = target.name
                    if not sym and target["st_info"]["type"] == "STT_SECTION":
                        # a section symbol is named by its section (as readelf prints it)
                        sym = elf.get_section(target["st_shndx"]).name
                relocs.append(Relocation(sec.name, r["r_offset"], r["r_info_type"], sym,
                                         r["r_addend"] if r.is_RELA() else 0))
        elif isinstance(sec, NoteSection):
            notes.extend(parse_notes(data[h["sh_offset"]:h["sh_offset"] + h["sh_size"]]))
    segments = tuple(ElfSegment(str(s["p_type"]), s["p_offset"], s["p_vaddr"], s["p_filesz"],
                                s["p_memsz"], s["p_flags"], s["p_align"])
                     for s in elf.iter_segments())
    return ElfImage(data=bytes(data), elf_type=fields[7], os_abi=fields[4],
                    abi_version=fields[5], machine=fields[8], flags=fields[13],
                    entry=fields[10], sections=tuple(sections), segments=segments,
                    symbols=symbols, dynamic_symbols=dynamic, relocations=tuple(relocs),
                    notes=tuple(notes))


def read_elf(data: bytes) -> ElfImage:
    """Read an AMDGPU ELF (relocatable object or shared code object); CodeObjectError with one
    line when the bytes are not one."""
    try:
        return _read(data)
    except CodeObjectError:
        raise
    except _THIRD_PARTY_ERRORS as e:
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise CodeObjectError(f"malformed ELF: {first[:200]}") from e
