"""Atheris harness: bytes against the code-object reader and the metadata-note parser.

The contract under test: for *any* bytes, `read_code_object` returns a `CodeObject` (and
`verify_code_object` then returns violations, never raises) or raises `CodeObjectError` with
a one-line message; `parse_metadata` likewise for any note descriptor. Anything else — an
exception from pyelftools or msgpack that escaped the boundary, a multi-line message — is a
reader bug.

Each input is tried three ways: as a whole file; spliced into a real code object (the first
two bytes pick an offset, the rest overwrites the bytes there, so most inputs pass the header
checks and reach sections, symbols, notes and descriptors); and as a metadata descriptor.

Run (atheris is optional, `pip install atheris`):
    python fuzz/codeobj.py -max_len=8192 fuzz/seeds/codeobj
    python fuzz/codeobj.py --write-seeds fuzz/seeds/codeobj   # real code objects to start from

This module imports atheris only in `main`, so tests call `TestOneInput` directly.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rgpu_fuzz.codeobj import (
    CodeObjectError,
    parse_metadata,
    read_code_object,
    verify_code_object,
)

_BASE: bytes | None = None


def set_base(data: bytes) -> None:
    """The real code object inputs are spliced into (tests pass one they built)."""
    global _BASE
    _BASE = data


def check_bytes(data: bytes) -> None:
    """Read `data`; only CodeObjectError with one line may come out."""
    try:
        co = read_code_object(data)
    except CodeObjectError as e:
        if "\n" in str(e):
            raise AssertionError(f"multi-line CodeObjectError: {e!s:.300}") from e
        return
    verify_code_object(co)


def check_note(desc: bytes) -> None:
    try:
        parse_metadata(desc)
    except CodeObjectError as e:
        if "\n" in str(e):
            raise AssertionError(f"multi-line CodeObjectError: {e!s:.300}") from e


def splice(base: bytes, data: bytes) -> bytes:
    """Overwrite `base` at the offset the first two bytes of `data` give."""
    if len(data) < 2 or not base:
        return base
    offset = int.from_bytes(data[:2], "little") % len(base)
    patch = data[2:]
    return base[:offset] + patch + base[offset + len(patch):]


def TestOneInput(data: bytes) -> None:  # the name atheris expects
    check_bytes(data)
    if _BASE is not None:
        check_bytes(splice(_BASE, data))
    check_note(data)


def write_seeds(folder: Path) -> int:
    """Write the test code objects as seeds; returns how many."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.amdgcn_objects import Built, build_all

    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for b in build_all():
        if isinstance(b, Built):
            (folder / f"{b.label}.hsaco").write_bytes(b.hsaco)
            n += 1
    return n


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv if argv is None else argv)
    if "--write-seeds" in args:
        print(write_seeds(Path(args[args.index("--write-seeds") + 1])), "seeds written")
        return
    import atheris

    with atheris.instrument_imports(include=["rgpu_fuzz"]):
        import rgpu_fuzz.codeobj  # noqa: F401
    seeds = [Path(a) for a in args[1:] if not a.startswith("-") and Path(a).is_dir()]
    for folder in seeds:
        first = next(iter(sorted(folder.glob("*.hsaco"))), None)
        if first is not None:
            set_base(first.read_bytes())
            break
    atheris.Setup(args, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
