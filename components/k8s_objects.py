"""Register a manifest dict built in manifests/ as a Kubernetes resource.

Core kinds get their typed pulumi-kubernetes class (so Pulumi's readiness logic applies), custom
resources go through `apiextensions.CustomResource`. Top-level fields become keyword arguments;
everything below them stays in the Kubernetes wire format (camelCase), exactly as built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from importlib.metadata import version as package_version
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

_TYPED: dict[tuple[str, str], Callable[..., pulumi.CustomResource]] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("scheduling.k8s.io/v1", "PriorityClass"): k8s.scheduling.v1.PriorityClass,
}


class _CustomObject(pulumi.CustomResource):
    """A custom resource with top-level fields besides `spec` (e.g. a WorkloadPriorityClass's
    `value`), which `apiextensions.CustomResource` cannot carry: sent exactly as built."""

    def __init__(self, name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions):
        type_token = f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}"
        # The same provider plugin version pulumi-kubernetes' own classes ask for.
        version = pulumi.ResourceOptions(version=package_version("pulumi-kubernetes"))
        super().__init__(
            type_token, name, dict(manifest), pulumi.ResourceOptions.merge(opts, version)
        )


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def create_object(
    name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> pulumi.CustomResource:
    api_version = str(manifest["apiVersion"])
    kind = str(manifest["kind"])
    fields = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind")}
    typed = _TYPED.get((api_version, kind))
    if typed is not None:
        return typed(name, **{_snake(k): v for k, v in fields.items()}, opts=opts)
    if set(fields) - {"metadata", "spec"}:
        return _CustomObject(name, manifest, opts)
    return k8s.apiextensions.CustomResource(
        name, api_version=api_version, kind=kind, **fields, opts=opts
    )
