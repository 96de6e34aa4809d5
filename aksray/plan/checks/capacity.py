"""Capacity: team quotas against what their pools hold, pods against one node of their pool."""

from __future__ import annotations

import math

from aksray.plan.checks.findings import Findings, amount, amounts, listed, node_amounts, pod_words
from aksray.plan.model.plan import Plan, PodSetPlan, WorkloadPlan
from catalog.azure import MAX_POOL_NODES
from catalog.quantities import RESOURCE_KEYS, UNLIMITED
from scheduling.amounts import READING_ORDER
from scheduling.nodes import node_allocatable, pool_capacity
from scheduling.queues import effective_quota
from settings.model import Settings


def check_pool_capacity(plan: Plan, out: Findings) -> None:
    """Σ team nominal quotas of each flavor against its pool at maximum size."""
    check_quotas_fit_pools(plan.settings, out)


def check_quotas_fit_pools(settings: Settings, out: Findings) -> None:
    """`check_pool_capacity` on the settings alone: `aksray plan` runs it before the program
    too, so a stack of thousands of teams that can never fit stops before it is built."""
    cluster = settings.cluster
    for flavor in cluster.flavors:
        teams = [team for team in settings.scheduling.teams if flavor in team.quota]
        if not teams:
            continue
        # The core's effective quota: what the program records in each ClusterQueue (held
        # equal by tests/scheduling/test_core.py), computed here before the program runs.
        quotas = {team.name: effective_quota(team, flavor, settings) for team in teams}
        capacity = pool_capacity(cluster, flavor)
        vm_size = cluster.pool(flavor).vm_size
        node = node_allocatable(vm_size)
        over: list[str] = []
        nodes_needed = 0
        for resource in READING_ORDER:
            total = sum(q.get(resource) for q in quotas.values())
            if total <= capacity.get(resource):
                continue
            holders = [
                f"{name} {amount(resource, q.get(resource))}"
                for name, q in quotas.items()
                if q.get(resource)
            ]
            over.append(
                f"{RESOURCE_KEYS[resource]} {amount(resource, total)} > "
                f"{amount(resource, capacity.get(resource))} ({listed(holders)})"
            )
            if node.get(resource):
                nodes_needed = max(nodes_needed, math.ceil(total / node.get(resource)))
        if not over:
            continue
        max_count = cluster.pool(flavor).max_count
        what = (
            f"the team quotas of flavor {flavor} add up to more than pool {flavor} holds at "
            f"maxCount {max_count} (x {vm_size}, {amounts(node_amounts(node))} allocatable per "
            f"node): {'; '.join(over)}"
        )
        _report_overcommit(settings, out, flavor, what=what, nodes_needed=nodes_needed)


def _report_overcommit(
    settings: Settings, out: Findings, flavor: str, *, what: str, nodes_needed: int
) -> None:
    path = f"{settings.cluster.pool_path(flavor)}.maxCount"
    teams = [team for team in settings.scheduling.teams if flavor in team.quota]
    unlimited = [
        f"{settings.scheduling.team_path(team.name)}.quota.{flavor}"
        for team in teams
        if UNLIMITED in team.quota[flavor].given.values()
    ]
    if settings.scheduling.allow_overcommit:
        out.warning(
            path,
            f"{what}; allowed by scheduling.allowOvercommit: Kueue admits on quota, so jobs "
            "it admits may stay Pending while the pool is full",
        )
    elif unlimited:
        # An unlimited quota is the whole pool at any size: no maxCount fixes a sum that holds
        # it and anything more.
        out.error(
            unlimited[-1],
            f"{what}; an unlimited quota is the whole pool at any maxCount, so raising maxCount "
            f"never fixes this: give {listed(unlimited)} a number instead of unlimited, lower "
            "the other teams' quota, or set scheduling.allowOvercommit: true",
        )
    else:
        # A pool holds at most MAX_POOL_NODES nodes: past that no maxCount is the fix.
        raise_it = (
            f"raise maxCount to {nodes_needed}, lower the teams' quota.{flavor}"
            if nodes_needed <= MAX_POOL_NODES
            else f"no maxCount holds it (a pool has at most {MAX_POOL_NODES} nodes, it needs "
            f"{nodes_needed}): lower the teams' quota.{flavor}, move some of it to another pool"
        )
        out.error(
            path,
            f"{what}; Kueue admits on quota, not on nodes, so admitted jobs would stay "
            f"Pending: {raise_it}, or set scheduling.allowOvercommit: true",
        )


