"""The admission policies (manifests/access/admission.py), evaluated offline with cel-python
exactly as written (tests/support/admission.py): every way around the queues is refused with its
message, and everything the platform itself creates is admitted. The rig runs the same policies on a
real API server (the `team-members` rehearsal scenario)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from aksray.offline.runner import RunResult
from aksray.rehearse.scenarios.member_job import (
    ADMIN,
    ENV_REFUSED,
    FRACTION_REFUSED,
    GPU_REFUSED,
    KAI_REFUSED,
    PRIORITY_REFUSED,
    QUEUE_REFUSED,
    RAYCLUSTER_REFUSED,
    RBAC_REFUSED,
    RUNTIME_REFUSED,
    member_ray_job,
    not_allowed_priority,
    pod_bypasses,
    ray_bypasses,
)
from manifests.access.admission import KUBERAY_USER, admission_policies
from settings.access.teams import allowed_priorities
from tests.support.admission import Request, refusals
from tests.support.harness import RUNNING, planned

MEMBER = "alice@example.com"
RAY = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")


def _namespaces(result: RunResult) -> dict[str, dict[str, Any]]:
    return {
        n.inputs["metadata"]["name"]: n.inputs
        for n in result.by_type("kubernetes:core/v1:Namespace")
    }


def _expressions(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k in ("expression", "messageExpression")]
        return found + [e for v in node.values() for e in _expressions(v)]
    if isinstance(node, list):
        return [e for v in node for e in _expressions(v)]
    return []


def test_two_policies_two_bindings_for_every_team_namespace() -> None:
    objects = admission_policies()
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("ValidatingAdmissionPolicy", "aksray-team-pod-specs"),
        ("ValidatingAdmissionPolicy", "aksray-team-ray"),
        ("ValidatingAdmissionPolicyBinding", "aksray-team-pod-specs-binding"),
        ("ValidatingAdmissionPolicyBinding", "aksray-team-ray-binding"),
    ]
    for policy in objects[:2]:
        spec = policy["spec"]
        assert policy["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert spec["failurePolicy"] == "Fail"
        assert spec["matchConstraints"]["namespaceSelector"] == {
            "matchExpressions": [{"key": "aksray.io/team", "operator": "Exists"}]
        }
    for binding in objects[2:]:
        assert binding["spec"] == {
            "policyName": binding["metadata"]["name"].removesuffix("-binding"),
            "validationActions": ["Deny"],
        }
    rules = {
        (group, resource, tuple(rule["operations"]))
        for policy in objects[:2]
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    both = ("CREATE", "UPDATE")
    assert rules == {
        ("", "pods", ("CREATE",)),
        ("", "pods/ephemeralcontainers", ("UPDATE",)),
        ("", "podtemplates", both),
        ("", "replicationcontrollers", both),
        *(("apps", r, both) for r in ("deployments", "replicasets", "statefulsets", "daemonsets")),
        ("batch", "jobs", both),
        ("batch", "cronjobs", both),
        *(("ray.io", r, both) for r in ("rayjobs", "rayservices", "rayclusters", "raycronjobs")),
    }


def test_the_cel_is_what_kubernetes_1_33_compiles_and_messages_are_one_line() -> None:
    """AKS 1.33 compiles new expressions against 1.32's libraries: no optional types (`?.`,
    `orValue`), no `flatten` (1.34's ext.Lists). A message may not hold a line break."""
    expressions = _expressions(admission_policies())
    assert len(expressions) >= 20
    for expression in expressions:
        assert not re.search(r"\?\.|\[\?|orValue|optional\.|flatten\(", expression), expression
    for policy in admission_policies()[:2]:
        for validation in policy["spec"]["validations"]:
            assert "\n" not in validation.get("message", "")
            assert validation["reason"] == "Forbidden"
            assert "message" in validation or "messageExpression" in validation


# --------------------------------------------------------------------------------------------
# The platform's own objects pass
# --------------------------------------------------------------------------------------------


def _pods(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods KubeRay creates from a RayJob or RayService's Ray cluster."""
    cluster = obj["spec"].get("rayClusterSpec") or obj["spec"]["rayClusterConfig"]
    templates = [cluster["headGroupSpec"]["template"]]
    templates += [g["template"] for g in cluster.get("workerGroupSpecs", [])]
    return [
        {"apiVersion": "v1", "kind": "Pod", "metadata": t.get("metadata", {}), "spec": t["spec"]}
        for t in templates
    ]


def _admitted_by_kueue(obj: dict[str, Any]) -> dict[str, Any]:
    """What Kueue writes when it admits: unsuspended, its flavor's node selector injected."""
    admitted = copy.deepcopy(obj)
    spec = admitted["spec"]
    cluster = spec.get("rayClusterSpec") or spec["rayClusterConfig"]
    (spec if "rayClusterSpec" in spec else cluster)["suspend"] = False
    for group in cluster.get("workerGroupSpecs", []):
        group["template"]["spec"]["nodeSelector"] = {"kubernetes.azure.com/agentpool": "a100"}
    return admitted


@pytest.mark.parametrize("stack", [f"dev{RUNNING}", f"prod{RUNNING}", "local"])
def test_everything_the_platform_creates_is_admitted(stack: str) -> None:
    result = planned(stack)
    namespaces = _namespaces(result)
    objects = [r.inputs for t in RAY for r in result.by_type(t)]
    assert objects
    for obj in objects:
        namespace = namespaces[obj["metadata"]["namespace"]]
        assert refusals(Request(obj, "deployer", namespace)) == [], obj["metadata"]["name"]
        admitted = _admitted_by_kueue(obj)
        kueue = Request(admitted, "kueue", namespace, operation="UPDATE", old=obj)
        assert refusals(kueue) == []
        for pod in _pods(obj):
            assert refusals(Request(pod, KUBERAY_USER, namespace)) == []


# --------------------------------------------------------------------------------------------
# Every way around the queues is refused, with its message
# --------------------------------------------------------------------------------------------


def _prod() -> tuple[Any, Any, Any, dict[str, Any]]:
    result = planned("prod")
    scheduling = result.settings.scheduling
    nlp, vision = scheduling.team("nlp"), scheduling.team("vision")
    return result.settings, nlp, vision, _namespaces(result)["nlp"]


def test_the_member_job_of_docs_teams_is_admitted() -> None:
    settings, nlp, _, namespace = _prod()
    job = member_ray_job(nlp, allowed_priorities(nlp, settings.workloads)[0])
    assert refusals(Request(job, MEMBER, namespace)) == []


def test_every_bypass_the_rehearsal_sends_is_refused_with_its_message() -> None:
    settings, nlp, vision, namespace = _prod()
    allowed = allowed_priorities(nlp, settings.workloads)
    assert allowed == ("train",)
    bypasses = ray_bypasses(nlp, "train", vision, not_allowed_priority(allowed))
    bypasses += pod_bypasses(nlp)
    expected = {
        QUEUE_REFUSED: 2, KAI_REFUSED: 1, PRIORITY_REFUSED: 1, ENV_REFUSED: 2,
        RUNTIME_REFUSED: 1, FRACTION_REFUSED: 1, GPU_REFUSED: 6, RAYCLUSTER_REFUSED: 2,
        RBAC_REFUSED: 0,
    }  # fmt: skip
    seen = dict.fromkeys(expected, 0)
    for bypass in bypasses:
        user = "admin" if bypass.who == ADMIN else MEMBER
        found = refusals(Request(bypass.manifest, user, namespace))
        # A member's own Pod, Job, Deployment or RayCluster is refused by RBAC before admission
        # (the rig shows it); the policy refuses it too, whoever sends it.
        wanted = bypass.refused_with
        if wanted == RBAC_REFUSED:
            kind = bypass.manifest["kind"]
            wanted = RAYCLUSTER_REFUSED if kind == "RayCluster" else GPU_REFUSED
        assert any(m.startswith(wanted) for m in found), (bypass.what, found)
        seen[wanted] += 1
    assert seen == expected


def _gpu_container(**extra: Any) -> dict[str, Any]:
    return {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}, **extra}


@pytest.mark.parametrize(
    ("kind", "api", "spec"),
    [
        ("StatefulSet", "apps/v1", {"template": {"spec": {"containers": [_gpu_container()]}}}),
        ("DaemonSet", "apps/v1", {"template": {"spec": {"containers": [_gpu_container()]}}}),
        ("ReplicaSet", "apps/v1", {"template": {"spec": {"containers": [_gpu_container()]}}}),
        ("ReplicationController", "v1", {"template": {"spec": {"containers": [_gpu_container()]}}}),
        (
            "CronJob",
            "batch/v1",
            {"jobTemplate": {"spec": {"template": {"spec": {"containers": [_gpu_container()]}}}}},
        ),
        (
            "Pod",
            "v1",
            {"containers": [{"name": "c", "image": "x"}], "initContainers": [_gpu_container()]},
        ),
        (
            "Pod",
            "v1",
            {
                "containers": [
                    {
                        "name": "c",
                        "image": "x",
                        "resources": {"requests": {"nvidia.com/mig-1g.10gb": "1"}},
                    }
                ]
            },
        ),
    ],
    ids=[
        "statefulset",
        "daemonset",
        "replicaset",
        "replicationcontroller",
        "cronjob",
        "init-container",
        "mig-request",
    ],
)
def test_every_kind_that_makes_pods_is_held_to_the_queue(
    kind: str, api: str, spec: dict[str, Any]
) -> None:
    _, _, _, namespace = _prod()
    obj = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "x", "namespace": "nlp"},
        "spec": spec,
    }
    found = refusals(Request(obj, "admin", namespace))
    assert [m for m in found if m.startswith(GPU_REFUSED)], found


