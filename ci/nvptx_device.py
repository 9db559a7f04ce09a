"""Pack for, and run on, the lent NVIDIA machine (README "nvptx-gpu on a lent GPU").

That machine (Python 3.12, CuPy, numpy, pytest, no network) lacks llvmlite 0.50 and a few of
our dependencies; they travel as wheels in `.device/` (in `.gitignore`, so it travels only as
the device tool's `carry`), together with the working tree. Three subcommands:

* `pack [--dir .device]` (here): download the wheels for CPython 3.12 / manylinux x86-64
  and check that the working tree plus the wheels fit the 64 MiB a call may carry.
* `command` (here): print the one command to give the device tool (`carry: [".device"]`).
* `run [--dir .device] [--time 3m] [--budget 300]` (there): install the wheels into
  /tmp/site, run the conformance and corpus kernels on the GPU against `ref` (pytest `-m gpu`),
  then a campaign `ref,amdgpu-sim:gfx942:O3,nvptx-gpu:sm_90:O3` for `--time`, everything
  under `--budget` seconds; results to `$OUT` (pytest log, campaign summary JSON, store).
  Pipelines this checkout does not register are dropped from the campaign, with a line
  saying so.

Bad arguments: one line, exit 2.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARRY_LIMIT = 64 * 1024 * 1024
"""What one device call may carry: working tree plus carried paths (device README)."""
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")
WHEELS = ("llvmlite==0.50.*", "pyelftools>=0.31", "msgpack>=1.0", "tinygrad==0.14.0")
"""Our dependencies the lent machine lacks (its image has numpy, rich, hypothesis, pytest).
`ziglang` (ld.lld for amdgpu-sim) does not fit beside llvmlite's 57 MiB wheel: there,
amdgpu-sim links with an `ld.lld` on PATH or reports the link as unavailable."""
CAMPAIGN = ("ref", "amdgpu-sim:gfx942:O3", "nvptx-gpu:sm_90:O3")
DEVICE_PYTHON = "python3"


class UsageError(Exception):
    """Bad arguments: reported in one line, exit 2."""


def parse_seconds(text: str) -> int:
    """`90s`, `3m`, `1h` or plain seconds → seconds (> 0)."""
    m = re.fullmatch(r"(\d+)([smh]?)", text.strip())
    if m is None or int(m.group(1)) == 0:
        raise UsageError(f"--time {text!r}: expected a positive duration such as 90s, 3m")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def travelling_files(root: Path) -> list[Path]:
    """The working tree as the device tool sends it: tracked plus untracked-not-ignored."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, check=True).stdout
    return [root / p for p in out.decode().split("\0") if p and (root / p).is_file()]


def carried_bytes(root: Path, carry: Path) -> int:
    """Bytes one device call would carry: the working tree and everything under `carry`."""
    tree = sum(p.stat().st_size for p in travelling_files(root))
    extra = sum(p.stat().st_size for p in carry.rglob("*") if p.is_file()) \
        if carry.exists() else 0
    return tree + extra


def _ignored(root: Path, path: Path) -> str:
    return subprocess.run(["git", "check-ignore", "--no-index", str(path.relative_to(root))],
                          cwd=root, capture_output=True, text=True, check=False).stdout.strip()


def pack(root: Path, carry: Path) -> int:
    carry.mkdir(parents=True, exist_ok=True)
    if str(carry.relative_to(root)) not in _ignored(root, carry):
        print(f"pack: {carry} is not ignored by git: it would travel twice", file=sys.stderr)
        return 1
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
           *[a for p in PLATFORMS for a in ("--platform", p)], "-d", str(carry), *WHEELS]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"pack: pip download failed: {(proc.stderr or proc.stdout).strip()[-300:]}",
              file=sys.stderr)
        return 1
    size = carried_bytes(root, carry)
    print(f"pack: {len(list(carry.glob('*.whl')))} wheels in {carry}; one call carries "
          f"{size / 2**20:.1f} MiB of {CARRY_LIMIT / 2**20:.0f} MiB")
    if size > CARRY_LIMIT:
        print("pack: too large for one device call", file=sys.stderr)
        return 1
    return 0


