"""The Ray executor: campaign jobs run in Ray actors, one per CPU of the cluster.

Ray places the actors (one CPU each, so a node gets as many as it has CPUs); this module only
hands each job to the actor with the fewest jobs queued. An actor is a long-lived process, so
its pipelines (llvmlite, rustc, the simulator's decode cache) stay warm between jobs, as in
a local pool worker. Jobs and results are `wire` bytes: the actor decodes, runs the same
`run_chunk`/`reduce_finding` a local worker runs, and encodes.

An actor whose process dies (killed, out of memory, its node gone) is restarted by Ray
(`max_restarts=-1`); the calls it had queued fail with `RayActorError` instead of being
retried by Ray (`max_task_retries=0`), and come back as `lost`, so the campaign — which alone
knows what was already counted — queues them again. Until the restarted actor answers a ping,
no job goes to it: a call made while it restarts fails at once (at-most-once semantics), and
under load the restart takes seconds, which would burn a job's tries without running it.

Ray Client (`ray://HOST:PORT`) and token authentication: since Ray 2.5x a head started with
`ray start --head` requires a token when one is configured (`RAY_AUTH_MODE=token`, or any
token in `~/.ray/auth_token`, which every local `ray.init()` and `ray get-auth-token
--generate` create). The Ray CLI, and `ray.init()` finding a local cluster, switch to token
mode by themselves when `RAY_AUTH_MODE` is unset and a token is there (`RAY_AUTH_TOKEN`,
`RAY_AUTH_TOKEN_PATH` or `~/.ray/auth_token`: Ray's `maybe_enable_token_auth_if_token_available`);
`ray.init(address=...)` with an explicit address does not, so a client on the head's own
machine was refused until its user set `RAY_AUTH_MODE=token`. `start` makes the CLI's choice
before connecting to an explicit address (`_token_mode_like_the_cli`). Ray Client retries a
refusal as if the server were starting and ends, after ~30 s, with "ray client connection
timeout", so `start` also asks the client server once (one PING) before connecting, and
turns a refusal (a wrong token, or none) into one line that names the settings.

The Ray Client server forks a "specific server" per client, and that child sometimes dies at
once when the fork races gRPC's poller threads (ray-project/ray#63202, open: about 7 % of
connections; its log says "epoll_wait error: Bad file descriptor" and the client gets
"Starting Ray client server failed"). Nothing about the cluster is wrong, and a fresh connection
gets a fresh child, so `start` tries that connection up to `CLIENT_TRIES` times before it
gives up on the cluster.

Ray's `ray.init` warns "SIGTERM handler is not set because current thread is not the main
thread" when called off the main thread, which the Ray Client server on the head always does
for a client, and Ray Client prints the head's log records on the client's stderr. It says
nothing about the campaign (whose own signal handling stops it), so that record is dropped
(`_QuietSigterm`).

`ray` is an optional dependency (`pip install 'rgpu-fuzz[ray]'`); it is imported when this
executor starts.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from typing import Any

from campaigns import wire
from campaigns.executors.base import Done, Executor, decode_outcome, run_encoded
from rgpu_fuzz.model.errors import RgpuError
from rgpu_fuzz.pipelines.workers import tune_worker_gc

PROBE_TIMEOUT_S = 15.0
"""How long `ray://HOST:PORT` may take to answer the first PING."""

CLIENT_TRIES = 4
"""Connections `start` tries when Ray Client's per-client server dies at startup
(ray-project/ray#63202, module docstring); at a 7 % failure rate four tries all fail about
once in 40,000 starts."""

SPECIFIC_SERVER_DIED = ("Starting Ray client server failed",
                        "psutil.ZombieProcess: PID still exists but it's a zombie")
"""What Ray Client's proxier answers when the per-client server it forked has died: the
first when it notices the exit, the second ("Initialization failure from server: ...") when
its process check reaches the child after it exited and before it was reaped (seen once in
a full test run under load)."""

START_TIMEOUT_S = 300.0
"""How long the actors may take to start: an actor waits for a free CPU, so asking for more
`--jobs` than the cluster has CPUs would otherwise wait for ever."""


class RayUnavailable(RgpuError):
    """`--executor ray` without ray installed, or a cluster that cannot be reached."""


def _check_client_server(address: str) -> None:
    """One PING to the Ray Client server at `ray://HOST:PORT`, over a channel made as Ray
    Client makes its own (with the token interceptor when `RAY_AUTH_MODE=token`). Raises
    `RayUnavailable` when nothing answers or the server refuses the credentials; any other
    answer is left to `ray.init`."""
    try:  # Ray's own channel helper (2.5x); older Rays have no token authentication
        import grpc  # type: ignore[import-untyped]
        from ray._private.grpc_utils import init_grpc_channel
        from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc
    except ImportError:
        return
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return  # TLS set-up is Ray Client's own (certificates from the environment)
    try:
        channel = init_grpc_channel(address.removeprefix("ray://"))
    except Exception as e:  # ray.exceptions.AuthenticationError: token mode, no token
        raise RayUnavailable(f"cannot reach {address}: {str(e).splitlines()[0]}") from None
    try:
        grpc.channel_ready_future(channel).result(timeout=PROBE_TIMEOUT_S)
        ping = ray_client_pb2.ClusterInfoRequest(  # type: ignore[attr-defined]
            type=ray_client_pb2.ClusterInfoType.PING)  # type: ignore[attr-defined]
        ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(ping, timeout=PROBE_TIMEOUT_S)
    except grpc.FutureTimeoutError:
        raise RayUnavailable(f"cannot reach {address}: no Ray Client server answered within "
                             f"{PROBE_TIMEOUT_S:.0f}s (is the head started with "
                             "--ray-client-server-port?)") from None
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.UNAUTHENTICATED:
            sent = os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
            raise RayUnavailable(
                f"{address} refused the connection: the cluster uses token authentication; "
                + ("the token sent (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) "
                   "is not the cluster's" if sent else
                   "set RAY_AUTH_MODE=token and the cluster's token in RAY_AUTH_TOKEN (or "
                   "RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token)")) from None
    finally:
        channel.close()


def _connect_client(ray: Any, address: str, options: dict[str, Any]) -> None:
    """`ray.init(address="ray://...")`, tried again while the proxier's per-client server dies
    at startup (ray-project/ray#63202, module docstring); any other failure is raised at once."""
    for attempt in range(1, CLIENT_TRIES + 1):
        try:
            ray.init(address=address, **options)
            return
        except (ConnectionError, RuntimeError) as e:
            if not any(m in str(e) for m in SPECIFIC_SERVER_DIED) or attempt == CLIENT_TRIES:
                raise
            try:
                ray.shutdown()
            except Exception:  # nothing is connected to shut down
                pass
            time.sleep(1.0)


def _token_mode_like_the_cli() -> None:
    """With `RAY_AUTH_MODE` unset and a token available, set `RAY_AUTH_MODE=token` for this
    process, as `ray start` and a bare `ray.init()` do (Ray's
    `authentication_token_setup.maybe_enable_token_auth_if_token_available`, whose "token
    authentication is enabled" warning is for the head's operator, not a client, so it is
    kept quiet). An explicit `RAY_AUTH_MODE` (`disabled` included) is left as set."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    try:
        from ray._private.authentication import authentication_token_setup as setup
    except ImportError:  # a Ray before token authentication
        return
    log = logging.getLogger(setup.__name__)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        log.setLevel(level)


def _gist(error: Exception) -> str:
    """One line for `error`: its first line, and when it carries a traceback (Ray Client's
    "Initialization failure from server:" then the server's traceback) the traceback's last
    line too, which names what failed on the head."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    return lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"


class _QuietSigterm(logging.Filter):
    """Drops `ray.init`'s "SIGTERM handler is not set ..." record (module docstring)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


class ChunkActor:
    """One warm worker process (made a Ray actor in `RayExecutor.start`)."""

    def __init__(self) -> None:
        # the same collector settings as the local pool's processes (`_init_worker`)
        tune_worker_gc()

    def pid(self) -> int:
        return os.getpid()

    def run(self, payload: bytes) -> bytes:
        return run_encoded(payload)


class RayExecutor(Executor):
    """Jobs on a Ray cluster.

    `address` None starts a Ray instance on this machine with `jobs` CPUs (all when None),
    unless this process is already connected to one (then it is used and left running);
    `ray://HOST:PORT` connects through Ray Client, any other address as `ray.init` reads it.
    `jobs` None: one actor per CPU of the cluster."""

    name = "ray"

    def __init__(self, address: str | None = None, jobs: int | None = None) -> None:
        self.address = address
        self.jobs = jobs
        self._actors: list[Any] = []
        self._pids: list[int] = []
        self._refs: dict[Any, tuple[int, wire.Job, int]] = {}
        self._queued: list[int] = []
        self._tickets = itertools.count()
        self._started_ray = False
        self._down: dict[int, Any] = {}
        """actor index -> the ping sent after it lost a job; no jobs go to it until answered"""

    @property
    def workers(self) -> int:
        return len(self._actors)

    def start(self) -> None:
        try:
            import ray
        except ImportError as e:
            raise RayUnavailable(f"--executor ray needs ray (pip install 'rgpu-fuzz[ray]'): "
                                 f"{e}") from None
        if not ray.is_initialized():
            # ray.init logs it here, and the Ray Client server's does on the head; Ray
            # Client streams the server's log records back and logs them again
            for name in ("ray._private.worker", "ray.util.client.logsclient"):
                log = logging.getLogger(name)
                if not any(isinstance(f, _QuietSigterm) for f in log.filters):
                    log.addFilter(_QuietSigterm())
            options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING,
                                       "include_dashboard": False}
            try:
                if self.address is None:
                    # Ray starts workers at nice 15 (`worker_niceness`) so its own daemons
                    # come first; on a machine shared with other work that cost the campaign
                    # a third of its CPU share (executor note), so on a Ray instance started
                    # here they run at the driver's priority, as local pool workers do
                    ray.init(address="local", num_cpus=self.jobs,
                             _system_config={"worker_niceness": 0}, **options)
                else:
                    _token_mode_like_the_cli()
                    if self.address.startswith("ray://"):
                        _check_client_server(self.address)
                        _connect_client(ray, self.address, options)
                    else:
                        ray.init(address=self.address, **options)
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = self.address or "a local Ray instance"
                raise RayUnavailable(f"cannot start or reach {where}: {_gist(e)}") from None
            self._started_ray = True
        count = self.jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(ChunkActor)
        self._actors = [actor.remote() for _ in range(count)]
        self._queued = [0] * count
        try:
            self._pids = ray.get([a.pid.remote() for a in self._actors],
                                 timeout=START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            self.stop(kill=True)
            raise RayUnavailable(f"{count} Ray actors did not start within "
                                 f"{START_TIMEOUT_S:.0f}s (the cluster has {cpus} CPUs; "
                                 "ask for fewer --jobs)") from None

    def worker_pids(self) -> list[int]:
        """The process ids the actors started with (on their nodes)."""
        return list(self._pids)

    def submit(self, job: wire.Job) -> int:
        ticket = next(self._tickets)
        self._poll_down(timeout=0.0)
        while len(self._down) == len(self._actors):
            self._poll_down(timeout=1.0)
            time.sleep(0.1)   # a ping to a restarting actor may fail at once
        which = min((i for i in range(len(self._actors)) if i not in self._down),
                    key=self._queued.__getitem__)
        ref = self._actors[which].run.remote(wire.encode_job(job))
        self._refs[ref] = (ticket, job, which)
        self._queued[which] += 1
        return ticket

    def wait(self, timeout: float) -> list[Done]:
        import ray
        from ray.exceptions import RayError, RayTaskError

        if not self._refs:
            return []
        ready, _ = ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        out: list[Done] = []
        for ref in ready:
            ticket, job, which = self._refs.pop(ref)
            self._queued[which] -= 1
            try:
                payload = ray.get(ref)
            except RayTaskError as e:   # raised outside the job (run_encoded catches its own)
                out.append(Done(ticket, job, error=str(e)))
            except RayError:             # the actor died (RayActorError), its node, its object
                out.append(Done(ticket, job, lost=True))
                if which not in self._down:
                    self._down[which] = self._actors[which].pid.remote()
            else:
                out.append(decode_outcome(ticket, job, payload))
        return out

    def _poll_down(self, timeout: float) -> None:
        """Take back the actors whose ping came back; ping again those whose ping failed
        (still restarting, or restarted and died again)."""
        import ray
        from ray.exceptions import RayError

        if not self._down:
            return
        pings = {ref: which for which, ref in self._down.items()}
        ready, _ = ray.wait(list(pings), num_returns=len(pings), timeout=timeout)
        for ref in ready:
            which = pings[ref]
            try:
                self._pids[which] = ray.get(ref)
            except RayError:
                self._down[which] = self._actors[which].pid.remote()
            else:
                del self._down[which]

    def stop(self, *, kill: bool) -> None:
        """Actors hold their CPUs until killed, so they are killed either way; a Ray instance
        this executor started is shut down."""
        if not self._actors and not self._started_ray:
            return
        import ray

        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors, self._refs, self._queued, self._pids = [], {}, [], []
        self._down = {}
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False
