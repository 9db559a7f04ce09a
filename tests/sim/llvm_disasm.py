"""LLVM's disassembly as (address, text) pairs: `llvm-objdump -d` output parsed, the
trailing `// ADDRESS: WORDS` comment and branch-target annotation dropped."""

from __future__ import annotations

import re
from pathlib import Path

from rgpu_fuzz.process import run_bounded

_LINE = re.compile(r"^\s+(?P<text>.*?)\s*// (?P<addr>[0-9A-F]+): [0-9A-F ]+?(?:\s+<.*>)?$")


def objdump(objdump_path: str, path: Path) -> dict[int, str]:
    """address → instruction text for every instruction of the code object's .text."""
    proc = run_bounded([objdump_path, "-d", str(path)], timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"llvm-objdump failed: {proc.stderr[-500:]}")
    out = {}
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        if m:
            out[int(m.group("addr"), 16)] = re.sub(r"\s+", " ", m.group("text"))
    return out
