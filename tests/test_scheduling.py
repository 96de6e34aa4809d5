"""The organisation tree as Kueue and KAI objects: capacity arithmetic, builders, the flavor
assignment the resource-group design leads to, the two demo scenarios, settings rules, and the
component's wiring under mocks."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import run_pulumi_func

from aksray.checks import run_checks
from aksray.mocks import PlatformMocks
from aksray.model import plan
from aksray.runner import PROJECT_ROOT, RecordedResource, RecordingMonitor, RunResult, run_program
from catalog.pools import GPU_TAINT, POOL_LABEL_KEY, SPOT_TAINT
from catalog.priorities import PRIORITY_CLASSES
from catalog.quantities import parse_cpu_millis, parse_memory_bytes
from manifests import ray_pods
from manifests.kai import kai_queues
from manifests.kueue import (
    cluster_queue,
    kueue_objects,
    local_queue,
    resource_flavors,
    workload_priority_classes,
)
from scheduling import admission
from scheduling.admission import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    Inadmissible,
    Running,
)
from scheduling.amounts import Amounts
from scheduling.nodes import (
    MIB,
    gpu_share,
    kube_reserved_cpu_millis,
    kube_reserved_memory_bytes,
    node_allocatable,
    pool_capacity,
)
from scheduling.podsets import PodSet
from scheduling.queues import effective_limit, effective_quota, read_cluster_queue
from settings.model import Settings, TeamSettings
from settings.parse import parse_settings
from tests.support.harness import P, assert_rejected, mutated, one, planned
from tests.support.reference import REFERENCE
from workloads.catalog import WORKLOADS
from workloads.spec import PodShape

GIB = 1024**3
GPU = "nvidia.com/gpu"
COVERED = ["cpu", "memory", GPU]
SCENARIOS = PROJECT_ROOT / "tests" / "stacks"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
STACKS = ("dev", "prod", "local")


def _options(options: dict[str, Any]) -> dict[str, Any]:
    """The model takes the flavors' node labels; these tests hold ResourceFlavor objects."""
    flavors = options.pop("resource_flavors", None)
    if flavors is not None:
        options["flavor_labels"] = {n: f["spec"].get("nodeLabels", {}) for n, f in flavors.items()}
    return options


# The tests write ClusterQueue objects, as the builders do; the model reads them back through the
# one reader the planner uses.
def assign_flavor(requests: dict[str, int], queue: dict[str, Any], **options: Any) -> str | None:
    return admission.assign_flavor(requests, read_cluster_queue(queue), **_options(options))


def assign_pod_sets(sets: list[PodSet], queue: dict[str, Any], **options: Any) -> Any:
    return admission.assign_pod_sets(sets, read_cluster_queue(queue), **_options(options))


def cohort_borrowable(queues: list[dict[str, Any]], borrower: str, **options: Any) -> Any:
    typed = [read_cluster_queue(q) for q in queues]
    return admission.cohort_borrowable(typed, borrower, **options)


def preemption_reason(queue: dict[str, Any], *args: Any, **options: Any) -> str | None:
    return admission.preemption_reason(read_cluster_queue(queue), *args, **options)


@functools.cache
def scenario(name: str) -> RunResult:
    result = run_program(SCENARIOS / f"{name}.yaml")
    assert result.ok, result.problems
    return result


def settings_of(stack: str) -> Settings:
    result = scenario(stack) if (SCENARIOS / f"{stack}.yaml").exists() else planned(stack)
    settings: Settings = result.settings
    return settings


def registered(result: RunResult, type_token: str) -> dict[str, dict[str, Any]]:
    """metadata.name -> inputs of every registered object of a type."""
    return {r.inputs["metadata"]["name"]: r.inputs for r in result.by_type(type_token)}


def pod(shape: PodShape) -> dict[str, int]:
    return {
        "cpu": parse_cpu_millis(shape.cpu),
        "memory": parse_memory_bytes(shape.memory),
        GPU: shape.gpus,
    }


