"""KAI: non-preemptible workloads run only within quota; parents hold their children's quota."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from aksray.checks.findings import Findings, gpu_flavor, listed, quota_path
from aksray.model import Plan, WorkloadPlan
from aksray.objects import kai_amount, parent_queue
from catalog.pools import CPU_POOL_NAME
from catalog.priorities import NON_PREEMPTIBLE_MIN_PRIORITY, PRIORITY_CLASSES
from catalog.quantities import GPU_RESOURCE, RESOURCE_KEYS, UNLIMITED
from manifests.kai import KAI_RESOURCES, kai_units


def _kai_chain(plan: Plan, leaf: str) -> list[tuple[str, Mapping[str, Any]]]:
    chain: list[tuple[str, Mapping[str, Any]]] = []
    name: str | None = leaf
    while name is not None and name in plan.registered.kai_queues and len(chain) < 16:
        queue = plan.registered.kai_queues[name]
        chain.append((name, queue))
        name = parent_queue(queue)
    return chain


def check_kai_quota(plan: Plan, out: Findings) -> None:
    """Non-preemptible workloads run only within quota, at every level of their queue chain."""
    for workload in plan.workloads:
        priority = workload.workload.priority
        if PRIORITY_CLASSES[priority] < NON_PREEMPTIBLE_MIN_PRIORITY:
            continue
        for level, (name, queue) in enumerate(_kai_chain(plan, workload.team.name)):
            short = _short_of_quota(workload, queue)
            if not short:
                continue
            unit = {GPU_RESOURCE: "", "cpu": "m", "memory": "MB"}
            gap = ", ".join(f"{RESOURCE_KEYS[r]} {n}{unit[r]} > {q}{unit[r]}" for r, n, q in short)
            path, where = _where_short(plan, workload, level, name, short[0][0])
            out.error(
                path,
                f"{workload.spec.name} has priority {priority} "
                f"({PRIORITY_CLASSES[priority]} >= {NON_PREEMPTIBLE_MIN_PRIORITY}: "
                f"non-preemptible), which KAI schedules only within quota, but its gang needs "
                f"more than {where} holds ({gap}; in KAI's units: millicores, MB), so it would "
                "never start: raise the team's quota (gpu, cpu and memory) or give the workload "
                "a preemptible priority (train or build-preemptible)",
            )
            break


def _short_of_quota(workload: WorkloadPlan, queue: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """(resource, what the gang needs, the queue's quota) where the quota is too small."""
    short = []
    for resource in (GPU_RESOURCE, "cpu", "memory"):
        quota = kai_amount(queue, RESOURCE_KEYS[resource])
        need = kai_units(resource, workload.total(resource))
        if quota != UNLIMITED and need > quota:
            short.append((resource, need, quota))
    return short


def _where_short(
    plan: Plan, workload: WorkloadPlan, level: int, queue: str, first: str
) -> tuple[str, str]:
    """(config path to change, words for the queue) of a queue too small for a gang: the
    team's quota for its own leaf queue, the department for a parent."""
    settings = plan.settings
    team = workload.team
    if level == 0:
        flavor = gpu_flavor(team, settings) if first == GPU_RESOURCE else CPU_POOL_NAME
        if flavor not in team.quota:
            flavor = None
        return quota_path(settings, team, flavor, first), f"team {team.name}'s KAI queue"
    department = next((d for d in settings.scheduling.departments if d.name == queue), None)
    path = (
        settings.scheduling.department_path(department.name)
        if department
        else settings.scheduling.team_path(team.name)
    )
    return path, f"its parent KAI queue {queue}"


def check_kai_hierarchy(plan: Plan, out: Findings) -> None:
    """Each KAI parent queue's quota covers the sum of its children's."""
    settings = plan.settings
    children: dict[str, list[str]] = defaultdict(list)
    for name, queue in plan.registered.kai_queues.items():
        parent = parent_queue(queue)
        if parent:
            children[parent].append(name)
    for parent, names in children.items():
        if parent not in plan.registered.kai_queues:
            continue
        queue = plan.registered.kai_queues[parent]
        over = []
        for kai_name in KAI_RESOURCES:
            quota = kai_amount(queue, kai_name)
            values = [kai_amount(plan.registered.kai_queues[n], kai_name) for n in names]
            total = UNLIMITED if UNLIMITED in values else sum(values)
            if quota != UNLIMITED and (total == UNLIMITED or total > quota):
                over.append(f"{kai_name} {'unlimited' if total == UNLIMITED else total} > {quota}")
        if not over:
            continue
        department = next((d for d in settings.scheduling.departments if d.name == parent), None)
        path = settings.scheduling.department_path(parent) if department else "scheduling"
        out.error(
            path,
            f"the quotas of KAI queue {parent}'s children ({listed(sorted(names))}) add up "
            f"to more than its own ({'; '.join(over)}): KAI never gives the children what "
            "the parent lacks; the department's queue must hold the sum of its teams' quotas",
        )
