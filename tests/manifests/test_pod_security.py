"""Every Ray pod the stacks start passes the Pod Security Standards' `restricted` profile.

The team namespaces enforce `baseline` and warn on `restricted` (manifests/namespaces.py). The
pods checked are the ones KubeRay makes of our templates: the head with the autoscaler sidecar
of an elastic workload (its securityContext from `autoscalerOptions`) and every worker with the
`wait-gcs-ready` init container, which KubeRay gives a copy of the Ray container's
securityContext (ray-operator `controllers/ray/common/pod.go`, v1.6 and v1.7).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from catalog.versions import RAY_IMAGE, RAY_IMAGE_GID, RAY_IMAGE_UID
from tests.support.harness import RUNNING, planned
from tests.support.pod_security import restricted_violations

RAY_KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")


def _cluster(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = manifest["spec"]
    cluster: Mapping[str, Any] = (
        spec["rayClusterSpec"] if manifest["kind"] == "RayJob" else spec["rayClusterConfig"]
    )
    return cluster


def kuberay_pods(manifest: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, pod spec) of every pod KubeRay creates for this RayJob or RayService."""
    cluster = _cluster(manifest)
    head = copy.deepcopy(cluster["headGroupSpec"]["template"]["spec"])
    if cluster.get("enableInTreeAutoscaling"):
        options = cluster.get("autoscalerOptions") or {}
        sidecar = {"name": "autoscaler", "image": RAY_IMAGE}
        if "securityContext" in options:
            sidecar["securityContext"] = options["securityContext"]
        head["containers"].append(sidecar)
    yield "head", head
    for group in cluster.get("workerGroupSpecs", []):
        worker = copy.deepcopy(group["template"]["spec"])
        ray = worker["containers"][0]
        init = {"name": "wait-gcs-ready", "image": ray["image"]}
        if "securityContext" in ray:
            init["securityContext"] = copy.deepcopy(ray["securityContext"])
        worker.setdefault("initContainers", []).append(init)
        yield group["groupName"], worker


def _ray_objects(stack: str) -> list[Mapping[str, Any]]:
    result = planned(stack)
    return [r.inputs for kind in RAY_KINDS for r in result.by_type(kind)]


@pytest.mark.parametrize("stack", [f"dev{RUNNING}", f"prod{RUNNING}", "local"])
def test_every_ray_pod_passes_the_restricted_profile(stack: str) -> None:
    objects = _ray_objects(stack)
    assert objects, f"{stack} starts no Ray workload"
    heads = 0
    for manifest in objects:
        for group, pod in kuberay_pods(manifest):
            name = f"{manifest['metadata']['name']}/{group}"
            assert restricted_violations(pod) == [], name
            heads += group == "head"
    assert heads == len(objects)


def test_prod_checks_the_autoscaler_sidecar_of_its_elastic_workload() -> None:
    elastic = [m for m in _ray_objects(f"prod{RUNNING}") if _cluster(m)["enableInTreeAutoscaling"]]
    assert [m["metadata"]["labels"]["aksray.io/workload"] for m in elastic] == [
        "vllm-batch",
        "llm-serve",
    ]
    for manifest in elastic:
        (head,) = [pod for group, pod in kuberay_pods(manifest) if group == "head"]
        assert [c["name"] for c in head["containers"]] == ["ray-head", "autoscaler"]
        assert restricted_violations(head) == []


def test_ray_pods_run_as_the_images_own_user() -> None:
    """rayproject images run as `ray` (uid 1000, gid 100): the pod names that user, so the
    kubelet can prove non-root before the container starts, and files the pod mounts (the
    workload identity token) are readable by it."""
    for manifest in _ray_objects(f"prod{RUNNING}"):
        for _, pod in kuberay_pods(manifest):
            assert pod["securityContext"] == {
                "runAsNonRoot": True,
                "runAsUser": RAY_IMAGE_UID,
                "runAsGroup": RAY_IMAGE_GID,
                "fsGroup": RAY_IMAGE_GID,
                "seccompProfile": {"type": "RuntimeDefault"},
            }
            for container in pod["containers"]:
                assert container["securityContext"] == {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                    "runAsNonRoot": True,
                    "seccompProfile": {"type": "RuntimeDefault"},
                }


# The checker itself: each control it claims to check fails a pod that breaks it.

_GOOD_CONTAINER: dict[str, Any] = {
    "name": "c",
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    },
}


def _pod(**changes: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": [copy.deepcopy(_GOOD_CONTAINER)]}
    pod.update(changes)
    return pod


def test_the_checker_passes_a_compliant_pod() -> None:
    assert restricted_violations(_pod()) == []


def test_the_checker_fails_a_pod_without_any_security_context() -> None:
    assert restricted_violations({"containers": [{"name": "ray-head"}]}) == [
        "spec.containers[0].securityContext.allowPrivilegeEscalation: must be false",
        "spec.containers[0].securityContext.runAsNonRoot: must be true (here or on the pod)",
        "spec.containers[0].securityContext.seccompProfile.type: RuntimeDefault or Localhost",
        "spec.containers[0].securityContext.capabilities.drop: must include ALL",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"hostNetwork": True}, "spec.hostNetwork: host namespaces are forbidden"),
        (
            {"volumes": [{"name": "v", "hostPath": {"path": "/"}}]},
            "spec.volumes[0]: hostPath volumes are forbidden",
        ),
        (
            {"securityContext": {"runAsUser": 0}},
            "spec.securityContext.runAsUser: 0 (root) is forbidden",
        ),
        (
            {"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}},
            "spec.securityContext.sysctls[0]: kernel.msgmax is not safe",
        ),
    ],
)
def test_the_checker_fails_each_pod_level_breach(change: dict[str, Any], expected: str) -> None:
    assert expected in restricted_violations(_pod(**change))


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({"privileged": True}, "privileged containers are forbidden"),
        ({"allowPrivilegeEscalation": True}, "allowPrivilegeEscalation: must be false"),
        ({"capabilities": {"drop": ["NET_RAW"]}}, "capabilities.drop: must include ALL"),
        (
            {"capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}},
            "only NET_BIND_SERVICE may be added",
        ),
        ({"seccompProfile": {"type": "Unconfined"}}, "RuntimeDefault or Localhost"),
        ({"runAsNonRoot": False}, "runAsNonRoot: must be true"),
    ],
)
def test_the_checker_fails_each_container_level_breach(
    context: dict[str, Any], expected: str
) -> None:
    container = copy.deepcopy(_GOOD_CONTAINER)
    container["securityContext"].update(context)
    violations = restricted_violations({"containers": [container]})
    assert any(expected in line for line in violations), violations


def test_the_pod_level_context_covers_containers_without_their_own() -> None:
    container = {
        "name": "c",
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    pod = {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
    }
    assert restricted_violations(pod) == []
