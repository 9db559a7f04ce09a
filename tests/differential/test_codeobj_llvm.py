"""Our code-object reading against LLVM's own tools (Debian llvm-22), on every test code
object (the hand-written kernels, and the corpus through our amdgcn lowering): the metadata
note against `llvm-readelf --notes`, every kernel descriptor field against the `.amdhsa_*`
directives `llvm-objdump --disassemble-symbols=<k>.kd` prints, the ELF header's target
against `llvm-readelf -h`, dynamic symbols against `--dyn-syms`, every symbol table entry
against `--syms`. The expected values are
LLVM's: nothing here comes from the code under test.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
import yaml

from rgpu_fuzz.codeobj import FIELDS, FeatureSetting, read_code_object
from rgpu_fuzz.codeobj.targets import _TABLE as TARGET_TABLE
from rgpu_fuzz.process import run_bounded
from tests.amdgcn_objects import Built, build_all, build_cases
from tests.toolchain import debian_llvm_tool

CORPUS = tuple(sorted((Path(__file__).resolve().parents[2] / "corpus").glob("*.toml")))
BUILT = [b for b in build_all() + build_cases(CORPUS) if isinstance(b, Built)]
"""The hand-written kernels and the corpus through our lowering, each target, O0 and O3."""


@pytest.fixture(scope="session")
def llvm22() -> Path:
    """Debian llvm-22's bin directory (installed with apt-get when missing)."""
    debian_llvm_tool("llvm-objdump", 22)
    return Path(debian_llvm_tool("llvm-readelf", 22)).parent


