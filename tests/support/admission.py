"""The admission policies evaluated offline: what the API server does with a
ValidatingAdmissionPolicy and its Deny binding, on one request, with cel-python.

Matching (the policy's `resourceRules` and `namespaceSelector` with `Exists` expressions),
`variables` in order, then every validation; an expression that cannot be evaluated counts as
a refusal (the policies' `failurePolicy: Fail`). The expressions are the policies' own text,
compiled as written: a typo or a field read without `has()` fails here before the rig sees it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError

from manifests.access.admission import admission_policies

KIND_RESOURCES = {
    "Pod": ("", "pods"),
    "PodTemplate": ("", "podtemplates"),
    "ReplicationController": ("", "replicationcontrollers"),
    "Deployment": ("apps", "deployments"),
    "ReplicaSet": ("apps", "replicasets"),
    "StatefulSet": ("apps", "statefulsets"),
    "DaemonSet": ("apps", "daemonsets"),
    "Job": ("batch", "jobs"),
    "CronJob": ("batch", "cronjobs"),
    "RayJob": ("ray.io", "rayjobs"),
    "RayService": ("ray.io", "rayservices"),
    "RayCluster": ("ray.io", "rayclusters"),
    "RayCronJob": ("ray.io", "raycronjobs"),
}


@dataclass(frozen=True)
class Request:
    """One admission request as the policies see it."""

    object: Mapping[str, Any]
    user: str
    namespace: Mapping[str, Any]  # the Namespace object
    operation: str = "CREATE"
    old: Mapping[str, Any] | None = None
    sub_resource: str = ""
    groups: tuple[str, ...] = ()


@functools.cache
def _program(expression: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(expression))


def _cel(value: Any) -> Any:
    return json_to_cel(value)


def _evaluate(expression: str, activation: Mapping[str, Any]) -> Any:
    result = _program(expression).evaluate(dict(activation))
    if isinstance(result, CELEvalError):
        raise result
    return result


def _matches(policy: Mapping[str, Any], request: Request) -> bool:
    constraints = policy["spec"]["matchConstraints"]
    labels = request.namespace["metadata"].get("labels") or {}
    for expression in constraints["namespaceSelector"]["matchExpressions"]:
        assert expression["operator"] == "Exists"
        if expression["key"] not in labels:
            return False
    group, resource = KIND_RESOURCES[request.object["kind"]]
    if request.sub_resource:
        resource = f"{resource}/{request.sub_resource}"
    return any(
        group in rule["apiGroups"]
        and resource in rule["resources"]
        and request.operation in rule["operations"]
        for rule in constraints["resourceRules"]
    )


def refusals(request: Request, policies: list[dict[str, Any]] | None = None) -> list[str]:
    """Each message a matching policy refuses `request` with; [] when it is admitted."""
    found: list[str] = []
    for policy in policies or admission_policies():
        if policy["kind"] != "ValidatingAdmissionPolicy" or not _matches(policy, request):
            continue
        activation: dict[str, Any] = {
            "object": _cel(dict(request.object)),
            "oldObject": _cel(dict(request.old) if request.old is not None else None),
            "namespaceObject": _cel(dict(request.namespace)),
            # The API server leaves out what is empty (a request's subresource).
            "request": _cel(
                {
                    "operation": request.operation,
                    **({"subResource": request.sub_resource} if request.sub_resource else {}),
                    "userInfo": {"username": request.user, "groups": list(request.groups)},
                }
            ),
        }
        try:
            variables: dict[str, Any] = {}
            for variable in policy["spec"].get("variables", []):
                activation["variables"] = celtypes.MapType(
                    {celtypes.StringType(k): v for k, v in variables.items()}
                )
                variables[variable["name"]] = _evaluate(variable["expression"], activation)
            activation["variables"] = celtypes.MapType(
                {celtypes.StringType(k): v for k, v in variables.items()}
            )
        except CELEvalError as error:
            found.append(f"{policy['metadata']['name']}: variable failed: {error.args[0]}")
            continue
        for validation in policy["spec"]["validations"]:
            try:
                admitted = bool(_evaluate(validation["expression"], activation))
            except CELEvalError as error:
                found.append(f"could not be evaluated: {error.args[0]}: {validation['expression']}")
                continue
            if not admitted:
                message = validation.get("message", "")
                if "messageExpression" in validation:
                    message = str(_evaluate(validation["messageExpression"], activation))
                found.append(message)
    return found
