"""Every Azure role assignment the stack makes, counted before anything is created: Azure allows
4,000 per subscription (all of them, not only this stack's), and a stack past that would fail
halfway through `pulumi up`.

One per kind of grant, as the components make them:
- the deployer's "Azure Kubernetes Service RBAC Cluster Admin" on each AKS cluster (the stack's,
  and each MultiKueue worker's) it creates (components/cluster.py);
- one Blob data assignment per team, whatever the number of containers its condition names
  (components/storage.py);
- "Azure Kubernetes Service Cluster User Role" once per Entra ID group the teams name, however
  many teams name it (components/team_access.py);
- Grafana's reading of the metrics workspace, and the deployer's Grafana role
  (components/azure_monitoring.py);
- with `cluster.imageCache`, AcrPull for the kubelet identity and Key Vault Secrets User on each
  of the two Docker Hub secrets (components/image_cache.py).
"""

from __future__ import annotations

from typing import Final

from catalog.azure import MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION
from settings.errors import Problem
from settings.model import (
    ClusterSettings,
    MultiKueueSettings,
    ObservabilitySettings,
    SchedulingSettings,
    StorageSettings,
)

DEPLOYER: Final = "deployer's cluster admin"
BLOB: Final = "Blob data, one per team"
KUBECONFIG: Final = "kubeconfig, one per group"
GRAFANA: Final = "Grafana"
IMAGE_CACHE: Final = "image cache"
# AcrPull, and a reader of each of the two Docker Hub secrets.
IMAGE_CACHE_GRANTS: Final = 3


def _deployer(cluster: ClusterSettings) -> int:
    granted = cluster.mode == "aks" and cluster.create_role_assignments
    return int(granted and cluster.deployer_principal_type != "None")


def role_assignments(
    cluster: ClusterSettings,
    storage: StorageSettings,
    scheduling: SchedulingSettings,
    observability: ObservabilitySettings,
    multikueue: MultiKueueSettings | None,
) -> dict[str, int]:
    """How many role assignments of each kind the stack creates (kinds it creates none of are
    left out)."""
    if cluster.mode != "aks" or not cluster.create_role_assignments:
        return {}
    workers = multikueue.workers if multikueue is not None else ()
    groups = {g for team in scheduling.teams for g in (*team.members, *team.viewers)}
    counts = {
        DEPLOYER: _deployer(cluster) + sum(_deployer(w.cluster) for w in workers),
        BLOB: len(scheduling.teams) if storage.enabled and not storage.existing_account else 0,
        KUBECONFIG: len(groups),
        GRAFANA: (
            1 + int(cluster.deployer_principal_type != "None")
            if observability.enabled and observability.grafana
            else 0
        ),
        IMAGE_CACHE: IMAGE_CACHE_GRANTS if cluster.image_cache.enabled else 0,
    }
    return {kind: count for kind, count in counts.items() if count}


def check_role_assignments(counts: dict[str, int], problems: list[Problem]) -> None:
    total = sum(counts.values())
    if total > MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION:
        parts = ", ".join(f"{count:,} {kind}" for kind, count in counts.items())
        problems.append(
            Problem(
                "scheduling.departments",
                f"the stack makes {total:,} Azure role assignments ({parts}), above Azure's "
                f"limit of {MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION:,} per subscription: use "
                "fewer teams or fewer distinct member groups, or set "
                "cluster.createRoleAssignments: false and grant access some other way",
            )
        )
