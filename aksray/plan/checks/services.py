"""Endpoints: a RayService outranked in its team is refused; one that may borrow is warned about.

What Kueue's eviction of a RayService does was played on the rig with the KubeRay the platform
ships (v1.6.2; the rehearsal's `endpoint-reclaimed`): Kueue sets `rayClusterConfig.suspend`,
KubeRay applies it to the running RayCluster in place, its pods are deleted and its GPUs go to
the workload that evicted it; the endpoint, one workload, is down whole until its quota fits it
again."""

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
    """An endpoint must not be preempted by its own team (an error) and is warned about when
    it may run on borrowed quota, which is reclaimed (a warning that says what it costs).

    Kueue 0.19 evicts a RayService whole through `spec.rayClusterConfig.suspend`; KubeRay 1.6.2
    suspends the running Ray cluster in place and its GPUs come back (played on the rig), so an
    eviction is an outage of the whole endpoint, not a leak of its GPUs. (KubeRay 1.7.0 passes
    the suspend only when it creates the cluster: there an evicted endpoint would keep its
    GPUs.) Nothing in the team outranking it (withinClusterQueue: LowerPriority) keeps the
    team's own jobs from taking it down; a borrowingLimit of 0 keeps reclaim from it.
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
            f"{service.spec.name} in team {service.team.name} and would preempt it: Kueue evicts "
            "the whole endpoint (KubeRay 1.6.2 suspends its Ray cluster in place and deletes its "
            "pods) and it stays down while they run: give it the team's highest priority "
            "(inference)",
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
        out.warning(
            f"{settings.scheduling.team_path(service.team.name)}.borrowingLimit.{flavor}",
            f"team {service.team.name} runs {service.spec.name} and may borrow "
            f"{'/'.join(borrowable)} of flavor {flavor} from its cohort: when a team that lent "
            "it needs its quota back, Kueue reclaims by evicting the whole endpoint, not only "
            "what it borrowed (KubeRay 1.6.2 suspends its Ray cluster in place and its GPUs go "
            "to the lender), and it stays down until its team's quota plus what the cohort "
            f"lends fits it again; set it to {{{zero}}} to keep the endpoint on its own quota",
        )


def _borrowing_limit(queue: TeamQueue, flavor: str, resource: str) -> int | None:
    found = queue.flavor(flavor)
    quota = found.quota(resource) if found is not None else None
    return None if quota is None else quota.borrowing_limit
