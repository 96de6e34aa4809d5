"""The cluster software: pinned releases, values checked against upstream, placement, ordering."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.model import registered
from aksray.render import write_render
from aksray.runner import RecordedResource, RunResult, run_program
from catalog.kai import EVICTING_ACTIONS, KAI_ACTIONS, PLACING_ACTION
from catalog.pools import CRITICAL_ADDONS_TAINT, gpu_pool_node_taints
from catalog.priorities import PRIORITY_CLASSES
from catalog.versions import (
    KAI_API_VERSION,
    KAI_SCHEDULER,
    KUBERAY_OPERATOR,
    KUEUE,
    KUEUE_API_VERSION,
    RAY_API_VERSION,
    chart_for_api_version,
)
from manifests.helm_values import (
    gpu_operator_values,
    kai_scheduler_values,
    kuberay_operator_values,
    kueue_pods_ready,
    kueue_values,
)
from tests.support.chart_values import chart_defaults, unknown_value_paths
from tests.support.crd_conformance import compile_crd, validate_with
from tests.support.harness import (
    assert_rejected,
    mutated,
    one,
    planned,
    transitive_dependencies,
    write_stack,
)
from tests.support.reference import REFERENCE
from tests.support.reference import chart as reference_chart
from tests.support.reference import crds as reference_crds
from workloads.catalog import WORKLOADS

RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
P = "aks-ray-platform:"
CPU_POOL_SELECTOR = {"kubernetes.azure.com/agentpool": "cpu"}

# (resource name, release, chart as registered, version, repository option, namespace), spelt
# out here rather than read from catalog/versions.py: these are the pins the platform promises.
PINS = [
    (
        "aksray-operators-gpu-operator",
        "gpu-operator",
        "gpu-operator",
        "v26.7.0",
        "https://helm.ngc.nvidia.com/nvidia",
        "gpu-operator",
    ),
    (
        "aksray-operators-kuberay-operator",
        "kuberay-operator",
        "kuberay-operator",
        "1.6.2",
        "https://ray-project.github.io/kuberay-helm/",
        "kuberay-system",
    ),
    (
        "aksray-operators-kueue",
        "kueue",
        "oci://registry.k8s.io/kueue/charts/kueue",
        "0.19.2",
        None,
        "kueue-system",
    ),
    (
        "aksray-operators-kai-scheduler",
        "kai-scheduler",
        "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler",
        "v0.17.0",
        None,
        "kai-scheduler",
    ),
]
CHART_BY_RELEASE = {
    "aksray-operators-gpu-operator": "gpu-operator",
    "aksray-operators-kuberay-operator": "kuberay-operator",
    "aksray-operators-kueue": "kueue",
    "aksray-operators-kai-scheduler": "kai-scheduler",
}


def release(result: RunResult, name: str) -> RecordedResource:
    return one(result, RELEASE, name)


def values(result: RunResult, name: str) -> dict[str, Any]:
    found = release(result, name).inputs["values"]
    assert isinstance(found, dict)
    return found


def kueue_config(result: RunResult) -> dict[str, Any]:
    text = values(result, "aksray-operators-kueue")["managerConfig"]["controllerManagerConfigYaml"]
    config = yaml.safe_load(text)
    assert isinstance(config, dict)
    return config


def upstream_kueue_config() -> dict[str, Any]:
    chart = yaml.safe_load((reference_chart("kueue") / "values.yaml").read_text())
    config = yaml.safe_load(chart["managerConfig"]["controllerManagerConfigYaml"])
    assert isinstance(config, dict)
    return config


def run_mutated(tmp_path: Path, stack: str, change: dict[str, Any]) -> RunResult:
    def apply(config: dict[str, Any]) -> None:
        for key, patch in change.items():
            config[P + key] = {**(config.get(P + key) or {}), **patch}

    result = run_program(write_stack(tmp_path, mutated(stack, apply)))
    assert result.ok, result.problems
    return result


# --------------------------------------------------------------------------------------------
# Pins
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
@pytest.mark.parametrize(
    ("name", "helm_name", "chart", "version", "repo", "namespace"),
    PINS,
    ids=[pin[1] for pin in PINS],
)
def test_each_release_installs_exactly_the_pinned_chart(
    stack: str,
    name: str,
    helm_name: str,
    chart: str,
    version: str,
    repo: str | None,
    namespace: str,
) -> None:
    inputs = release(planned(stack), name).inputs
    assert inputs["name"] == helm_name
    assert inputs["chart"] == chart
    assert inputs["version"] == version
    assert (inputs.get("repositoryOpts") or {}).get("repo") == repo
    assert inputs["namespace"] == namespace
    assert inputs["createNamespace"] is False  # the stack owns the namespace


def test_exactly_four_releases_and_kai_never_from_the_retracted_line() -> None:
    releases = planned("dev").by_type(RELEASE)
    assert sorted(r.name for r in releases) == sorted(CHART_BY_RELEASE)
    kai = release(planned("dev"), "aksray-operators-kai-scheduler").inputs
    assert not kai["version"].startswith("v0.20"), "KAI v0.20.x tags are retracted"
    assert all(r.inputs.get("devel") is not True for r in releases)


@pytest.mark.reference
def test_images_are_pinned_to_the_release_tags() -> None:
    result = planned("dev")
    kueue = values(result, "aksray-operators-kueue")["controllerManager"]["manager"]["image"]
    # What Kueue's packaging writes into the published chart (the source has a staging image).
    assert kueue == {
        "repository": "registry.k8s.io/kueue/kueue",
        "tag": "v0.19.2",
        "pullPolicy": "IfNotPresent",
    }
    kuberay = values(result, "aksray-operators-kuberay-operator")["image"]
    upstream = yaml.safe_load((reference_chart("kuberay-operator") / "values.yaml").read_text())
    assert kuberay == {"repository": "quay.io/kuberay/operator", "tag": "v1.6.2"}
    assert {k: upstream["image"][k] for k in ("repository", "tag")} == kuberay


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
    assert found["toolkit"] == {"enabled": True}
    assert found["operator"]["runtimeClass"] == "nvidia"


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


# --------------------------------------------------------------------------------------------
# KubeRay, Kueue, KAI
# --------------------------------------------------------------------------------------------


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
    # Kueue's pod-readiness wait, written out (tests/test_pods_ready.py)
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


# --------------------------------------------------------------------------------------------
# Placement: operators on the CPU pool, node agents on GPU nodes
# --------------------------------------------------------------------------------------------

CONTROLLER_SELECTORS: dict[str, list[tuple[str, ...]]] = {
    "aksray-operators-gpu-operator": [
        ("operator", "nodeSelector"),
        ("node-feature-discovery", "master", "nodeSelector"),
        ("node-feature-discovery", "gc", "nodeSelector"),
    ],
    "aksray-operators-kuberay-operator": [("nodeSelector",)],
    "aksray-operators-kueue": [("controllerManager", "nodeSelector")],
    "aksray-operators-kai-scheduler": [("global", "nodeSelector")],
}


def _at(tree: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for key in path:
        node = node[key]
    return node


def _all_tolerations(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            if key == "tolerations":
                yield from value
            else:
                yield from _all_tolerations(value)


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, str]) -> bool:
    return any(
        t.get("key") == taint["key"]
        and t.get("effect") in (None, taint["effect"])
        and (t.get("operator") == "Exists" or t.get("value") == taint["value"])
        for t in tolerations
    )


@pytest.mark.parametrize("name", sorted(CONTROLLER_SELECTORS))
def test_controllers_and_webhooks_run_on_the_cpu_pool(name: str) -> None:
    found = values(planned("prod"), name)
    for path in CONTROLLER_SELECTORS[name]:
        assert _at(found, path) == CPU_POOL_SELECTOR, path
    # Nothing we set lets an operator onto the tainted system pool.
    assert not any(t.get("key") == CRITICAL_ADDONS_TAINT["key"] for t in _all_tolerations(found))


def test_gpu_node_agents_tolerate_every_gpu_pool_taint_spot_included() -> None:
    gpu = values(planned("prod"), "aksray-operators-gpu-operator")  # prod has a spot pool
    for tolerations in (
        gpu["daemonsets"]["tolerations"],
        gpu["node-feature-discovery"]["worker"]["tolerations"],
    ):
        for taint in gpu_pool_node_taints(spot=True):
            assert _tolerates(tolerations, taint), taint
    # The node agents are DaemonSets on GPU nodes: no CPU-pool selector for them.
    assert "nodeSelector" not in gpu["daemonsets"]
    assert "nodeSelector" not in gpu["node-feature-discovery"]["worker"]


# --------------------------------------------------------------------------------------------
# Ordering
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHART_BY_RELEASE))
def test_each_release_waits_for_its_namespace_and_the_cpu_pool(name: str) -> None:
    result = planned("dev")
    rel = release(result, name)
    namespace = one(result, NAMESPACE, f"{name}-namespace")
    assert namespace.urn in rel.depends_on
    assert namespace.inputs["metadata"]["name"] == rel.inputs["namespace"]
    provider = one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s")
    assert rel.provider_urn == provider.urn == namespace.provider_urn
    cpu_pool = one(result, "azure-native:containerservice:AgentPool", "aksray-cluster-pool-cpu")
    assert cpu_pool.urn in provider.depends_on


def test_kueue_counts_as_created_only_when_its_webhook_serves() -> None:
    result = planned("dev")
    kueue = release(result, "aksray-operators-kueue")
    # Helm waits for the controller Deployment; Kueue is ready only with its webhook serving.
    assert kueue.inputs["skipAwait"] is False
    assert kueue.inputs["timeout"] >= 300
    # Kueue starts after KubeRay, so its Ray integrations find the Ray CRDs at start.
    kuberay = release(result, "aksray-operators-kuberay-operator")
    assert kuberay.urn in kueue.depends_on
    assert kuberay.urn in transitive_dependencies(result, kueue)


def test_no_release_skips_the_wait() -> None:
    assert all(r.inputs["skipAwait"] is False for r in planned("prod").by_type(RELEASE))


# --------------------------------------------------------------------------------------------
# Not installing
# --------------------------------------------------------------------------------------------


def test_render_only_stack_installs_no_operator() -> None:
    result = planned("local")
    assert result.settings.operators.install is False
    assert result.by_type(RELEASE) == []
    assert not [r for r in result.by_type(NAMESPACE) if "-operators-" in r.name]
    one(result, "aksray:platform:ClusterOperators", "aksray-operators")


def test_existing_cluster_gets_the_releases_unless_told_otherwise(tmp_path: Path) -> None:
    def use_live_context(config: dict[str, Any]) -> None:
        del config[P + "cluster"]["renderYamlTo"]
        del config[P + "operators"]

    result = run_program(write_stack(tmp_path, mutated("local", use_live_context)))
    assert result.ok, result.problems
    assert sorted(r.name for r in result.by_type(RELEASE)) == sorted(CHART_BY_RELEASE)


def test_rendering_yaml_requires_operators_install_false(tmp_path: Path) -> None:
    def install(config: dict[str, Any]) -> None:
        config[P + "operators"] = {"install": True}

    assert_rejected(tmp_path, mutated("local", install), "operators.install")


def test_operators_keys_are_checked(tmp_path: Path) -> None:
    def misspell(config: dict[str, Any]) -> None:
        config[P + "operators"] = {"instal": False}

    run = assert_rejected(tmp_path, mutated("dev", misspell), "operators.instal")
    assert 'did you mean "install"' in run.stderr


@pytest.mark.parametrize(
    "namespace", ["gpu-operator", "kueue-system", "kai-scheduler", "kai-resource-reservation"]
)
def test_operator_namespaces_are_not_team_namespaces(tmp_path: Path, namespace: str) -> None:
    def take(config: dict[str, Any]) -> None:
        config[P + "scheduling"]["departments"][0]["teams"][0]["namespace"] = namespace

    path = "scheduling.departments[0].teams[0].namespace"
    assert_rejected(tmp_path, mutated("dev", take), path)


# --------------------------------------------------------------------------------------------
# What `aksray render` shows
# --------------------------------------------------------------------------------------------


def test_render_writes_each_release_as_its_chart_and_values(tmp_path: Path) -> None:
    result = planned("prod")
    write_render(result, tmp_path)
    kube = tmp_path / "kubernetes"
    kueue = yaml.safe_load((kube / "helmrelease-kueue-system-kueue.yaml").read_text())
    assert kueue["release"] == "kueue"
    assert kueue["chart"] == "kueue"
    assert kueue["repository"] == "oci://registry.k8s.io/kueue/charts"
    assert kueue["version"] == "0.19.2"
    assert kueue["values"] == values(result, "aksray-operators-kueue")
    gpu = yaml.safe_load((kube / "helmrelease-gpu-operator-gpu-operator.yaml").read_text())
    assert (gpu["chart"], gpu["repository"], gpu["version"]) == (
        "gpu-operator",
        "https://helm.ngc.nvidia.com/nvidia",
        "v26.7.0",
    )
    assert (kube / "namespace-gpu-operator.yaml").exists()


# --------------------------------------------------------------------------------------------
# Which release installs which CRD
# --------------------------------------------------------------------------------------------


@pytest.mark.reference
@pytest.mark.parametrize(
    ("folder", "release_name"),
    [("kueue", "kueue"), ("kai", "kai-scheduler"), ("kuberay", "kuberay-operator")],
)
def test_every_upstream_crd_maps_to_the_release_that_installs_it(
    folder: str, release_name: str
) -> None:
    crds = sorted(reference_crds(folder).glob("*.yaml"))
    assert crds
    for path in crds:
        # The CRD's `spec.group` (read as text: some of these files are megabytes of schema).
        group = re.search(r"^  group: (\S+)$", path.read_text(), re.MULTILINE)
        assert group, path.name
        chart = chart_for_api_version(f"{group.group(1)}/v1")
        assert chart is not None and chart.release == release_name, path.name


def test_the_api_versions_we_write_belong_to_our_releases() -> None:
    assert chart_for_api_version(KUEUE_API_VERSION) is KUEUE
    assert chart_for_api_version(KAI_API_VERSION) is KAI_SCHEDULER
    assert chart_for_api_version(RAY_API_VERSION) is KUBERAY_OPERATOR
    assert chart_for_api_version("v1") is None
    assert chart_for_api_version("scheduling.k8s.io/v1") is None
