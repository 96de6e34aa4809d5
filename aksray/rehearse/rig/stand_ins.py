"""What a cluster the stack deployed shows of its controllers, written by the rig for the ones it
runs as host processes, so `aksray verify` reads the rig as it reads AKS (one shape).

- A Deployment per controller, as its chart (KAI v0.17: its operator) names it, with no
  replica and the image of the version the rig runs: Kueue, the KubeRay operator, KAI's
  scheduler. KAI runs v0.12.0 here (the Go module proxy serves no later), which the Deployment
  says, with the annotation `aksray.io/rig-differs` naming the skew.
- Kueue's configuration, as the chart's ConfigMap `kueue-manager-config` holds it: the very
  configuration the rig's Kueue reads, its scaled times named in the annotation.
- KAI's scheduler configuration, as v0.17's operator writes it into ConfigMap
  `kai-scheduler-default` (key `config.yaml`): the file the rig's v0.12 scheduler reads, which
  the rig writes with the actions v0.17 writes from the chart's `scheduler.actions`. A change
  made to that ConfigMap by hand is not applied to the running v0.12 scheduler (v0.17's
  operator would restart it); it stands for a drift `aksray verify` must find.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import yaml

from aksray.live.kube import Kube
from aksray.verify.compare import RIG_DIFFERS_ANNOTATION
from aksray.verify.expected import KAI_CONFIG_MAP, KUEUE_CONFIG_MAP
from catalog.versions import KAI_IMAGE_TAG, KAI_SCHEDULER, KUBERAY_OPERATOR, KUEUE

STAND_IN_LABEL: Final = "aksray.io/rig-stand-in"
# The fields of Kueue's configuration the rig scales (controllers/kueue.py rig_kueue_config).
KUEUE_SCALED: Final = {
    "waitForPodsReady.timeout": "the rig runs the pod-readiness timeout as 90s",
    "waitForPodsReady.recoveryTimeout": "scaled with the timeout where it is on",
    "waitForPodsReady.requeuingStrategy.backoffBaseSeconds": "the rig's requeue backoff is 5-30s",
    "waitForPodsReady.requeuingStrategy.backoffMaxSeconds": "the rig's requeue backoff is 5-30s",
    "featureGates.VisibilityOnDemand": "the rig does not run Kueue's visibility API server",
}


def _metadata(name: str, namespace: str, differs: Mapping[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    metadata["labels"] = {STAND_IN_LABEL: "host-process"}
    if differs:
        metadata["annotations"] = {RIG_DIFFERS_ANNOTATION: json.dumps(dict(differs))}
    return metadata


def deployment(
    name: str, namespace: str, image: str, differs: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A Deployment with no replica standing for a controller the rig runs on the host."""
    labels = {"app.kubernetes.io/name": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(name, namespace, differs or {}),
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "manager", "image": image}]},
            },
        },
    }


def config_map(
    name: str, namespace: str, key: str, content: Any, differs: Mapping[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(name, namespace, differs or {}),
        "data": {key: yaml.safe_dump(content, sort_keys=False)},
    }


def stand_ins(
    versions: Mapping[str, str],
    kueue_config: Mapping[str, Any],
    kai_config: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    """Every stand-in, for the rig's pins (scripts/rig/versions.env) and the configurations its
    Kueue and KAI read (`kai_config` None: the rig runs no KAI, and stands in for none)."""
    kai_version = versions["KAI_VERSION"]
    kai_skew = (
        {}
        if kai_version == KAI_IMAGE_TAG
        else {
            "version": f"the Go module proxy serves KAI {kai_version}, not the {KAI_IMAGE_TAG} "
            "the platform ships (docs/rehearsal.md, KAI on the rig)"
        }
    )
    kueue_and_kuberay = [
        deployment(
            "kueue-controller-manager", KUEUE.namespace,
            f"registry.k8s.io/kueue/kueue:{versions['KUEUE_VERSION']}",
        ),
        config_map(
            KUEUE_CONFIG_MAP[0], KUEUE.namespace, KUEUE_CONFIG_MAP[1], dict(kueue_config),
            KUEUE_SCALED,
        ),
        deployment(
            "kuberay-operator", KUBERAY_OPERATOR.namespace,
            f"quay.io/kuberay/operator:{versions['KUBERAY_VERSION']}",
        ),
    ]  # fmt: skip
    if kai_config is None:
        return kueue_and_kuberay
    return [
        *kueue_and_kuberay,
        deployment(
            KAI_CONFIG_MAP[0], KAI_SCHEDULER.namespace,
            f"ghcr.io/nvidia/kai-scheduler/scheduler:{kai_version}", kai_skew,
        ),
        config_map(KAI_CONFIG_MAP[0], KAI_SCHEDULER.namespace, KAI_CONFIG_MAP[1], dict(kai_config)),
    ]  # fmt: skip


def write_stand_ins(kube: Kube, objects: list[dict[str, Any]]) -> None:
    """Create each stand-in (and its namespace where missing)."""
    for obj in objects:
        namespace = obj["metadata"]["namespace"]
        if kube.get_or_none(f"/api/v1/namespaces/{namespace}") is None:
            kube.create(
                "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            )
        plural = "deployments" if obj["kind"] == "Deployment" else "configmaps"
        prefix = "/apis/apps/v1" if obj["kind"] == "Deployment" else "/api/v1"
        kube.create(f"{prefix}/namespaces/{namespace}/{plural}", obj)
