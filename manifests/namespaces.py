"""Team namespaces and the service account every Ray pod of a team runs as."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from catalog.project import PROJECT

# Every Ray pod (head and workers) of a team runs under this service account in the team's
# namespace; the federated identity credential's subject names it.
RAY_SERVICE_ACCOUNT: Final = "ray-workload"
# The head of an elastic workload runs under its own account: KubeRay binds the Ray
# autoscaler's Role (patch pods and RayClusters) to the head's account, which must then be one
# no worker runs as (manifests/access/autoscaler.py). Federated to the team's identity too.
ELASTIC_HEAD_SERVICE_ACCOUNT: Final = "ray-elastic-head"
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": PROJECT}
# What the admission policies read of a team's namespace (manifests/access/admission.py): no team
# member can write a Namespace, so its labels are the policies' per-team data.
TEAM_NAMESPACE_LABEL: Final = "aksray.io/team"
LOCAL_QUEUE_NAMESPACE_LABEL: Final = "aksray.io/local-queue"
KAI_QUEUE_NAMESPACE_LABEL: Final = "aksray.io/kai-queue"
# One label per priority class the team may use (`priority.aksray.io/<class>: allowed`), and
# the same list in one annotation, for the policies' messages.
PRIORITY_NAMESPACE_LABEL_PREFIX: Final = "priority.aksray.io/"
ALLOWED: Final = "allowed"
PRIORITIES_ANNOTATION: Final = "aksray.io/priorities"
CLIENT_ID_ANNOTATION: Final = "azure.workload.identity/client-id"
TENANT_ID_ANNOTATION: Final = "azure.workload.identity/tenant-id"


def team_namespace(
    namespace: str,
    team: str,
    department: str,
    *,
    local_queue: str,
    priorities: Sequence[str],
) -> dict[str, Any]:
    """A team's namespace, labelled with what the admission policies hold its Ray objects to:
    its LocalQueue, its KAI queue (named after the team) and the priorities it may use."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": namespace,
            "labels": {
                **MANAGED_BY,
                TEAM_NAMESPACE_LABEL: team,
                "aksray.io/department": department,
                LOCAL_QUEUE_NAMESPACE_LABEL: local_queue,
                KAI_QUEUE_NAMESPACE_LABEL: team,
                **{f"{PRIORITY_NAMESPACE_LABEL_PREFIX}{p}": ALLOWED for p in priorities},
                # Ray pods need nothing beyond the baseline profile.
                "pod-security.kubernetes.io/enforce": "baseline",
                "pod-security.kubernetes.io/warn": "restricted",
            },
            "annotations": {PRIORITIES_ANNOTATION: ", ".join(priorities)},
        },
    }


def workload_identity_subject(namespace: str, account: str = RAY_SERVICE_ACCOUNT) -> str:
    """The token subject a federated identity credential must trust for a team's pods."""
    return f"system:serviceaccount:{namespace}:{account}"


def team_service_account(
    namespace: str,
    team: str,
    annotations: dict[str, Any] | None = None,
    *,
    name: str = RAY_SERVICE_ACCOUNT,
) -> dict[str, Any]:
    """A team's Ray service account (`name`: the workers' and fixed heads', or elastic heads');
    `annotations` carry the workload identity ids."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**MANAGED_BY, "aksray.io/team": team},
            "annotations": dict(annotations or {}),
        },
        # Ray pods call no Kubernetes API; keep the token out of them. The Ray autoscaler,
        # which does, gets its own mount (manifests/access/autoscaler.py).
        "automountServiceAccountToken": False,
    }


def operator_namespace(name: str, *, privileged: bool) -> dict[str, Any]:
    """A namespace the stack owns for one operator release (created before, deleted after it).

    `privileged`: the GPU Operator's node agents (driver, toolkit, device plugin) need host access
    and privileged containers, so its namespace must admit them under any cluster-wide
    Pod Security default. The other operators keep the cluster's default.
    """
    labels: dict[str, str] = dict(MANAGED_BY)
    if privileged:
        labels["pod-security.kubernetes.io/enforce"] = "privileged"
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
