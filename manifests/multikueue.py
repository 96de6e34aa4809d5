"""MultiKueue objects: what the manager needs to dispatch to its workers, and the one account
each worker lets the manager use (Kueue v0.19.2, `pkg/controller/admissionchecks/multikueue/`).

The manager reaches a worker with a kubeconfig holding a static ServiceAccount token: Kueue
refuses kubeconfigs with an exec plugin or an auth provider (Entra ID logins are exec plugins).
The account is bound to exactly what MultiKueue's remote client does on a worker: create, watch
and delete the mirrored jobs and their Kueue workloads, and read queues; never cluster-admin.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import yaml

from catalog.versions import KUEUE, KUEUE_API_VERSION
from manifests.helm_values import KUEUE_FRAMEWORK_BY_KIND
from scheduling.multikueue import team_workers
from scheduling.queues import multikueue_check
from settings.model import Settings

# Kueue's controller for the admission check that dispatches to worker clusters.
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
# On each worker, in Kueue's namespace: the account the manager acts as.
MANAGER_ACCOUNT: Final = "multikueue-manager"
WORKER_ROLE: Final = "aksray-multikueue-worker"
TOKEN_SECRET: Final = f"{MANAGER_ACCOUNT}-token"
KUBECONFIG_KEY: Final = "kubeconfig"  # the key Kueue reads in the kubeconfig Secret
_JOB_VERBS: Final = ("create", "delete", "get", "list", "watch")
# Ray kinds by the resource MultiKueue mirrors on the worker.
RAY_RESOURCES: Final = {
    "RayJob": "rayjobs",
    "RayService": "rayservices",
    "RayCluster": "rayclusters",
}


def _labels() -> dict[str, str]:
    return {"app.kubernetes.io/managed-by": "aksray", "app.kubernetes.io/part-of": "multikueue"}


def worker_role_rules(kinds: Collection[str]) -> list[dict[str, Any]]:
    """The rules of upstream's worker role for `kinds` (its create-multikueue-kubeconfig.sh),
    without the rows for kinds this platform never runs (batch Jobs, JobSets, Pods, ...)."""
    rules: list[dict[str, Any]] = []
    for kind in sorted(kinds, key=list(RAY_RESOURCES).index):
        resource = RAY_RESOURCES[kind]
        rules.append({"apiGroups": ["ray.io"], "resources": [resource], "verbs": list(_JOB_VERBS)})
        rules.append(
            {"apiGroups": ["ray.io"], "resources": [f"{resource}/status"], "verbs": ["get"]}
        )
    rules += [
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "verbs": [*_JOB_VERBS, "update", "patch"],
        },
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads/status"],
            "verbs": ["get", "patch", "update"],
        },
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["clusterqueues", "localqueues"],
            "verbs": ["get", "list", "watch"],
        },
    ]
    return rules


def watched_kinds() -> tuple[str, ...]:
    """The Ray kinds the manager's Kueue integrates (its Configuration's frameworks). Kueue's
    remote client watches each of them on every worker, whatever the stack dispatches, and does
    not connect to a worker where one watch is forbidden (Kueue v0.19.2,
    `multikueuecluster.go` `updateConfigAndRefreshWatchers`)."""
    return tuple(kind for kind in RAY_RESOURCES if kind in KUEUE_FRAMEWORK_BY_KIND)


def token_secret_name(rotation: str = "") -> str:
    """The manager's token Secret on a worker: a new rotation label is a new Secret (a new
    token), and the old one, deleted, takes its token with it."""
    return f"{TOKEN_SECRET}-{rotation}" if rotation else TOKEN_SECRET


def worker_access_objects(kinds: Collection[str], rotation: str = "") -> list[dict[str, Any]]:
    """On a worker: the manager's ServiceAccount, its ClusterRole and binding, and the
    long-lived token Secret Kubernetes fills in for it (`rotation`: its label)."""
    namespace = KUEUE.namespace
    subject = {"kind": "ServiceAccount", "name": MANAGER_ACCOUNT, "namespace": namespace}
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": MANAGER_ACCOUNT, "namespace": namespace, "labels": _labels()},
            # The token is the Secret's; no pod runs as this account.
            "automountServiceAccountToken": False,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": WORKER_ROLE, "labels": _labels()},
            "rules": worker_role_rules(kinds),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": WORKER_ROLE, "labels": _labels()},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": WORKER_ROLE,
            },
            "subjects": [subject],
        },
        token_secret(rotation),
    ]


def token_secret(rotation: str = "") -> dict[str, Any]:
    namespace = KUEUE.namespace
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": token_secret_name(rotation),
            "namespace": namespace,
            "labels": _labels(),
            "annotations": {"kubernetes.io/service-account.name": MANAGER_ACCOUNT},
        },
    }


def kubeconfig_text(*, worker: str, server: str, ca_data: str, token: str) -> str:
    """A kubeconfig Kueue accepts: the worker's API server, its CA (base64, as the token
    Secret's `ca.crt` holds it) and the account's static token; no exec, no auth provider."""
    user = f"{worker}-{MANAGER_ACCOUNT}"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": worker, "cluster": {"server": server, "certificate-authority-data": ca_data}}
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
        "current-context": worker,
    }
    return yaml.safe_dump(document, sort_keys=False)


def server_of(kubeconfig: str) -> str:
    """The API server of AKS's user kubeconfig, which names one cluster (its `server:` line)."""
    for line in kubeconfig.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "server" and value.strip():
            return value.strip().strip("'\"")
    raise ValueError("the worker's kubeconfig names no API server")


def kubeconfig_secret_name(worker: str) -> str:
    return f"multikueue-{worker}"


def kubeconfig_secret(worker: str) -> dict[str, Any]:
    """On the manager, in Kueue's namespace; `stringData.kubeconfig` is set by the component,
    as a Pulumi secret."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": kubeconfig_secret_name(worker),
            "namespace": KUEUE.namespace,
            "labels": _labels(),
        },
    }


def multikueue_cluster(worker: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "MultiKueueCluster",
        "metadata": {"name": worker, "labels": _labels()},
        "spec": {
            "clusterSource": {
                "kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret_name(worker)}
            }
        },
    }


def multikueue_config(team: str, workers: Collection[str]) -> dict[str, Any]:
    """The workers a team's jobs may go to: those where it has quota."""
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "MultiKueueConfig",
        "metadata": {"name": multikueue_check(team), "labels": _labels()},
        "spec": {"clusters": list(workers)},
    }


def admission_check(team: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "AdmissionCheck",
        "metadata": {"name": multikueue_check(team), "labels": _labels()},
        "spec": {
            "controllerName": MULTIKUEUE_CONTROLLER,
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": multikueue_check(team),
            },
        },
    }


def manager_objects(settings: Settings) -> list[dict[str, Any]]:
    """On the manager: one MultiKueueCluster per worker, one config and check per team."""
    workers = settings.multikueue.workers if settings.multikueue else ()
    objects = [multikueue_cluster(worker.name) for worker in workers]
    for team, names in team_workers(settings).items():
        objects += [multikueue_config(team, names), admission_check(team)]
    return objects
