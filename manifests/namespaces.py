"""Team namespaces and the service account every Ray pod of a team runs as."""

from __future__ import annotations

from typing import Any, Final

from catalog.project import PROJECT

# Every Ray pod (head and workers) of a team runs under this service account in the team's
# namespace; the federated identity credential's subject names it.
RAY_SERVICE_ACCOUNT: Final = "ray-workload"
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": PROJECT}
CLIENT_ID_ANNOTATION: Final = "azure.workload.identity/client-id"
TENANT_ID_ANNOTATION: Final = "azure.workload.identity/tenant-id"


def team_namespace(namespace: str, team: str, department: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": namespace,
            "labels": {
                **MANAGED_BY,
                "aksray.io/team": team,
                "aksray.io/department": department,
                # Ray pods need nothing beyond the baseline profile.
                "pod-security.kubernetes.io/enforce": "baseline",
                "pod-security.kubernetes.io/warn": "restricted",
            },
        },
    }


def workload_identity_subject(namespace: str) -> str:
    """The token subject a federated identity credential must trust for a team's pods."""
    return f"system:serviceaccount:{namespace}:{RAY_SERVICE_ACCOUNT}"


def team_service_account(
    namespace: str, team: str, annotations: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The team's Ray service account; `annotations` carry the workload identity ids."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": RAY_SERVICE_ACCOUNT,
            "namespace": namespace,
            "labels": {**MANAGED_BY, "aksray.io/team": team},
            "annotations": dict(annotations or {}),
        },
        # Ray pods call no Kubernetes API; keep the token out of them unless a pod asks.
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
