"""What a change does to a running platform: the lines `aksray plan --since` prints, errors where
`pulumi up` would fail or stop halfway, warnings for what it kills, deletes or cuts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from aksray.offline.runner import RunResult
from aksray.plan.change.compute import change_plan
from aksray.plan.change.model import ChangePlan, Impact
from tests.support.change import change_of, only, teams
from tests.support.harness import P, planned


def _kinds(plan: ChangePlan) -> list[tuple[str, str]]:
    return [(i.severity, i.kind) for i in plan.impacts]


def _remove_second_team(config: dict[str, Any]) -> None:
    del teams(config)[1]
    config[P + "workloads"]["aurora-finetune"]["team"] = "nlp"


def test_removing_a_team_stops_at_its_protected_container(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "prod", _remove_second_team)
    assert plan.fails_halfway
    (error,) = plan.errors()
    container = only(plan, "aksray-storage-vision-data")
    assert (error.kind, error.urn) == ("protected", container.urn)
    assert error.message == (
        "BlobContainer vision-data: `pulumi up` applies every other change, then stops: it is "
        "protected and the new stack removes it; to remove it, copy its data, then `pulumi "
        f"state unprotect '{container.urn}'` before this `pulumi up` (or set storage.protect to "
        "false, which unprotects all of it, in an earlier one)"
    )
    warned = {i.kind for i in plan.warnings()}
    assert {"work-killed", "finalizer-wait", "access-lost"} <= warned
    queue = next(i for i in plan.warnings() if i.kind == "finalizer-wait")
    assert queue.message.startswith(
        "ClusterQueue vision: is deleted, and Kueue keeps it (kueue.x-k8s.io/resource-in-use) "
        "while any workload is admitted to it; `pulumi up` waits 10 minutes for it, then fails"
    )


def _add_team(config: dict[str, Any]) -> None:
    teams(config).append({"name": "team-b", "quota": {"cpu": {"cpu": 1, "memory": "4Gi"}}})


def test_removing_an_unprotected_team_deletes_its_data_for_the_soft_delete_days(
    tmp_path: Path,
) -> None:
    """dev keeps no protect: removing team-b (added before) deletes its container, which
    container soft delete (7 days on dev) can still bring back."""
    plan = change_of(tmp_path, "dev", lambda c: None, old=_add_team)
    assert not plan.fails_halfway
    data = [i for i in plan.impacts if i.kind == "data-deleted"]
    assert [i.message for i in data] == [
        "BlobContainer team-b-data: deleted; every blob in it is deleted; container soft delete "
        "keeps it 7 days (restore it with `az storage container restore`)"
    ]


def test_adding_a_team_only_creates(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "dev", _add_team)
    assert plan.counts()["replace"] == plan.counts()["delete"] == 0
    assert plan.impacts == ()


def test_a_quota_cut_is_one_line_per_flavor_gpus_first(tmp_path: Path) -> None:
    def cut(config: dict[str, Any]) -> None:
        teams(config)[0]["quota"]["a100"]["gpu"] = 4

    plan = change_of(tmp_path, "prod", cut)
    assert [i.message for i in plan.impacts] == [
        "ClusterQueue nlp: nominal quota on flavor a100 cut (12 GPUs -> 4 GPUs, 284.82 CPU -> "
        "94.94 CPU, 2624.9Gi -> 875.0Gi): Kueue evicts nothing for the cut, but what the team "
        "holds above it now counts as borrowed, which other queues of its cohort may reclaim by "
        "preemption, and its new work waits until it holds less; to free it at once, stop its "
        "work first"
    ]
    assert not plan.fails_halfway


def test_a_quota_raised_says_nothing(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "prod", lambda c: None, old=_cut_first)
    assert only(plan, "aksray-queues-cq-nlp").action == "update"
    assert plan.impacts == ()


def _cut_first(config: dict[str, Any]) -> None:
    teams(config)[0]["quota"]["a100"]["gpu"] = 4


def _without(result: RunResult, name: str) -> RunResult:
    return replace(result, resources=[r for r in result.resources if r.name != name])


def test_a_flavor_deleted_while_a_kept_queue_uses_it_hangs_pulumi_up() -> None:
    old = planned("dev")
    plan = change_plan(
        old, _without(old, "aksray-queues-flavor-a100"), old_label="a", new_label="b"
    )
    assert _kinds(plan) == [("error", "finalizer-wait")]
    assert plan.impacts[0].message.startswith(
        "ResourceFlavor a100: is deleted, but ClusterQueue team-a of the new stack still uses it"
    )


def test_a_flavor_deleted_with_its_queues_waits_for_them() -> None:
    old = planned("dev")
    new = _without(_without(old, "aksray-queues-flavor-a100"), "aksray-queues-cq-team-a")
    plan = change_plan(old, new, old_label="a", new_label="b")
    assert _kinds(plan) == [("warning", "finalizer-wait"), ("warning", "finalizer-wait")]


def test_the_endpoints_replicas_replace_it_with_downtime(tmp_path: Path) -> None:
    def fewer(config: dict[str, Any]) -> None:
        config[P + "workloads"]["llm-serve"]["maxReplicas"] = 6

    plan = change_of(tmp_path, "prod", fewer)
    service = only(plan, "aksray-workloads-llm-serve")
    assert (service.action, service.delete_before_replace) == ("replace", True)
    assert plan.impacts == (
        Impact(
            "warning",
            "work-killed",
            service.urn,
            "RayService llm-serving/llm-serve: is deleted first, then created again "
            "(spec.rayClusterConfig.workerGroupSpecs[0].maxReplicas 8 -> 6): the endpoint "
            "serves nothing from the deletion until the new RayService's Ray cluster is "
            "admitted and its replicas are ready",
        ),
    )


def test_a_new_location_on_prod_stops_at_the_protected_storage(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "prod", lambda c: c.__setitem__(P + "location", "eastus"))
    stopped = {i.message.split(":")[0] for i in plan.errors()}
    assert {
        "StorageAccount staksrayprodxxxxxxxx",
        "ResourceGroup rg-aksray-prod-data",
        "BlobContainer datasets",
    } <= stopped
    assert all(i.kind == "protected" for i in plan.errors())
    # The cluster's objects go with the cluster: said once, not per object.
    cluster = [i for i in plan.warnings() if i.message.startswith("ManagedCluster")]
    assert len(cluster) == 1
    assert not [i for i in plan.impacts if i.message.startswith(("Namespace", "ClusterQueue"))]
