"""What the rig writes of its host-process controllers for `aksray verify`
(aksray/rehearse/rig/stand_ins.py), and how it names its own differences."""

from __future__ import annotations

import json
from typing import Any

import yaml

from aksray.rehearse.rig.stand_ins import KUEUE_SCALED, stand_ins
from aksray.verify.compare import RIG_DIFFERS_ANNOTATION

RIG = {"KUEUE_VERSION": "v0.19.2", "KUBERAY_VERSION": "v1.6.2", "KAI_VERSION": "v0.12.0"}


def _by_name(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (o["kind"], f"{o['metadata']['namespace']}/{o['metadata']['name']}"): o for o in objects
    }


def _differs(obj: dict[str, Any]) -> dict[str, str]:
    text = (obj["metadata"].get("annotations") or {}).get(RIG_DIFFERS_ANNOTATION, "{}")
    return dict(json.loads(text))


def test_each_controller_is_a_deployment_at_the_version_the_rig_runs() -> None:
    objects = _by_name(stand_ins(RIG, {"waitForPodsReady": {}}, {"actions": "allocate"}))
    assert sorted(objects) == [
        ("ConfigMap", "kai-scheduler/kai-scheduler-default"),
        ("ConfigMap", "kueue-system/kueue-manager-config"),
        ("Deployment", "kai-scheduler/kai-scheduler-default"),
        ("Deployment", "kuberay-system/kuberay-operator"),
        ("Deployment", "kueue-system/kueue-controller-manager"),
    ]
    images = {
        name: o["spec"]["template"]["spec"]["containers"][0]["image"]
        for (kind, name), o in objects.items()
        if kind == "Deployment"
    }
    assert images == {
        "kai-scheduler/kai-scheduler-default": "ghcr.io/nvidia/kai-scheduler/scheduler:v0.12.0",
        "kuberay-system/kuberay-operator": "quay.io/kuberay/operator:v1.6.2",
        "kueue-system/kueue-controller-manager": "registry.k8s.io/kueue/kueue:v0.19.2",
    }
    assert all(o["spec"]["replicas"] == 0 for (k, _), o in objects.items() if k == "Deployment")


def test_the_rig_names_its_own_differences_and_only_those() -> None:
    objects = _by_name(stand_ins(RIG, {"waitForPodsReady": {}}, {"actions": "allocate"}))
    kai = objects[("Deployment", "kai-scheduler/kai-scheduler-default")]
    assert list(_differs(kai)) == ["version"]
    assert _differs(objects[("ConfigMap", "kueue-system/kueue-manager-config")]) == KUEUE_SCALED
    assert _differs(objects[("Deployment", "kuberay-system/kuberay-operator")]) == {}
    shipped = _by_name(stand_ins({**RIG, "KAI_VERSION": "v0.17.0"}, {}, {"actions": "allocate"}))
    assert _differs(shipped[("Deployment", "kai-scheduler/kai-scheduler-default")]) == {}


def test_kais_configuration_is_the_file_its_scheduler_reads_and_none_without_kai() -> None:
    config = {"actions": "allocate", "tiers": [{"plugins": [{"name": "nodeplacement"}]}]}
    objects = _by_name(stand_ins(RIG, {}, config))
    data = objects[("ConfigMap", "kai-scheduler/kai-scheduler-default")]["data"]["config.yaml"]
    assert yaml.safe_load(data) == config
    assert not [name for _, name in _by_name(stand_ins(RIG, {}, None)) if "kai" in name]
