"""Warnings: money spent on nothing (idle GPU nodes, quota no workload can use)."""

from __future__ import annotations

from collections import defaultdict

from aksray.plan.checks.findings import Findings, amount, amounts, node_amounts
from aksray.plan.model.plan import Plan, WorkloadPlan
from catalog.quantities import GPU_RESOURCE
from catalog.vm_sizes import VM_SIZES


def check_idle_gpus(plan: Plan, out: Findings) -> None:
    cluster = plan.settings.cluster
    for pool in cluster.gpu_pools:
        if pool.min_count <= 0:
            continue
        size = VM_SIZES[pool.vm_size]
        out.warning(
            f"{cluster.pool_path(pool.name)}.minCount",
            f"pool {pool.name} keeps {pool.min_count} {pool.vm_size} node"
            f"{'s' if pool.min_count != 1 else ''} "
            f"({amount(GPU_RESOURCE, pool.min_count * pool.gpus_per_node)}, {size.gpu_model}) "
            "running and billed while nothing runs; set minCount to 0 to scale to zero when "
            "idle",
        )


def check_unused_quota(plan: Plan, out: Findings) -> None:
    settings = plan.settings
    by_team: dict[str, list[WorkloadPlan]] = defaultdict(list)
    for workload in plan.workloads:
        by_team[workload.team.name].append(workload)
    for team in settings.scheduling.teams:
        queue = plan.registered.queues[team.name]
        held = {
            flavor: quota for flavor in team.quota if (quota := queue.nominal(flavor)).nonzero()
        }
        if not held:
            continue
        path = f"{settings.scheduling.team_path(team.name)}.quota"
        workloads = by_team.get(team.name, [])
        if not workloads:
            listed = "; ".join(
                f"{flavor}: {amounts(node_amounts(q))}" for flavor, q in held.items()
            )
            out.warning(
                path,
                f"team {team.name} holds quota ({listed}) but runs no enabled workload of this "
                "stack; it serves only jobs the team submits itself (fine if it does), "
                "otherwise remove the quota or aim a workload at the team",
            )
            continue
        used = {flavor for w in workloads for p in w.pod_sets for flavor in p.may_use}
        for flavor, quota in held.items():
            if flavor in used:
                continue
            out.warning(
                f"{path}.{flavor}",
                f"team {team.name}'s quota on flavor {flavor} ({amounts(node_amounts(quota))}) "
                f"fits no pod of its workloads ({', '.join(w.spec.name for w in workloads)}); it "
                "serves only jobs the team submits itself: remove it, or give it what those pods "
                "need",
            )
