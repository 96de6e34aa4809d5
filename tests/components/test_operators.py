"""The operator releases: pinned charts, ordering and waits, render-only and existing clusters."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.render import write_render
from aksray.offline.runner import run_program
from catalog.versions import (
    KAI_API_VERSION,
    KAI_SCHEDULER,
    KUBERAY_OPERATOR,
    KUEUE,
    KUEUE_API_VERSION,
    RAY_API_VERSION,
    chart_for_api_version,
)
from tests.support.harness import (
    P,
    assert_rejected,
    mutated,
    one,
    planned,
    transitive_dependencies,
    write_stack,
)
from tests.support.operators import CHART_BY_RELEASE, NAMESPACE, RELEASE, release, values
from tests.support.reference import chart as reference_chart
from tests.support.reference import crds as reference_crds

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
