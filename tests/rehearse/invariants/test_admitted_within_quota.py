"""The `admitted-within-quota` invariant on recorded objects: per ClusterQueue, per cohort."""

from __future__ import annotations

from typing import Any

from aksray.rehearse.invariants.admitted_within_quota import admitted_usage, quota_breaches

GPU = "nvidia.com/gpu"


def queue(name: str, nominal: int, *, cohort: str = "", borrowing: int | None = None) -> Any:
    quota: dict[str, Any] = {"name": GPU, "nominalQuota": nominal}
    if borrowing is not None:
        quota["borrowingLimit"] = borrowing
    spec: dict[str, Any] = {
        "resourceGroups": [
            {"coveredResources": [GPU], "flavors": [{"name": "a100", "resources": [quota]}]}
        ]
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"metadata": {"name": name}, "spec": spec}


def workload(name: str, cluster_queue: str, gpus: int, *, reserved: bool = True) -> Any:
    conditions = [{"type": "QuotaReserved", "status": "True" if reserved else "False"}]
    return {
        "metadata": {"name": name, "namespace": cluster_queue},
        "spec": {"podSets": [{"name": "gpu", "count": gpus}]},
        "status": {
            "conditions": conditions,
            "admission": {
                "clusterQueue": cluster_queue,
                "podSetAssignments": [
                    {
                        "name": "gpu",
                        "count": gpus,
                        "flavors": {GPU: "a100"},
                        "resourceUsage": {GPU: str(gpus)},
                    }
                ],
            },
        },
    }


def test_a_queue_outside_a_cohort_holds_its_nominal_quota_and_no_more() -> None:
    queues = {"team-a": queue("team-a", 4)}
    assert quota_breaches(1.0, [workload("w1", "team-a", 4)], queues) == []
    assert quota_breaches(
        2.5, [workload("w1", "team-a", 3), workload("w2", "team-a", 2)], queues
    ) == [
        "t=+2.5s ClusterQueue team-a has 5 of nvidia.com/gpu admitted on a100, "
        "over its quota plus borrowing limit 4"
    ]


def test_a_borrowing_queue_is_held_to_its_limit_and_the_cohort_to_its_members_quota() -> None:
    queues = {
        "team-a": queue("team-a", 4, cohort="org", borrowing=2),
        "team-b": queue("team-b", 4, cohort="org"),
    }
    assert quota_breaches(1.0, [workload("a", "team-a", 6)], queues) == []
    assert quota_breaches(1.0, [workload("a", "team-a", 7)], queues) == [
        "t=+1.0s ClusterQueue team-a has 7 of nvidia.com/gpu admitted on a100, "
        "over its quota plus borrowing limit 6"
    ]
    # No borrowing limit on team-b: only the cohort's 8 bounds it.
    assert quota_breaches(1.0, [workload("b", "team-b", 8)], queues) == []
    assert quota_breaches(
        1.0, [workload("a", "team-a", 2), workload("b", "team-b", 7)], queues
    ) == [
        "t=+1.0s cohort org has 9 of nvidia.com/gpu admitted on a100, over the 8 its members hold"
    ]


def test_only_workloads_holding_a_reservation_count() -> None:
    finished = workload("done", "team-a", 4)
    finished["status"]["conditions"].append({"type": "Finished", "status": "True"})
    waiting = workload("waiting", "team-a", 4, reserved=False)
    usage = admitted_usage([finished, waiting, workload("running", "team-a", 1)])
    assert usage == {"team-a": {("a100", GPU): 1}}


def test_a_quota_cut_below_a_running_gang_is_no_breach_until_kueue_admits_more() -> None:
    """Kueue never evicts what it admitted when a quota shrinks: a gang admitted before a cut
    may hold more than the new quota until it ends, but nothing may be admitted beside it."""
    cut = {"team-a": queue("team-a", 2)}
    gang = workload("gang", "team-a", 4)
    assert quota_breaches(3.0, [gang], cut, admitted_before=frozenset({"team-a/gang"})) == []
    late = workload("late", "team-a", 1)
    assert quota_breaches(4.0, [gang, late], cut, admitted_before=frozenset({"team-a/gang"})) == [
        "t=+4.0s ClusterQueue team-a has 5 of nvidia.com/gpu admitted on a100, "
        "over its quota plus borrowing limit 2"
    ]
    # Without the change's record, the gang itself breaches.
    assert quota_breaches(3.0, [gang], cut) != []


def test_a_cohort_over_quota_after_a_cut_breaches_only_with_newer_work() -> None:
    queues = {
        "team-a": queue("team-a", 1, cohort="research"),
        "team-b": queue("team-b", 1, cohort="research"),
    }
    old = [workload("a", "team-a", 2), workload("b", "team-b", 1)]
    before = frozenset({"team-a/a", "team-b/b"})
    assert quota_breaches(1.0, old, queues, admitted_before=before) == []
    late = workload("c", "team-b", 1)
    assert len(quota_breaches(1.0, [*old, late], queues, admitted_before=before)) == 1
