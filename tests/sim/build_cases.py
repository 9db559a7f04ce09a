"""Compile cases for AMDGPU in a child process (LLVM aborts the process on a fatal error):
`python build_cases.py JOBS.json`, JOBS a list of {"case": TOML text, "cpu", "opt", "out"}.
Writes each relocatable object to `out`, or `out` + ".skip" holding the outcome's one-line
reason when the case does not compile (rejected, unsupported, a compiler crash)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rgpu_fuzz import casefile
from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target


def main(jobs_path: str) -> int:
    for job in json.loads(Path(jobs_path).read_text()):
        got = build_gpu(casefile.loads(job["case"]), gpu_target(job["cpu"]), job["opt"],
                        assembly=False)
        out = Path(job["out"])
        if isinstance(got, GpuBuild):
            out.write_bytes(got.object)
        else:
            Path(f"{out}.skip").write_text(type(got).__name__ + ": " + str(got)[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