def totals(shape: PodShape, count: int) -> dict[str, int]:
    return {resource: amount * count for resource, amount in pod(shape).items()}


# --------------------------------------------------------------------------------------------
# Capacity: AKS node allocatable and the effective quota
# --------------------------------------------------------------------------------------------


def test_kube_reserved_cpu_reproduces_the_published_aks_table() -> None:
    table = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
    assert {cores: kube_reserved_cpu_millis(cores) for cores in table} == table
    assert kube_reserved_cpu_millis(24) == 340
    assert kube_reserved_cpu_millis(96) == 1060


def test_kube_reserved_memory_is_the_lesser_of_the_pod_formula_and_a_quarter() -> None:
    assert kube_reserved_memory_bytes(8 * GIB, max_pods=30) == 650 * MIB  # the docs' example
    assert kube_reserved_memory_bytes(8 * GIB) == 2 * GIB  # 25% < 20 MiB x 250 + 50 MiB
    assert kube_reserved_memory_bytes(880 * GIB) == 5050 * MIB


def test_node_allocatable() -> None:
    assert node_allocatable("Standard_NC24ads_A100_v4") == Amounts.of(
        cpu=24000 - 340, memory=(220 * 1024 - 5050 - 100) * MIB, gpu=1
    )
    assert node_allocatable("Standard_D8ds_v6") == Amounts.of(
        cpu=7820, memory=(32 * 1024 - 5150) * MIB, gpu=0
    )
    # 4 GPUs per node: each GPU's share, in whole millicores and whole MiB.
    assert gpu_share("Standard_NC96ads_A100_v4") == Amounts.of(
        cpu=23735, memory=223992 * MIB, gpu=1
    )


def test_gpu_flavor_cpu_and_memory_default_to_the_gpu_share() -> None:
    settings = settings_of("dev")
    team = settings.scheduling.team("team-a")
    # a100: {gpu: 5} on Standard_NC24ads_A100_v4 (1 GPU per node)
    assert effective_quota(team, "a100", settings) == Amounts.of(
        cpu=5 * 23660, memory=5 * 220130 * MIB, gpu=5
    )
    assert effective_quota(team, "cpu", settings) == Amounts.of(cpu=10000, memory=40 * GIB, gpu=0)


def test_limits_take_the_gpu_share_and_lending_never_exceeds_the_quota() -> None:
    settings = settings_of("prod")
    nlp = settings.scheduling.team("nlp")
    assert effective_limit(nlp, "a100", "borrowingLimit", settings) == {
        "cpu": 8 * 23735,
        "memory": 8 * 223992 * MIB,
        GPU: 8,
    }
    assert effective_limit(nlp, "a100", "lendingLimit", settings) == {
        "cpu": 4 * 23735,
        "memory": 4 * 223992 * MIB,
        GPU: 4,
    }
    # The CPU flavor never borrows GPUs; cpu/memory without a limit borrow freely.
    assert effective_limit(nlp, "cpu", "borrowingLimit", settings) == {
        "cpu": None,
        "memory": None,
        GPU: 0,
    }
    custom = _parse(
        "dev",
        lambda c: _team(c).update(
            quota={"a100": {"gpu": 4, "cpu": 10}, "cpu": {"cpu": 8, "memory": "32Gi"}},
            lendingLimit={"a100": {"gpu": 2}},
        ),
    )
    lent = effective_limit(custom.scheduling.team("team-a"), "a100", "lendingLimit", custom)
    assert lent["cpu"] == 10000  # 2 x 23660m would exceed the 10 CPUs the team has


def test_unlimited_is_the_whole_pool() -> None:
    settings = settings_of("kai-demo")
    team = settings.scheduling.team("team-a")
    assert effective_quota(team, "gpu", settings) == pool_capacity(settings.cluster, "gpu")
    assert pool_capacity(settings.cluster, "gpu") == Amounts.of(
        cpu=2 * 23660, memory=2 * 220130 * MIB, gpu=2
    )
    assert effective_quota(team, "cpu", settings) == Amounts.of(
        cpu=2 * 7820, memory=2 * 27618 * MIB, gpu=0
    )


