"""What a change must leave running: the pods of every workload the change plan does not touch.

Before each change the rehearsal notes every bound Ray pod (its UID, workload, namespace and
node). After it, a pod of a workload whose RayJob or RayService the plan leaves alone, in a
namespace the plan leaves alone, on a node the change did not take away, must still be there
with the same UID: a change that restarts it killed work nobody was told about.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample
from manifests.ray_pods import WORKLOAD_LABEL

# (kind, namespace, name) of a Kubernetes object; cluster-scoped objects have namespace "".
ObjectRef = tuple[str, str, str]


@dataclass(frozen=True)
class RunningPod:
    uid: str
    namespace: str
    name: str
    workload: str  # the stack's workload (`qwen-lora`)
    owner: tuple[str, str] | None  # (RayJob|RayService, name) of its Ray cluster
    node: str


def running_pods(sample: Sample) -> dict[str, RunningPod]:
    """UID -> every bound, not terminating Ray pod of the sample."""
    found = {}
    for pod in sample.pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or o.is_terminating(pod):
            continue
        meta = pod["metadata"]
        found[meta["uid"]] = RunningPod(
            meta["uid"],
            meta["namespace"],
            meta["name"],
            (meta.get("labels") or {}).get(WORKLOAD_LABEL, ""),
            sample.pod_owner(pod),
            node,
        )
    return found


class Changed(Protocol):
    """One resource of a change plan (aksray.plan.change.model.ResourceChange)."""

    @property
    def inputs(self) -> Mapping[str, Any]: ...

    @property
    def old_inputs(self) -> Mapping[str, Any]: ...


def touched_objects(changes: Iterable[Changed]) -> set[ObjectRef]:
    """Every Kubernetes object a change creates, updates, replaces or deletes."""
    touched: set[ObjectRef] = set()
    for change in changes:
        for inputs in (change.old_inputs, change.inputs):
            kind = inputs.get("kind")
            meta = inputs.get("metadata") or {}
            if isinstance(kind, str) and isinstance(meta.get("name"), str):
                touched.add((kind, str(meta.get("namespace") or ""), meta["name"]))
    return touched


def lost_pods(
    before: Mapping[str, RunningPod],
    after: Mapping[str, RunningPod],
    touched: set[ObjectRef],
    removed_nodes: set[str],
) -> list[str]:
    """One line per pod the plan kept that the change took away."""
    lost = []
    for uid, pod in sorted(before.items(), key=lambda item: (item[1].namespace, item[1].name)):
        if uid in after or pod.node in removed_nodes:
            continue
        if ("Namespace", "", pod.namespace) in touched:
            continue
        if pod.owner is not None and (pod.owner[0], pod.namespace, pod.owner[1]) in touched:
            continue
        lost.append(
            f"pod {pod.namespace}/{pod.name} of {pod.workload}, which the change plan leaves "
            "alone, is gone"
        )
    return lost
