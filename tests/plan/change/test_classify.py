"""Each kind of change to a stack, classified as the providers and the engine decide: what is
created, updated (which inputs), replaced (which input forces it, by which rule) or deleted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from aksray.plan.change.compute import change_plan
from aksray.plan.change.model import PathChange, Reason
from catalog.replacement import AZURE_NATIVE_VERSION, HELM_SOURCE, K8S_SOURCE
from tests.support.change import actions, change_of, gpu_pool, only, teams
from tests.support.harness import P, planned

FORCE_NEW_MAP = (
    f"azure-native {AZURE_NATIVE_VERSION}: the provider's forceNewMap "
    "(provider/pkg/gen/replacement.go)"
)


def test_the_same_stack_changes_nothing() -> None:
    plan = change_plan(planned("prod"), planned("prod"), old_label="a", new_label="b")
    assert plan.changes == ()
    assert plan.unchanged == len(planned("prod").resources)
    assert plan.impacts == ()


def test_a_pools_max_count_is_an_update_of_that_input_alone(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "dev", lambda c: gpu_pool(c).__setitem__("maxCount", 8))
    assert actions(plan) == {"aksray-cluster-pool-a100": "update"}
    pool = only(plan, "aksray-cluster-pool-a100")
    assert pool.paths == (PathChange("maxCount", "update", old=5, new=8),)
    assert plan.impacts == ()


def test_the_pools_ignored_count_is_not_a_change(tmp_path: Path) -> None:
    """minCount moves `count` too, but the program ignores `count` (the autoscaler owns it)."""
    plan = change_of(tmp_path, "dev", lambda c: gpu_pool(c).__setitem__("minCount", 1))
    pool = only(plan, "aksray-cluster-pool-a100")
    assert pool.old_inputs["count"] == 0 and pool.inputs["count"] == 1
    assert [p.path for p in pool.paths] == ["minCount"]


def test_a_pools_vm_size_replaces_it_deleting_it_first(tmp_path: Path) -> None:
    plan = change_of(
        tmp_path, "dev", lambda c: gpu_pool(c).__setitem__("vmSize", "Standard_NC48ads_A100_v4")
    )
    pool = only(plan, "aksray-cluster-pool-a100")
    assert pool.action == "replace"
    assert pool.replace_reasons == (Reason("vmSize", "forceNewMap", FORCE_NEW_MAP),)
    assert pool.delete_before_replace  # an explicitly named Azure resource
    assert [c.action for c in plan.changes if c.name != pool.name] == ["update"]  # the queue


def test_turning_a_pool_to_spot_is_an_update_azure_refuses(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "dev", lambda c: gpu_pool(c).__setitem__("spot", True))
    pool = only(plan, "aksray-cluster-pool-a100")
    assert pool.action == "update"
    assert [r.path for r in pool.refused] == ["scaleSetPriority", "scaleSetEvictionPolicy"]
    assert plan.fails_halfway
    assert [(i.severity, i.kind) for i in plan.impacts] == [("error", "update-refused")]


def test_a_new_location_replaces_the_groups_and_everything_named_by_them(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "dev", lambda c: c.__setitem__(P + "location", "westus2"))
    group = only(plan, "aksray-cluster-rg")
    assert group.replace_reasons == (Reason("location", "forceNewMap", FORCE_NEW_MAP),)
    cluster = only(plan, "aksray-cluster-aks")
    assert [(r.path, r.rule) for r in cluster.replace_reasons] == [
        ("location", "x-ms-mutability"),
        ("resourceGroupName", "path"),  # computed from the group being replaced
    ]
    provider = only(plan, "aksray-cluster-k8s")
    assert [(r.path, r.rule) for r in provider.replace_reasons] == [("kubeconfig", "DiffConfig")]
    namespace = only(plan, "aksray-teams-team-a")
    assert [r.path for r in namespace.replace_reasons] == ["provider"]
    assert set(actions(plan).values()) == {"replace"}


def test_a_location_written_differently_is_no_change() -> None:
    """azure-native compares locations without case and spaces (the settings accept only the
    short form; an imported or hand-edited state may hold the long one)."""
    old = planned("dev")
    group = next(r for r in old.resources if r.name == "aksray-cluster-rg")
    assert group.inputs["location"] == "eastus2"
    spelt = replace(group, inputs={**group.inputs, "location": "East US 2"})
    new = replace(old, resources=[spelt if r is group else r for r in old.resources])
    assert change_plan(old, new, old_label="a", new_label="b").changes == ()


def _next_run(config: dict[str, Any]) -> None:
    config[P + "workloads"]["model-stage"]["run"] = "2"


def _running(config: dict[str, Any]) -> None:
    config[P + "workloads"]["model-stage"]["run"] = "1"


def test_a_new_run_of_a_job_replaces_it_deleting_it_first(tmp_path: Path) -> None:
    plan = change_of(tmp_path, "dev", _next_run, old=_running)
    job = only(plan, "aksray-workloads-model-stage")
    assert job.action == "replace"
    rules = {(r.path, r.rule, r.source) for r in job.replace_reasons}
    assert ("metadata.name", "forceNew", K8S_SOURCE) in rules
    assert ("spec.entrypoint", "replaceOnChanges spec", "the program's resource option") in rules
    assert job.delete_before_replace  # the program's own option, though the name changes
    assert [i.kind for i in plan.impacts] == ["work-killed"]


def test_switching_the_chart_source_updates_the_releases_in_place(tmp_path: Path) -> None:
    plan = change_of(
        tmp_path, "dev", lambda c: c.__setitem__(P + "operators", {"chartSource": "mcr"})
    )
    assert actions(plan) == {
        "aksray-operators-kuberay-operator": "update",
        "aksray-operators-kueue": "update",
    }
    assert "chart" in [p.path for p in only(plan, "aksray-operators-kueue").paths]


def test_a_release_in_another_namespace_is_replaced_creating_the_new_one_first() -> None:
    old = planned("dev")
    release = next(r for r in old.resources if r.name == "aksray-operators-kueue")
    moved = replace(release, inputs={**release.inputs, "namespace": "kueue-2"})
    new = replace(old, resources=[moved if r is release else r for r in old.resources])
    plan = change_plan(old, new, old_label="a", new_label="b")
    change = only(plan, "aksray-operators-kueue")
    assert change.replace_reasons == (Reason("namespace", "forceNew", HELM_SOURCE),)
    assert not change.delete_before_replace


def test_monitoring_switched_on_creates_and_updates_nothing_is_replaced(tmp_path: Path) -> None:
    plan = change_of(
        tmp_path, "dev", lambda c: c.__setitem__(P + "observability", {"enabled": True})
    )
    counts = plan.counts()
    assert counts["replace"] == counts["delete"] == 0
    assert counts["create"] > 0
    assert {c.name for c in plan.by_action("update")} == {
        "aksray-cluster-aks",  # azureMonitorProfile
        "aksray-operators-kueue",  # the metrics settings of its manager config
    }


def test_a_team_moved_to_another_department_changes_queues_in_place(tmp_path: Path) -> None:
    def move(config: dict[str, Any]) -> None:
        config[P + "scheduling"]["departments"][1]["teams"].append(teams(config).pop(1))

    plan = change_of(tmp_path, "prod", move)
    assert plan.counts()["replace"] == plan.counts()["delete"] == plan.counts()["create"] == 0
    queue = only(plan, "aksray-queues-cq-vision")
    assert PathChange("spec.cohortName", "update", old="research", new="applied") in queue.paths
    assert not plan.fails_halfway