# --------------------------------------------------------------------------------------------
# Kueue objects
# --------------------------------------------------------------------------------------------


def test_one_flavor_per_pool_selecting_exactly_that_pool_and_tolerating_its_taints() -> None:
    flavors = {
        f["metadata"]["name"]: f["spec"] for f in resource_flavors(settings_of("prod").cluster)
    }
    toleration = {"operator": "Equal"}
    gpu = {**toleration, **GPU_TAINT}
    spot = {**toleration, **SPOT_TAINT}
    assert flavors == {
        "cpu": {"nodeLabels": {POOL_LABEL_KEY: "cpu"}},
        "a100": {"nodeLabels": {POOL_LABEL_KEY: "a100"}, "tolerations": [gpu]},
        "h100": {"nodeLabels": {POOL_LABEL_KEY: "h100"}, "tolerations": [gpu]},
        "a100spot": {"nodeLabels": {POOL_LABEL_KEY: "a100spot"}, "tolerations": [gpu, spot]},
    }


@pytest.mark.parametrize("stack", STACKS)
def test_every_cluster_queue_has_one_resource_group_over_cpu_memory_and_gpus(stack: str) -> None:
    settings = settings_of(stack)
    for team in settings.scheduling.teams:
        spec = cluster_queue(team, settings)["spec"]
        [group] = spec["resourceGroups"]
        assert group["coveredResources"] == COVERED
        names = [flavor["name"] for flavor in group["flavors"]]
        assert names == [f for f in settings.cluster.flavors if f in team.quota]
        assert names[0] == "cpu"
        for flavor in group["flavors"]:
            assert [r["name"] for r in flavor["resources"]] == COVERED
        cpu_gpu = group["flavors"][0]["resources"][2]
        assert cpu_gpu == {"name": GPU, "nominalQuota": 0, "borrowingLimit": 0}
        assert spec["cohortName"] == team.department
        assert spec["namespaceSelector"] == {
            "matchLabels": {"kubernetes.io/metadata.name": team.namespace}
        }
        assert spec["preemption"] == {
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "Never"},
            "withinClusterQueue": "LowerPriority",
        }
        assert spec["queueingStrategy"] == "BestEffortFIFO"


def test_the_serving_queue_of_prod_exactly() -> None:
    settings = settings_of("prod")
    queue = cluster_queue(settings.scheduling.team("serving"), settings)
    assert queue["metadata"]["name"] == "serving"
    share_a100, share_h100 = "189880m", "94936m"  # 8 x 23735m; 8 x (96000-1060)/8 = 8 x 11867m
    # serving runs the endpoint only in its own quota: it borrows nothing (and lends nothing).
    assert queue["spec"]["resourceGroups"][0]["flavors"] == [
        {
            "name": "cpu",
            "resources": [
                {"name": "cpu", "nominalQuota": "8", "borrowingLimit": "0"},
                {"name": "memory", "nominalQuota": "32Gi", "borrowingLimit": "0"},
                {"name": GPU, "nominalQuota": 0, "borrowingLimit": 0},
            ],
        },
        {
            "name": "a100",
            "resources": [
                {
                    "name": "cpu",
                    "nominalQuota": share_a100,
                    "borrowingLimit": "0",
                    "lendingLimit": "0",
                },
                {
                    "name": "memory",
                    "nominalQuota": "1791936Mi",
                    "borrowingLimit": "0",
                    "lendingLimit": "0",
                },
                {"name": GPU, "nominalQuota": 8, "borrowingLimit": 0, "lendingLimit": 0},
            ],
        },
        {
            "name": "h100",
            "resources": [
                {
                    "name": "cpu",
                    "nominalQuota": share_h100,
                    "borrowingLimit": "0",
                    "lendingLimit": "0",
                },
                {
                    "name": "memory",
                    "nominalQuota": "1940448Mi",
                    "borrowingLimit": "0",
                    "lendingLimit": "0",
                },
                {"name": GPU, "nominalQuota": 8, "borrowingLimit": 0, "lendingLimit": 0},
            ],
        },
    ]
    assert local_queue(settings.scheduling.team("serving")) == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {
            "name": "serving",
            "namespace": "llm-serving",
            "labels": {
                "app.kubernetes.io/managed-by": "aks-ray-platform",
                "aksray.io/team": "serving",
            },
        },
        "spec": {"clusterQueue": "serving"},
    }


