"""Kueue objects from the organisation tree: flavors, cohorts, cluster and local queues, priorities.

- One ResourceFlavor per pool (`cpu` and one per GPU pool): node labels that select exactly that
  pool, tolerations for exactly that pool's taints (catalog/pools.py).
- One Cohort per department; one ClusterQueue per team in its department's cohort, admitting only
  the team's namespace; one LocalQueue per team in its namespace.
- WorkloadPriorityClasses with KAI's priority class names and values (catalog/priorities.py).

Resource groups: every ClusterQueue has ONE resource group covering cpu, memory and
nvidia.com/gpu, flavors in the order [cpu, <GPU pools in stack order>]. Kueue gives a pod set
all resources of a group from a single flavor, trying flavors in order:
- a Ray head (cpu and memory only) fits the `cpu` flavor first and lands on the CPU pool;
- a GPU worker can never get `cpu` (its nvidia.com/gpu quota is 0 and it can borrow none), so it
  gets a GPU flavor — with that flavor's cpu and memory quota, hence GPU flavors carry cpu and
  memory quota too (the GPU share of the node allocatable, scheduling/nodes.py);
- one group means one flavor per pod set, so the CPU pool's node selector and a GPU pool's node
  selector never land on the same pod (two groups — cpu/memory apart from GPUs — would give a GPU
  worker `cpu` for its CPU and `a100` for its GPU: two contradictory node selectors).
"""

from __future__ import annotations

from typing import Any, Final

from catalog.pools import (
    CPU_POOL_NAME,
    gpu_pool_node_taints,
    pool_node_labels,
    tolerations_for,
)
from catalog.priorities import PRIORITY_CLASSES
from catalog.quantities import RESOURCE_KINDS
from catalog.versions import KUEUE_API_VERSION
from manifests.namespaces import MANAGED_BY
from scheduling.queues import (
    TEAM_PREEMPTION,
    WHEN_CAN_BORROW,
    WHEN_CAN_PREEMPT,
    FlavorQuota,
    TeamQueue,
    team_queue,
    team_queues,
)
from settings.model import ClusterSettings, Settings, TeamSettings

# Selects a namespace by its name: the API server sets this label on every namespace.
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
# How a job names its LocalQueue and its priority (labels on the RayJob / RayService).
QUEUE_NAME_LABEL: Final = "kueue.x-k8s.io/queue-name"
# Kueue's MultiKueue: the controller of the admission check that dispatches to worker clusters,
# and the `spec.managedBy` of a job it dispatches (the local KubeRay then leaves it alone).
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
# What a LocalQueue waits for when Pulumi creates it: Kueue's cache holds it, its ClusterQueue
# and that queue's admission checks, all active (Kueue v0.19.2 `localqueue_controller.go`).
LOCAL_QUEUE_ACTIVE: Final = "condition=Active"
PRIORITY_CLASS_LABEL: Final = "kueue.x-k8s.io/priority-class"

# Kueue is the one scheduler that preempts and reclaims, always a whole workload (a suspended
# RayJob's Ray cluster is deleted as one); KAI only places what Kueue admitted (manifests/kai.py).
# The policy itself is the core's (scheduling/queues.py TEAM_PREEMPTION), because its admission
# model reads it; why each value:
# - reclaimWithinCohort Any: a team whose workload fits its own nominal quota takes back what
#   others borrowed from it, whatever their priority: lent quota is on loan, not given away;
# - borrowWithinCohort Never: never preempt another team's workloads just to borrow;
# - withinClusterQueue LowerPriority: inside a team, higher priority (e.g. inference) preempts
#   lower (e.g. train).
PREEMPTION: Final[dict[str, Any]] = {
    "reclaimWithinCohort": TEAM_PREEMPTION.reclaim_within_cohort,
    "borrowWithinCohort": {"policy": TEAM_PREEMPTION.borrow_within_cohort},
    "withinClusterQueue": TEAM_PREEMPTION.within_cluster_queue,
}
FLAVOR_FUNGIBILITY: Final[dict[str, str]] = {
    # Borrowing in an earlier flavor beats moving on: a head that must borrow CPU-pool quota
    # still lands on the CPU pool rather than on a GPU pool's quota.
    "whenCanBorrow": WHEN_CAN_BORROW,
    # Try the next flavor before preempting anything in this one.
    "whenCanPreempt": WHEN_CAN_PREEMPT,
}


def _metadata(name: str, **labels: str) -> dict[str, Any]:
    return {"name": name, "labels": {**MANAGED_BY, **labels}}


