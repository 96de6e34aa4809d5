"""The CRD conformance validator itself: it accepts what the API server accepts and rejects,
for the right reason, what the API server rejects — rule by rule for the Kueue kinds we create."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.crd_conformance import (
    KUBERNETES_FUNCTIONS,
    CrdVersion,
    compile_crd,
    escape_property,
    is_custom_resource,
    parse_quantity,
    reference_rules,
    validate_object,
    validate_with,
)
from tests.support.reference import REFERENCE_FOUND

KUEUE = "kueue.x-k8s.io"
Manifest = dict[str, Any]


def resource_flavor(version: str = "v1beta2") -> Manifest:
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "ResourceFlavor",
        "metadata": {"name": "a100"},
        "spec": {
            "nodeLabels": {"kubernetes.azure.com/agentpool": "a100"},
            "tolerations": [
                {
                    "key": "nvidia.com/gpu",
                    "operator": "Equal",
                    "value": "present",
                    "effect": "NoSchedule",
                }
            ],
        },
    }


def cluster_queue(version: str = "v1beta2") -> Manifest:
    cohort_key = "cohortName" if version == "v1beta2" else "cohort"
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": "team-a"},
        "spec": {
            cohort_key: "research",
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "20"},
                                {"name": "memory", "nominalQuota": "200Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4},
                            ],
                        }
                    ],
                }
            ],
        },
    }


def cohort(version: str = "v1beta2") -> Manifest:
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "Cohort",
        "metadata": {"name": "research"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 0},
                                {"name": "nvidia.com/gpu", "nominalQuota": 0},
                            ],
                        }
                    ],
                }
            ]
        },
    }


def local_queue(version: str = "v1beta2") -> Manifest:
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a", "namespace": "team-a"},
        "spec": {"clusterQueue": "team-a"},
    }


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
    crd = _synthetic({"x": {"type": "string"}}, rules=[{"rule": "oldSelf.x != self.x"}])
    errors = validate_with(crd, _object({"x": "a"}))
    assert errors == ["Thing t: spec: failed rule: oldSelf.x != self.x (rule: oldSelf.x != self.x)"]


# --------------------------------------------------------------------------------------------
# Structural schema semantics, on the real CRDs
# --------------------------------------------------------------------------------------------


@pytest.mark.reference
def test_the_v1beta1_cohort_field_is_unknown_in_v1beta2() -> None:
    manifest = cluster_queue()
    manifest["spec"]["cohort"] = manifest["spec"].pop("cohortName")
    errors = validate_object(manifest)
    assert any(e.startswith("ClusterQueue team-a: spec.cohort: unknown field") for e in errors)


@pytest.mark.reference
def test_deprecated_versions_are_rejected_unless_allowed() -> None:
    errors = validate_object(cluster_queue("v1beta1"))
    assert errors == [
        f"ClusterQueue team-a: apiVersion {KUEUE}/v1beta1 is deprecated; write the storage version"
    ]


@pytest.mark.reference
def test_unknown_kinds_and_versions_are_errors() -> None:
    errors = validate_object({**local_queue(), "kind": "LocalQeue"})
    assert len(errors) == 1
    assert "no CRD in the reference serves LocalQeue kueue.x-k8s.io/v1beta2" in errors[0]
    assert "LocalQueue" in errors[0]  # the hint names the real kinds
    assert validate_object({**local_queue(), "apiVersion": f"{KUEUE}/v1"}) != []
    assert validate_object({"apiVersion": "v1", "kind": "Namespace"}) != []


@pytest.mark.reference
@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda m: m["metadata"].update(uid="x"), "metadata.uid: unknown field"),
        (lambda m: m["metadata"].pop("name"), "metadata: 'name' is a required property"),
        (lambda m: m["metadata"].update(name="Team_A"), "metadata.name: 'Team_A' does not match"),
        (lambda m: m["metadata"].update(labels={"a": 1}), "metadata.labels.a: 1 is not of type"),
        (lambda m: m["metadata"].update(labels={"a": "-x"}), "metadata.labels.a: '-x' does not"),
        (lambda m: m["metadata"].update(labels={"a b": "x"}), "metadata.labels['a b']: not a"),
        (lambda m: m["metadata"].update(annotations={"x": True}), "annotations.x: True is not"),
        (lambda m: m["metadata"].pop("namespace"), "metadata.namespace: LocalQueue is namespaced"),
        (lambda m: m["spec"].update(stopPolicy="Stop"), "spec.stopPolicy: 'Stop' is not one of"),
        (lambda m: m["spec"].update(clusterQueue="Team"), "spec.clusterQueue: 'Team' does not"),
        (lambda m: m["spec"].update(clusterQueue=None), "spec.clusterQueue: null is not allowed"),
        (lambda m: m.update(status={}), "status: is written by the controller"),
        (lambda m: m["spec"].update(fairSharing={"weight": 1.5}), "must be an integer or a str"),
        (lambda m: m["spec"].update(fairSharing={"weight": "x"}), "'x' does not match"),
    ],
)
def test_structural_violations_are_named_by_path(
    mutate: Callable[[Manifest], None], expected: str
) -> None:
    manifest = local_queue()
    mutate(manifest)
    errors = validate_object(manifest)
    assert any(expected in error for error in errors), errors


@pytest.mark.reference
def test_cluster_scoped_kinds_must_not_have_a_namespace() -> None:
    manifest = cluster_queue()
    manifest["metadata"]["namespace"] = "team-a"
    assert validate_object(manifest) == [
        "ClusterQueue team-a/team-a: metadata.namespace: ClusterQueue is cluster-scoped; "
        "remove namespace"
    ]


@pytest.mark.reference
def test_list_map_keys_must_be_unique() -> None:
    manifest = cluster_queue()
    flavors = manifest["spec"]["resourceGroups"][0]["flavors"]
    flavors.append(copy.deepcopy(flavors[0]))
    errors = validate_object(manifest)
    assert errors == [
        "ClusterQueue team-a: spec.resourceGroups[0].flavors[1]: duplicate entry in a "
        "map-type list: name='a100'"
    ]


@pytest.mark.reference
def test_kai_queue_amounts_are_numbers() -> None:
    queue = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {"resources": {"memory": {"quota": "64Gi", "limit": -1, "overQuotaWeight": 1}}},
    }
    assert validate_object(queue) == [
        "Queue team-a: spec.resources.memory.quota: '64Gi' is not of type 'number'"
    ]


def test_is_custom_resource() -> None:
    assert is_custom_resource(local_queue())
    assert is_custom_resource({"apiVersion": "scheduling.run.ai/v2"})
    assert not is_custom_resource({"apiVersion": "v1"})
    assert not is_custom_resource({"apiVersion": "apps/v1"})
    assert not is_custom_resource({"apiVersion": "scheduling.k8s.io/v1"})


# --------------------------------------------------------------------------------------------
# Semantics no reference CRD exercises today, on a synthetic CRD
# --------------------------------------------------------------------------------------------


def _synthetic(
    spec_properties: dict[str, Any],
    *,
    rules: list[dict[str, Any]] | None = None,
    spec_extra: dict[str, Any] | None = None,
    subresources: dict[str, Any] | None = None,
) -> CrdVersion:
    spec_schema: dict[str, Any] = {"type": "object", "properties": spec_properties}
    if rules:
        spec_schema["x-kubernetes-validations"] = rules
    spec_schema.update(spec_extra or {})
    crd = compile_crd(
        {
            "group": "example.com",
            "names": {"kind": "Thing"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": subresources or {},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec_schema,
                                "status": {"type": "object"},
                            },
                        }
                    },
                }
            ],
        },
        "v1",
    )
    assert crd is not None
    return crd


def _object(spec: dict[str, Any]) -> Manifest:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": spec,
    }


def test_embedded_resources_need_apiversion_and_kind_and_plain_metadata() -> None:
    crd = _synthetic(
        {
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        }
    )
    good = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"any": 1}}
    assert validate_with(crd, _object({"template": good})) == []
    errors = validate_with(crd, _object({"template": {"metadata": {"uid": "u"}}}))
    assert "Thing t: spec.template: 'apiVersion' is a required property" in errors
    assert "Thing t: spec.template: 'kind' is a required property" in errors
    assert any(e.startswith("Thing t: spec.template.metadata.uid: unknown field") for e in errors)


def test_preserve_unknown_fields_keeps_unknown_fields() -> None:
    crd = _synthetic({"free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}})
    assert validate_with(crd, _object({"free": {"anything": {"at": "all"}}})) == []
    assert validate_with(crd, _object({"other": 1}))[0].startswith("Thing t: spec.other: unknown")


def test_nullable_formats_and_sets() -> None:
    crd = _synthetic(
        {
            "maybe": {"type": "string", "nullable": True},
            "small": {"type": "integer", "format": "int32"},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        }
    )
    good = {"maybe": None, "small": 2**31 - 1, "when": "2026-01-02T03:04:05Z", "tags": ["a", "b"]}
    assert validate_with(crd, _object(good)) == []
    errors = validate_with(
        crd, _object({"small": 2**31, "when": "2026-13-02T03:04:05Z", "tags": ["a", "a"]})
    )
    assert errors == [
        "Thing t: spec.small: 2147483648 is not a 'int32'",
        "Thing t: spec.when: '2026-13-02T03:04:05Z' is not a 'date-time'",
        "Thing t: spec.tags[1]: duplicate entry 'a' in a set-type list",
    ]


def test_defaults_are_applied_before_rules_run() -> None:
    crd = _synthetic(
        {"mode": {"type": "string", "default": "Auto"}},
        rules=[{"rule": "self.mode == 'Auto'", "message": "mode must be Auto"}],
    )
    assert validate_with(crd, _object({})) == []
    assert validate_with(crd, _object({"mode": "Manual"})) == [
        "Thing t: spec: mode must be Auto (rule: self.mode == 'Auto')"
    ]


def test_escaped_property_names_and_message_expressions() -> None:
    assert escape_property("namespace") == "__namespace__"
    assert escape_property("a-b.c/d__e") == "a__dash__b__dot__c__slash__d__underscores__e"
    assert escape_property("has space") is None
    crd = _synthetic(
        {"namespace": {"type": "string"}, "max-size": {"type": "integer"}},
        rules=[
            {
                "rule": "self.__namespace__ != 'default' && self.max__dash__size < 10",
                "messageExpression": "'bad: ' + self.__namespace__",
            }
        ],
    )
    assert validate_with(crd, _object({"namespace": "ns", "max-size": 3})) == []
    errors = validate_with(crd, _object({"namespace": "default", "max-size": 3}))
    assert errors[0].startswith("Thing t: spec: bad: default (rule:")


def test_the_quantity_library() -> None:
    assert parse_quantity("1.5Gi") == 1.5 * 1024**3
    assert parse_quantity("500m") * 2 == 1
    assert parse_quantity("1e3") == 1000
    assert sorted(KUBERNETES_FUNCTIONS) == sorted(
        [
            "quantity",
            "isQuantity",
            "sign",
            "isInteger",
            "asInteger",
            "asApproximateFloat",
            "add",
            "sub",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
        ]
    )
    rules = [
        "quantity(self.limit).isGreaterThan(quantity(self.request))",
        "quantity(self.request).isLessThan(quantity(self.limit))",
        "quantity(self.limit).compareTo(quantity(self.request)) == 1",
        "quantity(self.limit).sub(quantity(self.request)).sign() == 1",
        "quantity(self.request).add(1).isGreaterThan(quantity('1'))",
        "quantity(self.limit).isInteger() && quantity(self.limit).asInteger() > 1000",
        "quantity(self.request).asApproximateFloat() < 1.0",
        "isQuantity(self.limit) && !isQuantity('ten')",
    ]
    crd = _synthetic(
        {"limit": {"type": "string"}, "request": {"type": "string"}},
        rules=[{"rule": rule} for rule in rules],
    )
    assert validate_with(crd, _object({"limit": "2Ki", "request": "500m"})) == []
    errors = validate_with(crd, _object({"limit": "100m", "request": "500m"}))
    assert [e.split("(rule: ", 1)[1][:-1] for e in errors] == [
        rules[0],
        rules[1],
        rules[2],
        rules[3],
        rules[5],
    ]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("self.x.matchesGlob('*')", "uses CEL functions this validator does not implement"),
        ("url(self.x).getHost() == 'a'", "uses CEL functions this validator does not implement"),
        ("self.x ==", "does not compile"),
        ("self.missing == 'a'", "could not be evaluated"),
        ("self.x", "not a bool"),
    ],
)
def test_a_rule_that_cannot_be_evaluated_fails_and_names_the_rule(rule: str, expected: str) -> None:
    crd = _synthetic({"x": {"type": "string"}}, rules=[{"rule": rule}])
    errors = validate_with(crd, _object({"x": "a"}))
    assert len(errors) == 1
    assert errors[0].startswith("Thing t: spec: ")
    assert expected in errors[0]
    assert repr(rule) in errors[0] or f"(rule: {rule})" in errors[0]


def test_optional_old_self_is_refused_not_skipped() -> None:
    crd = _synthetic(
        {"x": {"type": "string"}},
        rules=[{"rule": "oldSelf.hasValue()", "optionalOldSelf": True}],
    )
    assert "optionalOldSelf" in validate_with(crd, _object({"x": "a"}))[0]


def test_status_is_refused_where_a_status_subresource_exists() -> None:
    crd = _synthetic({}, subresources={"status": {}})
    assert validate_with(crd, {**_object({}), "status": {}}) == [
        "Thing t: status: is written by the controller; the API ignores it here"
    ]
