"""`codeobj.elf._read_plain` (section and program headers, symbol tables and notes read
with `struct`) against pyelftools' reading of the same bytes (`_read(..., plain=False)`),
on every hand-written test kernel for each target and opt level; and the inputs it must
hand to pyelftools (relocatable objects, headers past the end of the file, a relocation
section), whose errors stay pyelftools' (`test_codeobj` checks their text). Field values
against LLVM's own reading: `tests/differential/test_codeobj_llvm.py`."""

from __future__ import annotations

import struct

import pytest

from rgpu_fuzz.codeobj.elf import _check_header, _read, _read_plain, read_elf
from rgpu_fuzz.codeobj.errors import CodeObjectError
from tests.amdgcn_objects import Built, build_all

BUILT = [b for b in build_all() if isinstance(b, Built)]


@pytest.mark.parametrize("built", BUILT, ids=lambda b: b.label)
def test_plain_reading_equals_pyelftools(built: Built) -> None:
    plain = _read_plain(built.hsaco, _check_header(built.hsaco))
    assert plain is not None
    assert plain == _read(built.hsaco, plain=False)


def _hsaco() -> bytes:
    return next(b for b in BUILT if b.cpu == "gfx942").hsaco


def test_relocatable_objects_and_relocation_sections_go_to_pyelftools() -> None:
    obj = next(b for b in BUILT if b.cpu == "gfx942").obj
    assert _read(obj) == _read(obj, plain=False) and _read(obj).relocations
    data = bytearray(_hsaco())
    e_shoff = struct.unpack_from("<Q", data, 40)[0]
    # section 1 (.note) retyped SHT_RELA: not a type the plain reader reads
    struct.pack_into("<I", data, e_shoff + 64 + 4, 4)
    assert _read_plain(bytes(data), _check_header(bytes(data))) is None


def test_headers_past_the_end_go_to_pyelftools_and_its_error() -> None:
    data = _hsaco()
    e_shoff = struct.unpack_from("<Q", data, 40)[0]
    cut = data[:e_shoff + 64 * 3]                     # the section header table cut short
    assert _read_plain(cut, _check_header(cut)) is None
    with pytest.raises(CodeObjectError):
        read_elf(cut)
    moved = bytearray(data)
    struct.pack_into("<Q", moved, 64 + 8, len(data))  # the first program header's p_offset
    struct.pack_into("<Q", moved, 32, len(data) - 8)  # e_phoff: the table past the end
    assert _read_plain(bytes(moved), _check_header(bytes(moved))) is None


def test_mutated_code_objects_read_the_same_or_go_to_pyelftools() -> None:
    """Random bytes spliced into linked code objects (the header, anywhere, the section
    header table at the end): wherever `_read_plain` reads a file, pyelftools reads the
    same image from it, and never fails on it (60,000 such inputs when this was written:
    hash tables' headers, SHF_COMPRESSED and symbol-table sizes are what it checks for)."""
    import random

    rng = random.Random(20261201)
    read = 0
    for _ in range(1500):
        data = bytearray(rng.choice(BUILT).hsaco)
        for _ in range(rng.randint(1, 4)):
            at = rng.choice([rng.randrange(64), rng.randrange(len(data)),
                             len(data) - rng.randrange(1, 700)])
            blob = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            data[at:at + len(blob)] = blob
        try:
            fields = _check_header(bytes(data))
        except CodeObjectError:
            continue
        plain = _read_plain(bytes(data), fields)
        if plain is not None:
            read += 1
            assert plain == _read(bytes(data), plain=False)
    assert read > 300
