"""The endpoint's replicas are Ray Serve's to decide: its own autoscaling policy, with the
`autoscaling_config` the platform writes, adds replicas under concurrent requests and removes
them when the endpoint is idle.

A real local Ray cluster runs Serve with a stand-in deployment in place of vLLM (no GPU): each
request waits a second, as a generation would. The policy's thresholds are the platform's own
(`manifests.serve_config.deployment_config`: minimum, maximum, target ongoing requests); only
its delays are shortened so the test takes a minute, not the production delays' several. What
the Ray autoscaler then does with the replicas (one GPU worker each, admitted by Kueue slice by
slice) is the rehearsal's `endpoint-scales`. Payload tier: `make test-payloads`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from manifests.serve_config import deployment_config

pytestmark = pytest.mark.payload

MINIMUM, MAXIMUM = 1, 3
QUICK = {"upscale_delay_s": 1.0, "downscale_delay_s": 5.0}  # the platform leaves Serve's defaults
APP, DEPLOYMENT = "endpoint", "StandIn"
SCALE_TIMEOUT_S = 120.0


@pytest.fixture
def serve() -> Iterator[Any]:
    import ray
    from ray import serve as ray_serve

    ray.init(num_cpus=4, include_dashboard=False, runtime_env={"env_vars": {}})
    try:
        ray_serve.start()
        yield ray_serve
        ray_serve.shutdown()
    finally:
        ray.shutdown()


def running_replicas(serve: Any) -> int:
    deployments = serve.status().applications[APP].deployments
    return int(deployments[DEPLOYMENT].replica_states.get("RUNNING", 0))


def wait_for(what: str, serve: Any, done: Any) -> list[int]:
    """Sample the running replicas until `done(count)`; every count seen, or fail naming it."""
    seen: list[int] = []
    deadline = time.monotonic() + SCALE_TIMEOUT_S
    while time.monotonic() < deadline:
        seen.append(running_replicas(serve))
        if done(seen[-1]):
            return seen
        time.sleep(0.5)
    pytest.fail(f"{what}: replicas seen {seen[-20:]} in {SCALE_TIMEOUT_S:.0f}s")


def test_serves_own_policy_scales_the_endpoint_up_under_load_and_down_when_idle(
    serve: Any,
) -> None:
    policy = deployment_config((MINIMUM, MAXIMUM))["autoscaling_config"]
    target = policy["target_ongoing_requests"]
    assert (policy["min_replicas"], policy["max_replicas"]) == (MINIMUM, MAXIMUM)

    @serve.deployment(ray_actor_options={"num_cpus": 0.5}, max_ongoing_requests=2 * target)
    class StandIn:
        async def __call__(self) -> str:
            await asyncio.sleep(1.0)  # a generation's time
            return "ok"

    deployment: Any = StandIn  # a Serve Deployment once decorated
    handle = serve.run(
        deployment.options(autoscaling_config={**policy, **QUICK}).bind(),
        name=APP,
        route_prefix=None,
    )
    assert wait_for("the endpoint to start at its minimum", serve, lambda n: n == MINIMUM)

    stop = threading.Event()

    def load() -> None:
        # About three times the target in flight at every moment: more than one replica's share.
        while not stop.is_set():
            for response in [handle.remote() for _ in range(3 * target)]:
                response.result(timeout_s=60)

    sender = threading.Thread(target=load, daemon=True)
    sender.start()
    try:
        up = wait_for("Serve to add replicas under load", serve, lambda n: n == MAXIMUM)
    finally:
        stop.set()
        sender.join(timeout=90)
    assert max(up) == MAXIMUM
    assert all(n <= MAXIMUM for n in up)  # never past max_replicas

    down = wait_for("Serve to remove replicas once idle", serve, lambda n: n == MINIMUM)
    assert down[-1] == MINIMUM
    assert all(n >= MINIMUM for n in down)  # never below min_replicas
