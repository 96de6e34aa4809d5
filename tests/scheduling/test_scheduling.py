"""The organisation tree as Kueue and KAI objects: capacity arithmetic, the Kueue objects' builders
and the KAI queues (tests/scheduling/test_admission.py: where Kueue admits; tests/
test_scheduling_settings.py: the settings rules and the component)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from catalog.node_overhead import GPU_NODE_DAEMON_SETS
from catalog.pools import GPU_TAINT, POOL_LABEL_KEY, SPOT_TAINT
from manifests.kai import kai_queues
from manifests.kueue import (
    cluster_queue,
    kueue_objects,
    local_queue,
    resource_flavors,
    workload_priority_classes,
)
from scheduling.amounts import Amounts
from scheduling.nodes import (
    MIB,
    daemon_set_requests,
    gpu_share,
    kube_reserved_cpu_millis,
    kube_reserved_memory_bytes,
    node_allocatable,
    node_capacity,
    node_free,
    pool_capacity,
)
from scheduling.queues import effective_limit, effective_quota
from tests.support.harness import P, planned
from tests.support.reference import REFERENCE
from tests.support.scheduling import (
    COVERED,
    GIB,
    GPU,
    KAI_QUEUE,
    STACKS,
    first_team,
    parse_mutated,
    registered,
    scenario,
    settings_of,
)

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


def test_node_capacity_is_the_memory_the_kernel_reports() -> None:
    """nominal x 63/64 - 256 MiB: below, and within 0.3 GiB of, capacities AKS nodes reported
    (catalog/node_overhead.py names each)."""
    assert node_capacity("Standard_NC24ads_A100_v4") == Amounts.of(
        cpu=24000, memory=(225280 * 63 // 64 - 256) * MIB, gpu=1
    )
    for vm_size, reported_kib in (
        ("Standard_NC4as_T4_v3", 28736340),
        ("Standard_D4ds_v6", 16403296),
    ):
        gap = reported_kib * 1024 - node_capacity(vm_size)["memory"]
        assert 0 < gap < 0.3 * GIB, (vm_size, gap)


def test_node_allocatable() -> None:
    """Capacity less kube-reserved (25% cap taken of the nominal size) and the eviction
    threshold."""
    assert node_allocatable("Standard_NC24ads_A100_v4") == Amounts.of(
        cpu=24000 - 340, memory=(221504 - 5050 - 100) * MIB, gpu=1
    )
    assert node_allocatable("Standard_D8ds_v6") == Amounts.of(
        cpu=7820, memory=(32000 - 5150) * MIB, gpu=0
    )
    # 16 GiB: the 25% cap (4096 MiB) is of the nominal 16384 MiB, not of the 15872 MiB capacity.
    assert node_allocatable("Standard_D4ds_v6")["memory"] == (15872 - 4096 - 100) * MIB


def test_a_gpu_nodes_daemon_sets_are_taken_before_the_stacks_pods() -> None:
    """425m CPU and 814Mi on every GPU node (catalog/node_overhead.py, each with its source);
    none modelled on CPU nodes."""
    assert [(d.name, d.cpu_millis, d.memory_mib) for d in GPU_NODE_DAEMON_SETS] == [
        ("cilium", 100, 100),
        ("azure-cns", 40, 250),
        ("azure-ip-masq-agent", 100, 50),
        ("cloud-node-manager", 50, 50),
        ("csi-azuredisk-node", 30, 60),
        ("csi-azurefile-node", 30, 60),
        ("ama-metrics-node", 70, 180),
        ("gpu-operator-node-feature-discovery-worker", 5, 64),
    ]
    assert daemon_set_requests("Standard_ND96isr_H100_v5") == Amounts.of(
        cpu=425, memory=814 * MIB, gpu=0
    )
    assert node_free("Standard_ND96isr_H100_v5") == Amounts.of(
        cpu=94940 - 425, memory=(1914944 - 5150 - 814) * MIB, gpu=8
    )
    assert node_free("Standard_D8ds_v6") == node_allocatable("Standard_D8ds_v6")


def test_one_gpus_share_is_what_is_free_for_pods_over_the_gpus() -> None:
    """In whole millicores and whole MiB: N shares are exactly N pods' requests."""
    assert gpu_share("Standard_NC96ads_A100_v4") == Amounts.of(
        cpu=94515 // 4, memory=880820 // 4 * MIB, gpu=1
    )
    share = gpu_share("Standard_ND96isr_H100_v5")
    assert share == Amounts.of(cpu=11814, memory=238622 * MIB, gpu=1)
    # The ask: 11867m (the old share, allocatable / 8) fits 7 to a node, not 8.
    old = Amounts.of(cpu=11867, memory=share["memory"], gpu=1)
    assert old.copies_in(node_free("Standard_ND96isr_H100_v5")) == 7
    assert share.copies_in(node_free("Standard_ND96isr_H100_v5")) == 8


