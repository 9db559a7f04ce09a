"""Machine instructions as the check reads them: one line of LLVM-syntax assembly (from the
project's decoder, `Inst.text`, or from `llc`/`llvm-objdump`) cut into its mnemonic, its
cache-policy bits and what it does to the wait counters (AMD ISA manuals, "Data Dependency
Resolution": VM_CNT counts vector memory loads, and on GFX9 stores too; GFX10+ count stores
and atomics without return in VS_CNT; LGKM_CNT counts LDS, GDS, scalar memory and FLAT)."""

from __future__ import annotations

import re
from dataclasses import dataclass

CACHE_BITS = frozenset({"sc0", "sc1", "nt", "glc", "slc", "dlc"})
_WAIT = re.compile(r"(vmcnt|lgkmcnt|expcnt)\((\d+)\)")
_JUMP = frozenset({"s_branch", "s_setpc_b64", "s_swappc_b64"})
_CACHE_OPS = ("buffer_wbl2", "buffer_inv", "buffer_gl0_inv", "buffer_gl1_inv",
              "buffer_wbinvl1", "buffer_invl2")
_DS_ATOMIC = re.compile(r"^ds_(add|sub|rsub|inc|dec|min|max|and|or|xor|mskor|wrxchg|"
                        r"cmpst|cmpstore|condxchg)")


@dataclass(frozen=True, slots=True)
class MachineInst:
    """One instruction: `bits` are its cache-policy modifiers; `waits` the counters an
    `s_waitcnt` sets to zero; `adds` the counters it increments."""

    index: int
    text: str
    mnemonic: str
    bits: frozenset[str]
    waits: frozenset[str]
    adds: frozenset[str]

    @property
    def jump(self) -> bool:
        """An unconditional transfer: the instruction after it is not its successor, so
        the check's windows stop there (a conditional branch's fall-through is a path)."""
        return self.mnemonic in _JUMP

    @property
    def end(self) -> bool:
        return self.mnemonic == "s_endpgm"

    @property
    def cache_op(self) -> bool:
        return self.mnemonic.startswith(_CACHE_OPS)

    @property
    def memory(self) -> bool:
        """A memory access (what ends an acquire's window)."""
        return bool(self.adds) and not self.mnemonic.startswith("s_")

    @property
    def space(self) -> str:
        return "lds" if self.mnemonic.startswith("ds_") else "global"

    @property
    def rmw(self) -> bool:
        """An atomic read-modify-write (or compare-swap) instruction."""
        m = self.mnemonic
        return ("_atomic_" in m and m.split("_")[0] in ("global", "flat", "buffer")) \
            or bool(_DS_ATOMIC.match(m))

    @property
    def kind(self) -> str:
        """The operation of an atomic in the IR's words (`ir.IrAtomic.kind`)."""
        m = re.sub(r"^(global|flat|buffer)_atomic_|^ds_", "", self.mnemonic)
        m = re.sub(r"_(rtn|u32|i32|b32|u64|i64|b64|x2|f32|f64)\b", "", m)
        m = re.sub(r"^[su](min|max)$", r"\1", m)
        return {"swap": "xchg", "wrxchg": "xchg", "cmpswap": "cmpxchg", "cmpst": "cmpxchg",
                "cmpstore": "cmpxchg"}.get(m, m)

    def has(self, spec: str) -> bool:
        """Whether this is `spec`: a mnemonic with the bits it must carry."""
        name, *bits = spec.split()
        return self.mnemonic == name and set(bits) <= self.bits


def parse(index: int, line: str, family: str) -> MachineInst:
    """One assembly line (labels, comments and directives give an empty mnemonic)."""
    text = line.split(";")[0].strip()
    if not text or text.endswith(":") or text.startswith("."):
        return MachineInst(index, text, "", frozenset(), frozenset(), frozenset())
    mnemonic, _, rest = text.partition(" ")
    tokens = set(re.split(r"[\s,]+", rest))
    bits = frozenset(tokens & CACHE_BITS)
    waits: set[str] = set()
    if mnemonic == "s_waitcnt":
        waits = {"vm" if k == "vmcnt" else "lgkm" for k, n in _WAIT.findall(rest)
                 if n == "0" and k != "expcnt"}
    elif mnemonic == "s_waitcnt_vscnt" and rest.replace(" ", "").endswith(",0x0"):
        waits = {"vs"}
    return MachineInst(index, text, mnemonic, bits, frozenset(waits),
                       frozenset(_adds(mnemonic, bits, family)))


def _adds(m: str, bits: frozenset[str], family: str) -> set[str]:
    if m.startswith("ds_"):
        return {"lgkm"}
    head = m.split("_")[0]
    if head not in ("global", "buffer", "flat", "scratch") or m.startswith(_CACHE_OPS):
        return set()
    returns = "load" in m or ("_atomic_" in m and bool(bits & {"sc0", "glc"}))
    vm = {"vm"} if returns or family != "gfx1100" else {"vs"}
    return vm | {"lgkm"} if head == "flat" else vm


def parse_all(lines: list[str], family: str) -> list[MachineInst]:
    return [parse(i, line, family) for i, line in enumerate(lines)]
