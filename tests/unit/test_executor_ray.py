"""Campaigns through the Ray executor, on a local Ray instance (`ray.init(num_cpus=2)`).

One Ray instance serves every test here (start-up takes seconds); the tests share an xdist
group so one pytest worker runs them all. Skipped, with the reason, only when `ray` cannot be
imported (it is in the `dev` extra).

Expected findings come from the seeded bug: seeds 48..63 hold exactly two kernels the
xor → or miscompilation changes, 59 and 62 (established with the local executor in
tests/unit/test_campaign.py, and by running each seed through `rgpu-fuzz run`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from campaigns.executors import Executor, LocalExecutor
from campaigns.jobs import Setup
from campaigns.orchestrate import Campaign, CampaignConfig
from tests.unit.test_campaign import FLIPXOR, MISCOMPILE, assert_cases_stored, case_ids, checkpoint
from triage.store import FindingStore

pytestmark = pytest.mark.xdist_group("ray")

SLEEPY = FLIPXOR.replace('name = "flipxor"', 'name = "sleepy-flipxor"').replace(
    "    def _run(self, case):\n",
    "    def _run(self, case):\n        import time\n        time.sleep(0.4)\n")
assert "sleep" in SLEEPY


@pytest.fixture(scope="session")
def ray_instance() -> Iterator[Any]:
    try:
        import ray
    except ImportError as e:
        pytest.skip(f"ray cannot be imported ({e}); pip install 'rgpu-fuzz[ray]'")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def ray_executor(jobs: int = 2) -> Executor:
    from campaigns.executors.ray import RayExecutor

    return RayExecutor(jobs=jobs)


def run(out: Path, setup: Setup, executor: Executor, **config: Any) -> dict[str, Any]:
    config.setdefault("jobs", 2)
    campaign = Campaign(CampaignConfig(out=out, setup=setup, chunk=4, time_s=600, **config),
                        executor=executor)
    try:
        return campaign.run().data
    finally:
        campaign.close()


def store_contents(out: Path) -> dict[str, Any]:
    """Everything the store says about the findings: buckets with counts, statuses and their
    example case ids, and each recorded case's buckets."""
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        buckets = {str(b.signature): (b.count, str(b.status),
                                 sorted(e.case_id for e in store.examples(b.signature)))
                   for b in store.buckets()}
        cases = {cid: sorted(str(b.signature) for b in store.buckets_of_case(cid))
                 for cid in case_ids(out)}
    return {"buckets": buckets, "cases": cases}


def test_ray_finds_the_seeded_bug_and_stores_what_local_stores(
        tmp_path: Path, ray_instance: Any) -> None:
    setup = Setup(("ref", "llvm-cpu-xor2or:O0"), "default", "default", (str(MISCOMPILE),))
    local = run(tmp_path / "local", setup, LocalExecutor(2), seed_start=48, max_cases=16,
                reduce=False)
    remote = run(tmp_path / "ray", setup, ray_executor(), seed_start=48, max_cases=16,
                 reduce=False)
    assert remote["executor"] == "ray" and remote["jobs"] == 2
    assert remote["cases"] == local["cases"] == 16
    with FindingStore(tmp_path / "ray" / "findings.sqlite", readonly=True) as store:
        seeds = {store.case(cid).provenance.seed for cid in case_ids(tmp_path / "ray")}
    assert seeds == {59, 62}
    contents = store_contents(tmp_path / "ray")
    assert contents["buckets"] and all(
        sig.startswith("wrong-code|llvm-cpu-xor2or:O0|") for sig in contents["buckets"])
    assert contents == store_contents(tmp_path / "local")
    assert checkpoint(tmp_path / "ray") == checkpoint(tmp_path / "local")
    assert_cases_stored(tmp_path / "ray")


