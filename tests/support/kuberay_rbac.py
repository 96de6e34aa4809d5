"""Who may patch pods once KubeRay has reconciled a stack's Ray objects: a model of the Kubernetes
objects KubeRay creates for in-tree autoscaling, and of which containers hold an API token.

KubeRay v1.6.2 and v1.7.0 (ray-operator/controllers/ray/common/rbac.go, pod.go): for a cluster
with `enableInTreeAutoscaling` it creates a Role named after the cluster (pods get, list, watch,
patch; pods/resize patch; rayclusters get, patch) and a RoleBinding of it to the head's service
account (the head template's `serviceAccountName`, else the cluster's name), and it adds the
autoscaler container to the head pod with `autoscalerOptions.volumeMounts`. KubeRay sets no
`automountServiceAccountToken`: the pod's own field decides, else its account's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

AUTOSCALER_CONTAINER: Final = "autoscaler"  # KubeRay's AutoscalerContainerName
API_CREDENTIALS_DIR: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
AUTOSCALER_RULES: Final = (
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "patch"]},
    {"apiGroups": [""], "resources": ["pods/resize"], "verbs": ["patch"]},
    {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["get", "patch"]},
)


@dataclass(frozen=True)
class Container:
    workload: str
    group: str  # "head" or the worker group's name
    name: str
    account: str
    api_token: bool  # holds a token the API server accepts for `account`


def ray_cluster(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = manifest["spec"]
    key = "rayClusterSpec" if manifest["kind"] == "RayJob" else "rayClusterConfig"
    cluster: Mapping[str, Any] = spec[key]
    return cluster


def autoscaler_bindings(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The RoleBinding KubeRay creates for the object's Ray cluster, with the Role's rules."""
    cluster = ray_cluster(manifest)
    if not cluster.get("enableInTreeAutoscaling"):
        return []
    name = manifest["metadata"]["name"]  # the cluster's name starts with it
    head = cluster["headGroupSpec"]["template"]["spec"]
    return [
        {
            "namespace": manifest["metadata"]["namespace"],
            "subject": head.get("serviceAccountName") or name,
            "rules": [dict(rule) for rule in AUTOSCALER_RULES],
        }
    ]


def _mounts_api_token(container: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Mounts a projected token for the API server's audience (no audience given)."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        sources = volumes.get(mount["name"], {}).get("projected", {}).get("sources", [])
        for source in sources:
            token = source.get("serviceAccountToken")
            if token is not None and not token.get("audience"):
                return True
    return False


def containers(
    manifest: Mapping[str, Any], accounts: Mapping[str, Mapping[str, Any]]
) -> Iterator[Container]:
    """Every container of every pod the object's Ray cluster runs, as KubeRay builds them;
    `accounts`: the namespace's ServiceAccount objects by name."""
    cluster = ray_cluster(manifest)
    workload = manifest["metadata"]["name"]
    groups = [("head", cluster["headGroupSpec"]["template"])] + [
        (g["groupName"], g["template"]) for g in cluster.get("workerGroupSpecs", [])
    ]
    for group, template in groups:
        pod = template["spec"]
        listed = list(pod["containers"])
        if group == "head" and cluster.get("enableInTreeAutoscaling"):
            options = cluster.get("autoscalerOptions") or {}
            listed.append(
                {"name": AUTOSCALER_CONTAINER, "volumeMounts": options.get("volumeMounts", [])}
            )
        account = pod.get("serviceAccountName") or "default"
        automount = pod.get(
            "automountServiceAccountToken",
            accounts.get(account, {}).get("automountServiceAccountToken", True),
        )
        for container in listed:
            yield Container(
                workload,
                group,
                container["name"],
                account,
                automount or _mounts_api_token(container, pod),
            )


def may_patch_pods(
    container: Container, namespace: str, bindings: Sequence[Mapping[str, Any]]
) -> bool:
    """The container holds a token of an account a binding lets patch pods."""
    if not container.api_token:
        return False
    return any(
        b["namespace"] == namespace
        and b["subject"] == container.account
        and any("pods" in r["resources"] and "patch" in r["verbs"] for r in b["rules"])
        for b in bindings
    )
