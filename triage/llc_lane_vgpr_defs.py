"""An `llc` for the amdgpu-sim pipeline's `llc=` option that runs a real llc in two halves
around one MIR edit: `-stop-after=si-lower-sgpr-spills`, move every `IMPLICIT_DEF` of an
SGPR-spill lane VGPR (a virtual VGPR that `SI_SPILL_S32_TO_VGPR` / `SI_RESTORE_S32_FROM_VGPR`
use) to the top of the entry block, `-start-after=si-lower-sgpr-spills`.

The entry block dominates every loop, which is the placement LLVM 19 uses and the one the
upstream fix (llvm/llvm-project#186348) restores; with `--keep` the MIR goes through the same
round trip unchanged (the control). Two things the round trip itself would change are put
back, so that the edit is the only difference: wave32 MIR needs `implicit $vcc` on its VCC
branches to parse (`wave32_parsable`), and the MIR does not carry a kernel's user SGPR count
(`user_sgpr_counts`). Usage: `llc_lane_vgpr_defs.py LLC [--keep] LLC-ARGS...`,
LLC-ARGS as `rgpu_fuzz.pipelines.toolchain.Llc` passes them (`-o OUT IN.ll` last); it runs
as a script, in the temporary folder Llc gives it. The recheck of `known_bugs.toml`
(`triage/known_bugs.py`) and tests/sim/test_llvm_bug_lane_vgpr.py use it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

_LANE_VGPR_USE = re.compile(
    r"(%\d+):vgpr_32 = SI_SPILL_S32_TO_VGPR|SI_RESTORE_S32_FROM_VGPR (%\d+):vgpr_32")
_DEF = re.compile(r"^    (%\d+):vgpr_32 = IMPLICIT_DEF\n", re.MULTILINE)
# Wave32 MIR (gfx10+) does not parse back: the printer writes `S_CBRANCH_VCCNZ %bb.N, implicit
# killed $vcc_lo` (SIInstrInfo::fixImplicitOperands narrowed the instruction's implicit $vcc)
# and the parser then wants the descriptor's `implicit $vcc` ("missing implicit register
# operand"). Adding it as `undef` reads nothing and changes no encoding.
_VCC_BRANCH = re.compile(r"^(    S_CBRANCH_VCC(?:N?Z) [^,\n]+), implicit (killed )?\$vcc_lo$",
                         re.MULTILINE)
_NAME = re.compile(r"^name:\s+(\S+)$", re.MULTILINE)
# the SGPRs the hardware initialises after the user SGPRs (AMDGPUUsage "Initial Kernel
# Execution State"): the first of them is the user SGPR count
_SYSTEM_SGPR = re.compile(r"^    (?:workGroupID[XYZ]|workGroupInfo|privateSegmentWaveByteOffset):"
                          r"\s+\{ reg: '\$sgpr(\d+)'", re.MULTILINE)
_KERNEL = re.compile(r"^\t\.amdhsa_kernel (\S+)\n(?:.*\n)*?\t\t\.amdhsa_user_sgpr_count (\d+)$",
                     re.MULTILINE)
# the entry block: the body's first (`bb.0`; GlobalISel's MIR starts at `bb.1.entry`)
_ENTRY = re.compile(r"^  bb\.\d+[^\n]*\n(?:    (?:successors|liveins)[^\n]*\n)*(?:  \n|\n)?",
                    re.MULTILINE)


def hoist(mir: str) -> tuple[str, int]:
    """`mir` with each function's lane VGPR IMPLICIT_DEFs at the top of its entry block, and how
    many moved."""
    out, moved = [], 0
    for doc in re.split(r"(?m)^(?=---\n)", mir):
        found = re.search(r"^body:", doc, re.MULTILINE)
        if found is None:
            out.append(doc)
            continue
        head, body = doc[:found.start()], doc[found.start():]
        lane = {a or b for a, b in _LANE_VGPR_USE.findall(body)}
        defs = [m.group(1) for m in _DEF.finditer(body) if m.group(1) in lane]
        body = _DEF.sub(lambda m, lane=lane: "" if m.group(1) in lane else m.group(0), body)
        entry = _ENTRY.search(body)
        if entry is None:
            raise SystemExit("llc_lane_vgpr_defs: no basic block in a function body")
        body = (body[:entry.end()] + "".join(f"    {d}:vgpr_32 = IMPLICIT_DEF\n" for d in defs)
                + body[entry.end():])
        moved += len(defs)
        out.append(head + body)
    return "".join(out), moved


def wave32_parsable(mir: str) -> str:
    """`mir` with `implicit undef $vcc` before the `implicit $vcc_lo` of each wave32
    S_CBRANCH_VCCZ / S_CBRANCH_VCCNZ, so that `-start-after` can read it back."""
    return _VCC_BRANCH.sub(r"\1, implicit undef $vcc, implicit \2$vcc_lo", mir)


def user_sgpr_counts(mir: str) -> dict[str, int]:
    """Each function's user SGPR count as the MIR's system SGPR arguments place it.

    `-start-after` recomputes the count from the user SGPR arguments the MIR lists, which
    leaves out those LLVM reserves without naming them: a gfx1100 kernel that calls a
    function has `.amdhsa_user_sgpr_count 13` with 8 listed and its workgroup ids in
    s13..s15 (llc-22), and after the round trip its descriptor said 8 while the code still
    read s13, so the workgroup ids came from SGPRs the hardware never writes."""
    counts = {}
    for doc in re.split(r"(?m)^(?=---\n)", mir):
        name, regs = _NAME.search(doc), [int(r) for r in _SYSTEM_SGPR.findall(doc)]
        if name is not None and regs:
            counts[name.group(1)] = min(regs)
    return counts


def restore_user_sgpr_counts(asm: str, counts: dict[str, int]) -> str:
    """`asm` with each kernel's `.amdhsa_user_sgpr_count` raised to `counts`' value."""
    def fix(m: re.Match[str]) -> str:
        want = counts.get(m.group(1))
        if want is None or want <= int(m.group(2)):
            return m.group(0)
        return m.group(0)[:m.start(2) - m.start(0)] + str(want)
    return _KERNEL.sub(fix, asm)


def _assemble(llc: str, common: list[str], asm: str, out: str) -> int:
    """Assemble `asm` into the object `out` with the llvm-mc installed beside `llc`."""
    flags = {"-mtriple=": "-triple=", "-mcpu=": "-mcpu=", "-mattr=": "-mattr="}
    mc = [str(Path(llc).parent / "llvm-mc"), "-filetype=obj", "-o", out]
    mc += [new + a[len(old):] for a in common for old, new in flags.items() if a.startswith(old)]
    return subprocess.run(mc, input=asm, text=True).returncode


def main(argv: list[str]) -> int:
    llc, args = argv[0], argv[1:]
    keep = "--keep" in args
    args = [a for a in args if a != "--keep"]
    if "--version" in args:
        return subprocess.call([llc, *args])
    out, src = args[args.index("-o") + 1], args[-1]
    filetype = [a for a in args if a.startswith("-filetype=")]
    common = [a for i, a in enumerate(args[:-1])
              if not a.startswith("-filetype=") and a != "-o" and args[i - 1] != "-o"]
    subprocess.run([llc, *common, "-stop-after=si-lower-sgpr-spills", "-o", "lane.mir", src],
                   check=True)
    with open("lane.mir") as f:
        mir = f.read()
    mir = wave32_parsable(mir)
    if not keep:
        mir, _ = hoist(mir)
    with open("lane.edited.mir", "w") as f:
        f.write(mir)
    rc = subprocess.call([llc, *common, "-start-after=si-lower-sgpr-spills", "-filetype=asm",
                          "-o", "lane.s", "lane.edited.mir"])
    if rc != 0:
        return rc
    asm = restore_user_sgpr_counts(Path("lane.s").read_text(), user_sgpr_counts(mir))
    if filetype[-1:] == ["-filetype=obj"]:
        return _assemble(llc, common, asm, out)
    Path(out).write_text(asm)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
