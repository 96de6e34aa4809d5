"""`aksray verify` against a cluster held in memory: the plan's objects as the API server holds
them, the controllers' Deployments and ConfigMaps. A cluster as the plan says gives no drift;
each way it can differ gives one `drift:` line naming it; what the rehearsal rig declares its own
is a note. The real API server: tests/rehearse/test_verify.py."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from aksray.live.kube import api_prefix
from aksray.plan.model.plan import plan
from aksray.rehearse.rig.stand_ins import config_map, deployment
from aksray.verify.cluster import Report, verify
from aksray.verify.compare import RIG_DIFFERS_ANNOTATION
from aksray.verify.expected import KUEUE_CHECKED_FIELDS, stack_objects
from catalog.versions import KAI_IMAGE_TAG
from manifests.helm_values import kueue_manager_config
from tests.support.harness import planned

PLURALS = {
    "ResourceFlavor": "resourceflavors",
    "Cohort": "cohorts",
    "ClusterQueue": "clusterqueues",
    "LocalQueue": "localqueues",
    "AdmissionCheck": "admissionchecks",
    "WorkloadPriorityClass": "workloadpriorityclasses",
    "Queue": "queues",
    "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
}
ACTIVE = {"conditions": [{"type": "Active", "status": "True", "reason": "Ready"}]}


class FakeKube:
    """GETs of a cluster held in memory, with API discovery."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.served: dict[str, list[dict[str, Any]]] = {}

    def put(self, obj: dict[str, Any], plural: str) -> None:
        api = obj["apiVersion"]
        namespace = obj["metadata"].get("namespace")
        entry = {"kind": obj["kind"], "name": plural, "namespaced": namespace is not None}
        if entry not in self.served.setdefault(api, []):
            self.served[api].append(entry)
        scope = f"/namespaces/{namespace}" if namespace else ""
        self.objects[f"{api_prefix(api)}{scope}/{plural}/{obj['metadata']['name']}"] = obj

    def get_or_none(self, path: str) -> Any:
        if path in self.objects:
            return copy.deepcopy(self.objects[path])
        for api, resources in self.served.items():
            if path == api_prefix(api):
                return {"resources": resources}
        return None

    def path_of(self, kind: str, name: str, namespace: str | None = None) -> str:
        return next(
            p for p, o in self.objects.items()
            if o["kind"] == kind and o["metadata"]["name"] == name
            and o["metadata"].get("namespace") == namespace
        )  # fmt: skip


def cluster_as_planned(stack: str) -> FakeKube:
    result = planned(stack)
    kube = FakeKube()
    for obj in stack_objects(result):
        live = copy.deepcopy(dict(obj.declared))
        live["status"] = copy.deepcopy(ACTIVE) if obj.kind in ("ClusterQueue", "LocalQueue") else {}
        kube.put(live, PLURALS[obj.kind])
    kube.put(
        deployment("kueue-controller-manager", "kueue-system", "k/kueue:v0.19.2"), "deployments"
    )
    kube.put(deployment("kuberay-operator", "kuberay-system", "q/operator:v1.6.2"), "deployments")
    kube.put(
        deployment("kai-scheduler-default", "kai-scheduler", f"g/scheduler:{KAI_IMAGE_TAG}"),
        "deployments",
    )
    kube.put(
        deployment("gpu-operator", "gpu-operator", "nvcr.io/nvidia/gpu-operator:v26.7.0"),
        "deployments",
    )
    settings = result.settings
    kueue = kueue_manager_config(
        metrics=settings.observability.enabled, pods_ready=settings.scheduling.pods_ready
    )
    kube.put(
        config_map("kueue-manager-config", "kueue-system", "controller_manager_config.yaml", kueue),
        "configmaps",
    )
    kube.put(
        config_map(
            "kai-scheduler-default", "kai-scheduler", "config.yaml", {"actions": "allocate"}
        ),
        "configmaps",
    )
    return kube


def _verify(kube: FakeKube, stack: str = "prod") -> Report:
    result = planned(stack)
    return verify(plan(result), result, kube)  # type: ignore[arg-type]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_cluster_as_planned_has_no_drift(stack: str) -> None:
    report = _verify(cluster_as_planned(stack), stack)
    assert report.drifts == [] and report.notes == []
    # 4 controllers, KAI's actions, Kueue's configuration, and every object of the plan
    assert report.checked == 6 + len(stack_objects(planned(stack)))


