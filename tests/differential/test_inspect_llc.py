"""`inspect --llc`: the same case through Debian's llc-19 and llc-22 instead of llvmlite's
LLVM: the code objects load (v5, no loader rule broken), and the kernel ABI LLVM's metadata
records is the same for all three code generators (argument names, offsets, sizes, kinds)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from rgpu_fuzz.cli import main
from tests.toolchain import debian_llvm_tool

CASE = sorted((Path(__file__).resolve().parents[2] / "corpus").glob("*.toml"))[0]


def _inspect(*extra: str) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["inspect", str(CASE), "--target", "gfx942", "--opt", "O2", "--json",
                   *extra])
    assert rc == 0
    return json.loads(buf.getvalue())


def _explicit(doc: dict) -> list[tuple]:
    (kernel,) = doc["code_object"]["kernels"]
    return [(a.get("name"), a["offset"], a["size"], a["value_kind"])
            for a in kernel["metadata"]["args"] if not a["value_kind"].startswith("hidden_")]


@pytest.mark.parametrize("major", [19, 22])
def test_external_llc_code_objects_load(major: int) -> None:
    llc = debian_llvm_tool("llc", major)
    theirs = _inspect("--llc", llc)
    ours = _inspect()
    assert theirs["code_object"]["code_object_version"] == 5
    assert theirs["code_object"]["violations"] == []
    assert _explicit(theirs) == _explicit(ours)
    assert ".amdhsa_kernel" in theirs["assembly"]
