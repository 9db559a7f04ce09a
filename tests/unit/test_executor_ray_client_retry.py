"""Ray Client's per-client server dying at startup (ray-project/ray#63202) is retried, nothing
else is.

The failure is a race inside Ray's proxier (its fork against gRPC's poller threads) that a test
cannot bring about on purpose, so these tests drive `_connect_client` with a stand-in for the
`ray` module that answers as Ray Client answered in failed runs: `ConnectionAbortedError`
("Initialization failure from server: RuntimeError: Starting Ray client server failed. ...", or
"... psutil.ZombieProcess: PID still exists but it's a zombie ...").
The connection to a real head is `test_executor_ray.py`'s."""

from __future__ import annotations

from typing import Any

import pytest

from campaigns.executors import ray as ray_executor

DIED = ("Initialization failure from server: RuntimeError: Starting Ray client server failed. "
        "See ray_client_server_23000.err for detailed logs.")


class _Ray:
    """Fails `init` with each error of `errors` in turn, then connects."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.inits = 0
        self.shutdowns = 0

    def init(self, address: str, **options: Any) -> None:
        self.inits += 1
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.shutdowns += 1


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_executor.time, "sleep", lambda s: None)


def test_a_specific_server_that_died_at_startup_is_tried_again() -> None:
    ray = _Ray(ConnectionAbortedError(DIED), ConnectionAbortedError(DIED))
    ray_executor._connect_client(ray, "ray://127.0.0.1:10001", {})
    assert (ray.inits, ray.shutdowns) == (3, 2)


ZOMBIE = ("Initialization failure from server: psutil.ZombieProcess: PID still exists but "
          "it's a zombie (pid=14687)")
"""The same death seen by the proxier's process check before the child was reaped (a full
test run under load)."""


def test_a_specific_server_seen_as_a_zombie_is_tried_again() -> None:
    ray = _Ray(ConnectionAbortedError(ZOMBIE))
    ray_executor._connect_client(ray, "ray://127.0.0.1:10001", {})
    assert (ray.inits, ray.shutdowns) == (2, 1)


def test_it_gives_up_after_the_last_try_with_ray_s_own_error() -> None:
    ray = _Ray(*[ConnectionAbortedError(DIED)] * ray_executor.CLIENT_TRIES)
    with pytest.raises(ConnectionAbortedError, match="Starting Ray client server failed"):
        ray_executor._connect_client(ray, "ray://127.0.0.1:10001", {})
    assert ray.inits == ray_executor.CLIENT_TRIES


@pytest.mark.parametrize("error", [ConnectionError("ray client connection timeout"),
                                   RuntimeError("Version mismatch: client 3.11, server 3.12")])
def test_any_other_failure_is_not_retried(error: Exception) -> None:
    ray = _Ray(error)
    with pytest.raises(type(error)):
        ray_executor._connect_client(ray, "ray://127.0.0.1:10001", {})
    assert (ray.inits, ray.shutdowns) == (1, 0)
