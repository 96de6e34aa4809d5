"""What each cluster of a MultiKueue rehearsal gets: the Kubernetes objects the stack's program
registers for that cluster, taken from the program's offline run.

The program is run once on the stack file (with a `run` set on the jobs a scenario submits) and
its resources are split per cluster as `aksray render` splits them (the manager's, then each
worker's, aksray/plan/report/multikueue_render.py). The objects under the clusters'
ClusterOperators are left
out: the rig's own processes are the operators. Everything else (namespaces, service accounts,
queues, flavors, MultiKueue objects, the manager account's RBAC on each worker, the jobs and
their code ConfigMaps) goes onto the rig exactly as the program builds it, except the one value
only a real `pulumi up` knows: the kubeconfig of each worker's manager account, which the rig
writes from the token the worker's controller manager mints (aksray/rehearse/multikueue/rig.py).
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml

from aksray.offline.render import is_kubernetes_object
from aksray.plan.model.multikueue import resources_under
from aksray.plan.report.multikueue_render import MANAGER_FOLDER, clusters_of
from manifests.multikueue import KUBECONFIG_KEY, kubeconfig_secret_name
from manifests.ray_pods import WORKLOAD_LABEL
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from aksray.offline.runner import RunResult

OPERATORS_TYPE: Final = "aksray:platform:ClusterOperators"
SECRET_MARK: Final = "[secret]"  # noqa: S105 - how the offline run shows a Pulumi secret
# Creation order: what an object refers to exists before it (its namespace, the Secret a
# MultiKueueCluster names, the config an AdmissionCheck names, a KAI parent queue).
APPLY_ORDER: Final = (
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Secret",
    "ConfigMap",
    "NetworkPolicy",
    "ResourceFlavor",
    "WorkloadPriorityClass",
    "Cohort",
    "Queue",
    "MultiKueueConfig",
    "MultiKueueCluster",
    "AdmissionCheck",
    "ClusterQueue",
    "LocalQueue",
    "RayJob",
    "RayService",
)
RAY_KINDS: Final = ("RayJob", "RayService")
SERVICE_ACCOUNT_TOKEN: Final = "kubernetes.io/service-account-token"  # noqa: S105 - a type


class UnplayableObjectError(Exception):
    """An object the rig cannot create as the program registered it; the message says which."""


@dataclass(frozen=True)
class ClusterObjects:
    """One cluster's objects: the platform's, and the Ray jobs a scenario submits one by one."""

    name: str
    platform: tuple[dict[str, Any], ...]
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)  # workload -> RayJob

    def kinds(self) -> list[str]:
        return sorted({o["kind"] for o in self.platform})


def order_key(obj: Mapping[str, Any]) -> tuple[int, str, str]:
    kind = str(obj["kind"])
    rank = APPLY_ORDER.index(kind) if kind in APPLY_ORDER else len(APPLY_ORDER)
    meta = obj.get("metadata") or {}
    return rank, str(meta.get("namespace") or ""), str(meta["name"])


def object_label(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{obj['kind']} {namespace + '/' if namespace else ''}{meta['name']}"


def with_runs(stack_document: Mapping[str, Any], runs: Mapping[str, str]) -> dict[str, Any]:
    """The stack file's document with `run` set on the named workloads (each a RayJob the stack
    enables) and removed from every other: only those are submitted."""
    document = copy.deepcopy(dict(stack_document))
    config = document.setdefault("config", {})
    key = next((k for k in config if k.endswith(":workloads")), "aks-ray-platform:workloads")
    section = {name: dict(entry or {}) for name, entry in (config.get(key) or {}).items()}
    for name, entry in section.items():
        entry.pop("run", None)
        if name in runs:
            entry["run"] = runs[name]
    for name in runs:
        entry = section.get(name) or {}
        if entry.get("enabled") is not True or WORKLOADS[name].kind != "RayJob":
            raise UnplayableObjectError(f"workloads.{name}: not an enabled RayJob of the stack")
    config[key] = section
    return document


def program_run(stack_file: Path, stack: str, runs: Mapping[str, str]) -> RunResult:
    """The program's offline run on the stack file with `runs` (workload -> run id)."""
    from aksray.offline.runner import run_program

    document = yaml.safe_load(stack_file.read_text(encoding="utf-8")) or {}
    with tempfile.TemporaryDirectory(prefix="aksray-multikueue-") as folder:
        path = Path(folder) / f"Pulumi.{stack}.yaml"
        path.write_text(yaml.safe_dump(with_runs(document, runs)), encoding="utf-8")
        return run_program(path, stack=stack)


def cluster_objects(result: RunResult) -> dict[str, ClusterObjects]:
    """Per cluster (`manager`, then each worker), its objects in creation order, the operators'
    own left out (the rig's processes are the operators)."""
    operators = {
        urn
        for r in result.resources
        if r.type == OPERATORS_TYPE
        for urn in [r.urn, *(x.urn for x in resources_under(result, r.urn))]
    }
    found: dict[str, ClusterObjects] = {}
    for cluster, part in clusters_of(result).items():
        objects = [
            copy.deepcopy(r.inputs)
            for r in part.resources
            if is_kubernetes_object(r) and r.urn not in operators
        ]
        platform = sorted((o for o in objects if o["kind"] not in RAY_KINDS), key=order_key)
        jobs = {
            str((o["metadata"].get("labels") or {}).get(WORKLOAD_LABEL, "")): o
            for o in objects
            if o["kind"] == "RayJob"
        }
        found[cluster] = ClusterObjects(cluster, tuple(platform), jobs)
    return found


def token_secret_of(worker: ClusterObjects) -> str:
    """The name of the manager account's token Secret the program creates on a worker."""
    for obj in worker.platform:
        if obj["kind"] == "Secret" and obj.get("type") == SERVICE_ACCOUNT_TOKEN:
            return str(obj["metadata"]["name"])
    raise UnplayableObjectError(f"worker {worker.name}: the program creates no token Secret")


def with_kubeconfigs(
    manager: ClusterObjects, kubeconfigs: Mapping[str, str]
) -> tuple[dict[str, Any], ...]:
    """The manager's objects with each worker's kubeconfig Secret filled in (`kubeconfigs`:
    worker -> kubeconfig text). Any other secret value is refused: the rig cannot make it up."""
    secrets = {kubeconfig_secret_name(worker): text for worker, text in kubeconfigs.items()}
    filled = []
    for registered in manager.platform:
        name = registered["metadata"]["name"]
        obj = registered
        if registered["kind"] == "Secret" and name in secrets:
            obj = {**registered, "stringData": {KUBECONFIG_KEY: secrets[name]}}
        if SECRET_MARK in json.dumps(obj):
            raise UnplayableObjectError(
                f"{object_label(obj)} of the {MANAGER_FOLDER} holds a secret only `pulumi up` "
                "knows; the rehearsal has no value for it"
            )
        filled.append(obj)
    return tuple(filled)


def deletion_order(objects: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """The reverse of creation: queues before flavors, namespaces last."""
    return sorted(objects, key=order_key, reverse=True)
