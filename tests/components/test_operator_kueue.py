"""KubeRay and Kueue as the stack configures them: batch scheduler, integrations, Kueue config."""

from __future__ import annotations

import re

import pytest

from manifests.helm_values import kueue_pods_ready
from tests.support.harness import planned
from tests.support.operators import kueue_config, upstream_kueue_config, values
from tests.support.reference import chart as reference_chart
from workloads.catalog import WORKLOADS


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kuberay_names_kai_and_never_sets_the_deprecated_switch(stack: str) -> None:
    batch = values(planned(stack), "aksray-operators-kuberay-operator")["batchScheduler"]
    assert batch == {"name": "kai-scheduler"}
    assert "enabled" not in batch


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kueue_integrates_every_kind_the_enabled_workloads_use(stack: str) -> None:
    result = planned(stack)
    frameworks = kueue_config(result)["integrations"]["frameworks"]
    enabled = [w for w in result.settings.workloads if w.enabled]
    assert enabled, "the stack enables workloads"
    for workload in enabled:
        kind = WORKLOADS[workload.name].kind
        assert f"ray.io/{kind.lower()}" in frameworks, (workload.name, kind)
    assert sorted(frameworks) == ["ray.io/rayjob", "ray.io/rayservice"]


@pytest.mark.reference
def test_kueue_leaves_raycluster_and_pod_level_integrations_off() -> None:
    frameworks = kueue_config(planned("dev"))["integrations"]["frameworks"]
    # The RayService controller owns its RayCluster; a second claimant fights it over suspend.
    assert "ray.io/raycluster" not in frameworks
    # Listing these turns their cluster-wide webhooks to failurePolicy Fail.
    assert not {"pod", "deployment", "statefulset"} & set(frameworks)
    # ...and the chart does list them by default, so leaving them out is a choice we make.
    assert {"ray.io/raycluster", "pod", "deployment"} <= set(
        upstream_kueue_config()["integrations"]["frameworks"]
    )


@pytest.mark.reference
@pytest.mark.parametrize(("stack", "metrics"), [("dev", False), ("prod", True)])
def test_kueue_config_is_the_chart_default_with_only_our_changes(stack: str, metrics: bool) -> None:
    expected = upstream_kueue_config()
    expected["integrations"]["frameworks"] = ["ray.io/rayjob", "ray.io/rayservice"]
    expected["manageJobsWithoutQueueName"] = False  # only labelled jobs are Kueue's
    # Kueue's pod-readiness wait, written out (tests/scheduling/test_pods_ready.py)
    expected["waitForPodsReady"] = kueue_pods_ready(planned(stack).settings.scheduling.pods_ready)
    # workload slices for the elastic endpoint and batch inference
    expected["featureGates"] = {"ElasticJobsViaWorkloadSlices": True}
    if metrics:
        expected["metrics"]["enableClusterQueueResources"] = True
    assert kueue_config(planned(stack)) == expected


@pytest.mark.reference
def test_keys_we_add_to_the_kueue_config_are_spelt_as_upstream_documents_them() -> None:
    text = (reference_chart("kueue") / "values.yaml").read_text()
    assert re.search(r"#\s*manageJobsWithoutQueueName:", text)
    assert re.search(r"#\s*enableClusterQueueResources:", text)


@pytest.mark.parametrize(("stack", "observed"), [("dev", False), ("prod", True)])
def test_kueue_reports_quota_use_when_observed_and_no_chart_service_monitor(
    stack: str, observed: bool
) -> None:
    """The Queues dashboard reads Kueue's per-ClusterQueue resource gauges; the charts' own
    monitoring.coreos.com ServiceMonitors stay off in every stack (no CRD for them)."""
    result = planned(stack)
    assert result.settings.observability.enabled is observed
    assert kueue_config(result)["metrics"].get("enableClusterQueueResources", False) is observed
    assert values(result, "aksray-operators-kueue")["enablePrometheus"] is False
    kuberay = values(result, "aksray-operators-kuberay-operator")
    assert kuberay["metrics"] == {"serviceMonitor": {"enabled": False}}
    gpu = values(result, "aksray-operators-gpu-operator")
    assert gpu["dcgmExporter"] == {"serviceMonitor": {"enabled": False}}
