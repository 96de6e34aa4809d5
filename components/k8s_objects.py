"""Register a manifest dict built in manifests/ as a Kubernetes resource.

Every object goes through one generic resource with the type token pulumi-kubernetes' own class
for that kind registers (`kubernetes:core/v1:Namespace`, `kubernetes:<group>/<version>:<Kind>`):
the provider keys its readiness and diff logic on that token, so the engine treats the object
exactly as it treats the typed class. What the typed classes add on the program's side is kept
here: Secret payloads are secret outputs, and a kind's aliases from earlier API versions stay.
The manifest is sent exactly as built, in the Kubernetes wire format (camelCase). Importing the
typed classes instead would load pulumi-kubernetes' generated core/v1 module, the largest part
of the plan's start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import version as package_version
from typing import Any, Final

import pulumi

# The plugin version pulumi-kubernetes' own classes ask for.
PROVIDER_VERSION: Final = package_version("pulumi-kubernetes")
# Fields pulumi-kubernetes marks as secret outputs, by kind (its typed Secret class).
SECRET_FIELDS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("v1", "Secret"): ("data", "stringData"),
}
# Type tokens of earlier API versions pulumi-kubernetes aliases a kind to (its typed classes).
ALIASED_TYPES: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("scheduling.k8s.io/v1", "PriorityClass"): (
        "kubernetes:scheduling.k8s.io/v1alpha1:PriorityClass",
        "kubernetes:scheduling.k8s.io/v1beta1:PriorityClass",
    ),
}


def type_token(api_version: str, kind: str) -> str:
    """The type token of a kind: the core group is spelled `core`."""
    return f"kubernetes:{'core/v1' if api_version == 'v1' else api_version}:{kind}"


class KubeObject(pulumi.CustomResource):
    """One Kubernetes object, sent exactly as built."""

    def __init__(self, name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions):
        key = (str(manifest["apiVersion"]), str(manifest["kind"]))
        props = dict(manifest)
        secret_fields = [f for f in SECRET_FIELDS.get(key, ()) if f in props]
        for secret_field in secret_fields:
            props[secret_field] = pulumi.Output.secret(props[secret_field])
        own = pulumi.ResourceOptions(
            version=PROVIDER_VERSION,
            additional_secret_outputs=list(SECRET_FIELDS.get(key, ())) or None,
            aliases=[pulumi.Alias(type_=t) for t in ALIASED_TYPES.get(key, ())] or None,
        )
        super().__init__(type_token(*key), name, props, pulumi.ResourceOptions.merge(opts, own))


def create_object(
    name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> pulumi.CustomResource:
    return KubeObject(name, manifest, opts)
