"""One stack with `multikueue`, split into what each cluster runs: pure functions of Settings.

The manager holds every team's queues with the sum of the team's quota in the workers (each
worker's effective quota, scheduling/queues.py, so cpu and memory are explicit) and the
workloads MultiKueue dispatches; a worker holds its own pools, the teams with quota there and
the workloads pinned to it (`regional`).
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from scheduling.amounts import Amounts
from scheduling.queues import effective_quota
from settings.model import (
    DepartmentSettings,
    MultiKueueSettings,
    Resources,
    SchedulingSettings,
    Settings,
    WorkerCluster,
)


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


def team_workers(settings: Settings) -> dict[str, tuple[str, ...]]:
    """Per team, the workers where it has quota, in stack order."""
    if settings.multikueue is None:
        return {}
    return {
        team.name: tuple(
            w.name for w in settings.multikueue.workers if any(w.team_quota(team.name).values())
        )
        for team in settings.scheduling.teams
    }


def worker_quotas(settings: Settings) -> dict[str, dict[str, dict[str, Amounts]]]:
    """Per worker, per team with quota there, per flavor: the team's effective quota in that
    worker (cpu/memory left out are its GPU share of that worker's nodes)."""
    quotas: dict[str, dict[str, dict[str, Amounts]]] = {}
    for worker in _multikueue(settings).workers:
        regional = worker_settings(settings, worker)
        quotas[worker.name] = {
            team.name: {
                flavor: effective_quota(team, flavor, regional)
                for flavor in worker.cluster.flavors
                if flavor in team.quota
            }
            for team in regional.scheduling.teams
        }
    return quotas


def manager_quota(settings: Settings) -> dict[str, dict[str, Amounts]]:
    """Each team's quota on the manager, per flavor: the sum of its quota in the workers."""
    totals: dict[str, dict[str, Amounts]] = {}
    for per_team in worker_quotas(settings).values():
        for team, per_flavor in per_team.items():
            summed = totals.setdefault(team, {})
            for flavor, amounts in per_flavor.items():
                summed[flavor] = summed.get(flavor, Amounts()) + amounts
    return totals


def manager_settings(settings: Settings) -> Settings:
    """What the manager's queues and workloads are built from: every worker's pools as flavors,
    each team's summed quota, and only the workloads MultiKueue dispatches. Its AKS cluster is
    the stack's own `cluster` (no GPU pools): these pools are never created on it."""
    multikueue = _multikueue(settings)
    summed = manager_quota(settings)
    quota = {
        team.name: {
            flavor: Resources(MappingProxyType(dict(amounts)))
            for flavor, amounts in summed.get(team.name, {}).items()
        }
        for team in settings.scheduling.teams
    }
    return dataclasses.replace(
        settings,
        cluster=dataclasses.replace(settings.cluster, gpu_pools=multikueue.gpu_pools),
        scheduling=_with_quota(settings.scheduling, quota),
        workloads=tuple(w for w in settings.workloads if w.name not in multikueue.regional),
    )