def test_gpu_flavor_cpu_and_memory_default_to_the_gpu_share() -> None:
    settings = settings_of("dev")
    team = settings.scheduling.team("team-a")
    # a100: {gpu: 5} on Standard_NC24ads_A100_v4 (1 GPU per node)
    assert effective_quota(team, "a100", settings) == Amounts.of(
        cpu=5 * 23235, memory=5 * 215540 * MIB, gpu=5
    )
    assert effective_quota(team, "cpu", settings) == Amounts.of(cpu=10000, memory=40 * GIB, gpu=0)


def test_limits_take_the_gpu_share_and_lending_never_exceeds_the_quota() -> None:
    settings = settings_of("prod")
    nlp = settings.scheduling.team("nlp")
    assert effective_limit(nlp, "a100", "borrowingLimit", settings) == {
        "cpu": 8 * 23628,
        "memory": 8 * 220205 * MIB,
        GPU: 8,
    }
    assert effective_limit(nlp, "a100", "lendingLimit", settings) == {
        "cpu": 4 * 23628,
        "memory": 4 * 220205 * MIB,
        GPU: 4,
    }
    # The CPU flavor never borrows GPUs; cpu/memory without a limit borrow freely.
    assert effective_limit(nlp, "cpu", "borrowingLimit", settings) == {
        "cpu": None,
        "memory": None,
        GPU: 0,
    }
    custom = parse_mutated(
        "dev",
        lambda c: first_team(c).update(
            quota={"a100": {"gpu": 4, "cpu": 10}, "cpu": {"cpu": 8, "memory": "32Gi"}},
            lendingLimit={"a100": {"gpu": 2}},
        ),
    )
    lent = effective_limit(custom.scheduling.team("team-a"), "a100", "lendingLimit", custom)
    assert lent["cpu"] == 10000  # 2 x 23235m would exceed the 10 CPUs the team has


def test_unlimited_is_the_whole_pool() -> None:
    settings = settings_of("kai-demo")
    team = settings.scheduling.team("team-a")
    assert effective_quota(team, "gpu", settings) == pool_capacity(settings.cluster, "gpu")
    assert pool_capacity(settings.cluster, "gpu") == Amounts.of(
        cpu=2 * 23235, memory=2 * 215540 * MIB, gpu=2
    )
    assert effective_quota(team, "cpu", settings) == Amounts.of(
        cpu=2 * 7820, memory=2 * 26850 * MIB, gpu=0
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
        assert cpu_gpu == {"name": GPU, "nominalQuota": "0", "borrowingLimit": "0"}
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


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_quota_is_written_as_the_api_gives_it_back(stack: str) -> None:
    """Kueue's ClusterQueue webhook writes every quantity back as a string (`4` -> "4"): a
    number here made the Kubernetes provider preview an update of every new team's queue on
    the next `pulumi up`, though nothing changed (seen on the rig; `aksray plan --since`
    rightly said nothing changes)."""
    settings = settings_of(stack)
    for team in settings.scheduling.teams:
        for flavor in cluster_queue(team, settings)["spec"]["resourceGroups"][0]["flavors"]:
            for entry in flavor["resources"]:
                written = {k: v for k, v in entry.items() if k != "name"}
                assert all(isinstance(v, str) for v in written.values()), (team.name, entry)


def test_the_serving_queue_of_prod_exactly() -> None:
    settings = settings_of("prod")
    queue = cluster_queue(settings.scheduling.team("serving"), settings)
    assert queue["metadata"]["name"] == "serving"
    share_a100, share_h100 = "189024m", "94512m"  # 8 x 23628m; 8 x (96000-1060-425)/8 = 8 x 11814m
    # serving runs the endpoint only in its own quota: it borrows nothing (and lends nothing).
    assert queue["spec"]["resourceGroups"][0]["flavors"] == [
        {
            "name": "cpu",
            "resources": [
                {"name": "cpu", "nominalQuota": "8", "borrowingLimit": "0"},
                {"name": "memory", "nominalQuota": "32Gi", "borrowingLimit": "0"},
                {"name": GPU, "nominalQuota": "0", "borrowingLimit": "0"},
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
                    "nominalQuota": "1761640Mi",  # 8 x 220205Mi
                    "borrowingLimit": "0",
                    "lendingLimit": "0",
                },
                {"name": GPU, "nominalQuota": "8", "borrowingLimit": "0", "lendingLimit": "0"},
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
                    "nominalQuota": "1908976Mi",  # 8 x 238622Mi
                    "borrowingLimit": "0",
                    "lendingLimit": "0",
                },
                {"name": GPU, "nominalQuota": "8", "borrowingLimit": "0", "lendingLimit": "0"},
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

    settings = parse_mutated("dev", configure)
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
