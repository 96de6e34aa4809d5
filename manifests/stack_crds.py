"""The CRDs a chart keeps in `crds/`, registered by the stack itself: Helm installs `crds/` only
on a release's first install and upgrades nothing there, so an operator upgrade would leave them
at the old version (KubeRay's)."""

from __future__ import annotations

from typing import Any, Final

from catalog.versions import HelmChart

# The CRDs a chart keeps in `crds/` with nothing that upgrades them (catalog/versions.py
# `HelmChart.stack_crds`): the stack registers each as a resource of its own, taken from the very
# chart its release installs, and the release installs none (`skipCrds`).
CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
# Server-side apply with force: the live CRDs of a cluster Helm installed first belong to Helm's
# field manager, and the stack takes them over as they are.
PATCH_FORCE_ANNOTATION: Final = "pulumi.com/patchForce"


def chart_template_options(chart: HelmChart) -> dict[str, Any]:
    """What the Kubernetes provider's `kubernetes:helm:template` renders: the release's chart, at
    its version, from its repository (an OCI reference names it whole)."""
    options: dict[str, Any] = {
        "chart": chart.chart_ref,
        "version": chart.version,
        "namespace": chart.namespace,
        "release_name": chart.release,
    }
    if chart.repository_url:
        options["fetch_opts"] = {"repo": chart.repository_url}
    return options


def chart_crd_spec(rendered: list[dict[str, Any]], chart: HelmChart, name: str) -> Any:
    """The spec of CRD `name` among what the chart rendered; a chart whose CRDs are not the ones
    the catalog lists fails the deploy before any CRD changes, naming both lists."""
    found = {
        str((o.get("metadata") or {}).get("name")): o
        for o in rendered
        if o.get("kind") == "CustomResourceDefinition"
    }
    if sorted(found) != sorted(chart.stack_crds):
        raise ValueError(
            f"chart {chart.chart} {chart.version} ({chart.repository}) has the CRDs "
            f"{sorted(found)}, not the {sorted(chart.stack_crds)} catalog/versions.py lists: "
            "update its `stack_crds`"
        )
    return found[name]["spec"]


def stack_crd_manifest(name: str, spec: Any) -> dict[str, Any]:
    """One chart CRD as the stack applies it (`spec`: the chart's, possibly an Output)."""
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name, "annotations": {PATCH_FORCE_ANNOTATION: "true"}},
        "spec": spec,
    }