def _tool(bindir: Path, tool: str, *args: str, data: bytes, tmp_path: Path) -> str:
    path = tmp_path / "k.hsaco"
    path.write_bytes(data)
    proc = run_bounded([str(bindir / tool), *args, str(path)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _yaml_str(value: object) -> object:
    """Our value as LLVM's YAML prints it (read with yaml.BaseLoader: every scalar a str)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, tuple):
        return [_yaml_str(v) for v in value]
    return value


def _our_metadata_as_yaml(co) -> dict[str, object]:
    meta = co.metadata
    kernels = []
    for k in meta.kernels:
        entry: dict[str, object] = {}
        for field, key in (("name", ".name"), ("symbol", ".symbol"),
                           ("kernarg_segment_size", ".kernarg_segment_size"),
                           ("kernarg_segment_align", ".kernarg_segment_align"),
                           ("group_segment_fixed_size", ".group_segment_fixed_size"),
                           ("private_segment_fixed_size", ".private_segment_fixed_size"),
                           ("wavefront_size", ".wavefront_size"),
                           ("sgpr_count", ".sgpr_count"), ("vgpr_count", ".vgpr_count"),
                           ("max_flat_workgroup_size", ".max_flat_workgroup_size"),
                           ("agpr_count", ".agpr_count"),
                           ("sgpr_spill_count", ".sgpr_spill_count"),
                           ("vgpr_spill_count", ".vgpr_spill_count"),
                           ("uses_dynamic_stack", ".uses_dynamic_stack"),
                           ("workgroup_processor_mode", ".workgroup_processor_mode"),
                           ("uniform_work_group_size", ".uniform_work_group_size"),
                           ("reqd_workgroup_size", ".reqd_workgroup_size"),
                           ("language", ".language"), ("kind", ".kind")):
            value = getattr(k, field)
            if value is not None:
                entry[key] = _yaml_str(value)
        entry.update({key: _yaml_str(v) for key, v in k.extra})
        args = []
        for a in k.args:
            arg: dict[str, object] = {".offset": str(a.offset), ".size": str(a.size),
                                      ".value_kind": a.value_kind}
            for field, key in (("name", ".name"), ("type_name", ".type_name"),
                               ("address_space", ".address_space"), ("access", ".access"),
                               ("actual_access", ".actual_access"),
                               ("pointee_align", ".pointee_align")):
                if (value := getattr(a, field)) is not None:
                    arg[key] = _yaml_str(value)
            for flag in ("is_const", "is_restrict", "is_volatile", "is_pipe"):
                if getattr(a, flag):
                    arg[f".{flag}"] = "true"
            arg.update({key: _yaml_str(v) for key, v in a.extra})
            args.append(arg)
        if args:
            entry[".args"] = args
        kernels.append(entry)
    out: dict[str, object] = {"amdhsa.version": _yaml_str(meta.version),
                              "amdhsa.kernels": kernels}
    if meta.target is not None:
        out["amdhsa.target"] = meta.target
    return out


@pytest.mark.parametrize("built", BUILT, ids=lambda b: b.label)
@pytest.mark.parametrize("which", ["obj", "hsaco"])
def test_metadata_equals_llvm_readelf_notes(built: Built, which: str, llvm22: Path,
                                            tmp_path: Path) -> None:
    data = getattr(built, which)
    out = _tool(llvm22, "llvm-readelf", "--notes", data=data, tmp_path=tmp_path)
    doc = out[out.index("---"):out.index("\n...") + 4]
    theirs = yaml.load(doc, Loader=yaml.BaseLoader)
    assert _our_metadata_as_yaml(read_code_object(data)) == theirs


_DIRECTIVE = re.compile(r"^\s*(\.amdhsa_\w+|; [A-Z_0-9]+) (-?\d+)\s*$")


@pytest.mark.parametrize("built", BUILT, ids=lambda b: b.label)
def test_descriptor_equals_llvm_objdump(built: Built, llvm22: Path,
                                        tmp_path: Path) -> None:
    co = read_code_object(built.hsaco)
    for k in co.kernels:
        out = _tool(llvm22, "llvm-objdump", "-D", f"--disassemble-symbols={k.metadata.symbol}",
                    data=built.hsaco, tmp_path=tmp_path)
        printed = {}
        for line in out.splitlines():
            if m := _DIRECTIVE.match(line):
                printed[m.group(1)] = int(m.group(2))
        assert printed, out
        kd = k.descriptor
        ours: dict[str, int] = {
            ".amdhsa_group_segment_fixed_size": kd.group_segment_fixed_size,
            ".amdhsa_private_segment_fixed_size": kd.private_segment_fixed_size,
            ".amdhsa_kernarg_size": kd.kernarg_size,
            ".amdhsa_next_free_vgpr": kd.next_free_vgpr(co.target),
        }
        if kd.next_free_sgpr is not None:
            ours[".amdhsa_next_free_sgpr"] = kd.next_free_sgpr
        if kd.accum_offset is not None:
            ours[".amdhsa_accum_offset"] = kd.accum_offset
        for f in FIELDS:
            if co.target.generation in f.generations:
                for directive in f.directives:
                    ours[directive] = kd.field(f.name, f.register)
        # objdump prints each field once under one of its names; derived directives it
        # prints without a field of their own (reserve_vcc, reserve_xnack_mask, ...) are
        # not descriptor fields.
        compared = {d for d in printed if d in ours}
        assert {d: printed[d] for d in compared} == {d: ours[d] for d in compared}
        derived = {".amdhsa_reserve_vcc", ".amdhsa_reserve_xnack_mask",
                   ".amdhsa_reserve_flat_scratch"}
        if co.target.is_gfx10_plus:
            # GFX10+: the SGPR count field is reserved (all SGPRs are allocated); objdump
            # still prints a next_free_sgpr made from it.
            assert kd.field("RESERVED_SGPR_COUNT") == 0
            derived.add(".amdhsa_next_free_sgpr")
        assert not set(printed) - set(ours) - derived
        # every field objdump names must be one we decode (no field left unnamed)
        assert len(compared) >= 30


@pytest.mark.parametrize("built", [b for b in BUILT if b.opt == 0 and b.name == "add"],
                         ids=lambda b: b.label)
def test_dynamic_symbols_equal_llvm_readelf(built: Built, llvm22: Path,
                                            tmp_path: Path) -> None:
    out = _tool(llvm22, "llvm-readelf", "--dyn-syms", "-W", data=built.hsaco,
                tmp_path=tmp_path)
    theirs = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 8 and parts[0].rstrip(":").isdigit() and parts[7]:
            theirs.add((parts[7], int(parts[1], 16), int(parts[2])))
    co = read_code_object(built.hsaco)
    ours = {(s.name, s.value, s.size) for s in co.elf.dynamic_symbols if s.name}
    assert ours == theirs


_NDX = {"SHN_UNDEF": "UND", "SHN_ABS": "ABS", "SHN_COMMON": "COM"}


@pytest.mark.parametrize("built", [b for b in BUILT if b.cpu == "gfx942"],
                         ids=lambda b: b.label)
def test_every_symbol_equals_llvm_readelf(built: Built, llvm22: Path,
                                          tmp_path: Path) -> None:
    """Every field of every `.symtab` and `.dynsym` entry, of the relocatable object and
    the linked code object (`elf._symbols_from_bytes`, the reader's own parse of the
    tables), against `llvm-readelf --syms`."""
    for data in (built.obj, built.hsaco):
        out = _tool(llvm22, "llvm-readelf", "--syms", "-W", data=data, tmp_path=tmp_path)
        theirs: dict[str, list[tuple[object, ...]]] = {}
        table = ""
        for line in out.splitlines():
            if m := re.match(r"Symbol table '([^']+)'", line):
                table = m.group(1)
                theirs[table] = []
            elif m := re.match(r"\s*\d+: ([0-9a-f]{16})\s+(\d+) (\w+)\s+(\w+)\s+(\w+)\s+"
                               r"(\w+) ?(.*)$", line):
                value, size, typ, bind, vis, ndx, name = m.groups()
                theirs[table].append((name, int(value, 16), int(size), typ, bind, vis, ndx))
        co = read_code_object(data)
        ours = {".symtab": co.elf.symbols, ".dynsym": co.elf.dynamic_symbols}
        assert theirs.get(".symtab")
        for name, symbols in ours.items():
            # readelf names a section symbol (STT_SECTION, no name of its own) by its section
            got = [(s.name or (co.elf.sections[s.section_index].name
                               if s.type == "STT_SECTION" else ""),
                    s.value, s.size, str(s.type).removeprefix("STT_"),
                    str(s.bind).removeprefix("STB_"), str(s.visibility).removeprefix("STV_"),
                    _NDX.get(str(s.section_index), str(s.section_index))) for s in symbols]
            assert got == theirs.get(name, []), name


@pytest.mark.parametrize("built", [b for b in BUILT if b.cpu == "gfx942"],
                         ids=lambda b: b.label)
def test_relocations_equal_llvm_readelf(built: Built, llvm22: Path, tmp_path: Path) -> None:
    """The relocatable object's relocations (the descriptor's R_AMDGPU_REL64 entry offset,
    calls, LDS) against `llvm-readelf -r`."""
    out = _tool(llvm22, "llvm-readelf", "-r", "-W", data=built.obj, tmp_path=tmp_path)
    theirs = []
    section = ""
    for line in out.splitlines():
        if m := re.match(r"Relocation section '([^']+)'", line):
            section = m.group(1)
        elif m := re.match(r"([0-9a-f]{16})\s+[0-9a-f]+\s+(R_AMDGPU_\w+)\s+[0-9a-f]+\s+"
                           r"(\S+) ([+-]) ([0-9a-f]+)$", line.strip()):
            addend = int(m.group(5), 16) * (1 if m.group(4) == "+" else -1)
            theirs.append((section, int(m.group(1), 16), m.group(2), m.group(3), addend))
    co = read_code_object(built.obj)
    ours = [(r.section, r.offset, r.type_name, r.symbol, r.addend) for r in co.elf.relocations]
    assert theirs and ours == theirs


@pytest.mark.parametrize("built", [b for b in BUILT if b.name == "add"],
                         ids=lambda b: b.label)
def test_sections_and_segments_equal_llvm_readelf(built: Built, llvm22: Path,
                                                  tmp_path: Path) -> None:
    """Every section header (name, type, address, offset, size, alignment) and program
    header of the relocatable object and the linked code object (the linked one is read
    by `elf._read_plain`, the relocatable one by pyelftools) against `llvm-readelf -S -l`."""
    for data in (built.obj, built.hsaco):
        out = _tool(llvm22, "llvm-readelf", "-S", "-l", "-W", data=data, tmp_path=tmp_path)
        theirs_s, theirs_p = [], []
        for line in out.splitlines():
            if m := re.match(r"\s*\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+([0-9a-f]{16}) ([0-9a-f]+) "
                             r"([0-9a-f]+) [0-9a-f]+ .* (\d+)$", line):
                index, name, typ, addr, off, size, align = m.groups()
                theirs_s.append((int(index), name, typ, int(addr, 16), int(off, 16),
                                 int(size, 16), int(align)))
            elif m := re.match(r"\s*([A-Z_]+)\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ "
                               r"0x([0-9a-f]+) 0x([0-9a-f]+) .* 0x([0-9a-f]+)$", line):
                typ, off, vaddr, filesz, memsz, align = m.groups()
                theirs_p.append((typ, int(off, 16), int(vaddr, 16), int(filesz, 16),
                                 int(memsz, 16), int(align, 16)))
        elf = read_code_object(data).elf
        assert [(s.index, s.name, s.type.removeprefix("SHT_"), s.addr, s.offset, s.size,
                 s.align) for s in elf.sections] == theirs_s
        assert [(p.type.removeprefix("PT_"), p.offset, p.vaddr, p.filesz, p.memsz, p.align)
                for p in elf.segments] == theirs_p
        assert theirs_s and (theirs_p or data is built.obj)


_FEATURE_TEXT = {FeatureSetting.ANY: "", FeatureSetting.OFF: "-", FeatureSetting.ON: "+"}


@pytest.mark.parametrize("target", TARGET_TABLE, ids=lambda t: t.name)
def test_target_names_equal_llvm_readelf(target, llvm22: Path,
                                         tmp_path: Path) -> None:
    """Our EF_AMDGPU_MACH table and xnack/sramecc decoding against readelf's Flags line,
    by patching e_flags of a gfx942 code object."""
    base = next(b for b in BUILT if b.cpu == "gfx942").hsaco
    for xnack_bits, sramecc_bits in ((1, 1), (2, 3), (3, 2)):
        flags = target.mach | xnack_bits << 8 | sramecc_bits << 10
        data = bytearray(base)
        struct.pack_into("<I", data, 48, flags)
        out = _tool(llvm22, "llvm-readelf", "-h", data=bytes(data), tmp_path=tmp_path)
        line = next(ln for ln in out.splitlines() if "Flags:" in ln)
        names = [p.strip() for p in line.split(":", 1)[1].split(",")]
        co = read_code_object(bytes(data))
        expected = [f"{flags:#x}", co.target.name,
                    f"xnack{_FEATURE_TEXT[co.xnack]}", f"sramecc{_FEATURE_TEXT[co.sramecc]}"]
        assert names == expected
