"""What each MultiKueue worker lets the manager's account do: the policy's CEL, evaluated here
with cel-python on the objects MultiKueue would send (the rehearsal runs it on a real API
server: tests/rehearse/multikueue/test_rehearsal.py)."""

from __future__ import annotations

from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel

from manifests.access.multikueue import (
    QUEUE_POLICY,
    manager_user,
    queue_policy,
    worker_read_rules,
)
from manifests.kueue import QUEUE_NAME_LABEL

QUEUES = {"team-a": "team-a", "vision": "vision-queue"}


def _evaluate(expression: str, activation: dict[str, Any]) -> Any:
    env = celpy.Environment()
    program = env.program(env.compile(expression))
    return program.evaluate({k: json_to_cel(v) for k, v in activation.items()})


def _policy() -> dict[str, Any]:
    policy, binding = queue_policy(["RayJob", "RayService"], QUEUES)
    assert binding["spec"] == {"policyName": QUEUE_POLICY, "validationActions": ["Deny"]}
    spec: dict[str, Any] = policy["spec"]
    return spec


def _allowed(namespace: str, labels: dict[str, str] | None, user: str = "") -> bool:
    """What the API server decides for a Ray object the user creates."""
    spec = _policy()
    request = {"userInfo": {"username": user or manager_user()}}
    [condition] = spec["matchConditions"]
    if not _evaluate(condition["expression"], {"request": request}):
        return True  # the policy does not apply
    variables = {"queues": _evaluate(spec["variables"][0]["expression"], {})}
    meta: dict[str, Any] = {"name": "job", "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    activation = {"object": {"metadata": meta}, "variables": variables, "request": request}
    return all(bool(_evaluate(v["expression"], activation)) for v in spec["validations"])


@pytest.mark.parametrize(
    ("namespace", "labels", "allowed"),
    [
        ("team-a", {QUEUE_NAME_LABEL: "team-a", "kueue.x-k8s.io/multikueue-origin": "m"}, True),
        ("vision", {QUEUE_NAME_LABEL: "vision-queue"}, True),
        ("team-a", None, False),  # no labels at all
        ("team-a", {"app": "x"}, False),  # no queue: it would run outside quota
        ("team-a", {QUEUE_NAME_LABEL: ""}, False),
        ("team-a", {QUEUE_NAME_LABEL: "vision-queue"}, False),  # another team's queue
        ("kube-system", {QUEUE_NAME_LABEL: "team-a"}, False),  # a namespace no team uses
    ],
)
def test_the_manager_creates_ray_objects_only_in_its_teams_queues(
    namespace: str, labels: dict[str, str] | None, allowed: bool
) -> None:
    assert _allowed(namespace, labels) is allowed


def test_nobody_else_is_held_to_it() -> None:
    assert _allowed("team-a", None, user="system:serviceaccount:team-a:ray-workload")


def test_the_message_names_the_queue_expected() -> None:
    spec = _policy()
    activation = {
        "object": {"metadata": {"name": "job", "namespace": "vision"}},
        "variables": {"queues": QUEUES},
    }
    message = _evaluate(spec["validations"][0]["messageExpression"], activation)
    assert message == (
        "the MultiKueue manager may create a Ray object here only in the queue of a team this "
        f"worker serves: label {QUEUE_NAME_LABEL}: vision-queue"
    )


def test_the_policy_covers_every_watched_kind_on_create_and_update() -> None:
    [rule] = _policy()["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["rayjobs", "rayservices"]
    assert rule["operations"] == ["CREATE", "UPDATE"]  # a RayService's Serve config patch too
    assert _policy()["failurePolicy"] == "Fail"
    read = worker_read_rules(["RayService", "RayJob"])
    assert read[1]["resources"] == ["rayjobs", "rayservices"]
