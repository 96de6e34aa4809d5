"""KAI Scheduler queues from the organisation tree: a parent Queue per department, a leaf per team.

KAI queues carry no flavors: a queue's quota per resource is the sum over the flavors of the same
numbers the Kueue ClusterQueue gets (manifests/capacity.py), in KAI's units — CPU in millicores,
memory in MB (10^6 bytes, rounded up so whatever Kueue admits also fits KAI's quota), GPUs in
devices; -1 means unlimited.

- quota = Σ nominal quota; -1 when the stack file says `unlimited` for that resource.
- limit = Σ (nominal + borrowingLimit); -1 when the team may borrow without limit in any flavor
  (Kueue's default when no borrowingLimit is set) or its quota is unlimited. `limit` is always
  written: KAI counts an unset limit as 0, which would make every job OverLimit.
- overQuotaWeight: the team's `overQuotaWeight`, for every resource.
- a department's quota and limit are the sums of its teams' (-1 if any team's is -1) and its
  weight the sum of its teams' weights, so the parent never holds less than its leaves.
"""

from __future__ import annotations

from typing import Any, Final

from catalog.quantities import GPU_RESOURCE, RESOURCE_KEYS, UNLIMITED
from catalog.versions import KAI_API_VERSION
from manifests.capacity import effective_limit, effective_quota, unlimited_resources
from manifests.kueue import team_flavors
from manifests.namespaces import MANAGED_BY
from settings.model import DepartmentSettings, Settings, TeamSettings

# The label that puts a RayJob / RayService / RayCluster into a KAI leaf queue.
KAI_QUEUE_LABEL: Final = "kai.scheduler/queue"
# The label that gives a Ray resource its KAI priority class (one of catalog/priorities.py).
KAI_PRIORITY_LABEL: Final = "priorityClassName"
MEGABYTE: Final = 10**6

# KAI resource name -> the Kubernetes resource it counts, in the order a KAI Queue lists them.
KAI_RESOURCES: Final = {RESOURCE_KEYS[r]: r for r in ("cpu", GPU_RESOURCE, "memory")}


def kai_units(resource: str, amount: int) -> int:
    """An amount in Kubernetes units as KAI counts it (memory: bytes -> MB, rounded up)."""
    if amount == UNLIMITED:
        return UNLIMITED
    if resource == "memory":
        return -(-amount // MEGABYTE)
    return amount


def team_queue_resources(team: TeamSettings, settings: Settings) -> dict[str, dict[str, int]]:
    """`spec.resources` of a team's leaf queue."""
    flavors = team_flavors(team, settings)
    resources: dict[str, dict[str, int]] = {}
    for kai_name, resource in KAI_RESOURCES.items():
        quota = limit = 0
        for flavor in flavors:
            if resource in unlimited_resources(team, flavor, settings):
                quota = limit = UNLIMITED
                break
            nominal = effective_quota(team, flavor, settings).get(resource)
            borrowing = effective_limit(team, flavor, "borrowingLimit", settings)[resource]
            quota += nominal
            if limit != UNLIMITED:
                limit = UNLIMITED if borrowing is None else limit + nominal + borrowing
        resources[kai_name] = {
            "quota": kai_units(resource, quota),
            "limit": kai_units(resource, limit),
            "overQuotaWeight": team.over_quota_weight,
        }
    return resources


def _sum(values: list[int]) -> int:
    return UNLIMITED if UNLIMITED in values else sum(values)


def department_queue_resources(
    department: DepartmentSettings, settings: Settings
) -> dict[str, dict[str, int]]:
    """`spec.resources` of a department's parent queue: the sums of its teams'."""
    teams = [team_queue_resources(team, settings) for team in department.teams]
    return {
        kai_name: {
            "quota": _sum([t[kai_name]["quota"] for t in teams]),
            "limit": _sum([t[kai_name]["limit"] for t in teams]),
            "overQuotaWeight": sum(t[kai_name]["overQuotaWeight"] for t in teams),
        }
        for kai_name in KAI_RESOURCES
    }


def department_queue(department: DepartmentSettings, settings: Settings) -> dict[str, Any]:
    return {
        "apiVersion": KAI_API_VERSION,
        "kind": "Queue",
        "metadata": {
            "name": department.name,
            "labels": {**MANAGED_BY, "aksray.io/department": department.name},
        },
        "spec": {
            "displayName": department.name,
            "resources": department_queue_resources(department, settings),
        },
    }


def team_queue(team: TeamSettings, settings: Settings) -> dict[str, Any]:
    return {
        "apiVersion": KAI_API_VERSION,
        "kind": "Queue",
        "metadata": {
            "name": team.name,
            "labels": {
                **MANAGED_BY,
                "aksray.io/team": team.name,
                "aksray.io/department": team.department,
            },
        },
        "spec": {
            "displayName": team.name,
            "parentQueue": team.department,
            "resources": team_queue_resources(team, settings),
        },
    }


def kai_queues(settings: Settings) -> list[dict[str, Any]]:
    """Every KAI queue of the stack, parents before their leaves."""
    scheduling = settings.scheduling
    return [
        *(department_queue(dept, settings) for dept in scheduling.departments),
        *(team_queue(team, settings) for team in scheduling.teams),
    ]
