"""Hypothesis byte mutations of real code objects against the reader: any bytes give a
CodeObject (whose verification never raises) or one-line CodeObjectError (fuzz/codeobj.py's
contract, here with shrinking and a fixed CI budget)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.codeobj import check_bytes, check_note, splice
from tests.amdgcn_objects import Built, build_all

BASES = [b.hsaco for b in build_all() if isinstance(b, Built) and b.opt == 3] + [
    b.obj for b in build_all() if isinstance(b, Built) and b.opt == 0 and b.cpu == "gfx942"]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["byte", "word", "cut", "splice"]))
        pos = draw(st.integers(0, len(data) - 1))
        if kind == "byte":
            data[pos] = draw(st.integers(0, 255))
        elif kind == "word":
            data[pos:pos + 8] = draw(st.sampled_from(
                [b"\xff" * 8, bytes(8), (2**63).to_bytes(8, "little"),
                 (1 << 32).to_bytes(8, "little")]))
        elif kind == "cut":
            data = data[:pos]
            if not data:
                break
        else:
            data = bytearray(splice(bytes(data), draw(st.binary(min_size=2, max_size=64))))
    return bytes(data)


@settings(max_examples=300)
@given(mutated())
def test_mutated_code_objects_read_or_fail_with_one_line(data: bytes) -> None:
    check_bytes(data)


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=256), mutated().map(lambda d: d[0x200:0x900])))
def test_any_note_descriptor_parses_or_fails_with_one_line(desc: bytes) -> None:
    check_note(desc)


def test_atheris_entry_point_on_seeded_inputs() -> None:
    """fuzz/codeobj.py's `TestOneInput` (atheris itself is optional) on a real code object
    and seeded random bytes spliced into it: none may raise."""
    import random

    from fuzz import codeobj as harness

    harness.set_base(BASES[0])
    rng = random.Random(7)
    for _ in range(300):
        harness.TestOneInput(rng.randbytes(rng.randrange(2, 64)))
    harness.TestOneInput(BASES[1])
