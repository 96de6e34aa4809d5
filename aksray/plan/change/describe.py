"""How a change names the resource it is about, the way a platform engineer looks it up:
`ClusterQueue nlp`, `LocalQueue nlp/nlp`, `AgentPool a100`, `BlobContainer nlp-data`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aksray.plan.change.model import ResourceChange
from catalog.replacement import AZURE_BY_TYPE, HELM_RELEASE

# Ten minutes: pulumi-kubernetes 4.25.0 waits this long for a delete (await.go Deletion), unless
# the object's `pulumi.com/timeoutSeconds` annotation or customTimeouts.delete says otherwise.
K8S_DELETE_WAIT_SECONDS: Final = 600
TIMEOUT_ANNOTATION: Final = "pulumi.com/timeoutSeconds"


def inputs_of(change: ResourceChange) -> Mapping[str, Any]:
    """The inputs that describe the resource: the new ones, or the old ones of a delete."""
    return change.inputs if change.action != "delete" else change.old_inputs


def kind_of(change: ResourceChange) -> str:
    return change.type.rsplit(":", 1)[-1]


def metadata(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    value = inputs.get("metadata")
    return value if isinstance(value, Mapping) else {}


def object_name(inputs: Mapping[str, Any]) -> str:
    meta = metadata(inputs)
    name = str(meta.get("name", "?"))
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def label(change: ResourceChange) -> str:
    """`Kind name` for a person: the Kubernetes name, the Azure name, the release name."""
    inputs = inputs_of(change)
    kind = kind_of(change)
    if change.type == HELM_RELEASE:
        return f"Helm release {inputs.get('name', change.name)}"
    if change.type.startswith("kubernetes:"):
        return f"{kind} {object_name(inputs)}"
    row = AZURE_BY_TYPE.get(change.type)
    if row is not None and inputs.get(row.name_input):
        return f"{kind} {inputs[row.name_input]}"
    return f"{kind} {change.name}"


def delete_wait_seconds(change: ResourceChange) -> int:
    """How long `pulumi up` waits for a Kubernetes object to go before it fails."""
    annotations = metadata(change.old_inputs).get("annotations")
    if isinstance(annotations, Mapping) and str(annotations.get(TIMEOUT_ANNOTATION, "")).isdigit():
        return int(annotations[TIMEOUT_ANNOTATION])
    return K8S_DELETE_WAIT_SECONDS


def goes(change: ResourceChange) -> bool:
    """Whether the live resource is deleted: a delete or a replacement, unless it is retained
    or protect stops `pulumi up` first."""
    return change.action in ("delete", "replace") and not (
        change.retain_on_delete or change.protect
    )
