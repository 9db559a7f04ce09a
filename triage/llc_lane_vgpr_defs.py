"""An `llc` for the amdgpu-sim pipeline's `llc=` option that runs a real llc in two halves
around one MIR edit: `-stop-after=si-lower-sgpr-spills`, move every `IMPLICIT_DEF` of an
SGPR-spill lane VGPR (a virtual VGPR that `SI_SPILL_S32_TO_VGPR` / `SI_RESTORE_S32_FROM_VGPR`
use) to the top of the entry block, `-start-after=si-lower-sgpr-spills`.

The entry block dominates every loop, which is the placement LLVM 19 uses and the one the
upstream fix (llvm/llvm-project#186348) restores; with `--keep` the MIR goes through the same
round trip unchanged (the control). Usage: `llc_lane_vgpr_defs.py LLC [--keep] LLC-ARGS...`,
LLC-ARGS as `rgpu_fuzz.pipelines.toolchain.Llc` passes them (`-o OUT IN.ll` last); it runs
as a script, in the temporary folder Llc gives it. The recheck of `known_bugs.toml`
(`triage/known_bugs.py`) and tests/sim/test_llvm_bug_lane_vgpr.py use it."""

from __future__ import annotations

import re
import subprocess
import sys

_LANE_VGPR_USE = re.compile(
    r"(%\d+):vgpr_32 = SI_SPILL_S32_TO_VGPR|SI_RESTORE_S32_FROM_VGPR (%\d+):vgpr_32")
_DEF = re.compile(r"^    (%\d+):vgpr_32 = IMPLICIT_DEF\n", re.MULTILINE)
_ENTRY = re.compile(r"^  bb\.\d+[^\n]*\n(?:    (?:successors|liveins)[^\n]*\n)*(?:  \n|\n)?",
                    re.MULTILINE)


def hoist(mir: str) -> tuple[str, int]:
    """`mir` with each function's lane VGPR IMPLICIT_DEFs at the top of its entry block (the
    first in the body: bb.0, or bb.1 after GlobalISel, whose IRTranslator numbers it so), and how
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
            raise SystemExit("llc_lane_vgpr_defs: no block in a function body")
        body = (body[:entry.end()] + "".join(f"    {d}:vgpr_32 = IMPLICIT_DEF\n" for d in defs)
                + body[entry.end():])
        moved += len(defs)
        out.append(head + body)
    return "".join(out), moved


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
    if not keep:
        mir, _ = hoist(mir)
    with open("lane.edited.mir", "w") as f:
        f.write(mir)
    return subprocess.call([llc, *common, "-start-after=si-lower-sgpr-spills", *filetype,
                            "-o", out, "lane.edited.mir"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
