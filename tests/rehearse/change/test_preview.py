"""The engine's preview read step by step, and compared with the change plan."""

from __future__ import annotations

import json

from aksray.rehearse.change.preview import differences, parse_preview, resource_key

STACK = "urn:pulumi:rehearse-dev-change::aks-ray-platform::"
QUEUES = "aksray:platform:Platform$aksray:platform:SchedulingQueues"
CQ = QUEUES + "$kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


def step(op: str, key: str, *, custom: bool = True) -> dict[str, object]:
    return {
        "op": op,
        "urn": STACK + key,
        "newState": {"custom": custom, "type": key.split("::", maxsplit=1)[0]},
    }


def test_the_urn_loses_its_stack_and_project() -> None:
    assert resource_key(f"{STACK}{CQ}::aksray-queues-cq-team-a") == f"{CQ}::aksray-queues-cq-team-a"


def test_a_replacement_counts_once_whatever_steps_show_it() -> None:
    key = f"{CQ}::aksray-queues-cq-team-a"
    document = {
        "steps": [
            step("create-replacement", key),
            step("replace", key),
            step("delete-replaced", key),
            step("same", f"{CQ}::aksray-queues-cq-team-b"),
            step("create", f"{QUEUES}::x", custom=False),  # a component: the plan models it apart
            {"op": "same", "urn": STACK + "pulumi:pulumi:Stack::aks-ray-platform-x"},
            step("update", "pulumi:providers:kubernetes::k8s"),
        ]
    }
    assert parse_preview(json.dumps(document)) == {
        key: "replace",
        f"{CQ}::aksray-queues-cq-team-b": "same",
    }


def test_differences_name_each_resource_the_two_disagree_on() -> None:
    predicted = {"a::x": "update", "a::y": "delete", "a::z": "create"}
    previewed = {"a::x": "update", "a::y": "same", "a::w": "replace", "a::v": "same"}
    assert differences(predicted, previewed) == [
        "a::w: the plan says same, the engine's preview replace",
        "a::y: the plan says delete, the engine's preview same",
        "a::z: the plan says create, the engine's preview same",
    ]
    assert differences({"a::x": "update"}, {"a::x": "update", "a::y": "same"}) == []
