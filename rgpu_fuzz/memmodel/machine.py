"""Machine instructions as the check reads them: one line of LLVM-syntax assembly (from the
project's decoder, `Inst.text`, or from `llc`/`llvm-objdump`) cut into its mnemonic, its
cache-policy bits and what it does to the wait counters (AMD ISA manuals, "Data Dependency
Resolution": VM_CNT counts vector memory loads, and on GFX9 stores too; GFX10+ count stores
and atomics without return in VS_CNT; LGKM_CNT counts LDS, GDS, scalar memory and FLAT).

GFX12 (RDNA4 ISA, "Memory Scope and Temporal Hints" and "Data Dependency Resolution")
splits the counters: LOADcnt (vector loads and atomics with return, GFX10-11's VM_CNT),
STOREcnt (stores and atomics without return, VS_CNT), DScnt (LDS and the LDS side of FLAT,
LGKM_CNT's LDS part) and KMcnt (scalar memory); its cache policy is a temporal hint
(`th:TH_*`) and a scope (`scope:SCOPE_SE/DEV/SYS`, none for CU) instead of GLC/SLC/DLC."""

from __future__ import annotations

import re
from dataclasses import dataclass

CACHE_BITS = frozenset({"sc0", "sc1", "nt", "glc", "slc", "dlc"})
GFX12_SCOPES = ("scope:SCOPE_SE", "scope:SCOPE_DEV", "scope:SCOPE_SYS")
"""GFX12's scopes, narrowest first (the SCOPE field: 1, 2, 3; 0 is CU, printed as
nothing)."""
COUNTERS = frozenset({"vm", "vs", "lgkm", "load", "store", "ds"})
"""The counters a row may ask to be drained: GFX9-GFX11's and GFX12's."""
LDS_COUNTERS = frozenset({"lgkm", "ds"})
_WAIT_TEXT = {"vm": "s_waitcnt vmcnt(0)", "vs": "s_waitcnt vscnt(0)",
              "lgkm": "s_waitcnt lgkmcnt(0)", "load": "s_wait_loadcnt 0x0",
              "store": "s_wait_storecnt 0x0", "ds": "s_wait_dscnt 0x0"}
_WAIT = re.compile(r"(vmcnt|lgkmcnt|expcnt)\((\d+)\)")
_SPLIT_WAITS = {"s_wait_loadcnt": ("load",), "s_wait_storecnt": ("store",),
                "s_wait_dscnt": ("ds",), "s_wait_loadcnt_dscnt": ("load", "ds"),
                "s_wait_storecnt_dscnt": ("store", "ds")}
_JUMP = frozenset({"s_branch", "s_setpc_b64", "s_swappc_b64"})
_CACHE_OPS = ("buffer_wbl2", "buffer_inv", "buffer_gl0_inv", "buffer_gl1_inv",
              "buffer_wbinvl1", "buffer_invl2", "global_inv", "global_wb")
_DS_ATOMIC = re.compile(r"^ds_(add|sub|rsub|inc|dec|min|max|and|or|xor|mskor|wrxchg|"
                        r"cmpst|cmpstore|condxchg)")


def matters(mnemonic: str) -> bool:
    """Whether the check can tell an instruction from nothing: vector and scalar ALU
    instructions (other than waits, unconditional jumps and `s_endpgm`) carry no
    cache-policy bit, touch no wait counter and end no window, so a listing may leave them
    out (`check_code_object` does: rendering their text decodes them again)."""
    if not mnemonic.startswith(("v_", "s_")):
        return True
    return mnemonic.startswith("s_wait") or mnemonic in _JUMP or mnemonic == "s_endpgm"


def wait_text(counter: str) -> str:
    """The wait instruction that drains `counter` (for a finding's text)."""
    return _WAIT_TEXT[counter]


@dataclass(frozen=True, slots=True)
class MachineInst:
    """One instruction: `bits` are its cache-policy modifiers; `waits` the counters a wait
    instruction sets to zero; `adds` the counters it increments."""

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
        """A memory access (what ends an acquire's window); not a cache operation."""
        return bool(self.adds) and not self.mnemonic.startswith("s_") and not self.cache_op

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