def test_every_drift_is_one_line_naming_it() -> None:
    kube = cluster_as_planned("prod")
    del kube.objects[kube.path_of("LocalQueue", "nlp", "nlp")]
    training = kube.objects[kube.path_of("ClusterQueue", "training")]
    h100 = training["spec"]["resourceGroups"][0]["flavors"][1]
    assert h100["name"] == "h100" and h100["resources"][2]["nominalQuota"] == "24"
    h100["resources"][2]["nominalQuota"] = "16"
    kai = kube.objects["/api/v1/namespaces/kai-scheduler/configmaps/kai-scheduler-default"]
    kai["data"]["config.yaml"] = yaml.safe_dump({"actions": "allocate, reclaim"})
    vision = kube.objects[kube.path_of("ClusterQueue", "vision")]
    vision["status"]["conditions"][0].update(
        status="False", reason="FlavorNotFound", message="a100"
    )
    assert _verify(kube).drifts == [
        "KAI's actions (ConfigMap kai-scheduler/kai-scheduler-default, config.yaml): the "
        "scheduler runs allocate, reclaim, the plan says allocate: any action besides allocate "
        "evicts pods Kueue admitted",
        "ClusterQueue training: spec.resourceGroups[0].flavors[1].resources[2].nominalQuota is "
        "16, the plan says 24",
        "ClusterQueue vision: is not active: FlavorNotFound: a100",
        "LocalQueue nlp/nlp: is missing",
    ]


def test_quantities_compare_by_value_and_additions_are_no_drift() -> None:
    kube = cluster_as_planned("prod")
    serving = kube.objects[kube.path_of("ClusterQueue", "serving")]
    memory = serving["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]
    assert memory["nominalQuota"] == "32Gi"
    memory["nominalQuota"] = "34359738368"  # the same bytes, another form
    serving["spec"]["stopPolicy"] = "None"  # a default the API server adds
    assert _verify(kube).drifts == []


def test_a_controller_at_another_version_or_missing() -> None:
    kube = cluster_as_planned("prod")
    path = "/apis/apps/v1/namespaces/kueue-system/deployments/kueue-controller-manager"
    kube.objects[path]["spec"]["template"]["spec"]["containers"][0]["image"] = "k/kueue:v0.17.1"
    del kube.objects["/apis/apps/v1/namespaces/gpu-operator/deployments/gpu-operator"]
    assert _verify(kube).drifts == [
        "kueue (kueue-system/kueue-controller-manager): version is v0.17.1, the plan says v0.19.2",
        "gpu-operator (gpu-operator/gpu-operator): no such Deployment: the plan rests on "
        "gpu-operator v26.7.0",
    ]


def test_what_the_rig_declares_its_own_is_a_note_not_a_drift() -> None:
    kube = cluster_as_planned("prod")
    path = "/apis/apps/v1/namespaces/kai-scheduler/deployments/kai-scheduler-default"
    kai = kube.objects[path]
    kai["spec"]["template"]["spec"]["containers"][0]["image"] = "g/scheduler:v0.12.0"
    kai["metadata"]["annotations"] = {RIG_DIFFERS_ANNOTATION: json.dumps({"version": "v0.12 here"})}
    report = _verify(kube)
    assert report.drifts == []
    assert report.notes == [
        "kai-scheduler (kai-scheduler/kai-scheduler-default): version is v0.12.0, the plan says "
        "v0.17.0 (the rehearsal rig's own: v0.12 here)"
    ]
    assert KUEUE_CHECKED_FIELDS == (
        "waitForPodsReady", "manageJobsWithoutQueueName", "integrations", "featureGates",
    )  # fmt: skip


def test_kueue_configured_otherwise_is_a_drift() -> None:
    kube = cluster_as_planned("dev")
    path = "/api/v1/namespaces/kueue-system/configmaps/kueue-manager-config"
    config = yaml.safe_load(kube.objects[path]["data"]["controller_manager_config.yaml"])
    config["integrations"]["frameworks"].append("batch/job")
    config["manageJobsWithoutQueueName"] = True
    kube.objects[path]["data"]["controller_manager_config.yaml"] = yaml.safe_dump(config)
    drifts = _verify(kube, "dev").drifts
    prefix = "Kueue's configuration (ConfigMap kueue-system/kueue-manager-config): "
    assert drifts == [
        f"{prefix}manageJobsWithoutQueueName is true, the plan says false",
        f'{prefix}integrations.frameworks is ["ray.io/rayjob", "ray.io/rayservice", '
        '"batch/job"], the plan says ["ray.io/rayjob", "ray.io/rayservice"]',
    ]
