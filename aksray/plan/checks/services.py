"""Endpoints: a RayService must never be preempted or reclaimed."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings, listed
from aksray.plan.model.plan import Plan, WorkloadPlan
from catalog.pools import CPU_POOL_NAME
from catalog.priorities import PRIORITY_CLASSES
from catalog.quantities import RESOURCE_KEYS, RESOURCES
from scheduling.admission import Running, cohort_borrowable, preemption_reason
from scheduling.queues import TeamQueue
from settings.model import workload_path


def check_services_never_evicted(plan: Plan, out: Findings) -> None:
    """A RayService must never be preempted or reclaimed.

    Kueue 0.19 suspends a RayService through `spec.rayClusterConfig.suspend`, and KubeRay 1.7
    reads that field only when it creates the RayCluster: an evicted endpoint keeps serving and
    keeps its GPUs while Kueue has released its quota, so the workload that evicted it waits on
    nodes that never free up. The endpoint is safe when nothing in its team outranks it
    (withinClusterQueue: LowerPriority) and it never runs on borrowed quota (only borrowed
    quota is reclaimed).
    """
    for service in (w for w in plan.workloads if w.spec.kind == "RayService"):
        _check_not_outranked(plan, service, out)
        _check_no_borrowing(plan, service, out)


def _check_not_outranked(plan: Plan, service: WorkloadPlan, out: Findings) -> None:
    """Nothing of the endpoint's team may preempt it (its ClusterQueue's withinClusterQueue)."""
    queue = plan.registered.queues[service.team.name]
    running = Running(
        cluster_queue=service.team.name,
        cohort=queue.cohort,
        priority=PRIORITY_CLASSES[service.workload.priority],
    )
    outranking = [
        w.spec.name
        for w in plan.workloads
        if w.team.name == service.team.name
        and w is not service
        and preemption_reason(
            queue, PRIORITY_CLASSES[w.workload.priority], running, fits_nominal=True
        )
        is not None
    ]
    if outranking:
        out.error(
            f"{workload_path(service.spec.name)}.priority",
            f"{listed(outranking)} outrank{'s' if len(outranking) == 1 else ''} "
            f"{service.spec.name} in team {service.team.name} and would preempt it, but a "
            "preempted RayService keeps its GPUs (KubeRay 1.7 ignores Kueue's suspend of a "
            "running RayService): give it the team's highest priority (inference)",
        )


def _check_no_borrowing(plan: Plan, service: WorkloadPlan, out: Findings) -> None:
    """The endpoint may never run on borrowed quota: only borrowed quota is reclaimed."""
    settings = plan.settings
    queue = plan.registered.queues.get(service.team.name)
    if queue is None:
        return
    lendable = cohort_borrowable(list(plan.registered.queues.values()), service.team.name)
    flavors = {f for p in service.pod_sets for f in p.may_use}
    for flavor in sorted(flavors, key=settings.cluster.flavors.index):
        borrowable = [
            RESOURCE_KEYS[resource]
            for resource in RESOURCES
            if lendable.get((flavor, resource), 0) > 0
            and _borrowing_limit(queue, flavor, resource) != 0
        ]
        if not borrowable:
            continue
        # On a GPU flavor the cpu/memory limits follow the gpu limit's share of a node.
        zero = ", ".join(f"{r}: 0" for r in borrowable) if flavor == CPU_POOL_NAME else "gpu: 0"
        out.error(
            f"{settings.scheduling.team_path(service.team.name)}.borrowingLimit.{flavor}",
            f"team {service.team.name} runs {service.spec.name} and may borrow "
            f"{'/'.join(borrowable)} of flavor {flavor} from its cohort, but borrowed quota "
            "is reclaimed and a reclaimed RayService keeps its GPUs (KubeRay 1.7 ignores "
            f"Kueue's suspend of a running RayService): set it to {{{zero}}}",
        )


def _borrowing_limit(queue: TeamQueue, flavor: str, resource: str) -> int | None:
    found = queue.flavor(flavor)
    quota = found.quota(resource) if found is not None else None
    return None if quota is None else quota.borrowing_limit
