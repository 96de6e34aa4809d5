"""What `pulumi up` waits for after a create, read from the resource itself (awaits.py)."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.offline.runner import RecordedResource
from aksray.plan.model.awaits import (
    HELM_TIMEOUT_SECONDS,
    PROVIDER_AWAIT_SECONDS,
    Await,
    awaited,
)
from components.operators import RELEASE_TIMEOUT_SECONDS
from manifests.kai_webhook import AWAIT_SECONDS
from tests.support.harness import planned


def _resource(type_token: str, inputs: dict[str, Any]) -> RecordedResource:
    return RecordedResource(
        urn=f"urn:{type_token}", type=type_token, name="r", custom=True, parent=None,
        inputs=inputs, depends_on=(), property_dependencies={}, provider=None, protect=False,
        retain_on_delete=False, delete_before_replace=False, ignore_changes=(),
        replace_on_changes=(), remote=False,
    )  # fmt: skip


def _annotated(type_token: str, **annotations: str) -> RecordedResource:
    return _resource(type_token, {"metadata": {"annotations": annotations}})


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (_resource("kubernetes:helm.sh/v3:Release", {"timeout": 600}),
         Await(600, "until Helm's wait for its workloads ends", workload=False)),
        (_resource("kubernetes:helm.sh/v3:Release", {}),
         Await(HELM_TIMEOUT_SECONDS, "until Helm's wait for its workloads ends", workload=False)),
        (_resource("kubernetes:helm.sh/v3:Release", {"skipAwait": True}), None),
        (_annotated("kubernetes:batch/v1:Job"),
         Await(PROVIDER_AWAIT_SECONDS, "until the Job completes", workload=False)),
        (_annotated("kubernetes:batch/v1:Job", **{"pulumi.com/skipAwait": "true"}), None),
        (_annotated("kubernetes:ray.io/v1:RayJob", **{"pulumi.com/waitFor": "condition=Ready",
                                                      "pulumi.com/timeoutSeconds": "90"}),
         Await(90, "until condition Ready", workload=True)),
        (_annotated("kubernetes:ray.io/v1:RayJob"), None),  # one API call, nothing awaited
        (_annotated("kubernetes:core/v1:ConfigMap"), None),
        (_resource("azure-native:containerservice:ManagedCluster", {}), None),
    ],
)  # fmt: skip
def test_what_is_awaited_and_for_how_long(
    resource: RecordedResource, expected: Await | None
) -> None:
    assert awaited(resource) == expected


def test_the_stacks_awaits_are_the_timeouts_their_builders_set() -> None:
    found = {r.name: awaited(r) for r in planned("prod").resources if awaited(r) is not None}
    assert {name: wait.at_most for name, wait in found.items() if wait} == {
        "aksray-operators-gpu-operator": RELEASE_TIMEOUT_SECONDS,
        "aksray-operators-kuberay-operator": RELEASE_TIMEOUT_SECONDS,
        "aksray-operators-kueue": RELEASE_TIMEOUT_SECONDS,
        "aksray-operators-kai-scheduler": RELEASE_TIMEOUT_SECONDS,
        "aksray-operators-kai-queue-webhook": AWAIT_SECONDS,  # the webhook's wait Job
        "aksray-workloads-model-stage": 3600,  # the copy prod starts, before the endpoint
    }
    assert [name for name, wait in found.items() if wait and wait.workload] == [
        "aksray-workloads-model-stage"
    ]
