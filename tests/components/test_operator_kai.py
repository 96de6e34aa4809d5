"""The KAI scheduler as the stack configures it: allocate only, priority classes, GPU sharing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.plan.model.plan import registered
from catalog.kai import EVICTING_ACTIONS, KAI_ACTIONS, PLACING_ACTION
from catalog.priorities import PRIORITY_CLASSES
from manifests.helm_values import kai_scheduler_values
from tests.support.chart_values import chart_defaults, unknown_value_paths
from tests.support.crd.conformance import compile_crd, validate_with
from tests.support.harness import planned
from tests.support.operators import run_mutated, values
from tests.support.reference import REFERENCE
from tests.support.reference import chart as reference_chart


def test_kai_installs_its_priority_classes_and_no_catch_all_queue() -> None:
    kai = values(planned("dev"), "aksray-operators-kai-scheduler")
    assert kai["defaultPriorityClasses"] == {"enabled": True}
    assert kai["defaultQueue"] == {"createDefaultQueue": False}
    assert kai["global"]["gpuSharing"] is False
    # The chart source carries a placeholder registry; we name the published one.
    assert kai["global"]["registry"] == "ghcr.io/kai-scheduler/kai-scheduler"
    assert kai["global"]["tag"] == "v0.17.0"


KAI_SHARD_CRD = reference_chart("kai-scheduler") / "crds/kai.scheduler_schedulingshards.yaml"
KAI_SHARD_TEMPLATE = reference_chart("kai-scheduler") / "templates/default-shard.yaml"
EVICTIONS_OFF = {
    "consolidation": {"enabled": False},
    "reclaim": {"enabled": False},
    "preempt": {"enabled": False},
    "stalegangeviction": {"enabled": False},
}


def _shard_crd() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load(KAI_SHARD_CRD.read_text())["spec"]
    return spec


@pytest.mark.reference
def test_the_kai_action_names_are_the_pinned_schedulers() -> None:
    # A misspelt action name is a new, harmless action and leaves the real one on: the names we
    # disable must be KAI's own, which the SchedulingShard CRD lists with their priorities.
    schema = _shard_crd()["versions"][0]["schema"]["openAPIV3Schema"]
    actions = schema["properties"]["spec"]["properties"]["actions"]
    listed = re.findall(r"(\w+)=(\d+)", actions["description"])
    assert {name: int(priority) for name, priority in listed} == KAI_ACTIONS
    assert (PLACING_ACTION, *EVICTING_ACTIONS) == tuple(KAI_ACTIONS)
    assert set(actions["additionalProperties"]["properties"]) == {"enabled", "priority"}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kai_runs_only_allocate(stack: str) -> None:
    kai = values(planned(stack), "aksray-operators-kai-scheduler")
    assert kai["scheduler"] == {"placementStrategy": "binpack", "actions": EVICTIONS_OFF}
    assert kai["defaultShard"] == {"enabled": True}
    assert registered(planned(stack)).kai_actions == ("allocate",)


@pytest.mark.reference
@pytest.mark.parametrize("sharing", [False, True])
def test_the_default_shard_the_chart_renders_from_our_values_is_valid(sharing: bool) -> None:
    """The chart's default SchedulingShard, as templates/default-shard.yaml renders it from our
    values (checked with `helm template` of the pinned chart; the template lines that map the
    values are asserted here), validated against the SchedulingShard CRD."""
    template = KAI_SHARD_TEMPLATE.read_text()
    for line in (
        "{{- if .Values.defaultShard.enabled }}",
        "kind: SchedulingShard",
        "  name: default",
        "    gpu: {{ .Values.scheduler.placementStrategy }}",
        "    cpu: {{ .Values.scheduler.placementStrategy }}",
        "  actions:\n    {{- toYaml .Values.scheduler.actions | nindent 4 }}",
    ):
        assert line in template, line
    defaults = chart_defaults("kai-scheduler")
    assert (defaults["scheduler"]["actions"], defaults["defaultShard"]) == ({}, {"enabled": True})
    ours = kai_scheduler_values("operator", gpu_sharing=sharing)
    strategy = ours["scheduler"]["placementStrategy"]
    shard: dict[str, Any] = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "SchedulingShard",
        "metadata": {"name": "default"},
        "spec": {
            "partitionLabelValue": "",
            "goMemLimitRatio": defaults["scheduler"]["goMemLimitRatio"],
            "placementStrategy": {"gpu": strategy, "cpu": strategy},
            "actions": ours["scheduler"]["actions"],
        },
    }
    crd = compile_crd(_shard_crd(), "v1")
    assert crd is not None
    assert validate_with(crd, shard) == []
    assert shard["spec"]["actions"] == EVICTIONS_OFF


@pytest.mark.reference
def test_kai_priority_classes_are_the_ones_our_priorities_name() -> None:
    found = {}
    for path in sorted((REFERENCE / "manifests/kai/priorityclasses").glob("*.yaml")):
        text = path.read_text()
        name = re.search(r"^\s*name:\s*(\S+)\s*$", text, re.MULTILINE)
        value = re.search(r"^value:\s*(\d+)\s*$", text, re.MULTILINE)
        assert name and value, path
        found[name.group(1)] = int(value.group(1))
    assert found == PRIORITY_CLASSES
    # ...and the chart renders them only with this switch.
    assert all(
        "defaultPriorityClasses.enabled" in p.read_text()
        for p in (REFERENCE / "manifests/kai/priorityclasses").glob("*.yaml")
    )


def test_kai_gpu_sharing_follows_the_stack(tmp_path: Path) -> None:
    result = run_mutated(tmp_path, "dev", {"operators": {"gpuSharing": True}})
    kai = values(result, "aksray-operators-kai-scheduler")["global"]
    assert kai["gpuSharing"] is True
    # Fractional-GPU pods are invisible to the cluster autoscaler (the fraction is an
    # annotation); KAI's node-scale-adjuster makes the GPU pools scale up from 0 for them.
    assert kai["clusterAutoscaling"] is True


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_scale_adjuster_without_gpu_sharing(stack: str) -> None:
    kai = values(planned(stack), "aksray-operators-kai-scheduler")["global"]
    assert (kai["gpuSharing"], kai["clusterAutoscaling"]) == (False, False)


@pytest.mark.reference
@pytest.mark.parametrize("driver", ["operator", "aks"])
@pytest.mark.parametrize("sharing", [False, True])
def test_gpu_sharing_and_cluster_autoscaling_go_together(driver: str, sharing: bool) -> None:
    kai = kai_scheduler_values(driver, gpu_sharing=sharing)
    assert kai["global"]["gpuSharing"] is sharing
    assert kai["global"]["clusterAutoscaling"] is sharing
    # The chart's own switch, at the pinned version (helm silently ignores a misspelt key).
    assert chart_defaults("kai-scheduler")["global"]["clusterAutoscaling"] is False
    assert unknown_value_paths("kai-scheduler", {"global": {"clusterAutoscaling": sharing}}) == []
