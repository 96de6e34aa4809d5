"""Destroy on a MultiKueue rig, in the order `pulumi destroy` would: the jobs on the manager
first (MultiKueue then deletes their copies in the workers), then each cluster's objects in the
reverse of their creation; and what is left behind anywhere after."""

from __future__ import annotations

import time
from typing import Any

from aksray.rehearse.multikueue.objects import ClusterObjects, deletion_order, object_label
from aksray.rehearse.multikueue.rig import MANAGER, Member, MultiKueueRig, object_path
from aksray.rehearse.rig.footprint import leftovers

RAY_LEFT = ("rayjobs", "rayclusters")


def ray_left(member: Member, namespaces: tuple[str, ...]) -> list[str]:
    """Ray objects and Kueue Workloads still in the team namespaces of one cluster."""
    left = []
    for ns in namespaces:
        if member.kube.get_or_none(f"/api/v1/namespaces/{ns}") is None:
            continue
        for plural in RAY_LEFT:
            left += [
                f"{plural} {ns}/{x['metadata']['name']}"
                for x in member.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/{plural}")
            ]
        workloads = member.kube.items(f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads")
        left += [f"workloads {ns}/{x['metadata']['name']}" for x in workloads]
    return left


def wait_for(check: Any, timeout: float) -> list[str]:
    """Poll `check` (what is left) until it is empty or the time is up; what is left."""
    deadline = time.monotonic() + timeout
    while True:
        left: list[str] = check()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


def objects_left(member: Member, objects: tuple[dict[str, Any], ...]) -> list[str]:
    return [
        object_label(obj)
        for obj in objects
        if (path := object_path(member.discovery, obj)) and member.kube.get_or_none(path)
    ]


def destroy(
    rig: MultiKueueRig, objects: dict[str, ClusterObjects], namespaces: tuple[str, ...]
) -> list[str]:
    """Delete what the rehearsal created, everywhere; `<cluster>: <what>` for each thing left."""
    manager = rig.manager
    for job in objects[MANAGER].jobs.values():
        manager.kube.delete(object_path(manager.discovery, job) or "")
    left = [f"{MANAGER}: {x}" for x in wait_for(lambda: ray_left(manager, namespaces), 90)]
    for name, member in rig.workers.items():
        left += [f"{name}: {x}" for x in wait_for(lambda m=member: ray_left(m, namespaces), 90)]
    for member in rig.members:
        for obj in deletion_order(objects[member.name].platform):
            path = object_path(member.discovery, obj)
            if path is not None:
                member.kube.delete(path)
    for member in rig.members:
        created = objects[member.name].platform
        left += [
            f"{member.name}: {x}"
            for x in sorted(
                set(leftovers(member.kube, namespaces))
                | set(wait_for(lambda m=member, c=created: objects_left(m, c), 60))
            )
        ]
    return left
