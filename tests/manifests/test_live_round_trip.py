"""What a Ray object sends is what the API gives back, so `pulumi up` finds nothing changed.

Kueue's mutating webhooks read each RayJob and RayService into KubeRay's Go types and write it
back: an empty worker group list (`omitempty`) comes back absent. The Kubernetes provider
compares the stack's inputs with the live object, and a RayJob replaces on any change of its
spec (the program's `replaceOnChanges`): `model-stage`, a head-only job, sent `workerGroupSpecs:
[]` and was replaced, and run again, on every `pulumi up` after the first (seen on the rig: the
engine's preview replaced it where `aksray plan --since` said same).
"""

from __future__ import annotations

import pytest

from tests.support.harness import planned

KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")


@pytest.mark.parametrize("stack", ["dev+run", "prod+run"])
def test_no_ray_object_sends_an_empty_worker_group_list(stack: str) -> None:
    found = {}
    for resource in planned(stack).resources:
        if resource.type in KINDS:
            spec = resource.inputs["spec"]
            cluster = spec.get("rayClusterSpec") or spec.get("rayClusterConfig")
            found[resource.name] = cluster.get("workerGroupSpecs")
    assert found["aksray-workloads-model-stage"] is None  # head only: no key at all
    assert all(groups is None or groups for groups in found.values()), found
