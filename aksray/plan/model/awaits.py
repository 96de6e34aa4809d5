"""What `pulumi up` waits for once it has created a resource, and for how long at most.

The Kubernetes provider (pulumi-kubernetes v4.25.0) reports a Kubernetes object created only
once it is ready where it has an await for the kind (a Job until it completes; Deployments,
StatefulSets and DaemonSets until their pods are) or where the object says what to wait for
(`pulumi.com/waitFor`): for at most `pulumi.com/timeoutSeconds`, else 10 minutes
(`provider/pkg/await/await.go`), and then the `pulumi up` fails there. `pulumi.com/skipAwait`
turns the wait off. A Helm release (`helm.sh/v3:Release`) waits, unless `skipAwait`, until
Helm's own wait for the chart's workloads ends, for at most its `timeout` (300 s unless set).

Every other custom resource is created in one API call. The figures here are bounds read from
the resource's own inputs, never estimates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aksray.offline.runner import RecordedResource

PROVIDER_AWAIT_SECONDS: Final = 600  # await.go: `timeout := 10 * time.Minute`
HELM_TIMEOUT_SECONDS: Final = 300  # the Release's `timeout` when left out
HELM_RELEASE: Final = "kubernetes:helm.sh/v3:Release"
# The kinds the provider awaits without being told to, and what it waits for.
AWAITED_KINDS: Final[dict[str, str]] = {
    "kubernetes:batch/v1:Job": "until the Job completes",
    "kubernetes:apps/v1:Deployment": "until its pods are ready",
    "kubernetes:apps/v1:StatefulSet": "until its pods are ready",
    "kubernetes:apps/v1:DaemonSet": "until its pods are ready",
}
WAIT_FOR: Final = "pulumi.com/waitFor"
TIMEOUT: Final = "pulumi.com/timeoutSeconds"
SKIP_AWAIT: Final = "pulumi.com/skipAwait"


@dataclass(frozen=True)
class Await:
    at_most: int  # seconds `pulumi up` waits before it fails the resource
    until: str  # what it waits for
    # The wait is for something the stack's own workload does (`pulumi.com/waitFor`: a run that
    # must succeed), whose length no table can estimate: its bound is its only figure.
    workload: bool


def _annotations(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = inputs.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def _seconds(value: object, default: int) -> int:
    try:
        return int(str(value))
    except ValueError:
        return default


def _condition(wait_for: object) -> str:
    """`jsonpath={.status.jobStatus}=SUCCEEDED` -> `.status.jobStatus=SUCCEEDED`."""
    text = str(wait_for).removeprefix("jsonpath=").replace("{", "").replace("}", "")
    return text.replace("condition=", "condition ")


def awaited(resource: RecordedResource) -> Await | None:
    """What `pulumi up` waits for after creating `resource`, or None when nothing."""
    inputs = resource.inputs
    if resource.type == HELM_RELEASE:
        if inputs.get("skipAwait"):
            return None
        at_most = _seconds(inputs.get("timeout") or HELM_TIMEOUT_SECONDS, HELM_TIMEOUT_SECONDS)
        return Await(at_most, "until Helm's wait for its workloads ends", workload=False)
    if not resource.type.startswith("kubernetes:"):
        return None
    annotations = _annotations(inputs)
    if str(annotations.get(SKIP_AWAIT, "")).lower() == "true":
        return None
    at_most = _seconds(annotations.get(TIMEOUT, PROVIDER_AWAIT_SECONDS), PROVIDER_AWAIT_SECONDS)
    if WAIT_FOR in annotations:
        return Await(at_most, f"until {_condition(annotations[WAIT_FOR])}", workload=True)
    if resource.type in AWAITED_KINDS:
        return Await(at_most, AWAITED_KINDS[resource.type], workload=False)
    return None
