"""endpoint-admitted-late: a fixed-size endpoint whose admission waits still starts once admitted.

Kueue admits a RayService only by clearing `rayClusterConfig.suspend`, and KubeRay creates the
RayService's pending RayCluster a few seconds after the RayService appears, with the suspend
value it has then. Whether a later admission reaches that RayCluster is KubeRay's: 1.6.1 and
later apply a changed `suspend` to the existing cluster in place; 1.5.0 and 1.7.0 pass it only
when they create the cluster, so an endpoint admitted later than that (a full queue, a
preemption, a Kueue restart) holds its quota with no pod until the pod-readiness timeout evicts
it. The scenario makes the wait happen on purpose: it holds the team's ClusterQueue
(`stopPolicy: Hold`), creates the endpoint, waits, releases the queue and requires the endpoint
running.
"""

from __future__ import annotations

from typing import Any, Final

from aksray.rehearse.scenarios.context import (
    Context,
    all_off,
    first_gpu_team,
    job,
)
from aksray.rehearse.scenarios.sizing import (
    ENDPOINT,
    NotApplicableError,
)
from aksray.rehearse.scenarios.workload_state import (
    admitted,
    running,
    workloads_of,
)

HELD_S: Final = 10.0  # longer than KubeRay takes to create the RayService's RayCluster


def play(ctx: Context) -> None:
    """Hold the endpoint's queue while KubeRay creates its cluster; release; it must run."""
    if ctx.hold_queue is None:
        raise NotApplicableError("this target cannot hold a ClusterQueue")
    entry = ctx.stack_workloads.get(ENDPOINT) or {}
    team = entry.get("team") or first_gpu_team(ctx).name
    replicas = int(entry.get("minReplicas", 1))
    section: dict[str, dict[str, Any]] = all_off(ctx.stack_workloads)
    ctx.apply(section, "queues")
    ctx.hold_queue(team, True)
    section[ENDPOINT] = job(
        ctx.stack_workloads, ENDPOINT, enabled=True, team=team, priority="inference",
        minReplicas=replicas, maxReplicas=replicas,
    )  # fmt: skip
    ctx.apply(section, "endpoint-held")
    queued = ctx.wait(f"{ENDPOINT} to queue", lambda s: bool(workloads_of(s, ENDPOINT)), 60)
    ctx.observer.hold(HELD_S)
    last = ctx.observer.last
    ctx.expect(
        "a held queue admits nothing",
        queued and last is not None and not admitted(ENDPOINT)(last),
        f"queued {queued}, admitted while held",
    )
    ctx.hold_queue(team, False)
    pods = 1 + replicas  # the head and one GPU worker per replica
    got = ctx.wait(f"{ENDPOINT} to run once admitted", running(ENDPOINT, pods), 240)
    ctx.expect(
        f"the endpoint admitted {HELD_S:.0f}s late runs",
        got,
        f"{ENDPOINT} admitted late never ran (its RayCluster kept the suspend it was created with)",
    )
