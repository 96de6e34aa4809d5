"""Write what a run registered: one YAML file per Kubernetes object, and resources.json."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from aksray.offline.runner import RecordedResource, RunResult

_K8S_OBJECT = re.compile(r"^kubernetes:(?P<group>[^:]+):(?P<kind>[A-Za-z]+)$")
_HELM_RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (a config file inside Helm values) as readable `|` blocks."""


def _str_representer(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str_representer)


def is_kubernetes_object(resource: RecordedResource) -> bool:
    return (
        resource.custom
        and _K8S_OBJECT.match(resource.type) is not None
        and resource.type not in _HELM_RELEASE_TYPES
        and "kind" in resource.inputs
    )


def object_file_name(manifest: dict[str, Any]) -> str:
    """`<kind>-<namespace>-<name>.yaml`; cluster-scoped objects have no namespace part."""
    metadata = manifest.get("metadata") or {}
    parts = [str(manifest["kind"]).lower(), metadata.get("namespace"), metadata.get("name")]
    return "-".join(str(p) for p in parts if p) + ".yaml"


def helm_release_file_name(resource: RecordedResource) -> str:
    inputs = resource.inputs
    namespace = inputs.get("namespace")
    name = inputs.get("name") or resource.name
    return "-".join(str(p) for p in ("helmrelease", namespace, name) if p) + ".yaml"


def kubernetes_documents(result: RunResult) -> dict[str, dict[str, Any]]:
    """File name -> document, for every Kubernetes object and Helm release."""
    documents: dict[str, dict[str, Any]] = {}
    for resource in result.resources:
        if is_kubernetes_object(resource):
            documents[object_file_name(resource.inputs)] = resource.inputs
        elif resource.type in _HELM_RELEASE_TYPES:
            documents[helm_release_file_name(resource)] = helm_release_document(resource)
    return documents


def helm_release_document(resource: RecordedResource) -> dict[str, Any]:
    """A release as what Helm is asked for: chart, version, repository, namespace and values.

    An OCI chart is registered as one reference (`oci://host/path/chart`) with no repository
    option; it is shown split the same way as a chart from an https repository.
    """
    inputs = resource.inputs
    chart = inputs.get("chart")
    repository = (inputs.get("repositoryOpts") or {}).get("repo")
    if repository is None and isinstance(chart, str) and chart.startswith("oci://"):
        repository, chart = chart.rsplit("/", 1)
    return {
        "release": inputs.get("name") or resource.name,
        "chart": chart,
        "version": inputs.get("version"),
        "repository": repository,
        "namespace": inputs.get("namespace"),
        "values": inputs.get("values") or {},
    }


def write_render(result: RunResult, out_dir: Path) -> tuple[int, Path]:
    """Write `out_dir/kubernetes/*.yaml` and `out_dir/resources.json`; return the file count."""
    kube_dir = out_dir / "kubernetes"
    kube_dir.mkdir(parents=True, exist_ok=True)
    for stale in kube_dir.glob("*.yaml"):
        stale.unlink()
    documents = kubernetes_documents(result)
    for file_name, document in sorted(documents.items()):
        (kube_dir / file_name).write_text(
            yaml.dump(document, Dumper=_Dumper, sort_keys=True, default_flow_style=False)
        )
    resources_json = out_dir / "resources.json"
    resources_json.write_text(
        json.dumps(
            {
                "stack": result.stack,
                "resources": [r.to_json() for r in result.resources],
                "outputs": result.outputs,
            },
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )
    return len(documents), resources_json
