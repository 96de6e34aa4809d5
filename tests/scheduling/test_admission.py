"""Where Kueue admits what the resource-group design builds: heads on the CPU flavor, GPU
workers on a GPU flavor, and the two demo scenarios' preemption and borrowing."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.plan.checks.run import run_checks
from aksray.plan.model.plan import plan
from catalog.pools import POOL_LABEL_KEY
from catalog.priorities import PRIORITY_CLASSES
from manifests import ray_pods
from manifests.kueue import (
    cluster_queue,
    resource_flavors,
)
from scheduling.admission import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    Inadmissible,
    Running,
)
from scheduling.podsets import PodSet
from tests.support.scheduling import (
    GPU,
    KAI_QUEUE,
    KUEUE,
    STACKS,
    assign_flavor,
    assign_pod_sets,
    cohort_borrowable,
    pod,
    preemption_reason,
    registered,
    scenario,
    settings_of,
    totals,
)
from workloads.catalog import WORKLOADS
from workloads.spec import PodShape

# --------------------------------------------------------------------------------------------
# The consequence of the resource-group design: where Kueue puts heads and GPU workers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_heads_get_the_cpu_flavor_and_gpu_workers_a_gpu_flavor_never_both(stack: str) -> None:
    settings = settings_of(stack)
    head = PodShape(cpu="2", memory="8Gi")
    worker = PodShape(cpu="8", memory="64Gi", gpus=1)
    for team in settings.scheduling.teams:
        queue = cluster_queue(team, settings)
        gpu_flavors = [f for f in team.quota if f != "cpu"]
        assert assign_flavor(totals(head, 1), queue) == "cpu"
        if gpu_flavors:
            # the first GPU flavor in stack order with room: assign_flavor raises on a mix
            assert assign_flavor(totals(worker, 1), queue) == next(
                f for f in settings.cluster.flavors if f in gpu_flavors
            )
        else:
            assert assign_flavor(totals(worker, 1), queue) is None


@pytest.mark.parametrize("stack", STACKS)
def test_every_enabled_workload_is_admitted_with_heads_on_cpu_and_workers_on_gpus(
    stack: str,
) -> None:
    settings = settings_of(stack)
    for workload in settings.enabled_workloads:
        spec = WORKLOADS[workload.name]
        team = settings.scheduling.team(workload.team)
        # the pod sets the Ray builders produce, the head with its CPU-pool node selector
        pod_sets = ray_pods.pod_sets(spec, workload)
        assert pod_sets[0].node_selector == {POOL_LABEL_KEY: "cpu"}
        flavors = {f["metadata"]["name"]: f for f in resource_flavors(settings.cluster)}
        assignments = assign_pod_sets(
            pod_sets, cluster_queue(team, settings), resource_flavors=flavors
        )
        assert assignments[0] == {"cpu": "cpu", "memory": "cpu"}, workload.name
        for assignment in assignments[1:]:
            assert len(set(assignment.values())) == 1, (workload.name, assignment)
            assert set(assignment.values()) != {"cpu"}, (workload.name, assignment)


def test_two_resource_groups_would_give_a_gpu_pod_two_pools() -> None:
    split = {
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "cpu",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "64"},
                                {"name": "memory", "nominalQuota": "256Gi"},
                            ],
                        }
                    ],
                },
                {
                    "coveredResources": [GPU],
                    "flavors": [{"name": "a100", "resources": [{"name": GPU, "nominalQuota": 4}]}],
                },
            ]
        }
    }
    with pytest.raises(ValueError, match="different flavors"):
        assign_flavor(totals(PodShape(cpu="8", memory="64Gi", gpus=1), 1), split)


def test_a_head_can_fall_back_to_a_gpu_flavor_unless_it_selects_the_cpu_pool() -> None:
    settings = settings_of("dev")
    queue = cluster_queue(settings.scheduling.team("team-a"), settings)
    too_many_heads = totals(PodShape(cpu="2", memory="8Gi"), 6)  # 12 CPU > cpu quota of 10
    assert assign_flavor(too_many_heads, queue) == "a100"
    flavors = {f["metadata"]["name"]: f for f in resource_flavors(settings.cluster)}
    pinned = PodSet("head", 6, pod(PodShape(cpu="2", memory="8Gi")), {POOL_LABEL_KEY: "cpu"})
    with pytest.raises(Inadmissible):
        assign_pod_sets([pinned], queue, resource_flavors=flavors)


# --------------------------------------------------------------------------------------------
# The two demo scenarios, as stack files under tests/stacks
# --------------------------------------------------------------------------------------------


def test_kai_demo_inference_preempts_training_in_one_team_through_kueue() -> None:
    """KAI's quick-start queues and its blog scenario: in one team, an arriving endpoint
    (inference 125) takes the GPUs of a running training gang (train 50). Kueue preempts the
    training workload as a whole; KAI, unlimited and running only allocate, places the
    endpoint once the training pods are gone and evicts nothing itself."""
    result = scenario("kai-demo")
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    everything = {"cpu": unlimited, "gpu": unlimited, "memory": unlimited}
    queues = registered(result, KAI_QUEUE)
    assert {name: q["spec"] for name, q in queues.items()} == {
        "department-1": {"displayName": "department-1", "resources": everything},
        "team-a": {
            "displayName": "team-a",
            "parentQueue": "department-1",
            "resources": everything,
        },
    }
    # Kueue has no "unlimited": the team's nominal quota is the whole of each pool.
    queue = registered(result, f"{KUEUE}:ClusterQueue")["team-a"]
    flavors = {
        f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]}
        for f in queue["spec"]["resourceGroups"][0]["flavors"]
    }
    assert flavors == {
        "cpu": {"cpu": "15640m", "memory": "53700Mi", GPU: "0"},
        "gpu": {"cpu": "46470m", "memory": "431080Mi", GPU: "2"},
    }
    assert queue["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "Never"},
        "withinClusterQueue": "LowerPriority",
    }
    worker = PodShape(cpu="8", memory="64Gi", gpus=1)
    # A 2-GPU training gang fills the team's quota; the endpoint's GPU worker does not fit beside
    # it (3 GPUs > 2), so Kueue must preempt to admit it ...
    assert assign_flavor(totals(worker, 2), queue) == "gpu"
    assert assign_flavor(totals(worker, 3), queue) is None
    training = Running("team-a", "department-1", PRIORITY_CLASSES["train"])
    endpoint = Running("team-a", "department-1", PRIORITY_CLASSES["inference"])
    # ... and withinClusterQueue: LowerPriority lets it, with the reason Kueue records.
    assert preemption_reason(
        queue, PRIORITY_CLASSES["inference"], training, fits_nominal=False
    ) == (IN_CLUSTER_QUEUE)
    # Training never takes the endpoint's GPUs, nor another training gang's: it waits.
    assert preemption_reason(queue, PRIORITY_CLASSES["train"], endpoint, fits_nominal=False) is None
    assert preemption_reason(queue, PRIORITY_CLASSES["train"], training, fits_nominal=False) is None
    # KAI only places: the cluster's KAI runs allocate alone, as the stack declares, and the plan
    # is clean.
    subject = plan(result)
    assert subject.registered.kai_actions == ("allocate",)
    findings = run_checks(subject)
    # (the demo runs no workload of the stack: only the unused-quota warning)
    assert (findings.errors, [w.path for w in findings.warnings]) == (
        [],
        ["scheduling.departments[0].teams[0].quota"],
    )


def test_kueue_team_queues_either_team_alone_uses_all_8_gpus_until_the_other_reclaims() -> None:
    """The AKS article's team queues: either team alone uses all 8 GPUs; the other team's
    arrival takes its 4 back through Kueue's reclaim (whatever the priorities); KAI places."""
    result = scenario("kueue-team-queues")
    queues = registered(result, f"{KUEUE}:ClusterQueue")
    assert set(queues) == {"team-a", "team-b"}
    assert set(registered(result, f"{KUEUE}:Cohort")) == {"ml"}
    for queue in queues.values():
        spec = queue["spec"]
        assert spec["cohortName"] == "ml"
        gpu_flavor = spec["resourceGroups"][0]["flavors"][1]
        assert gpu_flavor["name"] == "gpu"
        assert gpu_flavor["resources"][2] == {
            "name": GPU,
            "nominalQuota": "4",
            "borrowingLimit": "4",
        }
        assert all("lendingLimit" not in r for r in gpu_flavor["resources"])  # lends it all
        assert spec["preemption"]["reclaimWithinCohort"] == "Any"
        assert spec["preemption"]["borrowWithinCohort"] == {"policy": "Never"}

    team_a, team_b = queues["team-a"], queues["team-b"]
    both = [team_a, team_b]
    worker = PodShape(cpu="8", memory="64Gi", gpus=1)
    eight, four = totals(worker, 8), totals(worker, 4)
    # team-a alone: 4 of its own + 4 borrowed from idle team-b = all 8 GPUs of the pool.
    idle_b = cohort_borrowable(both, "team-a")
    assert idle_b[("gpu", GPU)] == 4
    assert assign_flavor(eight, team_a, borrowable=idle_b) == "gpu"
    assert assign_flavor(totals(worker, 9), team_a, borrowable=idle_b) is None
    # and symmetrically for team-b
    assert assign_flavor(eight, team_b, borrowable=cohort_borrowable(both, "team-b")) == "gpu"
    # team-b arrives: 4 GPUs fit its own nominal quota without borrowing, so with
    # reclaimWithinCohort: Any Kueue preempts team-a's borrowing workloads for it, even at equal
    # priority ...
    assert assign_flavor(four, team_b) == "gpu"
    train = PRIORITY_CLASSES["train"]
    borrowing_a = Running("team-a", "ml", train, borrowing=True)
    assert preemption_reason(team_b, train, borrowing_a, fits_nominal=True) == (
        IN_COHORT_RECLAMATION
    )
    # ... but never team-a's in-quota work, and never so that team-b itself can borrow.
    in_quota_a = Running("team-a", "ml", train, borrowing=False)
    assert preemption_reason(team_b, train, in_quota_a, fits_nominal=True) is None
    assert preemption_reason(team_b, train, borrowing_a, fits_nominal=False) is None
    # ... after which team-a can no longer borrow, and keeps its own 4.
    busy_b = cohort_borrowable(both, "team-a", usage={"team-b": {("gpu", GPU): 4}})
    assert busy_b[("gpu", GPU)] == 0
    assert assign_flavor(eight, team_a, borrowable=busy_b) is None
    assert assign_flavor(four, team_a, borrowable=busy_b) == "gpu"
    # KAI holds neither team to a quota of its own and evicts nothing: Kueue's reclaim is the
    # only one.
    for queue in registered(result, KAI_QUEUE).values():
        gpu = queue["spec"]["resources"]["gpu"]
        assert (gpu["quota"], gpu["limit"]) == (-1, -1)
    subject = plan(result)
    assert subject.registered.kai_actions == ("allocate",)
    assert run_checks(subject).errors == []


