"""Compile case files for AMDGPU with our lowering (`gpu_build.build_gpu`), in a child process
(LLVM aborts on fatal errors). usage: python lowered_emit.py JOBS.json — JOBS is a list of
{"case": path, "cpu": "gfx942", "opt": 0..3, "out": path}; writes the relocatable object to
`out`, or `out` + ".outcome" with the outcome's one line when the case does not compile."""

from __future__ import annotations

import json
import os
import sys

from rgpu_fuzz import casefile
from rgpu_fuzz.model.outcome import detail
from rgpu_fuzz.pipelines.gpu_build import GpuBuild, build_gpu, gpu_target


def main(jobs_path: str) -> int:
    with open(jobs_path) as f:
        jobs = json.load(f)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # the stage protocol's lines; an abort still sets the exit status
    for job in jobs:
        got = build_gpu(casefile.load(job["case"]), gpu_target(job["cpu"]), job["opt"],
                        assembly=False)
        if isinstance(got, GpuBuild):
            data, path = got.object, job["out"]
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.replace(path + ".tmp", path)
        else:
            with open(job["out"] + ".outcome", "w") as f:
                f.write(f"{got.status}: {detail(got)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
