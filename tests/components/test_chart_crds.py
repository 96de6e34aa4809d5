"""KubeRay's CRDs are stack resources, so an operator upgrade is one `pulumi up`.

Helm installs a chart's `crds/` on the first install only; KubeRay keeps its CRDs nowhere else and
has no hook that upgrades them. The stack renders the release's own chart through the provider's
`kubernetes:helm:template` and registers each CRD ahead of the release, which installs none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import RunResult, run_program
from catalog.versions import (
    CHART_SETS,
    KUBERAY_CRDS,
    KUBERAY_OPERATOR,
    MCR_KUBERAY_OPERATOR,
)
from manifests.stack_crds import chart_crd_spec, chart_template_options
from tests.support.harness import P, mutated, one, planned, write_stack
from tests.support.operators import release
from tests.support.reference import chart as reference_chart

CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
KUBERAY_RELEASE = "aksray-operators-kuberay-operator"


def crd_resources(result: RunResult) -> list[Any]:
    return [r for r in result.resources if r.type == CRD]


def test_every_kuberay_crd_is_a_stack_resource_kept_on_delete_and_applied_with_force() -> None:
    result = planned("dev")
    operators = one(result, "aksray:platform:ClusterOperators", "aksray-operators")
    cluster_provider = one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s")
    found = crd_resources(result)
    assert [r.name for r in found] == [f"{KUBERAY_RELEASE}-crd-{name}" for name in KUBERAY_CRDS]
    for resource, name in zip(found, KUBERAY_CRDS, strict=True):
        assert resource.parent == operators.urn
        assert resource.provider_urn == cluster_provider.urn
        assert resource.retain_on_delete
        assert not resource.delete_before_replace
        assert resource.inputs["metadata"] == {
            "name": name,
            "annotations": {"pulumi.com/patchForce": "true"},
        }
        assert resource.inputs["spec"] == (
            f"<unknown until deploy: the schema of {name} in chart kuberay-operator 1.6.2>"
        )


def test_the_kuberay_release_installs_no_crds_and_waits_for_the_stacks() -> None:
    result = planned("dev")
    kuberay = release(result, KUBERAY_RELEASE)
    assert kuberay.inputs["skipCrds"] is True
    crds = {r.urn for r in crd_resources(result)}
    assert crds <= set(kuberay.depends_on)
    # The other charts keep theirs: upgraded by their hooks (GPU Operator, KAI) or as templates
    # (Kueue), which Helm does.
    for name in ("aksray-operators-kueue", "aksray-operators-gpu-operator"):
        assert release(result, name).inputs["skipCrds"] is False
        assert not crds & set(release(result, name).depends_on)


def test_no_crd_resource_where_the_stack_installs_no_operators() -> None:
    assert crd_resources(planned("local")) == []


def test_the_template_renders_the_releases_own_chart() -> None:
    assert chart_template_options(KUBERAY_OPERATOR) == {
        "chart": "kuberay-operator",
        "version": "1.6.2",
        "namespace": "kuberay-system",
        "release_name": "kuberay-operator",
        "fetch_opts": {"repo": "https://ray-project.github.io/kuberay-helm/"},
    }
    assert chart_template_options(MCR_KUBERAY_OPERATOR) == {
        "chart": "oci://mcr.microsoft.com/aks/ai-runtime/helm/kuberay-operator",
        "version": "1.6.2",
        "namespace": "kuberay-system",
        "release_name": "kuberay-operator",
    }
    # The other charts register none: nothing to render for them.
    assert [c.chart for s in CHART_SETS.values() for c in s.charts if c.stack_crds] == [
        "kuberay-operator",
        "kuberay-operator",
    ]


def test_microsofts_kuberay_chart_gives_the_same_crds(tmp_path: Path) -> None:
    """Switching the chart source changes no CRD offline: both registries publish the chart."""

    def mcr(config: dict[str, Any]) -> None:
        config.setdefault(P + "operators", {})["chartSource"] = "mcr"

    result = run_program(write_stack(tmp_path, mutated("dev", mcr)), stack="dev")
    assert [r.inputs for r in crd_resources(result)] == [
        r.inputs for r in crd_resources(planned("dev"))
    ]
    assert len(crd_resources(result)) == len(KUBERAY_CRDS)


def _crd(name: str) -> dict[str, Any]:
    return {"kind": "CustomResourceDefinition", "metadata": {"name": name}, "spec": {"n": name}}


def test_the_spec_comes_from_the_rendered_chart() -> None:
    rendered = [_crd(name) for name in KUBERAY_CRDS] + [{"kind": "Deployment", "metadata": {}}]
    assert chart_crd_spec(rendered, KUBERAY_OPERATOR, "rayjobs.ray.io") == {"n": "rayjobs.ray.io"}


def test_a_chart_with_other_crds_than_the_catalogs_fails_the_deploy() -> None:
    """A new chart version that adds (or drops) a CRD must not leave it unmanaged silently."""
    rendered = [_crd(name) for name in (*KUBERAY_CRDS, "rayhistories.ray.io")]
    with pytest.raises(ValueError, match="update its `stack_crds`") as error:
        chart_crd_spec(rendered, KUBERAY_OPERATOR, "rayjobs.ray.io")
    assert "rayhistories.ray.io" in str(error.value)
    assert "kuberay-operator 1.6.2 (https://ray-project.github.io/kuberay-helm/)" in str(
        error.value
    )


def test_the_invoke_options_are_sent_as_the_provider_reads_them() -> None:
    """The provider unmarshals `jsonOpts` into HelmChartOpts (snake_case keys, fetch_opts.repo)."""
    text = json.dumps(chart_template_options(KUBERAY_OPERATOR))
    assert set(json.loads(text)) == {"chart", "version", "namespace", "release_name", "fetch_opts"}


@pytest.mark.reference
def test_the_catalog_lists_exactly_the_crds_of_the_pinned_chart() -> None:
    folder = reference_chart("kuberay-operator") / "crds"
    names = sorted(
        yaml.safe_load(path.read_text(encoding="utf-8"))["metadata"]["name"]
        for path in folder.glob("*.yaml")
    )
    assert names == sorted(KUBERAY_CRDS)
    chart = yaml.safe_load((folder.parent / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart["version"] == KUBERAY_OPERATOR.version
