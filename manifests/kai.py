"""KAI Scheduler queues from the organisation tree: a parent Queue per department, a leaf per team.

One scheduling authority: Kueue decides who runs (admission against the team quotas, cohorts,
borrowing and lending, priority preemption and reclaim, all in manifests/kueue.py); KAI decides
where (gang placement and binding, bin-packing, GPU sharing) and never evicts what Kueue
admitted. KAI's side of that has two parts, and both are needed (KAI v0.17.0):

- every Queue here, department and team alike, is unlimited: quota and limit -1 for cpu, gpu and
  memory. KAI's allocate action then never refuses a gang Kueue admitted (its `OverLimit` and
  `NonPreemptibleOverQuota` checks skip a resource whose limit or quota is -1, at every level of
  the chain, pkg/scheduler/plugins/proportion/capacity_policy/), and reclaim finds no queue over
  its share to take from. A mirrored finite quota would be a second admission gate: an
  `inference` gang Kueue admits on borrowed quota is over its KAI quota and stays Pending.
  `limit` is always written: KAI counts an unset limit as 0, which makes every job OverLimit.
- the scheduler runs only `allocate` (manifests/helm_values.py `kai_scheduler_values`): preempt
  and consolidation evict whatever the quota says, so unlimited queues alone are not enough.

The tree stays because every KAI PodGroup needs a leaf queue, and KAI orders the gangs waiting
for nodes and reports its fair-share metrics along it. `overQuotaWeight` is written as the team
sets it (a department's is the sum of its teams'), but with every queue unlimited KAI divides no
over-quota share, so it has no effect (`aksray plan` warns when it is not the default).
"""

from __future__ import annotations

from typing import Any, Final

from catalog.kai import KAI_RESOURCES
from catalog.quantities import UNLIMITED
from catalog.versions import KAI_API_VERSION
from manifests.namespaces import MANAGED_BY
from settings.model import DepartmentSettings, Settings, TeamSettings

# The label that puts a RayJob / RayService / RayCluster into a KAI leaf queue.
KAI_QUEUE_LABEL: Final = "kai.scheduler/queue"
# The label that gives a Ray resource its KAI priority class (one of catalog/priorities.py).
KAI_PRIORITY_LABEL: Final = "priorityClassName"


def unlimited_queue_resources(over_quota_weight: int) -> dict[str, dict[str, int]]:
    """`spec.resources` of every KAI queue: quota and limit -1 for each resource."""
    return {
        name: {"quota": UNLIMITED, "limit": UNLIMITED, "overQuotaWeight": over_quota_weight}
        for name in KAI_RESOURCES
    }


def department_queue(department: DepartmentSettings, settings: Settings) -> dict[str, Any]:
    """A department's parent queue (`settings` as every builder takes it; no quota is read)."""
    weight = sum(team.over_quota_weight for team in department.teams)
    return {
        "apiVersion": KAI_API_VERSION,
        "kind": "Queue",
        "metadata": {
            "name": department.name,
            "labels": {**MANAGED_BY, "aksray.io/department": department.name},
        },
        "spec": {
            "displayName": department.name,
            "resources": unlimited_queue_resources(weight),
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
            "resources": unlimited_queue_resources(team.over_quota_weight),
        },
    }


def kai_queues(settings: Settings) -> list[dict[str, Any]]:
    """Every KAI queue of the stack, parents before their leaves."""
    scheduling = settings.scheduling
    return [
        *(department_queue(dept, settings) for dept in scheduling.departments),
        *(team_queue(team, settings) for team in scheduling.teams),
    ]