def test_pod_template_kind_is_held_too() -> None:
    _, _, _, namespace = _prod()
    obj = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "x", "namespace": "nlp"},
           "template": {"spec": {"containers": [_gpu_container()]}}}  # fmt: skip
    assert any(m.startswith(GPU_REFUSED) for m in refusals(Request(obj, "admin", namespace)))


def test_kuberays_own_pods_obey_the_device_rules() -> None:
    _, _, _, namespace = _prod()

    def pod(value: str) -> dict[str, Any]:
        env = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": value}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                "spec": {"containers": [_gpu_container(env=env)]}}  # fmt: skip

    found = refusals(Request(pod("all"), KUBERAY_USER, namespace))
    assert len(found) == 1 and found[0].startswith(ENV_REFUSED), found
    assert refusals(Request(pod("void"), KUBERAY_USER, namespace)) == []


def test_a_runtime_class_a_webhook_gives_kuberays_pod_is_not_the_teams() -> None:
    """KAI v0.12 (the rig's) gives every GPU pod `runtimeClassName: nvidia` when KubeRay
    creates it; the template it came from was held to the rule by the Ray policy. Anyone else's
    pod with it is refused."""
    _, nlp, _, namespace = _prod()
    worker = member_ray_job(nlp, "train")["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"},
           "spec": {**worker["template"]["spec"], "runtimeClassName": "nvidia"}}  # fmt: skip
    assert refusals(Request(pod, KUBERAY_USER, namespace)) == []
    found = refusals(Request(pod, "admin", namespace))
    assert [m for m in found if m.startswith(RUNTIME_REFUSED)], found


