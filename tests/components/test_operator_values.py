"""The operators' Helm values: only keys the upstream charts have, and the GPU driver modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from manifests.helm_values import (
    gpu_operator_values,
    kai_scheduler_values,
    kuberay_operator_values,
    kueue_values,
)
from tests.support.chart_values import unknown_value_paths
from tests.support.harness import one, planned
from tests.support.operators import CHART_BY_RELEASE, NAMESPACE, run_mutated, values

# --------------------------------------------------------------------------------------------
# Values against the upstream charts
# --------------------------------------------------------------------------------------------


@pytest.mark.reference
@pytest.mark.parametrize("stack", ["dev", "prod"])
@pytest.mark.parametrize("name", sorted(CHART_BY_RELEASE))
def test_every_value_we_set_exists_in_the_upstream_chart(stack: str, name: str) -> None:
    assert unknown_value_paths(CHART_BY_RELEASE[name], values(planned(stack), name)) == []


@pytest.mark.reference
@pytest.mark.parametrize("driver", ["operator", "aks"])
@pytest.mark.parametrize("switch", [False, True])
def test_every_builder_variant_sets_only_upstream_keys(driver: str, switch: bool) -> None:
    assert unknown_value_paths("gpu-operator", gpu_operator_values(driver)) == []
    assert unknown_value_paths("kuberay-operator", kuberay_operator_values()) == []
    pods_ready = planned("dev").settings.scheduling.pods_ready
    assert unknown_value_paths("kueue", kueue_values(metrics=switch, pods_ready=pods_ready)) == []
    kai = kai_scheduler_values(driver, gpu_sharing=switch)
    assert unknown_value_paths("kai-scheduler", kai) == []


@pytest.mark.reference
def test_the_values_check_catches_misspelt_keys() -> None:
    misspelt = {
        "toolkit": {"enable": False},  # toolkit.enabled
        "operator": {"nodeselector": {"a": "b"}, "runtimeClass": "nvidia"},
        "daemonset": {"tolerations": []},  # daemonsets
        "node-feature-discovery": {"master": {"nodeSelectr": {}}, "gc": {"nodeSelector": {}}},
        "driver": {"enabled": {"oops": True}},  # a map where the chart has a bool
    }
    assert unknown_value_paths("gpu-operator", misspelt) == [
        "daemonset",
        "driver.enabled",
        "node-feature-discovery.master.nodeSelectr",
        "operator.nodeselector",
        "toolkit.enable",
    ]
    assert unknown_value_paths("kuberay-operator", {"batchScheduler": {"nmae": "x"}}) == [
        "batchScheduler.nmae"
    ]
    assert unknown_value_paths("kai-scheduler", {"global": {"gpusharing": True}}) == [
        "global.gpusharing"
    ]


@pytest.mark.reference
def test_free_form_maps_take_any_key() -> None:
    # operator.nodeSelector defaults to {kubernetes.io/os: linux}: still a free-form map.
    assert unknown_value_paths("gpu-operator", {"operator": {"nodeSelector": {"x/y": "z"}}}) == []
    assert unknown_value_paths("kai-scheduler", {"global": {"nodeSelector": {"x/y": "z"}}}) == []


# --------------------------------------------------------------------------------------------
# GPU Operator: who installs the driver
# --------------------------------------------------------------------------------------------


def test_operator_managed_driver_enables_driver_and_toolkit() -> None:
    found = values(planned("dev"), "aksray-operators-gpu-operator")  # dev: gpuDriver operator
    assert found["driver"] == {"enabled": True}
    # The toolkit ignores NVIDIA_VISIBLE_DEVICES in unprivileged containers (CDI stays on:
    # the chart's default, the device plugin's strategy untouched).
    assert found["toolkit"] == {
        "enabled": True,
        "env": [
            {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "value": "false"}
        ],
    }
    assert "cdi" not in found and "env" not in found.get("devicePlugin", {})
    assert found["operator"]["runtimeClass"] == "nvidia"


def test_gpu_sharing_keeps_the_toolkit_reading_the_variable(tmp_path: Path) -> None:
    """KAI hands a GPU fraction to a container through NVIDIA_VISIBLE_DEVICES."""
    result = run_mutated(tmp_path, "dev", {"operators": {"gpuSharing": True}})
    assert values(result, "aksray-operators-gpu-operator")["toolkit"] == {"enabled": True}


def test_aks_managed_driver_sets_all_three_values_together(tmp_path: Path) -> None:
    result = run_mutated(tmp_path, "dev", {"cluster": {"gpuDriver": "aks"}})
    found = values(result, "aksray-operators-gpu-operator")
    assert found["driver"] == {"enabled": False}
    assert found["toolkit"] == {"enabled": False}
    assert found["operator"]["runtimeClass"] == "nvidia-container-runtime"
    # KAI's GPU-sharing pods must ask for the runtime class that exists in this mode.
    kai = values(result, "aksray-operators-kai-scheduler")
    assert kai["admission"]["gpuFractionRuntimeClassName"] == "nvidia-container-runtime"


@pytest.mark.parametrize("driver", ["operator", "aks"])
def test_kai_and_the_gpu_operator_agree_on_the_runtime_class(driver: str) -> None:
    gpu = gpu_operator_values(driver)
    kai = kai_scheduler_values(driver, gpu_sharing=True)
    assert kai["admission"]["gpuFractionRuntimeClassName"] == gpu["operator"]["runtimeClass"]


def test_unknown_driver_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="gpu_driver"):
        gpu_operator_values("none")


def test_gpu_operator_namespace_admits_privileged_pods() -> None:
    result = planned("dev")
    gpu = one(result, NAMESPACE, "aksray-operators-gpu-operator-namespace").inputs["metadata"]
    assert gpu["name"] == "gpu-operator"
    assert gpu["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    for other in ("kuberay-operator", "kueue", "kai-scheduler"):
        labels = one(result, NAMESPACE, f"aksray-operators-{other}-namespace").inputs["metadata"][
            "labels"
        ]
        assert "pod-security.kubernetes.io/enforce" not in labels