def test_queueing_strategy_is_configurable_per_stack_and_per_team() -> None:
    def configure(config: dict[str, Any]) -> None:
        config[P + "scheduling"]["queueingStrategy"] = "StrictFIFO"
        config[P + "scheduling"]["departments"][0]["teams"].append(
            {
                "name": "team-b",
                "queueingStrategy": "BestEffortFIFO",
                "quota": {"cpu": {"cpu": 1, "memory": "1Gi"}},
            }
        )

    settings = _parse("dev", configure)
    strategies = {
        team.name: cluster_queue(team, settings)["spec"]["queueingStrategy"]
        for team in settings.scheduling.teams
    }
    assert strategies == {"team-a": "StrictFIFO", "team-b": "BestEffortFIFO"}


def _kai_chart_priority_classes() -> dict[str, int]:
    found = {}
    for path in (REFERENCE / "manifests" / "kai" / "priorityclasses").glob("*.yaml"):
        text = path.read_text()
        name = re.search(r"^  name: (\S+)$", text, re.MULTILINE)
        value = re.search(r"^value: (\d+)$", text, re.MULTILINE)
        assert name and value, path
        found[name.group(1)] = int(value.group(1))
    return found


@pytest.mark.reference
def test_workload_priority_classes_are_kais_names_and_values() -> None:
    ours = {c["metadata"]["name"]: c["value"] for c in workload_priority_classes()}
    assert (
        ours
        == _kai_chart_priority_classes()
        == {
            "train": 50,
            "build-preemptible": 75,
            "build": 100,
            "inference": 125,
        }
    )


def test_local_queues_are_never_named_default() -> None:
    for stack in STACKS:
        settings = settings_of(stack)
        names = [
            o["metadata"]["name"] for o in kueue_objects(settings) if o["kind"] == "LocalQueue"
        ]
        assert names and "default" not in names


# --------------------------------------------------------------------------------------------
# KAI queues
# --------------------------------------------------------------------------------------------


def test_dev_kai_queues_exactly() -> None:
    # Every KAI queue is unlimited: quota and limit -1 (never 0, never left out) for cpu, gpu
    # and memory. The quota is the ClusterQueue's; KAI keeps the tree and places.
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    everything = {"cpu": unlimited, "gpu": unlimited, "memory": unlimited}
    labels = {
        "app.kubernetes.io/managed-by": "aks-ray-platform",
        "aksray.io/department": "research",
    }
    assert kai_queues(settings_of("dev")) == [
        {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": "research", "labels": labels},
            "spec": {"displayName": "research", "resources": everything},
        },
        {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": "team-a", "labels": {**labels, "aksray.io/team": "team-a"}},
            "spec": {"displayName": "team-a", "parentQueue": "research", "resources": everything},
        },
    ]


@pytest.mark.parametrize("stack", [*STACKS, "kai-demo", "kueue-team-queues"])
def test_every_kai_queue_is_unlimited_in_the_organisation_tree(stack: str) -> None:
    settings = settings_of(stack)
    result = scenario(stack) if stack not in STACKS else planned(stack)
    queues = {q["metadata"]["name"]: q["spec"] for q in kai_queues(settings)}
    # what the program registers is what the builder returns
    assert {name: q["spec"] for name, q in registered(result, KAI_QUEUE).items()} == queues
    for dept in settings.scheduling.departments:
        assert "parentQueue" not in queues[dept.name]
        weight = sum(team.over_quota_weight for team in dept.teams)
        assert queues[dept.name]["resources"] == {
            r: {"quota": -1, "limit": -1, "overQuotaWeight": weight}
            for r in ("cpu", "gpu", "memory")
        }
        for team in dept.teams:
            assert queues[team.name]["parentQueue"] == dept.name
            assert queues[team.name]["resources"] == {
                r: {"quota": -1, "limit": -1, "overQuotaWeight": team.over_quota_weight}
                for r in ("cpu", "gpu", "memory")
            }
    assert len(queues) == len(settings.scheduling.departments) + len(settings.scheduling.teams)


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
        "cpu": {"cpu": "15640m", "memory": "55236Mi", GPU: 0},
        "gpu": {"cpu": "47320m", "memory": "440260Mi", GPU: 2},
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
        assert gpu_flavor["resources"][2] == {"name": GPU, "nominalQuota": 4, "borrowingLimit": 4}
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


