"""Destroy on a MultiKueue rig: `pulumi destroy` of the whole stack (every cluster's objects, in
the reverse of the graph's order), then what is left behind anywhere: the stack's objects and
the Ray objects and Kueue Workloads MultiKueue made in the workers."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from aksray.rehearse.multikueue.rig import Member, MultiKueueRig
from aksray.rehearse.rig.engine import EngineStack
from aksray.rehearse.rig.footprint import leftovers
from aksray.rehearse.rig.processes import RigError

RAY_LEFT = ("rayjobs", "rayservices", "rayclusters")
LEFT_TIMEOUT_S = 90.0
# What the stack creates for MultiKueue on any cluster carries this label (manifests/multikueue.py).
PART_OF = "app.kubernetes.io/part-of=multikueue"
MULTIKUEUE_KINDS = (
    "/apis/kueue.x-k8s.io/v1beta2/multikueueclusters",
    "/apis/kueue.x-k8s.io/v1beta2/multikueueconfigs",
    "/apis/kueue.x-k8s.io/v1beta2/admissionchecks",
    "/api/v1/secrets",
    "/api/v1/serviceaccounts",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "/apis/rbac.authorization.k8s.io/v1/rolebindings",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
)


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


def multikueue_left(member: Member) -> list[str]:
    """The stack's MultiKueue objects still on a cluster (by their label)."""
    left = []
    for path in MULTIKUEUE_KINDS:
        for found in member.kube.items(path, PART_OF):
            meta = found["metadata"]
            where = f"{meta['namespace']}/" if meta.get("namespace") else ""
            left.append(f"{path.rsplit('/', 1)[1]} {where}{meta['name']}")
    return left


def wait_for(check: Callable[[], list[str]], timeout: float) -> list[str]:
    """Poll `check` (what is left) until it is empty or the time is up; what is left."""
    deadline = time.monotonic() + timeout
    while True:
        left = check()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


def destroy(
    rig: MultiKueueRig, engine: EngineStack, namespaces: tuple[str, ...]
) -> tuple[list[str], float]:
    """`pulumi destroy`, then `<cluster>: <what>` for each thing left; and its seconds."""
    try:
        seconds = engine.destroy()
        left = [f"pulumi: {urn}" for urn in engine.resources_left()]
    except RigError as failed:
        seconds, left = 0.0, [f"pulumi destroy failed: {failed}"]
    for member in rig.members:
        gone = wait_for(partial(ray_left, member, namespaces), LEFT_TIMEOUT_S)
        left += [f"{member.name}: {x}" for x in gone]
        left += [f"{member.name}: {x}" for x in leftovers(member.kube, namespaces)]
        left += [f"{member.name}: {x}" for x in multikueue_left(member)]
    return left, seconds
