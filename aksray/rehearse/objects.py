"""Reading what the controllers wrote: Kueue Workloads, Ray objects, pods and nodes.

Pure functions over the plain dicts the API returns, so the timeline and the invariants can be
tested on recorded objects without a rig.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from catalog.pools import POOL_LABEL_KEY
from catalog.quantities import RESOURCE_KINDS
from manifests.ray_pods import WORKLOAD_LABEL

RAY_OWNER_KINDS: Final = ("RayJob", "RayService")
GPU: Final = "nvidia.com/gpu"
# Kueue's job reconciler writes it on a scale-up's new workload slice: `namespace/name` of the
# admitted slice it replaces.
SLICE_REPLACEMENT_FOR: Final = "kueue.x-k8s.io/workload-slice-replacement-for"


def conditions(obj: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def condition_true(obj: Mapping[str, Any], kind: str) -> bool:
    return conditions(obj).get(kind, {}).get("status") == "True"


def owner(obj: Mapping[str, Any], kinds: Iterable[str] = RAY_OWNER_KINDS) -> tuple[str, str] | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("kind") in kinds:
            return ref["kind"], ref["name"]
    return None


def amount(resource: str, value: object) -> int:
    """A quantity in the resource table's canonical units (whole units for other resources)."""
    kind = RESOURCE_KINDS.get(resource)
    return kind.parse(value) if kind is not None else int(str(value))


@dataclass(frozen=True)
class Admission:
    """What Kueue counts for one admitted Workload: ClusterQueue, flavor and pod count per pod
    set, usage."""

    cluster_queue: str
    flavors: dict[str, str]  # pod set -> flavor
    usage: dict[tuple[str, str], int]  # (flavor, resource) -> amount
    counts: dict[str, int] = field(default_factory=dict)  # pod set -> pods counted


def _counts_after_reclaim(workload: Mapping[str, Any]) -> dict[str, int]:
    """Each pod set's spec count less its reclaimable pods, never below zero."""
    status = workload.get("status") or {}
    reclaimable = {r["name"]: int(r["count"]) for r in status.get("reclaimablePods") or []}
    return {
        str(ps["name"]): max(0, int(ps.get("count", 1)) - reclaimable.get(ps["name"], 0))
        for ps in (workload.get("spec") or {}).get("podSets") or []
    }


def admission(workload: Mapping[str, Any]) -> Admission | None:
    """Kueue's accounting of an admitted Workload: a pod set counts the lower of its admission's
    count and its spec count less reclaimable pods, its usage scaled to match. A scale-down of
    an elastic slice lowers the spec in place and leaves `status.admission` as admitted."""
    adm = (workload.get("status") or {}).get("admission")
    if not adm:
        return None
    now = _counts_after_reclaim(workload)
    flavors: dict[str, str] = {}
    usage: dict[tuple[str, str], int] = {}
    counts: dict[str, int] = {}
    for assignment in adm.get("podSetAssignments") or []:
        name = str(assignment["name"])
        admitted = assignment.get("count")
        count = int(admitted) if admitted is not None else now.get(name, 1)
        counted = min(count, now.get(name, count))
        counts[name] = counted
        by_resource = assignment.get("flavors") or {}
        if by_resource:
            flavors[name] = sorted(set(by_resource.values()))[0]
        for resource, quantity in (assignment.get("resourceUsage") or {}).items():
            flavor = by_resource.get(resource)
            if flavor is not None:
                used = amount(resource, quantity)
                if counted < count:
                    used = used // count * counted
                usage[(flavor, resource)] = usage.get((flavor, resource), 0) + used
    return Admission(adm.get("clusterQueue", ""), flavors, usage, counts)


def is_admitted(workload: Mapping[str, Any]) -> bool:
    return condition_true(workload, "Admitted") and not condition_true(workload, "Finished")


def slices_being_replaced(workloads: Iterable[Mapping[str, Any]]) -> set[str]:
    """`namespace/name` of every slice an admitted replacement names. Kueue admits the new slice
    (its whole new size) and finishes the old one in a second write; between the two the old one
    still shows QuotaReserved, but Kueue counts only the replacement against the quota."""
    return {
        str(wl["metadata"]["annotations"][SLICE_REPLACEMENT_FOR])
        for wl in workloads
        if condition_true(wl, "QuotaReserved")
        and SLICE_REPLACEMENT_FOR in (wl["metadata"].get("annotations") or {})
    }


def workload_key(obj: Mapping[str, Any]) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def pod_set_of(pod: Mapping[str, Any]) -> str:
    """The Kueue pod set a Ray pod belongs to: `head`, or its worker group's name."""
    labels = pod["metadata"].get("labels") or {}
    if labels.get("ray.io/node-type") == "head":
        return "head"
    return str(labels.get("ray.io/group", ""))


def pod_gpus(pod: Mapping[str, Any]) -> int:
    total = 0
    for container in pod.get("spec", {}).get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        limits = (container.get("resources") or {}).get("limits") or {}
        total += int(str(requests.get(GPU, limits.get(GPU, 0))))
    return total


def is_terminating(obj: Mapping[str, Any]) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def node_pool(node: Mapping[str, Any]) -> str:
    return str((node["metadata"].get("labels") or {}).get(POOL_LABEL_KEY, ""))


def flavor_pools(flavors: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """ResourceFlavor name -> the pool its node labels select (one lookup for every reader)."""
    return {
        f["metadata"]["name"]: str(
            (f.get("spec", {}).get("nodeLabels") or {}).get(POOL_LABEL_KEY, "")
        )
        for f in flavors
    }


def workload_label(obj: Mapping[str, Any]) -> str:
    return str((obj["metadata"].get("labels") or {}).get(WORKLOAD_LABEL, obj["metadata"]["name"]))


def _standing(workload: Mapping[str, Any]) -> int:
    if is_admitted(workload):
        return 2
    return 1 if condition_true(workload, "Finished") else 0


def workload_by_owner(
    workloads: Iterable[Mapping[str, Any]],
) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """Per Ray object, the Workload its pods run under. An elastic one has several (workload
    slices): the admitted slice holds the pods while a bigger one waits for quota and the
    replaced ones are finished, whatever order the API lists them in."""
    chosen: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for wl in workloads:
        ref = owner(wl)
        if ref is None:
            continue
        key = (wl["metadata"]["namespace"], *ref)
        if key not in chosen or _standing(wl) > _standing(chosen[key]):
            chosen[key] = wl
    return chosen