def test_a_debug_container_may_not_select_devices_but_may_join_a_gpu_pod() -> None:
    _, _, _, namespace = _prod()
    debugger: dict[str, Any] = {"name": "debug", "image": "busybox"}
    spec = {"containers": [_gpu_container()], "ephemeralContainers": [debugger]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": spec}
    debug = Request(
        pod, "admin", namespace, operation="UPDATE", old=pod, sub_resource="ephemeralcontainers"
    )
    assert refusals(debug) == []
    env = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    debugger["env"] = env
    assert [m[: len(ENV_REFUSED)] for m in refusals(debug)] == [ENV_REFUSED]


def test_ray_objects_other_ways_around() -> None:
    _, nlp, _, namespace = _prod()
    job = member_ray_job(nlp, "train")
    cases = {
        "a RayCronJob": ({**job, "kind": "RayCronJob"}, "RayCronJobs are not queued"),
        "managedBy": (
            _changed(job, lambda j: j["spec"].update(managedBy="example.com/mine")),
            "spec.managedBy hands",
        ),
        "a template's priorityClassName": (
            _changed(
                job,
                lambda j: j["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"].update(
                    priorityClassName="inference"
                ),
            ),
            "leave priorityClassName out of pod templates",
        ),
        "a template's KAI queue": (
            _changed(
                job,
                lambda j: j["spec"]["rayClusterSpec"]["headGroupSpec"]["template"][
                    "metadata"
                ].update(labels={"kai.scheduler/queue": "vision"}),
            ),
            "a pod template may name only your team's KAI queue (kai.scheduler/queue: nlp)",
        ),
        "the autoscaler's env": (
            _changed(
                job,
                lambda j: j["spec"]["rayClusterSpec"].update(
                    autoscalerOptions={"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}
                ),
            ),
            "the Ray autoscaler's env may not set NVIDIA_VISIBLE_DEVICES",
        ),
        "a submitter with a GPU": (
            _changed(
                job,
                lambda j: j["spec"].update(
                    submitterPodTemplate={"spec": {"containers": [_gpu_container()]}}
                ),
            ),
            "a RayJob's submitter pod asks for no GPU",
        ),
        "priorityClassName unlike the Kueue label": (
            _changed(job, lambda j: j["metadata"]["labels"].update(priorityClassName="inference")),
            PRIORITY_REFUSED,
        ),
    }
    for what, (obj, words) in cases.items():
        found = refusals(Request(obj, MEMBER, namespace))
        assert any(m.startswith(words) for m in found), (what, found)
    multikueue = _changed(job, lambda j: j["spec"].update(managedBy="kueue.x-k8s.io/multikueue"))
    assert refusals(Request(multikueue, MEMBER, namespace)) == []


def _changed(obj: dict[str, Any], change: Any) -> dict[str, Any]:
    copied = copy.deepcopy(obj)
    change(copied)
    return copied


def test_kuberay_alone_creates_rayclusters_and_the_autoscaler_may_scale_them() -> None:
    _, nlp, _, namespace = _prod()
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "c", "namespace": "nlp"},
        "spec": member_ray_job(nlp, "train")["spec"]["rayClusterSpec"],
    }
    assert refusals(Request(cluster, KUBERAY_USER, namespace)) == []
    scaled = _changed(cluster, lambda c: c["spec"]["workerGroupSpecs"][0].update(replicas=2))
    autoscaler = "system:serviceaccount:nlp:ray-elastic-head"
    assert refusals(Request(scaled, autoscaler, namespace, operation="UPDATE", old=cluster)) == []


