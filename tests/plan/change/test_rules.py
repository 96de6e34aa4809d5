"""Each provider's rule applied to one resource: what replaces it, what the API refuses."""

from __future__ import annotations

import json
from typing import Any

from aksray.offline.recorded import RecordedResource
from aksray.plan.change.classify import Context, classify
from aksray.plan.change.model import ResourceChange

DASHBOARD = "grafana:oss/dashboard:Dashboard"


def _resource(type_: str, inputs: dict[str, Any], **options: Any) -> RecordedResource:
    values: dict[str, Any] = {
        "urn": f"urn:pulumi:s::p::{type_}::r", "type": type_, "name": "r", "custom": True,
        "parent": None, "inputs": inputs, "depends_on": (), "property_dependencies": {},
        "provider": None, "protect": False, "retain_on_delete": False,
        "delete_before_replace": False, "ignore_changes": (), "replace_on_changes": (),
        "remote": False,
    }  # fmt: skip
    return RecordedResource(**(values | options))


def _step(
    type_: str,
    old: dict[str, Any],
    new: dict[str, Any],
    provider: RecordedResource | None = None,
    **options: Any,
) -> ResourceChange:
    extra = {"provider": f"{provider.urn}::id"} if provider else {}
    after = _resource(type_, new, **options, **extra)
    providers = {provider.urn: provider} if provider else {}
    change = classify("u", _resource(type_, old), after, Context(set(), providers))
    assert change is not None
    return change


def test_a_dashboard_is_replaced_only_when_its_uid_changes() -> None:
    def board(uid: str, title: str) -> dict[str, Any]:
        return {"configJson": json.dumps({"uid": uid, "title": title})}

    assert _step(DASHBOARD, board("a", "x"), board("a", "y")).action == "update"
    moved = _step(DASHBOARD, board("a", "x"), board("b", "x"))
    assert [(r.path, r.rule) for r in moved.replace_reasons] == [("configJson.uid", "ForceNew")]


def test_any_change_to_the_random_suffix_replaces_it() -> None:
    change = _step("random:index/randomString:RandomString", {"length": 8}, {"length": 10})
    assert (change.action, change.delete_before_replace) == ("replace", False)


def _config_map(data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": data}}


def test_config_map_data_replaces_unless_the_provider_makes_it_mutable() -> None:
    replaced = _step("kubernetes:core/v1:ConfigMap", _config_map("a"), _config_map("b"))
    assert (replaced.action, replaced.delete_before_replace) == ("replace", True)
    provider = _resource("pulumi:providers:kubernetes", {"enableConfigMapMutable": "true"})
    mutable = _step("kubernetes:core/v1:ConfigMap", _config_map("a"), _config_map("b"), provider)
    assert mutable.action == "update"


def _flavor(labels: dict[str, str], topology: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": labels}
    if topology:
        spec["topologyName"] = topology
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "spec": spec}


def test_a_flavors_node_labels_are_refused_once_it_names_a_topology() -> None:
    flavor = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
    free = _step(flavor, _flavor({"a": "1"}, None), _flavor({"a": "2"}, None))
    assert (free.action, free.refused) == ("update", ())
    bound = _step(flavor, _flavor({"a": "1"}, "t"), _flavor({"a": "2"}, "t"))
    assert [(r.path, r.rule) for r in bound.refused] == [
        ("spec.nodeLabels.a", "nodeLabels are immutable when topologyName is set")
    ]


def test_a_jobs_queue_name_is_refused_only_while_it_runs() -> None:
    def job(queue: str) -> dict[str, Any]:
        labels = {"kueue.x-k8s.io/queue-name": queue}
        return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"labels": labels}}

    change = _step("kubernetes:ray.io/v1:RayJob", job("a"), job("b"))
    assert change.refused == ()
    assert [r.path for r in change.refused_while_running] == [
        'metadata.labels["kueue.x-k8s.io/queue-name"]'
    ]


def test_the_programs_replace_on_changes_and_delete_first_win() -> None:
    change = _step(
        "kubernetes:ray.io/v1:RayService",
        {"metadata": {"name": "s"}, "spec": {"rayClusterConfig": {"x": 1}}},
        {"metadata": {"name": "s"}, "spec": {"rayClusterConfig": {"x": 2}}},
        replace_on_changes=("spec.rayClusterConfig",),
        delete_before_replace=False,
        delete_before_replace_defined=True,
    )
    assert [r.rule for r in change.replace_reasons] == ["replaceOnChanges spec.rayClusterConfig"]
    # A named object keeping its name: the provider would delete it first; the program says not.
    assert not change.delete_before_replace
