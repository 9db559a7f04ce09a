"""What a launch does not redo (per-launch fixed cost): a code object the caller
read already is not read again, and a program bound already is not decoded again. The
results must be those of a launch that did both (the kernel's own outputs, checked by
`test_exec`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.codeobj import reader
from rgpu_fuzz.sim.launch import engine, loader
from rgpu_fuzz.sim.launch.engine import Arg, Status
from rgpu_fuzz.sim.state.memory import AddressSpace
from tests.sim.kernels import build, out, run

N_ITEMS = 2 * 3 * 2 * 4 * 2 * 3


def _ids(code: bytes, **kw: Any) -> np.ndarray:
    res = run(code, (2, 3, 2), (4, 2, 3), [Arg("out"), Arg(data=(10).to_bytes(4, "little"))],
              {"out": np.zeros(N_ITEMS * 10, np.uint32)}, **kw)
    assert res.status is Status.OK, res.fault
    return out(res, "out", np.uint32)


def test_a_launch_of_a_bound_program_does_not_decode_again() -> None:
    code = build("ids.ll")
    first = _ids(code)

    def no_decoding(*args: object) -> Any:
        raise AssertionError("decoded again for a program bound already")
    again = engine.simulate(code, "k", (2, 3, 2), (4, 2, 3),
                            [Arg("out"), Arg(data=(10).to_bytes(4, "little"))],
                            {"out": np.zeros(N_ITEMS * 10, np.uint32).tobytes()},
                            decode=no_decoding)
    assert again.status is Status.OK
    assert np.frombuffer(again.buffers["out"], np.uint32).tolist() == first.tolist()


def test_a_code_object_the_caller_read_is_not_read_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    code = build("ids.ll", opt=3)
    read = reader.read_code_object(code)
    want = _ids(code)
    monkeypatch.setattr(engine, "_CODE_OBJECTS", OrderedDict())
    monkeypatch.setattr(engine, "_PROGRAMS", OrderedDict())

    def no_reading(data: bytes) -> Any:
        raise AssertionError("the code object was read again")
    monkeypatch.setattr(reader, "read_code_object", no_reading)
    assert _ids(code, read=read).tolist() == want.tolist()


def _mappings(space: AddressSpace) -> list[tuple[object, ...]]:
    return [(m.name, m.base, m.writable, m.defined_size, m.data.tobytes())
            for m in space.mappings]


def test_a_launch_like_an_earlier_one_takes_its_places(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The second launch of a kernel with the same shape and buffer sizes places nothing
    (`loader._set_up` is not called) and gets the same memory, in arrays of its own; other
    buffer sizes are placed again. By hand: the first buffer sits at the address space's
    first address (a page boundary) and the kernarg segment holds its address first."""
    co = reader.read_code_object(build("ids.ll"))
    kernel = co.kernel("k")
    args = [Arg("out"), Arg(data=(10).to_bytes(4, "little"))]

    def launch(size: int) -> tuple[AddressSpace, loader.Launched]:
        space = AddressSpace()
        got = loader.set_up_launch(space, co, kernel, (2, 1, 1), (64, 1, 1), args,
                                   {"out": bytes(size)}, engine.SCRATCH_BASE)
        return space, got

    first_space, first = launch(4096)
    placed = loader._set_up
    monkeypatch.setattr(loader, "_set_up", lambda *a: pytest.fail("placed again"))
    second_space, second = launch(4096)
    assert _mappings(second_space) == _mappings(first_space)
    assert second.buffers["out"].base == 0x7F00_0000_0000
    assert second.entry.kernarg[:8] == (0x7F00_0000_0000).to_bytes(8, "little")
    assert second.entry == first.entry
    for a, b in zip(first_space.mappings, second_space.mappings, strict=True):
        assert a.data is b.data if not a.writable else not np.shares_memory(a.data, b.data)
    calls = []
    monkeypatch.setattr(loader, "_set_up", lambda *a: calls.append(1) or placed(*a))
    _, other = launch(8192)
    assert calls == [1]
    assert other.entry.kernarg_ptr > first.entry.kernarg_ptr    # after a larger buffer


def test_launches_of_other_shapes_between_give_each_their_own_values() -> None:
    """Launches of one kernel with two grids, alternating (each shape's layout kept): the
    dispatch packet and hidden arguments of each are its own (the ids kernel stores them
    per work-item)."""
    code = build("ids.ll")
    got = []
    for grid in ((2, 3, 2), (1, 1, 1), (2, 3, 2), (1, 1, 1)):
        res = run(code, grid, (4, 2, 3), [Arg("out"), Arg(data=(10).to_bytes(4, "little"))],
                  {"out": np.zeros(N_ITEMS * 10, np.uint32)})
        assert res.status is Status.OK, res.fault
        got.append(out(res, "out", np.uint32))
    assert got[0].tolist() == got[2].tolist() and got[1].tolist() == got[3].tolist()
    assert got[0].tolist() != got[1].tolist()
    # grid_size_x of the packet (u32 7 of each work-item's 10, work-item 0): 2 and 1 blocks
    assert (got[0][7], got[1][7]) == (2 * 4, 1 * 4)
