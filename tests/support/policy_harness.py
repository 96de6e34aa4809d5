"""Run the policy pack's own validators over resources the offline runner recorded."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from aksray.offline.runner import PROJECT_ROOT, RecordedResource

sys.path.insert(0, str(PROJECT_ROOT / "policy"))
import platform_policies

POLICIES: list[Policy] = platform_policies.POLICIES


@dataclass(frozen=True)
class Violation:
    policy: str
    message: str
    urn: str | None


def _options(resource: RecordedResource) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=resource.protect,
        ignore_changes=list(resource.ignore_changes),
        delete_before_replace=resource.delete_before_replace,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=resource.parent,
    )


def evaluate(resources: list[RecordedResource]) -> list[Violation]:
    """Every violation every policy reports, as `pulumi preview --policy-pack` would see them."""
    violations: list[Violation] = []
    custom = [r for r in resources if r.custom]
    for policy in POLICIES:
        if isinstance(policy, ResourceValidationPolicy):
            for resource in custom:
                args = ResourceValidationArgs(
                    resource.type,
                    resource.inputs,
                    resource.urn,
                    resource.name,
                    _options(resource),
                    None,
                )

                def report(
                    message: str,
                    urn: str | None = None,
                    *,
                    _r: str = resource.urn,
                    _p: str = policy.name,
                ) -> None:
                    violations.append(Violation(_p, message, urn or _r))

                policy.validate(args, report)
        elif isinstance(policy, StackValidationPolicy):
            policy_resources: dict[str, PolicyResource] = {}
            for resource in custom:
                policy_resources[resource.urn] = PolicyResource(
                    resource.type,
                    resource.inputs,
                    resource.urn,
                    resource.name,
                    _options(resource),
                    None,
                    None,
                    [],
                    {},
                )
            for resource in custom:
                target = policy_resources[resource.urn]
                target.dependencies = [
                    policy_resources[u] for u in resource.depends_on if u in policy_resources
                ]
                target.property_dependencies = {
                    key: [policy_resources[u] for u in urns if u in policy_resources]
                    for key, urns in resource.property_dependencies.items()
                }

            def report_stack(
                message: str, urn: str | None = None, *, _p: str = policy.name
            ) -> None:
                violations.append(Violation(_p, message, urn))

            policy.validate(StackValidationArgs(list(policy_resources.values())), report_stack)
    return violations


def mutate(
    resources: list[RecordedResource],
    select: Callable[[RecordedResource], bool],
    change: Callable[[dict[str, Any]], None],
    *,
    drop_property_dependency: str | None = None,
) -> tuple[list[RecordedResource], str]:
    """A copy of `resources` with `change` applied to the inputs of the first selected one
    (and, optionally, one property's dependencies forgotten, as for a literal value)."""
    target = next(r for r in resources if select(r))
    inputs = copy.deepcopy(target.inputs)
    change(inputs)
    dependencies = {
        key: urns
        for key, urns in target.property_dependencies.items()
        if key != drop_property_dependency
    }
    changed = replace(target, inputs=inputs, property_dependencies=dependencies)
    return [changed if r is target else r for r in resources], target.urn
