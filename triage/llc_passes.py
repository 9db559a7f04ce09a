"""An `llc` for a pipeline's `llc=` option that changes which passes of code generation run,
for the culprit search (`triage/culprit.py`). Usage:
`llc_passes.py LLC MODE LLC-ARGS...`, LLC-ARGS as `rgpu_fuzz.pipelines.toolchain.Llc` passes
them (`-filetype=`, `-o OUT`, `IN.ll` last); it runs as a script, in the temporary folder Llc
gives it. MODE is one of:

* `record=DIR` - run LLC as asked, and keep its input (`DIR/in.ll`) and its arguments without
  the output and file type (`DIR/args.json`): the culprit search replays them with llc's pass
  options (`-debug-pass=Arguments`, `-opt-bisect-limit=-1`, `-stop-after=`);
* `bisect=N` - `-opt-bisect-limit=N`: only the first N optional passes run (LLVM's
  OptBisect, docs "Using -opt-bisect-limit to debug optimization errors"; N = -1: all);
* `skip=PASS[,K]` - code generation without one machine pass: `-stop-before=PASS[,K]` writes
  the MIR, `-start-after=PASS[,K]` goes on from it (LLVM's MIR round trip, the one the
  upstream AMDGPU MIR tests use; K counts instances of a pass that runs more than once).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


def split_args(args: list[str]) -> tuple[list[str], list[str], str, str]:
    """(common options, `-filetype=` options, output, input) of an Llc command line."""
    out, src = args[args.index("-o") + 1], args[-1]
    filetype = [a for a in args if a.startswith("-filetype=")]
    common = [a for i, a in enumerate(args[:-1])
              if not a.startswith("-filetype=") and a != "-o" and args[i - 1] != "-o"]
    return common, filetype, out, src


def main(argv: list[str]) -> int:
    llc, mode, args = argv[0], argv[1], argv[2:]
    if "--version" in args:
        return subprocess.call([llc, *args])
    common, filetype, out, src = split_args(args)
    key, _, value = mode.partition("=")
    if key == "record":
        folder = Path(value)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, folder / "in.ll")
        (folder / "args.json").write_text(json.dumps(common))
        return subprocess.call([llc, *args])
    if key == "bisect":
        return subprocess.call([llc, f"-opt-bisect-limit={int(value)}", *args])
    if key == "skip":
        first = subprocess.run([llc, *common, f"-stop-before={value}", "-o", "skip.mir", src],
                               check=False)
        if first.returncode != 0:
            return first.returncode
        return subprocess.call([llc, *common, f"-start-after={value}", *filetype, "-o", out,
                                "skip.mir"])
    print(f"llc_passes: unknown mode {mode!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
