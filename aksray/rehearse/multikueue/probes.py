"""What Kubernetes and Kueue do with an order `pulumi up` could take, tried on the rig: a token
Secret created before its ServiceAccount (on a worker, before the stack is applied), and a
manager's Ray job created before Kueue knows its queue's AdmissionCheck (once the stack is up;
objects of their own, removed after). The stack's graph and its jobs' `spec.managedBy` make the
first harmless and rule out the second."""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aksray.live.kube import Kube, KubeError
from manifests.access.multikueue import namespace_binding
from manifests.kueue import MULTIKUEUE_CONTROLLER, NAMESPACE_NAME_LABEL, QUEUE_NAME_LABEL

PROBE: Final = "aksray-order-probe"
SECRETS: Final = "/api/v1/namespaces/default/secrets"


def token_before_account(kube: Kube, timeout: float = 15.0) -> float | None:
    """A service-account-token Secret created before its ServiceAccount exists: the seconds
    until Kubernetes' token controller deleted it ("Service account does not exist, deleting
    token"), or None if it is still there after `timeout`."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": PROBE,
            "namespace": "default",
            "annotations": {"kubernetes.io/service-account.name": PROBE},
        },
    }
    kube.create(SECRETS, secret)
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < timeout:
            if kube.get_or_none(f"{SECRETS}/{PROBE}") is None:
                return round(time.monotonic() - t0, 1)
            time.sleep(0.2)
        return None
    finally:
        with contextlib.suppress(KubeError):
            kube.delete(f"{SECRETS}/{PROBE}")


@dataclass(frozen=True)
class Dispatch:
    """What became of a manager's RayJob created before its queue's AdmissionCheck existed."""

    check: str  # the admission check's state on its Workload ("" if none yet)
    message: str
    sent: bool  # a copy of its Workload reached a worker


def created_before_the_check(
    manager: Kube,
    workers: Mapping[str, Kube],
    *,
    queue: Mapping[str, Any],
    config: str,
    job: Mapping[str, Any],
    timeout: float = 60.0,
) -> dict[str, Dispatch]:
    """Reproduce the order a first `pulumi up` on AKS can take: a team's Ray job created on the
    manager before Kueue knows its queue's AdmissionCheck. A ClusterQueue like the team's
    (`queue`, without its cohort) naming a check that does not exist yet, its LocalQueue, then
    `job` twice, as the program builds it (`marked`, with `spec.managedBy`) and without that
    field (`unmarked`: what the program built before), then the check (MultiKueueConfig
    `config`). They live in a namespace of their own (ORDER_PROBE): a team's namespace admits
    only Ray objects of the team's own queue (manifests/access/admission.py); on each worker the
    namespace and the manager's rights in it, as a served team's (its Workload copies go there).
    Every object is removed again; per shape, what became of it."""
    namespace = ORDER_PROBE
    objects = order_objects(queue, config, namespace)
    jobs = {shape: shaped_job(job, shape) for shape in ("marked", "unmarked")}
    created: list[str] = []
    places = _probe_namespaces(manager, workers)
    try:
        for path, obj in (objects["ClusterQueue"], objects["LocalQueue"]):
            created.append(_create(manager, path, obj))
        for shaped in jobs.values():
            created.append(_create(manager, f"{RAYJOBS.format(ns=namespace)}", shaped))
        time.sleep(2)  # Kueue's webhook has defaulted both; now the check comes
        path, obj = objects["AdmissionCheck"]
        created.append(_create(manager, path, obj))
        deadline = time.monotonic() + timeout
        found: dict[str, Dispatch] = {}
        while time.monotonic() < deadline:
            found = {s: _dispatch(manager, workers, namespace, j) for s, j in jobs.items()}
            if found["unmarked"].check == "Rejected" and found["marked"].sent:
                break
            time.sleep(1)
        return found
    finally:
        for path in reversed(created):
            with contextlib.suppress(KubeError):
                manager.delete(path)
        for kube, path in reversed(places):
            with contextlib.suppress(KubeError):
                kube.delete(path)


NAMESPACES: Final = "/api/v1/namespaces"


def _probe_namespaces(manager: Kube, workers: Mapping[str, Kube]) -> list[tuple[Kube, str]]:
    """ORDER_PROBE's namespace on the manager and on each worker, with the manager's
    per-namespace rights on the workers; what to delete afterwards."""
    made: list[tuple[Kube, str]] = []
    space = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ORDER_PROBE}}
    for kube in (manager, *workers.values()):
        made.append((kube, _create(kube, NAMESPACES, space)))
    binding = namespace_binding(ORDER_PROBE)
    for kube in workers.values():
        path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ORDER_PROBE}/rolebindings"
        made.append((kube, _create(kube, path, binding)))
    return made


ORDER_PROBE: Final = "aksray-order-probe"
RAYJOBS: Final = "/apis/ray.io/v1/namespaces/{ns}/rayjobs"
KUEUE_API: Final = "/apis/kueue.x-k8s.io/v1beta2"


def order_objects(
    queue: Mapping[str, Any], config: str, namespace: str
) -> dict[str, tuple[str, dict[str, Any]]]:
    spec = {k: v for k, v in copy.deepcopy(dict(queue["spec"])).items() if k != "cohortName"}
    spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": ORDER_PROBE}]}
    # The team's queue admits its own namespace only; this one, the probe's.
    spec["namespaceSelector"] = {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                resource.pop("borrowingLimit", None)
                resource.pop("lendingLimit", None)
    version = queue["apiVersion"]
    meta = {"name": ORDER_PROBE}
    return {
        "ClusterQueue": (
            f"{KUEUE_API}/clusterqueues",
            {"apiVersion": version, "kind": "ClusterQueue", "metadata": meta, "spec": spec},
        ),
        "LocalQueue": (
            f"{KUEUE_API}/namespaces/{namespace}/localqueues",
            {
                "apiVersion": version,
                "kind": "LocalQueue",
                "metadata": {**meta, "namespace": namespace},
                "spec": {"clusterQueue": ORDER_PROBE},
            },
        ),
        "AdmissionCheck": (
            f"{KUEUE_API}/admissionchecks",
            {
                "apiVersion": version,
                "kind": "AdmissionCheck",
                "metadata": meta,
                "spec": {
                    "controllerName": MULTIKUEUE_CONTROLLER,
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "MultiKueueConfig",
                        "name": config,
                    },
                },
            },
        ),
    }


def shaped_job(job: Mapping[str, Any], shape: str) -> dict[str, Any]:
    shaped = copy.deepcopy(dict(job))
    shaped["metadata"]["name"] = f"{ORDER_PROBE}-{shape}"
    shaped["metadata"]["namespace"] = ORDER_PROBE
    shaped["metadata"]["labels"][QUEUE_NAME_LABEL] = ORDER_PROBE
    if shape == "unmarked":
        shaped["spec"].pop("managedBy", None)
    return shaped


def _create(kube: Kube, path: str, obj: Mapping[str, Any]) -> str:
    kube.create(path, dict(obj))
    return f"{path}/{obj['metadata']['name']}"


def _dispatch(
    manager: Kube, workers: Mapping[str, Kube], namespace: str, job: Mapping[str, Any]
) -> Dispatch:
    prefix = f"rayjob-{job['metadata']['name']}-"
    own = [
        w
        for w in manager.items(f"{KUEUE_API}/namespaces/{namespace}/workloads")
        if w["metadata"]["name"].startswith(prefix)
    ]
    checks = ((own[0].get("status") or {}).get("admissionChecks") or [{}]) if own else [{}]
    sent = any(
        w["metadata"]["name"].startswith(prefix)
        for kube in workers.values()
        for w in kube.items(f"{KUEUE_API}/namespaces/{namespace}/workloads")
    )
    return Dispatch(str(checks[0].get("state", "")), str(checks[0].get("message", "")), sent)
