"""What a launch does not redo (issue 10, per-launch fixed cost): a code object the caller
read already is not read again, and a program bound already is not decoded again. The
results must be those of a launch that did both (the kernel's own outputs, checked by
`test_exec`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from rgpu_fuzz.codeobj import reader
from rgpu_fuzz.sim import engine
from rgpu_fuzz.sim.engine import Arg, Status
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