# --------------------------------------------------------------------------------------------
# Settings rules of the scheduling section
# --------------------------------------------------------------------------------------------

T = "scheduling.departments[0].teams[0]"


def _team(config: dict[str, Any]) -> dict[str, Any]:
    team: dict[str, Any] = config[P + "scheduling"]["departments"][0]["teams"][0]
    return team


def _parse(stack: str, mutate: Callable[[dict[str, Any]], None]) -> Settings:
    config = mutated(stack, mutate)["config"]
    return parse_settings({k.removeprefix(P): v for k, v in config.items()}, stack=stack)


@pytest.mark.parametrize(
    ("mutate", "path", "fix"),
    [
        (
            lambda c: _team(c).update(borrowingLimit={"a100": {"gpu": "unlimited"}}),
            f"{T}.borrowingLimit.a100.gpu",
            "leave a limit out",
        ),
        (
            lambda c: _team(c).update(
                quota={"a100": {"gpu": "unlimited"}, "cpu": {"cpu": 8, "memory": "32Gi"}},
                borrowingLimit={"a100": {"gpu": 2}},
            ),
            f"{T}.borrowingLimit.a100.gpu",
            "unlimited",
        ),
        (lambda c: _team(c)["quota"]["a100"].update(gpu="Unlimited"), f"{T}.quota.a100.gpu", "0"),
        (lambda c: _team(c)["quota"]["cpu"].pop("memory"), f"{T}.quota.cpu.memory", "32Gi"),
        (
            lambda c: c[P + "scheduling"].update(queueingStrategy="FIFO"),
            "scheduling.queueingStrategy",
            "StrictFIFO",
        ),
        (
            lambda c: _team(c).update(queueingStrategy="strict"),
            f"{T}.queueingStrategy",
            "BestEffortFIFO",
        ),
    ],
    ids=[
        "unlimited-limit",
        "limit-on-unlimited",
        "unlimited-misspelt",
        "cpu-flavor-needs-memory",
        "bad-strategy",
        "bad-team-strategy",
    ],
)
def test_scheduling_settings_are_validated(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], path: str, fix: str
) -> None:
    run = assert_rejected(tmp_path, mutated("dev", mutate), path)
    line = next(line for line in run.error_lines if line.startswith(f"error: {path}: "))
    assert fix in line


def test_unlimited_parses_to_kais_minus_one() -> None:
    team: TeamSettings = settings_of("kai-demo").scheduling.team("team-a")
    assert team.quota["gpu"].amount(GPU) == -1
    assert (team.quota["cpu"].amount("cpu"), team.quota["cpu"].amount("memory")) == (-1, -1)


# --------------------------------------------------------------------------------------------
# The component, under mocks
# --------------------------------------------------------------------------------------------


