"""What a team's people may do in the cluster: Kubernetes RBAC, bound to their groups.

Two ClusterRoles, each bound per team by a RoleBinding in the team's namespace only (a
RoleBinding to a ClusterRole grants nothing outside its namespace):

- `aksray-team-member`: create, watch, change and delete RayJobs and RayServices; read their
  RayClusters, Kueue Workloads and LocalQueues, pods, pod logs, Services and events; forward a
  port to a pod (the Ray dashboard, the endpoint). Nothing else: no Secret (KubeRay's cluster
  tokens, the Hugging Face token), no pod, Job or Deployment of their own, no exec, no
  ServiceAccount, no RBAC, no RayCluster or RayCronJob of their own.
- `aksray-team-viewer`: the same reads, no write and no port forwarding.

Why Kubernetes RBAC and not Azure RBAC role assignments at namespace scope (docs/aks.md,
"Who may use the cluster"): Azure's built-in roles grant no custom resource below Admin, which
grants every custom resource and the namespace's Roles and RoleBindings; a custom role with the
`customresources` data actions can be narrowed only by ABAC conditions on group and kind, in
preview. A Role names each resource and verb, is generally available and reviewable with the
stack, and costs no Azure role assignment. Azure RBAC grants only what fetching a kubeconfig
needs ("Azure Kubernetes Service Cluster User Role", components/team_access.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from catalog.versions import RBAC_API_VERSION
from manifests.namespaces import MANAGED_BY

MEMBER_ROLE: Final = "aksray-team-member"
VIEWER_ROLE: Final = "aksray-team-viewer"
READ: Final = ("get", "list", "watch")
WRITE: Final = ("create", "update", "patch", "delete")
# The Ray kinds a team submits, and those it only reads.
SUBMITTED: Final = ("rayjobs", "rayservices")
# Built-in role "Azure Kubernetes Service Cluster User Role": lists the cluster's user kubeconfig
# (`az aks get-credentials` without --admin), nothing inside the cluster.
AKS_CLUSTER_USER_ROLE: Final = "4abbcc35-e782-43d8-92c5-2d3f1bd2253f"
AKS_CLUSTER_USER_ROLE_NAME: Final = "Azure Kubernetes Service Cluster User Role"


def _rule(group: str, resources: Sequence[str], verbs: Sequence[str]) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}


def _reads() -> list[dict[str, Any]]:
    return [
        _rule("ray.io", (*SUBMITTED, "rayclusters"), READ),
        _rule("kueue.x-k8s.io", ("workloads", "localqueues"), READ),
        _rule("", ("pods", "pods/log", "services", "events"), READ),
        _rule("events.k8s.io", ("events",), READ),
    ]


def team_roles() -> list[dict[str, Any]]:
    """The member's and the viewer's ClusterRoles (granted per namespace by RoleBindings)."""
    member = [
        _rule("ray.io", SUBMITTED, WRITE),
        *_reads(),
        # kubectl port-forward: the Ray dashboard (8265) and the endpoint (8000).
        _rule("", ("pods/portforward",), ("create",)),
    ]
    return [_cluster_role(MEMBER_ROLE, member), _cluster_role(VIEWER_ROLE, _reads())]


def _cluster_role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": dict(MANAGED_BY)},
        "rules": rules,
    }


def team_role_binding(
    namespace: str, team: str, role: str, groups: Sequence[str]
) -> dict[str, Any]:
    """`role` for `groups` in the team's namespace only."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "RoleBinding",
        "metadata": {
            "name": role,
            "namespace": namespace,
            "labels": {**MANAGED_BY, "aksray.io/team": team},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
            for group in groups
        ],
    }