def _bits(tokens: set[str]) -> frozenset[str]:
    """The cache-policy bits; a GFX12 scope stands for itself and every narrower one (a
    wider scope is coherent at the narrower ones too, as sc0 sc1 includes sc1 on GFX942),
    so a row's scope is met by an instruction whose scope is at least that."""
    bits = set(tokens & CACHE_BITS) | {t for t in tokens if t.startswith("th:")}
    for i, scope in enumerate(GFX12_SCOPES):
        if scope in tokens:
            bits |= set(GFX12_SCOPES[:i + 1])
    return frozenset(bits)


def _split_waits(mnemonic: str, rest: str) -> set[str]:
    """The counters a GFX12 wait zeroes: the combined forms hold the first counter in bits
    13:8 and DScnt in bits 5:0 (LLVM's SIInsertWaitcnts encodes them so)."""
    kinds = _SPLIT_WAITS[mnemonic]
    try:
        value = int(rest.strip(), 0)
    except ValueError:
        return set()
    values = (value >> 8 & 0x3F, value & 0x3F) if len(kinds) == 2 else (value,)
    return {k for k, v in zip(kinds, values, strict=True) if v == 0}


_PARSED: dict[tuple[str, str], tuple[str, str, frozenset[str], frozenset[str],
                                   frozenset[str]]] = {}
"""`parse`'s fields after the index, by (line, family): a campaign's code objects repeat
their memory instructions and waits."""
_PARSED_LIMIT = 100_000


def parse(index: int, line: str, family: str) -> MachineInst:
    """One assembly line (labels, comments and directives give an empty mnemonic)."""
    fields = _PARSED.get((line, family))
    if fields is None:
        if len(_PARSED) > _PARSED_LIMIT:
            _PARSED.clear()
        fields = _PARSED[line, family] = _fields(line, family)
    return MachineInst(index, *fields)


def _fields(line: str, family: str) -> tuple[str, str, frozenset[str], frozenset[str],
                                             frozenset[str]]:
    """`parse` of one line: text, mnemonic, bits, waits, adds."""
    text = line.split(";")[0].strip()
    if not text or text.endswith(":") or text.startswith("."):
        return text, "", frozenset(), frozenset(), frozenset()
    mnemonic, _, rest = text.partition(" ")
    bits = _bits(set(re.split(r"[\s,]+", rest)))
    waits: set[str] = set()
    if mnemonic == "s_waitcnt":
        waits = {"vm" if k == "vmcnt" else "lgkm" for k, n in _WAIT.findall(rest)
                 if n == "0" and k != "expcnt"}
    elif mnemonic == "s_waitcnt_vscnt" and rest.replace(" ", "").endswith(",0x0"):
        waits = {"vs"}
    elif mnemonic in _SPLIT_WAITS:
        waits = _split_waits(mnemonic, rest)
    return text, mnemonic, bits, frozenset(waits), frozenset(_adds(mnemonic, bits, family))


def _adds(m: str, bits: frozenset[str], family: str) -> set[str]:
    gfx12 = family == "gfx1200"
    if m.startswith("ds_"):
        return {"ds" if gfx12 else "lgkm"}
    head = m.split("_")[0]
    if gfx12 and m == "global_wb":
        # AMDGPUUsage GFX12 release rows: "s_wait_storecnt 0x0 must happen after
        # global_wb if present": the write-back completes in STOREcnt
        return {"store"}
    if head not in ("global", "buffer", "flat", "scratch") or m.startswith(_CACHE_OPS):
        return set()
    returns = "load" in m or ("_atomic_" in m and bool(
        bits & {"sc0", "glc", "th:TH_ATOMIC_RETURN", "th:TH_ATOMIC_NT_RETURN"}))
    if gfx12:
        vector = {"load" if returns else "store"}
    else:
        vector = {"vm"} if returns or family != "gfx1100" else {"vs"}
    return vector | ({"ds" if gfx12 else "lgkm"} if head == "flat" else set())


def parse_all(lines: list[str], family: str) -> list[MachineInst]:
    return [parse(i, line, family) for i, line in enumerate(lines)]
