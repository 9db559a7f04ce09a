"""Hand-written amdgcn IR kernels (`data/*.ll`) compiled by llvmlite in a child process
(`tests/amdgcn_emit.py`: LLVM aborts on fatal errors) and linked by ld.lld, cached on disk
by content hash so xdist workers share one build; plus the launch helper the executor tests
share."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import llvmlite
import numpy as np

from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.sim.isa.code import decode_text
from rgpu_fuzz.sim.launch.engine import Arg, SimResult, simulate

DATA = Path(__file__).parent / "data"
EMIT = Path(__file__).parent.parent / "amdgcn_emit.py"
CACHE = Path(tempfile.gettempdir()) / f"rgpu-test-sim-{os.getuid()}"


def build(ir: str, cpu: str = "gfx942", opt: int = 0) -> bytes:
    """The linked code object of IR text `ir` (a file name in `data/` or the IR itself)."""
    text = (DATA / ir).read_text() if ir.endswith(".ll") else ir
    key = hashlib.sha256("\0".join((text, cpu, str(opt), llvmlite.__version__,
                                    EMIT.read_text())).encode()).hexdigest()[:24]
    CACHE.mkdir(exist_ok=True)
    out = CACHE / f"{key}.hsaco"
    if out.exists():
        return out.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "k.ll")
        src.write_text(text)
        obj = Path(tmp, "k.o")
        jobs = Path(tmp, "jobs.json")
        jobs.write_text(json.dumps([{"ir": str(src), "cpu": cpu, "opt": opt, "out": str(obj)}]))
        proc = run_bounded([sys.executable, str(EMIT), str(jobs)], timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"amdgcn_emit failed ({proc.ended_by}): {proc.stderr[-2000:]}")
        linked = link(obj.read_bytes())
        if isinstance(linked, LinkFailure):
            raise RuntimeError(f"ld.lld failed: {linked.log}")
        tmp_out = out.with_suffix(f".{os.getpid()}.tmp")
        tmp_out.write_bytes(linked)
        os.replace(tmp_out, out)
    return out.read_bytes()


def run(code: bytes, grid: tuple[int, int, int], block: tuple[int, int, int],
        args: Sequence[Arg], buffers: Mapping[str, np.ndarray], kernel: str = "k",
        **kw: object) -> SimResult:
    return simulate(code, kernel, grid, block, args,
                    {k: np.ascontiguousarray(v).tobytes() for k, v in buffers.items()},
                    decode=decode_text, **kw)  # type: ignore[arg-type]


def u64(v: int) -> Arg:
    return Arg(data=struct.pack("<Q", v))


def out(res: SimResult, name: str, dtype: type) -> np.ndarray:
    return np.frombuffer(res.buffers[name], dtype)
