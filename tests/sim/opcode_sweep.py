"""The opcode sweep: one instruction per opcode value of every encoding class of a target,
disassembled by `llvm-mc --disassemble` and by our decoder, side by side.

Each probe sets the format's identifying bits and opcode and fills the operand fields with
plain registers (VGPRs v1, v2, v3 for vector sources; s0 for scalar ones; `off` for FLAT
`saddr`), so the only thing that varies is the opcode. Probes are followed by three
marker instructions (`s_nop 0x1000+i` after probe i) so LLVM's output lines map back to
probes even where LLVM rejects a probe (it prints a warning on stderr and nothing on
stdout).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rgpu_fuzz.process import run_bounded
from rgpu_fuzz.sim.isa.decode import K_CONSTANT, decode
from rgpu_fuzz.sim.isa.formats import FieldKind, Format
from rgpu_fuzz.sim.isa.instruction import Encoding
from rgpu_fuzz.sim.isa.render import render
from rgpu_fuzz.sim.isa.tables import tables

_NOP = 0xBF800000       # s_nop simm16 on every target here; simm16 numbers the probe


def _marker(index: int) -> bytes:
    return (_NOP | (0x1000 + index)).to_bytes(4, "little")


@dataclass(frozen=True)
class Probe:
    """One opcode value of one format, and what LLVM and we make of it."""

    format: str
    op: int
    data: bytes
    llvm: str | None          # LLVM's text of the first instruction, None when rejected
    llvm_size: int | None
    ours: str
    our_opcode: str
    our_size: int

    @property
    def agrees(self) -> bool:
        return (self.llvm is not None and self.llvm_size == self.our_size
                and re.sub(r"/\*.*?\*/", "", self.llvm) == self.ours)

    @property
    def both_reject(self) -> bool:
        return self.llvm is None and self.our_opcode == ""


def _probe_bits(fmt: type[Format], op: int, target: str) -> int:
    """The probe for one opcode: only the fields its operand table names are set, each to
    an even register (64-bit operands must be even-aligned on gfx90a/gfx942)."""
    t = tables(target)
    spec = t.spec
    info = t.ops.get(fmt.op_table, {}).get(op)
    present = set(info.operands) if info is not None else set(fmt.fields)
    if fmt.encoding is Encoding.VOPD:
        present = set(fmt.fields)
    bits = fmt.match | (op << fmt.op.lo)
    if fmt.encoding is Encoding.VOPD:
        # X and Y sources in different VGPR banks (reg % 4), destinations of opposite
        # parity: LLVM's decoder rejects dual issue that breaks RDNA3 ISA §7.6's rules.
        values = {"srcx0": 257, "srcy0": 258, "vdstx": 6, "vdsty": 3}
        if info is not None and "vsrcy1" in info.operands:
            values["vsrcx1"] = 3          # the Y operation (v_dual_mov_b32) has no vsrc1
        for name, value in values.items():
            bits |= value << fmt.fields[name].lo
        return bits
    counter = 1
    for name, f in fmt.fields.items():
        value = 0
        if name == "op" or (f.kind is not FieldKind.PLAIN and name not in present
                            and name != "saddr"):
            continue
        if f.kind is FieldKind.SRC:
            value = 256 + 4 * counter
            counter += 1
        elif f.kind is FieldKind.VGPR:
            value = 4 * counter
            counter += 1
        elif name == "saddr" and "saddr" in present:
            value = 0x7C if spec.wave_size == 32 else 0x7F     # off
        elif name == "saddr":
            value = 0x7C if spec.wave_size == 32 else 0        # FLAT: RDNA3 wants null
        elif name == "sve" and fmt.encoding is Encoding.SCRATCH:
            value = 1
        elif name == "offen" and "vaddr" not in present:
            value = 0
        elif name == "imm" and "soffset" not in present:
            value = 0             # s_memtime, s_dcache_inv: no offset operand
        elif name == "gds" and info is not None and "_GWS_" in info.name:
            value = 1             # global wave sync: GDS only
        elif name == "opsel_hi" and info is not None and "MFMA" in info.name:
            value = 0             # MFMA: these bits select AGPR sources (acc), not op_sel_hi
        elif name in ("imm", "offen", "opsel_hi"):
            value = (1 << f.width) - 1
        elif name == "opsel_hi2":
            value = 1
        bits |= value << f.lo
    return bits


def probes(target: str, llvm_mc: str) -> list[Probe]:
    """Every opcode value of every format of `target`, through LLVM and our decoder."""
    t = tables(target)
    cases: list[tuple[str, int, bytes]] = []
    seen: set[str] = set()
    for index, fmt in enumerate(t.spec.formats):
        earlier = [f for f in t.spec.formats[:index] if f.encoding is not fmt.encoding]
        if fmt.encoding.value in seen and fmt.encoding not in (Encoding.VOP3, Encoding.VOP3SD):
            continue
        seen.add(fmt.encoding.value)
        for op in range(1 << fmt.op.width):
            if fmt.encoding is Encoding.VOP3SD and op not in t.ops["VOP3SDOp"]:
                continue          # VOP3 and VOP3B share the opcode space; probe each once
            if fmt.encoding is Encoding.VOP3 and op in t.ops["VOP3SDOp"]:
                continue
            bits = _probe_bits(fmt, op, target)
            if any(bits & f.mask == f.match for f in earlier):
                continue          # this opcode value is another format's encoding (SOP2 → SOPK)
            if fmt.encoding is Encoding.VOPD:
                mov = next(v for v, i in t.ops["VOPDOp"].items() if i.name == "V_DUAL_MOV_B32")
                bits |= mov << fmt.fields["opy"].lo
            data = bits.to_bytes(4 * fmt.dwords, "little")
            info = t.ops.get(fmt.op_table, {}).get(op)
            if info is not None and K_CONSTANT.match(info.name):
                data += (0x3F800000).to_bytes(4, "little")   # the K literal (1.0)
            cases.append((fmt.__name__, op, data))
    lines = []
    for index, (_name, _op, data) in enumerate(cases):
        lines.append(" ".join(f"0x{b:02x}" for b in data))
        lines.append(" ".join(f"0x{b:02x}" for b in _marker(index) * 3))
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "probes.txt")
        source.write_text("\n".join(lines) + "\n")
        proc = run_bounded([llvm_mc, "--disassemble", "--show-encoding", "-arch=amdgcn",
                            f"-mcpu={target}", str(source)], timeout=300)
    # LLVM warns "<file>:LINE:1: warning: invalid instruction encoding" for a probe it
    # rejects at its first byte (probe i is line 2i+1); what follows is resync noise.
    rejected = {int(m.group(1)) // 2 for m in re.finditer(r":(\d+):1: warning: invalid",
                                                         proc.stderr)}
    segments: list[list[tuple[str, bytes]]] = [[] for _ in cases]
    current = 0                   # output before probe i's marker belongs to probe i
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s+(.*?)\s*; encoding: \[(.*)\]", line)
        if not m:
            continue
        text = re.sub(r"\s+", " ", m.group(1))
        encoding = bytes(int(b, 16) for b in m.group(2).split(","))
        word = int.from_bytes(encoding, "little") if len(encoding) == 4 else -1
        if word >> 16 == _NOP >> 16 and (word & 0xFFFF) >= 0x1000:
            current = (word & 0xFFFF) - 0x1000 + 1
        elif current < len(cases):
            segments[current].append((text, encoding))
    out = []
    for (name, op, data), seg in zip(cases, segments, strict=True):
        inst = decode(data, target)[0]
        first: tuple[str | None, int | None] = (None, None)
        if seg and len(out) not in rejected:
            first = (seg[0][0], len(seg[0][1]))
        out.append(Probe(format=name, op=op, data=data, llvm=first[0], llvm_size=first[1],
                         ours=render(inst), our_opcode=inst.opcode, our_size=inst.size))
    return out
