"""How the change model knows a resource across two runs: the engine's URN (every parent's type in
the chain) and the program's aliases."""

from __future__ import annotations

from dataclasses import replace

from aksray.offline.recorded import AliasSpec
from aksray.plan.change.compute import change_plan, dependency_order
from aksray.plan.change.identity import engine_urns
from tests.support.harness import one, planned

NAMESPACE = "kubernetes:core/v1:Namespace"


def test_the_engines_urn_carries_every_parents_type() -> None:
    result = planned("dev")
    namespace = one(result, NAMESPACE, "aksray-teams-team-a")
    assert namespace.urn == (  # the SDK's mock writes the nearest parent's type only
        "urn:pulumi:dev::aks-ray-platform::aksray:platform:TeamNamespaces$"
        "kubernetes:core/v1:Namespace::aksray-teams-team-a"
    )
    assert engine_urns(result.resources)[namespace.urn] == (
        "urn:pulumi:dev::aks-ray-platform::aksray:platform:Platform$"
        "aksray:platform:TeamNamespaces$kubernetes:core/v1:Namespace::aksray-teams-team-a"
    )


def test_a_resource_found_by_its_alias_is_the_same_resource() -> None:
    """A type changed with an alias to the old type is an update, not a create and a delete."""
    old = planned("dev")
    namespace = one(old, NAMESPACE, "aksray-teams-team-a")
    renamed_type = "kubernetes:core/v1:NamespaceNext"
    moved = replace(
        namespace,
        urn=namespace.urn.replace(NAMESPACE, renamed_type),
        type=renamed_type,
        inputs={**namespace.inputs, "metadata": {"name": "team-a", "labels": {"x": "y"}}},
        aliases=(AliasSpec(name=None, type=NAMESPACE, parent=None, no_parent=False),),
    )
    new = replace(old, resources=[moved if r is namespace else r for r in old.resources])
    plan = change_plan(old, new, old_label="a", new_label="b")
    assert [(c.action, c.type) for c in plan.changes] == [("update", renamed_type)]


def test_without_the_alias_it_is_a_create_and_a_delete() -> None:
    old = planned("dev")
    namespace = one(old, NAMESPACE, "aksray-teams-team-a")
    other = "kubernetes:core/v1:NamespaceNext"
    moved = replace(namespace, urn=namespace.urn.replace(NAMESPACE, other), type=other)
    new = replace(old, resources=[moved if r is namespace else r for r in old.resources])
    plan = change_plan(old, new, old_label="a", new_label="b")
    assert sorted(c.action for c in plan.changes) == ["create", "delete"]


def test_resources_are_classified_after_what_they_depend_on() -> None:
    order = [r.urn for r in dependency_order(planned("prod").resources)]
    for resource in planned("prod").resources:
        for before in (resource.parent, resource.provider_urn, *resource.depends_on):
            if before in order:
                assert order.index(before) < order.index(resource.urn)