def resource_flavor(name: str, tolerations: list[dict[str, str]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": pool_node_labels(name)}
    if tolerations:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _metadata(name),
        "spec": spec,
    }


def resource_flavors(cluster: ClusterSettings) -> list[dict[str, Any]]:
    """`cpu` (no toleration: the CPU pool is untainted), then one flavor per GPU pool."""
    return [
        resource_flavor(CPU_POOL_NAME, []),
        *(
            resource_flavor(pool.name, tolerations_for(gpu_pool_node_taints(pool.spot)))
            for pool in cluster.gpu_pools
        ),
    ]


def cohort(department: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "Cohort",
        "metadata": _metadata(department, **{"aksray.io/department": department}),
        "spec": {},
    }


def flavor_entry(flavor: FlavorQuota) -> dict[str, Any]:
    """One entry of `resourceGroups[0].flavors`: every covered resource, in the table's order.

    Every amount is a quantity string, a GPU count too: Kueue's ClusterQueue webhook writes
    them back as strings, and a number here would differ from the live object, so the
    Kubernetes provider would preview an update of a queue nothing changed."""
    resources = []
    for resource, quota in flavor.resources:

        def write(amount: int, resource: str = resource) -> str:
            return str(RESOURCE_KINDS[resource].format(amount))

        entry: dict[str, Any] = {"name": resource, "nominalQuota": write(quota.nominal)}
        if quota.borrowing_limit is not None:
            entry["borrowingLimit"] = write(quota.borrowing_limit)
        if quota.lending_limit is not None:
            entry["lendingLimit"] = write(quota.lending_limit)
        resources.append(entry)
    return {"name": flavor.name, "resources": resources}


def flavor_quotas(team: TeamSettings, flavor: str, settings: Settings) -> dict[str, Any]:
    """The flavor entry of one team's queue."""
    found = team_queue(team, settings).flavor(flavor)
    assert found is not None, f"team {team.name} has no quota in flavor {flavor}"
    return flavor_entry(found)


def serialise_cluster_queue(queue: TeamQueue, department: str) -> dict[str, Any]:
    """The ClusterQueue object of a typed queue: written out, nothing computed."""
    spec: dict[str, Any] = {
        "cohortName": queue.cohort,
        # Only the team's own namespace may submit to its queue.
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: queue.namespace}},
        "queueingStrategy": queue.queueing_strategy,
        "preemption": dict(PREEMPTION),
        "flavorFungibility": dict(FLAVOR_FUNGIBILITY),
        "resourceGroups": [
            {
                "coveredResources": list(queue.covered),
                "flavors": [flavor_entry(flavor) for flavor in queue.flavors],
            }
        ],
    }
    if queue.admission_checks:
        spec["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": name} for name in queue.admission_checks]
        }
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "ClusterQueue",
        "metadata": _metadata(
            queue.name, **{"aksray.io/team": queue.name, "aksray.io/department": department}
        ),
        "spec": spec,
    }


def cluster_queue(team: TeamSettings, settings: Settings) -> dict[str, Any]:
    return serialise_cluster_queue(team_queue(team, settings), team.department)


def local_queue(team: TeamSettings) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "LocalQueue",
        "metadata": {
            **_metadata(team.local_queue, **{"aksray.io/team": team.name}),
            "namespace": team.namespace,
        },
        "spec": {"clusterQueue": team.name},
    }


def workload_priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "WorkloadPriorityClass",
        "metadata": _metadata(name),
        "value": value,
        "description": f"KAI Scheduler's `{name}` priority class ({value}), for Kueue",
    }


def workload_priority_classes() -> list[dict[str, Any]]:
    return [workload_priority_class(name, value) for name, value in PRIORITY_CLASSES.items()]


def kueue_objects(settings: Settings) -> list[dict[str, Any]]:
    """Every Kueue object of the stack, in creation order."""
    scheduling = settings.scheduling
    queues = team_queues(settings)
    return [
        *resource_flavors(settings.cluster),
        *workload_priority_classes(),
        *(cohort(dept.name) for dept in scheduling.departments),
        *(serialise_cluster_queue(queues[team.name], team.department) for team in scheduling.teams),
        *(local_queue(team) for team in scheduling.teams),
    ]


def awaited_active(manifest: dict[str, Any], seconds: int) -> dict[str, Any]:
    """`manifest` (a LocalQueue) with Pulumi waiting, up to `seconds`, until it is active."""
    meta = manifest["metadata"]
    annotations = {
        **(meta.get("annotations") or {}),
        "pulumi.com/waitFor": LOCAL_QUEUE_ACTIVE,
        "pulumi.com/timeoutSeconds": str(seconds),
    }
    return {**manifest, "metadata": {**meta, "annotations": annotations}}
