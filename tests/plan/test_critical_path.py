"""The deploy critical path: the longest chain of resources `pulumi up` creates one after
another, weighted by the estimated durations."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT, RecordedResource, RunResult
from aksray.plan.model.graph import (
    ESTIMATED_SECONDS,
    critical_path,
    estimated_seconds,
    longest_chain,
    waits_for,
)
from manifests.staging import STAGE_AWAIT_SECONDS, STAGE_SUCCEEDED
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
    assert path.awaited_at_most_seconds == 0  # dev's jobs are staged: no run is awaited
    # Helm waits for each release's workloads, for at most its timeout.
    assert [(s.resource.name, s.at_most) for s in path.steps if s.at_most] == [
        ("aksray-operators-kuberay-operator", 600),
        ("aksray-operators-kueue", 600),
    ]
    types = {r.type for r in path.resources}
    assert "azure-native:containerservice:ManagedCluster" in types
    assert "kubernetes:helm.sh/v3:Release" in types
    assert not any(
        t.startswith(("azure-native:storage:", "azure-native:managedidentity:")) for t in types
    )
    assert not any("-storage-" in name for name in path.names)


def test_prod_critical_path_runs_through_the_model_copy_it_awaits() -> None:
    """prod starts model-stage and creates the endpoint only once the copy has succeeded:
    `pulumi up` waits for that run (pulumi.com/waitFor) up to an hour, which counts at that
    bound; with the copy quick, the serial node pools are the longest chain (AKS changes one
    agent pool at a time)."""
    path = critical_path(planned("prod"))
    assert path.names[-2:] == ["aksray-workloads-model-stage", "aksray-workloads-llm-serve"]
    copy = path.steps[-2]
    assert (copy.bound, copy.seconds, copy.at_most) == (True, STAGE_AWAIT_SECONDS, 3600)
    assert copy.until == f"until .status.jobStatus={STAGE_SUCCEEDED}"
    assert path.awaited_at_most_seconds == 3600
    assert path.estimated_seconds == 5 + 480 + 240 + 1 + 2 + 120 + 120 + 2 * 3 + 2
    pools = 5 + 480 + 240 * 4  # the resource group, the cluster, the CPU and three GPU pools
    assert path.runs_quick_seconds == pools


def test_an_awaited_run_is_a_bound_and_an_awaited_create_keeps_its_estimate() -> None:
    run = _resource(
        "copy",
        type="kubernetes:ray.io/v1:RayJob",
        inputs={"metadata": {"annotations": {"pulumi.com/waitFor": "jsonpath={.x}=Y"}}},
    )
    job = _resource(
        "webhook",
        type="kubernetes:batch/v1:Job",
        inputs={"metadata": {"annotations": {"pulumi.com/timeoutSeconds": "660"}}},
        depends_on=("urn:copy",),
    )
    first = _resource("first", depends_on=("urn:webhook",))
    path = critical_path(_result([run, job, first]))
    assert [(s.seconds, s.bound, s.at_most) for s in path.steps] == [
        (600, True, 600),  # waitFor without a timeout: the provider's 10 minutes
        (ESTIMATED_SECONDS["kubernetes:batch/v1:Job"], False, 660),
        (2, False, None),
    ]
    assert (path.estimated_seconds, path.awaited_at_most_seconds) == (32, 600)
    assert path.runs_quick_seconds == 32


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


def _result(resources: list[RecordedResource]) -> RunResult:
    return RunResult("test", PROJECT_ROOT / "Pulumi.test.yaml", resources)


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


def test_the_docs_figures_for_prod_s_chain_are_the_plan_s() -> None:
    """docs/scheduling.md gives prod's chain in minutes: the estimates, the awaited copy's
    bound and the chain were the copy quick, each rounded from what the plan computes."""
    text = " ".join((PROJECT_ROOT / "docs" / "scheduling.md").read_text().split())
    path = critical_path(planned("prod"))
    assert (
        f"about {round(path.estimated_seconds / 60)} minutes of estimates plus at most "
        f"{path.awaited_at_most_seconds // 60} minutes awaited"
    ) in text
    assert f"(about {round(path.runs_quick_seconds / 60)} minutes with the cluster)" in text
    for kind, said in [
        ("azure-native:containerservice:ManagedCluster", "AKS cluster 8 min"),
        ("azure-native:containerservice:AgentPool", "agent pool 4 min"),
        ("kubernetes:helm.sh/v3:Release", "Helm release 2 min"),
        ("azure-native:storage:StorageAccount", "storage account 30 s"),
        ("kubernetes:batch/v1:Job", "queue webhook 30 s"),
    ]:
        number = int(said.split()[-2])
        assert estimated_seconds(kind) == number * (60 if said.endswith("min") else 1), said
        assert said in text
