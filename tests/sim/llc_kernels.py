"""IR kernels compiled by Debian's llc-22 (with extra `llc` options, e.g. the atomic
optimizer's strategy, which llvmlite's pass pipeline does not expose) and linked by ld.lld,
cached on disk by content hash as `kernels.build` does."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rgpu_fuzz.codeobj import LinkFailure, link
from rgpu_fuzz.process import run_bounded
from tests.sim.kernels import CACHE, DATA
from tests.toolchain import debian_llvm_tool


def llc_build(ir: str, cpu: str, opt: int = 3, flags: Sequence[str] = ()) -> bytes:
    """The linked code object of IR `ir` (a file name in `data/` or the IR text) compiled
    by llc-22 for `cpu` at `-O<opt>` with `flags`."""
    text = (DATA / ir).read_text() if ir.endswith(".ll") else ir
    llc = debian_llvm_tool("llc", 22)
    key = hashlib.sha256("\0".join((text, cpu, str(opt), *flags, llc)).encode()).hexdigest()
    CACHE.mkdir(exist_ok=True)
    out = CACHE / f"llc22-{key[:24]}.hsaco"
    if out.exists():
        return out.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = Path(tmp, "k.ll"), Path(tmp, "k.o")
        src.write_text(text)
        proc = run_bounded([llc, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", f"-O{opt}",
                            *flags, "-filetype=obj", str(src), "-o", str(obj)], timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"llc-22 failed: {proc.stderr[-2000:]}")
        linked = link(obj.read_bytes())
        if isinstance(linked, LinkFailure):
            raise RuntimeError(f"ld.lld failed: {linked.log}")
        tmp_out = out.with_suffix(f".{os.getpid()}.tmp")
        tmp_out.write_bytes(linked)
        os.replace(tmp_out, out)
    return out.read_bytes()
