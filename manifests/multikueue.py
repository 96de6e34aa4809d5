"""MultiKueue objects on the manager: what it needs to dispatch to its workers, and the
kubeconfig it reaches each worker with (Kueue v0.19.2, `admissionchecks/multikueue/`). What
each worker lets the manager do is manifests/access/multikueue.py.

The manager reaches a worker with a kubeconfig holding a static ServiceAccount token: Kueue
refuses kubeconfigs with an exec plugin or an auth provider (Entra ID logins are exec plugins).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import yaml

from catalog.versions import KUEUE, KUEUE_API_VERSION
from manifests.access.multikueue import MANAGER_ACCOUNT, RAY_RESOURCES, labels
from manifests.helm_values import KUEUE_FRAMEWORK_BY_KIND
from manifests.kueue import MULTIKUEUE_CONTROLLER
from scheduling.queues import multikueue_check

KUBECONFIG_KEY: Final = "kubeconfig"  # the key Kueue reads in the kubeconfig Secret


def watched_kinds() -> tuple[str, ...]:
    """The Ray kinds the manager's Kueue integrates (its Configuration's frameworks). Kueue's
    remote client watches each of them on every worker, whatever the stack dispatches, and does
    not connect to a worker where one watch is forbidden (Kueue v0.19.2,
    `multikueuecluster.go` `updateConfigAndRefreshWatchers`)."""
    return tuple(kind for kind in RAY_RESOURCES if kind in KUEUE_FRAMEWORK_BY_KIND)


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
            "labels": labels(),
        },
    }


def multikueue_cluster(worker: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "MultiKueueCluster",
        "metadata": {"name": worker, "labels": labels()},
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
        "metadata": {"name": multikueue_check(team), "labels": labels()},
        "spec": {"clusters": list(workers)},
    }


def admission_check(team: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "AdmissionCheck",
        "metadata": {"name": multikueue_check(team), "labels": labels()},
        "spec": {
            "controllerName": MULTIKUEUE_CONTROLLER,
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": multikueue_check(team),
            },
        },
    }
