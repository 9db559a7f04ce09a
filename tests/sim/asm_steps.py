"""Hand-written instruction sequences for executor unit tests: encoded by Debian's
llvm-mc-22 (`--show-encoding`), scanned as the simulator scans a `.text`
(`rgpu_fuzz.sim.isa.code.scan`, which also marks VGPR indexing regions), and run one bound
step after another on a wave the test prepares."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.sim.bound.operands import Env
from rgpu_fuzz.sim.bound.program import bind_one
from rgpu_fuzz.sim.isa.code import Code, scan
from rgpu_fuzz.sim.state.wave import Wave
from tests.toolchain import debian_llvm_tool

ENV = Env(lanes=64, ieee=True, flush32=False, flush64=False, constants=((125, 0),),
          waitcnt=lambda simm: (simm & 0xF, (simm >> 8) & 0xF))


def encodings(source: str, cpu: str = "gfx942") -> list[tuple[str, bytes]]:
    """(llvm-mc's rendering, bytes) of each instruction of assembly `source`."""
    llvm_mc = debian_llvm_tool("llvm-mc", 22)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "in.s")
        path.write_text(source)
        proc = run_bounded([llvm_mc, "-arch=amdgcn", f"-mcpu={cpu}", "--show-encoding",
                            str(path)], timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s+(.*?)\s*; encoding: \[(.*)\]", line)
        if m:
            out.append((re.sub(r"\s+", " ", m.group(1)),
                        bytes(int(b, 16) for b in m.group(2).split(","))))
    return out


def assemble(lines: list[str], cpu: str = "gfx942") -> Code:
    """`lines` encoded and scanned at 0x1000, as the executor sees a `.text`."""
    data = b"".join(enc for _, enc in encodings("\n".join(lines) + "\n", cpu))
    return scan(data, cpu, 0x1000)


def run_steps(code: Code, w: Wave, env: Env = ENV) -> None:
    """Bind every instruction as a program does (from its template, at its address) and
    run them in order."""
    for k in range(len(code)):
        t = code.templates[k]
        inst = t if t.share_key else t.at(code.addresses[k])
        bind_one(inst, env, None, lambda address: 0)(w)
