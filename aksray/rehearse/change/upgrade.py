"""The operators upgraded under running work: from the versions the platform shipped before to the
rig's own, KubeRay first and Kueue after (the order `pulumi up` upgrades their releases), each
with its new CRDs (aksray/rehearse/rig/upgrade.py).

Every Kueue and KubeRay object stored before must read back the same after: the same UID and
the same spec. What the new controllers write beside the spec (a finalizer, an annotation,
status) is reported, not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aksray.live.kube import Kube
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Verdict
from aksray.rehearse.rig.controllers import kuberay, kueue
from aksray.rehearse.rig.controlplane import ControlPlane
from aksray.rehearse.rig.upgrade import restart_at

# The kinds whose objects an upgrade must keep: (API group path, plural, namespaced).
KEPT_KINDS: Final = (
    ("/apis/kueue.x-k8s.io/v1beta2", "resourceflavors", False),
    ("/apis/kueue.x-k8s.io/v1beta2", "cohorts", False),
    ("/apis/kueue.x-k8s.io/v1beta2", "clusterqueues", False),
    ("/apis/kueue.x-k8s.io/v1beta2", "workloadpriorityclasses", False),
    ("/apis/kueue.x-k8s.io/v1beta2", "localqueues", True),
    ("/apis/kueue.x-k8s.io/v1beta2", "workloads", True),
    ("/apis/ray.io/v1", "rayjobs", True),
    ("/apis/ray.io/v1", "rayservices", True),
    ("/apis/ray.io/v1", "rayclusters", True),
)
SETTLE_AFTER_S: Final = 15.0  # the new controllers' first reconcile of everything


@dataclass(frozen=True)
class Stored:
    uid: str
    spec: Any
    finalizers: tuple[str, ...]
    annotations: Mapping[str, str]


Snapshot = dict[tuple[str, str, str], Stored]  # (plural, namespace, name) -> what is stored


def snapshot(kube: Kube, namespaces: tuple[str, ...]) -> Snapshot:
    found: Snapshot = {}
    for base, plural, namespaced in KEPT_KINDS:
        paths = (
            [f"{base}/namespaces/{ns}/{plural}" for ns in namespaces]
            if namespaced
            else [f"{base}/{plural}"]
        )
        for path in paths:
            for obj in kube.items(path):
                meta = obj["metadata"]
                found[(plural, meta.get("namespace", ""), meta["name"])] = Stored(
                    meta["uid"],
                    obj.get("spec"),
                    tuple(meta.get("finalizers") or ()),
                    dict(meta.get("annotations") or {}),
                )
    return found


def compare(before: Snapshot, after: Snapshot) -> tuple[list[str], list[str]]:
    """(what did not read back the same, what the new controllers wrote beside the spec)."""
    broken, written = [], []
    for key, was in sorted(before.items()):
        plural, namespace, name = key
        where = f"{plural} {namespace + '/' if namespace else ''}{name}"
        now = after.get(key)
        if now is None:
            broken.append(f"{where} is gone")
            continue
        if now.uid != was.uid:
            broken.append(f"{where} was recreated (uid {was.uid} -> {now.uid})")
        elif now.spec != was.spec:
            broken.append(f"{where} changed its spec")
        added = sorted(set(now.finalizers) - set(was.finalizers))
        if added:
            written.append(f"{where} gained the finalizer(s) {', '.join(added)}")
        for annotation, value in sorted(now.annotations.items()):
            if was.annotations.get(annotation) != value and not annotation.startswith("kubectl."):
                old = was.annotations.get(annotation)
                written.append(f"{where} annotation {annotation}: {old} -> {value}")
    return broken, written


def operator_upgrade(plane: ControlPlane, namespaces: tuple[str, ...]) -> Any:
    """The upgrade a change rehearsal plays (play.py `Upgrade`)."""

    def play(observer: Observer) -> tuple[list[Verdict], list[str]]:
        before = snapshot(plane.kube, namespaces)
        lines = []
        for controller in (kuberay, kueue):
            line = restart_at(plane, controller, None)
            observer.note(controller.NAME, "upgraded", line)
            lines.append(f"{controller.NAME}: {line}")
        observer.hold(SETTLE_AFTER_S)
        broken, written = compare(before, snapshot(plane.kube, namespaces))
        verdict = Verdict(
            f"the upgrade: every Kueue and KubeRay object stored before reads back the same "
            f"({len(before)} objects)",
            not broken,
            "; ".join(broken),
        )
        return [verdict], lines + [f"the new controllers wrote: {w}" for w in written]

    return play