def test_an_update_keeps_what_was_admitted_but_never_moves_it_to_another_queue() -> None:
    """KubeRay removing its finalizer or Kueue flipping suspend after the team's priorities
    changed is admitted (nothing it checks changed); moving to another queue is not."""
    _, nlp, _, namespace = _prod()
    old = member_ray_job(nlp, "build")  # a priority nlp may no longer use
    assert refusals(Request(old, MEMBER, namespace))  # as a new object: refused
    finalizer = _changed(old, lambda j: j["metadata"].update(finalizers=[]))
    assert refusals(Request(finalizer, KUBERAY_USER, namespace, operation="UPDATE", old=old)) == []
    moved = _changed(
        old, lambda j: j["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": "vision"})
    )
    found = refusals(Request(moved, MEMBER, namespace, operation="UPDATE", old=old))
    assert [m for m in found if m.startswith(QUEUE_REFUSED)]


def test_a_namespace_no_team_owns_is_not_the_policies_business() -> None:
    _, nlp, _, _ = _prod()
    elsewhere = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "tools", "labels": {}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x"},
        "spec": {"containers": [_gpu_container()]},
    }
    assert refusals(Request(pod, "admin", elsewhere)) == []
    assert refusals(Request(member_ray_job(nlp, "inference"), "admin", elsewhere)) == []