def test_scheduling_queues_children_and_their_real_orderings() -> None:
    result = planned("prod")
    by_urn = result.by_urn()
    component = one(result, "aksray:platform:SchedulingQueues", "aksray-queues")
    platform = one(result, "aksray:platform:Platform", "aksray")
    assert component.parent == platform.urn
    provider = one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s")
    children = [r for r in result.resources if r.parent == component.urn]
    assert len(children) == 4 + 4 + 2 + 4 + 4 + 2 + 4  # flavors, priorities, cohorts, CQs, LQs, KAI
    assert all(child.provider_urn == provider.urn for child in children)

    def urn(type_token: str, name: str) -> str:
        return one(result, type_token, name).urn

    nlp_cq = one(result, f"{KUEUE}:ClusterQueue", "aksray-queues-cq-nlp")
    flavor_deps = {by_urn[u].name for u in nlp_cq.depends_on if u in by_urn}
    assert flavor_deps == {
        "aksray-queues-flavor-cpu",
        "aksray-queues-flavor-a100",
        "aksray-queues-flavor-a100spot",
        "aksray-operators-kueue",  # the release that installs the CRDs and serves the webhook
    }
    release = "kubernetes:helm.sh/v3:Release"
    serving_lq = one(result, f"{KUEUE}:LocalQueue", "aksray-queues-lq-serving")
    assert set(serving_lq.depends_on) == {
        urn(f"{KUEUE}:ClusterQueue", "aksray-queues-cq-serving"),
        urn("kubernetes:core/v1:Namespace", "aksray-teams-serving"),
        urn(release, "aksray-operators-kueue"),
    }
    leaf = one(result, KAI_QUEUE, "aksray-queues-kai-serving")
    assert set(leaf.depends_on) == {
        urn(KAI_QUEUE, "aksray-queues-kai-applied"),
        urn(release, "aksray-operators-kai-scheduler"),
        # completes once KAI's queue webhook answers (tests/test_kai_queue_webhook.py)
        urn("kubernetes:batch/v1:Job", "aksray-operators-kai-queue-webhook"),
    }
    assert leaf.inputs["spec"]["parentQueue"] == "applied"


def test_every_child_waits_for_the_operator_releases() -> None:
    """`kueue`/`kai` releases (and opts.depends_on) reach every child, as Platform passes them."""
    from components.namespaces import TeamNamespaces
    from components.queues import SchedulingQueues

    settings = settings_of("dev")
    records = _record(
        lambda: _build_queues(settings, TeamNamespaces, SchedulingQueues),
    )
    urns = {r.name: r.urn for r in records}
    kueue, kai, extra = urns["kueue-release"], urns["kai-release"], urns["cluster-ready"]
    webhook = urns["kai-webhook"]
    children = [r for r in records if r.name.startswith("q-") and r.custom]
    assert len(children) == 2 + 4 + 1 + 1 + 1 + 2
    for child in children:
        needs = {kai, webhook, extra} if child.type == KAI_QUEUE else {kueue, extra}
        assert needs <= set(child.depends_on), child.name
        wrong = {kueue} if child.type == KAI_QUEUE else {kai, webhook}
        assert not wrong & set(child.depends_on), child.name


def _build_queues(settings: Settings, namespaces_cls: Any, queues_cls: Any) -> None:
    provider = k8s.Provider("k8s", kubeconfig="{}")
    at = pulumi.ResourceOptions(provider=provider)
    kueue = k8s.core.v1.ConfigMap("kueue-release", opts=at)
    kai = k8s.core.v1.ConfigMap("kai-release", opts=at)
    webhook = k8s.core.v1.ConfigMap("kai-webhook", opts=at)
    ready = k8s.core.v1.ConfigMap("cluster-ready", opts=at)
    namespaces = namespaces_cls("ns", settings.scheduling.teams, provider=provider)
    queues_cls(
        "q",
        settings,
        provider=provider,
        namespaces=namespaces,
        kueue=kueue,
        kai=kai,
        kai_webhook=webhook,
        opts=pulumi.ResourceOptions(depends_on=[ready]),
    )


def _record(program: Callable[[], None]) -> list[RecordedResource]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    monitor = RecordingMonitor(PlatformMocks())
    try:
        runtime_settings.reset_options(project="aks-ray-platform", stack="test", preview=False)
        pulumi_mocks.set_mocks(
            PlatformMocks(),
            project="aks-ray-platform",
            stack="test",
            preview=False,
            monitor=monitor,
        )
        loop.run_until_complete(run_pulumi_func(program))
    finally:
        runtime_settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
    return monitor.records
