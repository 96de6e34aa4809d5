"""Endpoints never on spot capacity.

Azure evicts a spot node whenever it needs the capacity back (30 seconds' notice, no
guarantee of a new one): the endpoint's replica on it goes down with it, the same outcome as
the preemption that aksray/plan/checks/services.py refuses, and possibly for longer (the pool may
get
no spot capacity back). So an endpoint that Kueue may place on a spot pool is refused; there is
no opt-in, for the same reason an endpoint may not borrow. A stack that wants a cheap endpoint
gives its team quota on a small on-demand pool instead.
"""

from __future__ import annotations

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan, PodSetPlan, WorkloadPlan
from catalog.pools import CPU_POOL_NAME


def _spot_flavors(plan: Plan, pod_set: PodSetPlan) -> list[str]:
    cluster = plan.settings.cluster
    return [f for f in pod_set.may_use if f != CPU_POOL_NAME and cluster.gpu_pool(f).spot]


def check_endpoint_not_on_spot(plan: Plan, out: Findings) -> None:
    """An error when the endpoint gets a spot flavor on an empty cluster (or may get nothing
    else); a warning when only a flavor it falls back to is spot."""
    for service in (w for w in plan.workloads if w.spec.kind == "RayService"):
        for pod_set in service.pod_sets:
            spot = _spot_flavors(plan, pod_set)
            if spot:
                _report(plan, service, pod_set, spot, out)


def _report(
    plan: Plan, service: WorkloadPlan, pod_set: PodSetPlan, spot: list[str], out: Findings
) -> None:
    cluster = plan.settings.cluster
    fatal = pod_set.flavor in spot or len(spot) == len(pod_set.may_use)
    flavor = pod_set.flavor if pod_set.flavor in spot else spot[0]
    assert flavor is not None
    team = service.team.name
    path = f"{plan.settings.scheduling.team_path(team)}.quota.{flavor}"
    what = (
        f"{service.spec.name} is an endpoint that must never be evicted, but team {team}'s "
        f"quota on {flavor} places its {pod_set.pod_set.name} pods on spot nodes "
        f"({cluster.pool_path(flavor)}.spot: true), which Azure takes back at any moment"
    )
    fix = (
        f"move team {team}'s GPU quota to an on-demand pool, or set "
        f"{cluster.pool_path(flavor)}.spot: false"
    )
    if fatal:
        why = (
            "Kueue gives it this flavor on an empty cluster"
            if pod_set.flavor == flavor
            else "it may get no other flavor"
        )
        out.error(path, f"{what}; {why}: {fix}")
    else:
        others = ", ".join(f for f in pod_set.may_use if f not in spot)
        out.warning(
            path,
            f"{what}; Kueue gives it this flavor when {others} is full: remove team {team}'s "
            f"quota on {flavor}, or set {cluster.pool_path(flavor)}.spot: false",
        )
