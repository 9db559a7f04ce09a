"""Decoded code is cached per `.text` bytes *and* load address.

Found by `make fuzz`: the empty kernel compiled at O0 and at O3 has the same `.text` bytes
(`s_endpgm` and padding) at different addresses; with the bytes alone as the key, the O3 launch
in the same worker reused the O0 instructions and their addresses, and faulted
(`sim-oob-access`). Expected: both agree with `ref` (an empty kernel computes nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz.cli import main

EMPTY = '''format = "rgpu-case/1"
entry = "k"
kernel = """
use rgpu::*;

#[kernel]
pub fn k() {}
"""

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]
'''


def test_same_text_at_another_address_runs_at_its_own(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "empty.toml"
    case.write_text(EMPTY)
    status = main(["run", str(case), "--json",
                   "--pipelines", "ref,amdgpu-sim:gfx942:O0,amdgpu-sim:gfx942:O3"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert '"verdict": "agree"' in out, out