def device_command(carry: str = ".device", minutes: int = 3) -> str:
    """The command for the device tool's `run` (with `carry: ["<carry>"]`)."""
    cmd = (f"PYTHONUNBUFFERED=1 {DEVICE_PYTHON} ci/nvptx_device.py run --dir {carry} "
           f"--time {minutes}m --budget 290")
    assert len(cmd) <= 2000
    return cmd


def campaign_specs(known: set[str], linker: bool = True) -> tuple[list[str], list[str]]:
    """(specs to run, specs dropped): a pipeline this checkout does not register is dropped,
    and so is `amdgpu-sim` without an ld.lld (`linker`), which would otherwise turn every
    case into a link failure."""
    keep = [s for s in CAMPAIGN if s.split(":", 1)[0] in known
            and (linker or not s.startswith("amdgpu-sim"))]
    return keep, [s for s in CAMPAIGN if s not in keep]


def _registered() -> set[str]:
    from rgpu_fuzz.pipelines.registry import Registry

    return set(Registry().names())


def run(root: Path, carry: Path, seconds: int, budget: int) -> int:
    started = time.monotonic()
    out = Path(os.environ.get("OUT", root / "out" / "nvptx-device"))
    out.mkdir(parents=True, exist_ok=True)
    site = Path("/tmp/site")
    wheels = sorted(str(p) for p in carry.glob("*.whl"))
    if not wheels:
        raise UsageError(f"{carry}: no wheels (run `ci/nvptx_device.py pack` here first)")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--no-cache-dir", "--upgrade", "--target", str(site),
                    *wheels], check=True)
    env = dict(os.environ, PYTHONPATH=f"{site}:{root}", PYTHONUNBUFFERED="1")
    sys.path[:0] = [str(site), str(root)]

    def left() -> int:
        return int(budget - (time.monotonic() - started))

    from rgpu_fuzz.codeobj import find_ld_lld

    specs, dropped = campaign_specs(_registered(), linker=find_ld_lld() is not None)
    for spec in dropped:
        print(f"run: {spec}: not registered here, or no ld.lld; dropped from the campaign")
    conformance = max(30, left() - seconds - 45)
    with (out / "conformance.log").open("w") as log:
        proc = subprocess.run(
            ["timeout", str(conformance), sys.executable, "-m", "pytest", "-q", "-m", "gpu",
             "-n", "8", "-p", "no:cacheprovider", "tests/unit/test_nvptx.py", "-rs"],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    tail = (out / "conformance.log").read_text(errors="replace").strip().splitlines()[-3:]
    print(f"run: conformance on the GPU exit {proc.returncode}: {' | '.join(tail)}")
    campaign_time = max(10, min(seconds, left() - 20))
    with (out / "campaign.json").open("w") as summary:
        proc2 = subprocess.run(
            ["timeout", str(campaign_time + 15), sys.executable, "-m", "rgpu_fuzz",
             "campaign", "--time", f"{campaign_time}s", "--pipelines", ",".join(specs),
             "--out", str(out / "campaign"), "--json", "--no-reduce"],
            cwd=root, env=env, stdout=summary, stderr=sys.stderr, check=False)
    print(f"run: campaign {','.join(specs)} for {campaign_time}s exit {proc2.returncode}; "
          f"{time.monotonic() - started:.0f}s in all")
    if (out / "campaign").is_dir():
        store = out / "campaign" / "findings.sqlite"
        if store.exists():
            shutil.copy(store, out / "findings.sqlite")
    return 0 if proc.returncode == 0 and proc2.returncode == 0 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ci/nvptx_device.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("pack", "command", "run"))
    parser.add_argument("--dir", default=".device", help="the carried wheel folder")
    parser.add_argument("--time", default="3m", help="campaign length (run)")
    parser.add_argument("--budget", type=int, default=290, help="seconds for `run` in all")
    try:
        args = parser.parse_args(argv)
        seconds = parse_seconds(args.time)
        carry = (ROOT / args.dir).resolve()
        if ROOT not in carry.parents:
            raise UsageError(f"--dir {args.dir}: must be inside the checkout (it is carried)")
        if args.budget < seconds + 60:
            raise UsageError(f"--budget {args.budget}: needs --time plus 60 s at least")
        if args.action == "pack":
            return pack(ROOT, carry)
        if args.action == "command":
            print(device_command(args.dir, max(1, seconds // 60)))
            return 0
        return run(ROOT, carry, seconds, args.budget)
    except UsageError as e:
        print(f"ci/nvptx_device.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