def _queue(name: str, cohort: str | None, **preemption: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"preemption": preemption}
    if cohort:
        spec["cohortName"] = cohort
    return {"metadata": {"name": name}, "spec": spec}


def test_kueue_classic_preemption_by_policy() -> None:
    """preemption_reason follows Kueue v0.19.2's classification of a candidate victim."""
    within = _queue("a", "c", withinClusterQueue="LowerPriority")
    assert preemption_reason(within, 125, Running("a", "c", 50), fits_nominal=False) == (
        IN_CLUSTER_QUEUE
    )
    assert preemption_reason(within, 50, Running("a", "c", 50), fits_nominal=False) is None
    newer = _queue("a", "c", withinClusterQueue="LowerOrNewerEqualPriority")
    assert preemption_reason(newer, 50, Running("a", "c", 50), fits_nominal=False) is None
    never = _queue("a", "c", withinClusterQueue="Never", reclaimWithinCohort="Never")
    assert preemption_reason(never, 125, Running("a", "c", 50), fits_nominal=False) is None
    assert preemption_reason(never, 125, Running("b", "c", 50, True), fits_nominal=True) is None
    # another queue of the cohort: only while it borrows, and never from another cohort
    lower = _queue("a", "c", reclaimWithinCohort="LowerPriority")
    assert preemption_reason(lower, 125, Running("b", "c", 50, True), fits_nominal=True) == (
        IN_COHORT_RECLAMATION
    )
    assert preemption_reason(lower, 50, Running("b", "c", 50, True), fits_nominal=True) is None
    assert preemption_reason(lower, 125, Running("b", "x", 50, True), fits_nominal=True) is None
    assert (
        preemption_reason(
            _queue("a", None, reclaimWithinCohort="Any"),
            125,
            Running("b", None, 50, True),
            fits_nominal=True,
        )
        is None
    )
    # while the preemptor itself borrows: only with borrowWithinCohort LowerPriority
    borrow = _queue(
        "a",
        "c",
        reclaimWithinCohort="Any",
        borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 75},
    )
    assert preemption_reason(borrow, 125, Running("b", "c", 50, True), fits_nominal=False) == (
        IN_COHORT_RECLAIM_WHILE_BORROWING
    )
    assert preemption_reason(borrow, 125, Running("b", "c", 100, True), fits_nominal=False) is None
    assert preemption_reason(borrow, 50, Running("b", "c", 50, True), fits_nominal=False) is None
