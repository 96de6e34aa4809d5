"""One stack with `multikueue`, split into what each cluster runs: pure functions of Settings.

The manager holds every team's queues with the sum of the team's quota in the workers (made
explicit here, cpu and memory included) and the workloads MultiKueue dispatches; a worker holds
its own pools, the teams with quota there and the workloads pinned to it (`regional`).
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from manifests.capacity import effective_quota
from settings.model import DepartmentSettings, Resources, SchedulingSettings, Settings
from settings.multikueue_model import MultiKueueSettings, WorkerCluster


def _multikueue(settings: Settings) -> MultiKueueSettings:
    if settings.multikueue is None:
        raise ValueError("the stack has no multikueue section")
    return settings.multikueue


def worker_stack_name(stack: str, worker: str) -> str:
    """The name a worker's Azure resources are made from (manifests/aks.py `aks_names`)."""
    return f"{stack}-{worker}"


def _with_quota(
    scheduling: SchedulingSettings, quota: dict[str, dict[str, Resources]]
) -> SchedulingSettings:
    """The organisation tree with only the teams in `quota`, each given that quota."""
    departments = []
    for dept in scheduling.departments:
        teams = tuple(
            dataclasses.replace(team, quota=MappingProxyType(quota[team.name]))
            for team in dept.teams
            if team.name in quota
        )
        if teams:
            departments.append(DepartmentSettings(name=dept.name, teams=teams))
    return dataclasses.replace(scheduling, departments=tuple(departments))


def worker_settings(settings: Settings, worker: WorkerCluster) -> Settings:
    """What one worker runs, as a one-cluster stack: its region, pools and teams' quota."""
    multikueue = _multikueue(settings)
    quota = {team: dict(amounts) for team, amounts in worker.quota.items() if amounts}
    return dataclasses.replace(
        settings,
        stack=worker_stack_name(settings.stack, worker.name),
        location=worker.location,
        cluster=worker.cluster,
        scheduling=_with_quota(settings.scheduling, quota),
        workloads=tuple(
            w for w in settings.workloads if multikueue.regional.get(w.name) == worker.name
        ),
        multikueue=None,
    )


def manager_quota(settings: Settings) -> dict[str, dict[str, Resources]]:
    """Each team's quota on the manager, per flavor: the sum over the workers, every resource
    explicit (a worker's cpu/memory left out is its GPU share of that worker's nodes)."""
    multikueue = _multikueue(settings)
    totals: dict[str, dict[str, Resources]] = {}
    for worker in multikueue.workers:
        regional = worker_settings(settings, worker)
        for team in regional.scheduling.teams:
            per_flavor = totals.setdefault(team.name, {})
            for flavor in worker.cluster.flavors:
                if flavor not in team.quota:
                    continue
                amounts = effective_quota(team, flavor, regional)
                before = per_flavor.get(flavor, Resources(gpu=0, cpu_millis=0, memory_bytes=0))
                per_flavor[flavor] = Resources(
                    gpu=(before.gpu or 0) + amounts.gpu,
                    cpu_millis=(before.cpu_millis or 0) + amounts.cpu_millis,
                    memory_bytes=(before.memory_bytes or 0) + amounts.memory_bytes,
                )
    return totals


def manager_settings(settings: Settings) -> Settings:
    """What the manager's queues and workloads are built from: every worker's pools as flavors,
    each team's summed quota, and only the workloads MultiKueue dispatches. Its AKS cluster is
    the stack's own `cluster` (no GPU pools): these pools are never created on it."""
    multikueue = _multikueue(settings)
    quota = manager_quota(settings)
    for team in settings.scheduling.teams:
        quota.setdefault(team.name, {})
    return dataclasses.replace(
        settings,
        cluster=dataclasses.replace(settings.cluster, gpu_pools=multikueue.gpu_pools),
        scheduling=_with_quota(settings.scheduling, quota),
        workloads=tuple(w for w in settings.workloads if w.name not in multikueue.regional),
    )
