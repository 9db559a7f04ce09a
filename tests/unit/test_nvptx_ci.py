"""The here-side parts of `ci/nvptx_device.py`: argument checks, the device
command, what a call carries, which campaign pipelines this checkout has. Its `run` needs
the lent NVIDIA machine and is not exercised here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ci" / "nvptx_device.py"


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("nvptx_device", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, check=False, cwd=ROOT)


@pytest.mark.parametrize("args, says", [
    (("run", "--time", "0"), "--time '0'"),
    (("run", "--time", "3x"), "--time '3x'"),
    (("run", "--time", "3m", "--budget", "200"), "--budget 200"),
    (("pack", "--dir", "/tmp/elsewhere"), "--dir /tmp/elsewhere"),
])
def test_bad_arguments_are_one_line_and_exit_2(args: tuple[str, ...], says: str) -> None:
    got = _cli(*args)
    assert got.returncode == 2 and got.stdout == ""
    assert len(got.stderr.strip().splitlines()) == 1 and says in got.stderr


def test_the_device_command_fits_the_tool_and_parses() -> None:
    """The printed command is under the device tool's 2,000 characters, and its own
    arguments pass the script's checks (a 3-minute campaign inside a 290 s budget, which
    leaves 10 s of the 5 minutes for the install)."""
    got = _cli("command")
    assert got.returncode == 0
    cmd = got.stdout.strip()
    assert len(cmd) <= 2000 and "ci/nvptx_device.py run" in cmd
    tokens = cmd.split()
    run_args = tokens[tokens.index("run"):]
    assert run_args[run_args.index("--time") + 1] == "3m"
    assert int(run_args[run_args.index("--budget") + 1]) <= 300


def test_carried_bytes_counts_tree_and_carry_but_not_ignored_files(tmp_path: Path) -> None:
    """A repo with a 1,000-byte tracked file, a 300-byte untracked one, a 200-byte ignored
    one and 500 bytes in the carried folder (ignored): 1,000 + 300 + 500 = 1,800."""
    mod = _module()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("/.device/\n*.log\n")
    (tmp_path / "a.bin").write_bytes(b"x" * 1000)
    (tmp_path / "b.bin").write_bytes(b"y" * 300)
    (tmp_path / "c.log").write_bytes(b"z" * 200)
    (tmp_path / ".device").mkdir()
    (tmp_path / ".device" / "w.whl").write_bytes(b"w" * 500)
    subprocess.run(["git", "-C", str(tmp_path), "add", "a.bin", ".gitignore"], check=True)
    gitignore = len("/.device/\n*.log\n")
    assert mod.carried_bytes(tmp_path, tmp_path / ".device") == 1800 + gitignore


def test_the_campaign_keeps_registered_pipelines_only() -> None:
    mod = _module()
    from rgpu_fuzz.pipelines.registry import Registry

    known = set(Registry().names())
    keep, dropped = mod.campaign_specs(known)
    assert "nvptx-gpu:sm_90:O3" in keep and "ref" in keep
    assert sorted(keep + dropped) == sorted(["ref", "amdgpu-sim:gfx942:O3", "nvptx-gpu:sm_90:O3"])
    keep, dropped = mod.campaign_specs({"ref", "nvptx-gpu"})
    assert dropped == ["amdgpu-sim:gfx942:O3"]
    keep, dropped = mod.campaign_specs(known, linker=False)
    assert dropped == ["amdgpu-sim:gfx942:O3"]


def test_the_carry_folder_is_ignored_by_git() -> None:
    """Else the wheels would travel twice (in the tree and as carry) and overflow 64 MiB."""
    got = subprocess.run(["git", "check-ignore", "--no-index", ".device/x.whl"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert got.returncode == 0