def kill_a_worker_mid_chunk(tmp_path: Path, executor: Executor) -> None:
    """A campaign whose first chunks take >= 1.6 s (4 cases sleeping 0.4 s each): one worker
    process is SIGKILLed (as an OOM killer or a dying node would) before any chunk has come
    back. Every chunk must still be counted exactly once and every finding stored once."""
    plugin = tmp_path / "sleepy.py"
    plugin.write_text(SLEEPY)
    setup = Setup(("ref", "sleepy-flipxor"), "default", "default", (str(plugin),))
    killed: list[int] = []

    def kill_one_mid_chunk(c: Campaign) -> None:
        if not killed and c.tally.chunks == 0 and c.inflight and executor.worker_pids():
            pid = executor.worker_pids()[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    out = tmp_path / "out"
    campaign = Campaign(CampaignConfig(out=out, setup=setup, chunk=4, time_s=600, jobs=2,
                                       max_cases=16, reduce=False),
                        on_progress=kill_one_mid_chunk, executor=executor)
    try:
        data = campaign.run().data
    finally:
        campaign.close()
    assert killed, "the campaign finished before a worker could be killed"
    log = (out / "campaign.log").read_text() if (out / "campaign.log").exists() else ""
    assert data["lost_jobs"] >= 1, (data, log)           # the kill hit a running chunk
    assert data["cases"] == 16 and data["chunks"] == 4, (data, log)  # each chunk once
    cp = checkpoint(out)
    assert cp["done"] == [0, 1, 2, 3] and cp["totals"]["cases"] == 16
    assert cp["totals"]["findings"] == data["findings"] > 0
    assert "worker died: running chunk" in log
    assert_cases_stored(out)
    with FindingStore(out / "findings.sqlite", readonly=True) as store:
        # unreduced: one count per case with a finding, none twice
        assert sum(b.count for b in store.buckets()) == len(case_ids(out)) \
            == data["cases_with_findings"]
    # (the store keeps a few examples per bucket; every case is in OUT/cases)
    assert all("^" in (out / "cases" / f"{cid}.toml").read_text() for cid in case_ids(out))


def test_a_ray_actor_killed_mid_chunk_loses_nothing_and_counts_nothing_twice(
        tmp_path: Path, ray_instance: Any) -> None:
    kill_a_worker_mid_chunk(tmp_path, ray_executor())


def test_a_local_worker_killed_mid_chunk_loses_nothing_and_counts_nothing_twice(
        tmp_path: Path) -> None:
    # the whole pool breaks (BrokenProcessPool): every job in it is lost and queued again
    kill_a_worker_mid_chunk(tmp_path, LocalExecutor(2))


@pytest.mark.slow
def test_ray_reductions_store_what_local_reductions_store(
        tmp_path: Path, ray_instance: Any) -> None:
    """With reduction on, one worker each (so jobs finish in one order): the same buckets,
    reduced cases and counts through Ray as through the local pool."""
    plugin = tmp_path / "flipxor.py"
    plugin.write_text(FLIPXOR)
    setup = Setup(("ref", "flipxor"), "default", "default", (str(plugin),))
    local = run(tmp_path / "local", setup, LocalExecutor(1), max_cases=16, jobs=1)
    remote = run(tmp_path / "ray", setup, ray_executor(1), max_cases=16, jobs=1)
    assert remote["reductions"] and len(remote["reductions"]) == len(local["reductions"])
    assert store_contents(tmp_path / "ray") == store_contents(tmp_path / "local")
    reduced = sorted(p.name for p in (tmp_path / "ray" / "reduced").glob("*.toml"))
    assert reduced == sorted(p.name for p in (tmp_path / "local" / "reduced").glob("*.toml"))
    for name in reduced:
        assert (tmp_path / "ray" / "reduced" / name).read_text() == \
            (tmp_path / "local" / "reduced" / name).read_text()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _group(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (proc(5): field 5 of /proc/PID/stat)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def stop_head(head: subprocess.Popen[bytes]) -> None:
    """Tear down a `ray start --head --block` started in its own session: every Ray process it
    started (GCS, raylet, workers) is in its process group, and SIGKILL ends them all at once
    (Ray's orderly SIGTERM shutdown took 30 s under load; its state is in the test's own
    --temp-dir, removed after)."""
    deadline = time.monotonic() + 30
    while _group(head.pid) and time.monotonic() < deadline:
        os.killpg(head.pid, signal.SIGKILL)
        time.sleep(0.2)
    head.wait(timeout=30)
    assert not _group(head.pid), "Ray processes outlived the head"


def _clean_ray_env(**extra: str) -> dict[str, str]:
    """This process's environment without Ray's address and authentication settings (a local
    `ray.init()` in this process sets RAY_AUTH_MODE), plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("RAY_AUTH") or k == "RAY_ADDRESS")}
    return {**env, "RAY_USAGE_STATS_ENABLED": "0", "COLUMNS": "200", **extra}


PORT_OPTIONS = ("--port", "--ray-client-server-port", "--dashboard-port",
                "--node-manager-port", "--object-manager-port", "--dashboard-agent-listen-port",
                "--dashboard-agent-grpc-port", "--metrics-export-port", "--runtime-env-agent-port")
"""Every fixed port `ray start --head` opens, given explicitly: a second Ray on the machine
(another test worker's `ray.init()`) would otherwise take the same defaults."""


@contextmanager
def ray_head(home: Path) -> Iterator[int]:
    """`ray start --head` as its user runs it, in its own session, on 127.0.0.1 with explicit
    free ports and `home` as HOME (so its `~/.ray/auth_token` is the test's); yields the Ray
    Client port once it accepts connections, and stops every process of the head after."""
    ray_cli = Path(sys.executable).with_name("ray")
    ports = {option: _free_port() for option in PORT_OPTIONS}
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", "--num-cpus", "2",
         "--node-ip-address", "127.0.0.1", "--include-dashboard", "false",
         "--temp-dir", str(home / "ray"), "--disable-usage-stats",
         *(x for option, port in ports.items() for x in (option, str(port)))],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env=_clean_ray_env(HOME=str(home)))
    client_port = ports["--ray-client-server-port"]
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", client_port)) == 0:
                    break
            assert head.poll() is None, "ray start --head exited"
            time.sleep(0.5)
        yield client_port
    finally:
        stop_head(head)


def _client_server_log(home: Path) -> str:
    """The end of the head's Ray Client server logs (a failed connection's only account)."""
    logs = sorted((home / "ray").glob("session_*/logs/ray_client_server*"))
    return "".join(f"\n--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in logs)


def test_a_campaign_reaches_a_cluster_through_ray_client() -> None:
    """`--executor ray://127.0.0.1:PORT` against a head started as people start one (`ray
    start --head`) after `ray get-auth-token --generate` wrote `~/.ray/auth_token`, so the head
    has token authentication on (Ray >= 2.5x). The campaign, from the same user's environment
    with no RAY_AUTH_* set, finds the token as the Ray CLI does and runs its actors in that
    cluster: its store holds the seeded bug's two kernels (xor2or at seeds 59 and 62, module
    docstring; the store's equality with the local executor's is the in-process test's), and
    Ray's "SIGTERM handler is not set" line is not
    printed. A wrong token, or none at all (another user's HOME), stops the campaign at once
    with one line naming the settings, where Ray Client retried for ~30 s and said only "ray
    client connection timeout"."""
    pytest.importorskip("ray", reason="ray cannot be imported; pip install 'rgpu-fuzz[ray]'")
    ray_cli = Path(sys.executable).with_name("ray")
    # short paths: Ray's Unix sockets live under --temp-dir (sun_path is 108 bytes, unix(7))
    home = Path(tempfile.mkdtemp(prefix="rgpu-ray-"))
    stranger = Path(tempfile.mkdtemp(prefix="rgpu-ray-"))
    try:
        subprocess.run([str(ray_cli), "get-auth-token", "--generate"], check=True,
                       capture_output=True, env=_clean_ray_env(HOME=str(home)), timeout=60)
        assert (home / ".ray" / "auth_token").exists()
        exe = Path(sys.executable).with_name("rgpu-fuzz")
        with ray_head(home) as client_port:
            common = [str(exe), "campaign", "--pipelines", "ref,llvm-cpu-xor2or:O0",
                      "--plugin", str(MISCOMPILE), "--seed-start", "48", "--chunk", "4",
                      "--cases", "16", "--no-reduce", "--json", "--time", "5m",
                      "--executor", f"ray://127.0.0.1:{client_port}"]

            def campaign(out: Path, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                          float]:
                t0 = time.monotonic()
                proc = subprocess.run([*common, "--out", str(out)], capture_output=True,
                                      text=True, timeout=300, env=_clean_ray_env(**env))
                return proc, time.monotonic() - t0

            remote, _ = campaign(home / "out", HOME=str(home))
            wrong, wrong_s = campaign(home / "wrong", HOME=str(home),
                                      RAY_AUTH_TOKEN=os.urandom(16).hex())
            none, none_s = campaign(home / "none", HOME=str(stranger))
        assert remote.returncode == 0, remote.stderr + _client_server_log(home)
        assert "SIGTERM handler" not in remote.stderr + remote.stdout
        data = json.loads(remote.stdout)
        assert data["executor"] == "ray" and data["jobs"] == 2 and data["cases"] == 16
        for refused, seconds, says in ((wrong, wrong_s, "is not the cluster's"),
                                       (none, none_s, "set RAY_AUTH_MODE=token")):
            assert refused.returncode == 2, refused.stderr
            (line,) = [x for x in refused.stderr.splitlines() if "error:" in x]
            assert "token authentication" in line and says in line, refused.stderr
            assert seconds < 30, seconds          # one PING, not Ray Client's retries
        out = home / "out"
        with FindingStore(out / "findings.sqlite", readonly=True) as store:
            seeds = {store.case(cid).provenance.seed for cid in case_ids(out)}
            signatures = {str(b.signature) for b in store.buckets()}
        assert seeds == {59, 62} and data["findings"] == 2
        assert signatures and all(s.startswith("wrong-code|llvm-cpu-xor2or:O0|")
                                  for s in signatures)
        assert_cases_stored(out)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(stranger, ignore_errors=True)