def check_node_fit(plan: Plan, out: Findings) -> None:
    """Every pod against one node of each flavor Kueue may give it (node allocatable)."""
    cluster = plan.settings.cluster
    for workload in plan.workloads:
        for pod_set in workload.pod_sets:
            too_small = [f for f in pod_set.may_use if not pod_set.fits_node(f)]
            if not too_small:
                continue
            requests = amounts(pod_set.pod_set.requests)
            fatal = pod_set.flavor in too_small or len(too_small) == len(pod_set.may_use)
            flavor = pod_set.flavor if pod_set.flavor in too_small else too_small[0]
            assert flavor is not None
            vm_size = cluster.pool(flavor).vm_size
            node = amounts(node_amounts(node_allocatable(vm_size)))
            what = (
                f"{workload.spec.name}'s {pod_set.pod_set.name} pods request {requests} each, "
                f"but one {vm_size} node of pool {flavor} offers {node} (node allocatable: the "
                "VM minus AKS's kube-reserved CPU and memory and the eviction threshold)"
            )
            path = f"{cluster.pool_path(flavor)}.vmSize"
            if fatal:
                why = (
                    "Kueue gives the pods this flavor on an empty cluster"
                    if pod_set.flavor == flavor
                    else "no flavor the pods may get has nodes that large"
                )
                out.error(
                    path,
                    f"{what}; {why}, so the job would be admitted and its pods stay Pending: "
                    "use a larger vmSize for this pool",
                )
            else:
                out.warning(
                    path,
                    f"{what}; Kueue gives the pods this flavor when "
                    f"{', '.join(f for f in pod_set.may_use if f not in too_small)} is full, and "
                    "then they stay Pending: use a larger vmSize or take the team's quota off "
                    "this flavor",
                )


def check_gang_fits_pool(plan: Plan, out: Findings) -> None:
    """A gang needs all its pods running at once: more nodes than its pool can ever have is an
    error whatever the quota says (overcommit is about quota versus nodes, not gang size)."""
    cluster = plan.settings.cluster
    for workload in plan.workloads:
        for pod_set in workload.pod_sets:
            flavor = pod_set.flavor
            if flavor is None or not pod_set.fits_node(flavor):
                continue  # inadmissible or larger than a node: other checks say why
            per_node = pod_set.pods_per_node[flavor]
            needed = _nodes_for(workload, flavor, cluster.pool(flavor).vm_size)
            max_count = cluster.pool(flavor).max_count
            if needed <= max_count:
                continue
            out.error(
                f"{cluster.pool_path(flavor)}.maxCount",
                _gang_too_large(plan, workload, pod_set, needed, per_node),
            )


def _nodes_for(workload: WorkloadPlan, flavor: str, vm_size: str) -> int:
    """The fewest nodes of the flavor's pool that could hold every pod the gang puts there: a
    lower bound (each pod set on its own, and each resource summed over them)."""
    on_flavor = [p for p in workload.pod_sets if p.flavor == flavor]
    node = node_allocatable(vm_size)
    by_shape = max(math.ceil(p.pod_set.count / p.pods_per_node[flavor]) for p in on_flavor)
    by_resource = [
        math.ceil(sum(p.pod_set.total.get(resource, 0) for p in on_flavor) / node.get(resource))
        for resource in READING_ORDER
        if node.get(resource)
    ]
    return max(by_shape, *by_resource)


def _gang_too_large(
    plan: Plan, workload: WorkloadPlan, pod_set: PodSetPlan, needed: int, per_node: int
) -> str:
    cluster = plan.settings.cluster
    flavor = pod_set.flavor
    assert flavor is not None
    pool = cluster.pool(flavor)
    pods, verb = pod_words(pod_set)
    workers = "workers" in workload.spec.options and pod_set.pod_set.name != "head"
    if needed <= MAX_POOL_NODES:
        fix = f"raise maxCount to {needed}"
        fitting = per_node * pool.max_count
        if workers and fitting >= 1:
            fix += f" or lower workers to {fitting}"
    else:
        # No pool may have that many nodes: fewer workers on the largest pool, or bigger nodes.
        fix = f"no pool holds {needed} nodes (at most {MAX_POOL_NODES}): "
        if workers:
            fix += (
                f"lower workers to {per_node * MAX_POOL_NODES} with maxCount {MAX_POOL_NODES}, or "
            )
        fix += "use a VM size with more GPUs per node"
    return (
        f"{workload.spec.name} can never run: its gang is all-or-nothing and its {pods} {verb} "
        f"{needed} nodes of pool {flavor} at once ({per_node} per {pool.vm_size} node), but the "
        f"pool has at most {pool.max_count} (maxCount); scheduling.allowOvercommit only lets "
        "quota exceed the pool, the pods of one gang must all run together: " + fix
    )
