"""The deploy critical path: the longest chain of resources `pulumi up` creates one after
another, weighted by the estimated durations."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT, RecordedResource
from aksray.plan.model.graph import (
    ESTIMATED_SECONDS,
    critical_path,
    estimated_seconds,
    longest_chain,
    waits_for,
)
from tests.support.harness import planned

# --------------------------------------------------------------------------------------------
# The deploy critical path
# --------------------------------------------------------------------------------------------


def test_dev_critical_path() -> None:
    result = planned("dev")
    path = critical_path(result)
    assert path.names == [
        "aksray-cluster-rg",
        "aksray-cluster-aks",
        "aksray-cluster-pool-cpu",  # the Kubernetes provider waits for the CPU pool
        "aksray-cluster-k8s",
        "aksray-operators-kuberay-operator-namespace",
        "aksray-operators-kuberay-operator",
        "aksray-operators-kueue",  # Kueue's release waits for KubeRay's CRDs
        "aksray-queues-flavor-cpu",
        "aksray-queues-cq-team-a",
        "aksray-queues-lq-team-a",  # dev's jobs are staged and its endpoint off: no Ray object
    ]
    assert path.estimated_seconds == 5 + 480 + 240 + 1 + 2 + 120 + 120 + 3 * 2
    types = {r.type for r in path.resources}
    assert "azure-native:containerservice:ManagedCluster" in types
    assert "kubernetes:helm.sh/v3:Release" in types
    assert not any(
        t.startswith(("azure-native:storage:", "azure-native:managedidentity:")) for t in types
    )
    assert not any("-storage-" in name for name in path.names)


def test_prod_critical_path_is_the_serial_node_pools() -> None:
    # AKS changes one agent pool at a time: the pools are chained, and three GPU pools take
    # longer than the operators and queues after the CPU pool.
    assert critical_path(planned("prod")).names == [
        "aksray-cluster-rg",
        "aksray-cluster-aks",
        "aksray-cluster-pool-cpu",
        "aksray-cluster-pool-a100",
        "aksray-cluster-pool-h100",
        "aksray-cluster-pool-a100spot",
    ]


def _resource(name: str, *, depends_on: tuple[str, ...] = (), **fields: Any) -> RecordedResource:
    values: dict[str, Any] = {
        "urn": f"urn:{name}",
        "type": "kubernetes:core/v1:ConfigMap",
        "name": name,
        "custom": True,
        "parent": None,
        "inputs": {},
        "depends_on": depends_on,
        "property_dependencies": {},
        "provider": None,
        "protect": False,
        "retain_on_delete": False,
        "delete_before_replace": False,
        "ignore_changes": (),
        "replace_on_changes": (),
        "remote": False,
    }
    values.update(fields)
    return RecordedResource(**values)


def test_edges_are_dependencies_providers_and_custom_parents_only() -> None:
    resources = [
        _resource("component", custom=False),
        _resource("provider", type="pulumi:providers:kubernetes"),
        _resource("a", provider="urn:provider::id-1", parent="urn:component"),
        _resource("b", depends_on=("urn:a", "urn:component"), parent="urn:a"),
    ]
    assert waits_for(resources) == {
        "urn:provider": (),
        "urn:a": ("urn:provider",),  # its component parent adds nothing
        "urn:b": ("urn:a",),
    }


def test_longest_chain_by_weight_and_cycles() -> None:
    edges = {"a": (), "b": ("a",), "c": ("a",), "d": ("b", "c")}
    assert longest_chain(edges, {"a": 1, "b": 5, "c": 2, "d": 1}) == (["a", "b", "d"], 7)
    assert longest_chain({}, {}) == ([], 0)
    with pytest.raises(ValueError, match="cycle"):
        longest_chain({"a": ("b",), "b": ("a",)}, {"a": 1, "b": 1})


def test_estimates_live_in_one_table() -> None:
    assert estimated_seconds("azure-native:containerservice:ManagedCluster") == 480
    assert estimated_seconds("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue") == 2
    assert estimated_seconds("pulumi:providers:kubernetes") == 1
    assert all(seconds >= 0 for seconds in ESTIMATED_SECONDS.values())


def test_the_docs_end_dev_s_chain_where_the_plan_does() -> None:
    """docs/scheduling.md describes dev's chain; it once said it ran to a workload, while dev
    stages its jobs and the printed chain ends at the team's LocalQueue."""
    text = (PROJECT_ROOT / "docs" / "scheduling.md").read_text()
    paragraph = next(p for p in text.split("\n\n") if p.startswith("In `dev` the chain runs"))
    last = critical_path(planned("dev")).resources[-1]
    kind = last.type.rpartition(":")[2]
    assert kind == "LocalQueue"
    assert f"to team-a's {kind}:" in " ".join(paragraph.split())
    ran = critical_path(planned("dev+run")).resources[-1]
    assert ran.type.startswith("kubernetes:ray.io/"), "a submitted job ends the chain"
