"""The validator's structural checks on the real CRDs: kinds, versions, metadata, fields, lists."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from tests.support.crd.conformance import is_custom_resource, validate_object
from tests.support.crd.objects import KUEUE, Manifest, cluster_queue, local_queue


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
