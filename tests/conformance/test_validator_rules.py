"""The validator's CEL rules: each rule of the Kueue kinds we create rejects its broken object."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.crd.conformance import reference_rules, validate_object, validate_with
from tests.support.crd.objects import (
    Manifest,
    cluster_queue,
    cohort,
    local_queue,
    resource_flavor,
    synthetic_crd,
    synthetic_object,
)
from tests.support.reference import REFERENCE_FOUND

BASES: dict[str, Callable[[str], Manifest]] = {
    "ResourceFlavor": resource_flavor,
    "ClusterQueue": cluster_queue,
    "Cohort": cohort,
    "LocalQueue": local_queue,
}


@dataclass(frozen=True)
class Broken:
    """An object (and, for a transition rule, the object it replaces) that breaks one rule."""

    manifest: Manifest
    old: Manifest | None = None


def _toleration(**fields: Any) -> Manifest:
    return dict(fields)


def _with(base: Manifest, mutate: Callable[[dict[str, Any]], None]) -> Manifest:
    manifest = copy.deepcopy(base)
    mutate(manifest["spec"])
    return manifest


def _rf_with_tolerations(version: str, *tolerations: Manifest) -> Broken:
    return Broken(
        _with(resource_flavor(version), lambda s: s.update(tolerations=list(tolerations)))
    )


def _rf_topology_update(version: str, change: Callable[[dict[str, Any]], None]) -> Broken:
    old = _with(resource_flavor(version), lambda s: s.update(topologyName="datacenter"))
    return Broken(_with(old, change), old=old)


def _drop_cohort(spec: dict[str, Any]) -> None:
    spec.pop("cohortName", None)
    spec.pop("cohort", None)


def _drop_a_resource(spec: dict[str, Any]) -> None:
    spec["resourceGroups"][0]["flavors"][0]["resources"].pop()


BROKEN: dict[tuple[str, str], Callable[[str], Broken]] = {
    # ResourceFlavor (spec)
    (
        "ResourceFlavor",
        "!has(self.topologyName) || self.nodeLabels.size() >= 1",
    ): lambda v: Broken(
        _with(resource_flavor(v), lambda s: s.update(topologyName="datacenter", nodeLabels={}))
    ),
    (
        "ResourceFlavor",
        "!has(oldSelf.topologyName) || (has(self.nodeLabels) == has(oldSelf.nodeLabels) && "
        "(!has(self.nodeLabels) || self.nodeLabels == oldSelf.nodeLabels))",
    ): lambda v: _rf_topology_update(
        v, lambda s: s.update(nodeLabels={"kubernetes.azure.com/agentpool": "h100"})
    ),
    (
        "ResourceFlavor",
        "!has(oldSelf.topologyName) || (has(self.tolerations) == has(oldSelf.tolerations) && "
        "(!has(self.tolerations) || self.tolerations == oldSelf.tolerations))",
    ): lambda v: _rf_topology_update(v, lambda s: s.pop("tolerations")),
    (
        "ResourceFlavor",
        "!has(oldSelf.topologyName) || (has(self.topologyName) && "
        "self.topologyName == oldSelf.topologyName)",
    ): lambda v: _rf_topology_update(v, lambda s: s.update(topologyName="rack")),
    (
        "ResourceFlavor",
        "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",
    ): lambda v: Broken(
        _with(
            resource_flavor(v),
            lambda s: s.update(nodeTaints=[{"key": "k", "value": "v", "effect": "Sometimes"}]),
        )
    ),
    (
        "ResourceFlavor",
        "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)",
    ): lambda v: _rf_with_tolerations(v, _toleration(operator="Equal", effect="NoSchedule")),
    (
        "ResourceFlavor",
        "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)",
    ): lambda v: _rf_with_tolerations(
        v, _toleration(key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=30)
    ),
    (
        "ResourceFlavor",
        "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])",
    ): lambda v: _rf_with_tolerations(
        v, _toleration(key="k", operator="In", value="v", effect="NoSchedule")
    ),
    (
        "ResourceFlavor",
        "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : true)",
    ): lambda v: _rf_with_tolerations(
        v, _toleration(key="k", operator="Exists", value="v", effect="NoSchedule")
    ),
    (
        "ResourceFlavor",
        "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', "
        "'NoExecute'])",
    ): lambda v: _rf_with_tolerations(
        v, _toleration(key="k", operator="Equal", value="v", effect="Never")
    ),
    # ClusterQueue
    (
        "ClusterQueue",
        "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
        "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true",
    ): lambda v: Broken(_with(cluster_queue(v), _drop_cohort)),
    (
        "ClusterQueue",
        "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
        "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true",
    ): lambda v: Broken(_with(cluster_queue(v), _drop_cohort)),
    (
        "ClusterQueue",
        "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && "
        "self.whenCanPreempt == 'TryNextFlavor')",
    ): lambda v: Broken(
        # whenCanBorrow is left to its default, MayStopSearch: the rule sees the default.
        _with(
            cluster_queue(v),
            lambda s: s.update(flavorFungibility={"preference": "BorrowingOverPreemption"}),
        )
    ),
    (
        "ClusterQueue",
        "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  "
        "self.borrowWithinCohort.policy != 'Never')",
    ): lambda v: Broken(
        _with(
            cluster_queue(v),
            lambda s: s.update(
                preemption={
                    "reclaimWithinCohort": "Never",
                    "borrowWithinCohort": {"policy": "LowerPriority"},
                }
            ),
        )
    ),
    (
        "ClusterQueue",
        "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
    ): lambda v: Broken(_with(cluster_queue(v), _drop_a_resource)),
    # Cohort
    (
        "Cohort",
        "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
    ): lambda v: Broken(_with(cohort(v), _drop_a_resource)),
    # LocalQueue
    ("LocalQueue", "self == oldSelf"): lambda v: Broken(
        _with(local_queue(v), lambda s: s.update(clusterQueue="team-b")), old=local_queue(v)
    ),
}

RULED_KINDS = tuple(BASES)
# Read at collection: none without the reference data (these tests are then not run).
RULES = [
    rule
    for kind in RULED_KINDS
    for version in ("v1beta1", "v1beta2")
    for rule in (reference_rules(kind, version) if REFERENCE_FOUND else [])
]


@pytest.mark.reference
def test_the_reference_crds_have_91_cel_rules_and_every_one_can_be_evaluated() -> None:
    rules = reference_rules()
    assert len(rules) == 91  # RayCronJob's 8 among them: KubeRay 1.6.2 ships its CRD too
    assert [(r.label, r.problem) for r in rules if r.problem is not None] == []
    # Standard CEL only: no Kubernetes library function appears in the reference rules.
    assert set().union(*(r.functions for r in rules)) == {"has", "all", "exists", "filter", "size"}
    assert sum(r.transition for r in rules) == 27


@pytest.mark.reference
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize("kind", RULED_KINDS)
def test_the_valid_bases_pass(kind: str, version: str) -> None:
    assert validate_object(BASES[kind](version), allow_deprecated=True) == []


@pytest.mark.reference
def test_every_rule_of_the_kueue_kinds_we_create_has_a_broken_object() -> None:
    assert len(RULES) == 32  # ClusterQueue 8, ResourceFlavor 20, Cohort 2, LocalQueue 2
    assert {(r.kind, r.rule) for r in RULES} == set(BROKEN)


@pytest.mark.reference
@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.kind}-{r.version}-{r.path}")
def test_each_rule_rejects_its_broken_object_and_nothing_else_does(rule: Any) -> None:
    broken = BROKEN[(rule.kind, rule.rule)](rule.version)
    errors = validate_object(broken.manifest, old=broken.old, allow_deprecated=True)
    assert errors, rule.label
    assert all(f"(rule: {rule.rule})" in error for error in errors), errors
    assert rule.message in errors[0]


@pytest.mark.reference
def test_transition_rules_run_as_an_update_onto_itself_by_default() -> None:
    # Without `old`, oldSelf = self: an immutability rule passes, it is not dropped.
    manifest = _with(local_queue(), lambda s: s.update(clusterQueue="team-b"))
    assert validate_object(manifest) == []
    crd = synthetic_crd({"x": {"type": "string"}}, rules=[{"rule": "oldSelf.x != self.x"}])
    errors = validate_with(crd, synthetic_object({"x": "a"}))
    assert errors == ["Thing t: spec: failed rule: oldSelf.x != self.x (rule: oldSelf.x != self.x)"]
