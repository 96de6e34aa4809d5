"""No stranded GPUs: GPU workers are sized by the node, so a team's quota of N GPUs admits a gang
of N workers without borrowing, and a full node runs a full gang — for every GPU VM size of the
catalog and every shipped workload; where a payload's minimum does not fit a GPU's share of a
node, the plan says so, naming the workload, the pool and both numbers."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT, run_program, stack_file
from aksray.plan.checks.run import run_checks
from aksray.plan.model.plan import plan
from catalog.gpu_regions import regions_offering
from catalog.quantities import GPU_RESOURCE
from catalog.vm_sizes import VM_SIZES
from manifests import ray_pods
from scheduling.admission import assign_pod_sets, cohort_borrowable
from scheduling.amounts import Amounts
from scheduling.nodes import gpu_share
from scheduling.podsets import PodSet
from scheduling.queues import team_queues
from scheduling.workers import (
    fits_share,
    gpus_used_per_node,
    minimum_per_gpu,
    packing,
    per_gpu,
    pool_packing,
    worker_requests,
)
from settings.parse import parse_settings
from tests.support.harness import STACKS, P, mutated, write_stack
from workloads.catalog import WORKLOADS

# Sizes Azure still sells (a retired one is refused before any of this matters).
GPU_SIZES = sorted(name for name, size in VM_SIZES.items() if size.gpus and not size.retired)
GPU_WORKLOADS = sorted(name for name, spec in WORKLOADS.items() if spec.gpu_group is not None)


def _two_teams_on(vm_size: str, quota: int) -> dict[str, Any]:
    """dev with one GPU pool of this size (2 nodes) and two teams of one cohort, each with
    `quota` GPUs of it and able to borrow the other's."""

    def mutate(config: dict[str, Any]) -> None:
        # A region that offers the size (a size Azure does not sell there is refused).
        config[P + "location"] = next(iter(regions_offering(vm_size)), config[P + "location"])
        config[P + "cluster"]["gpuPools"] = [
            {"name": "gpu", "vmSize": vm_size, "minCount": 0, "maxCount": 2, "spot": False}
        ]
        team = {"quota": {"gpu": {"gpu": quota}, "cpu": {"cpu": 4, "memory": "16Gi"}}}
        config[P + "scheduling"]["departments"] = [
            {"name": "research", "teams": [{"name": "team-a", **team}, {"name": "team-b", **team}]}
        ]
        config[P + "workloads"] = {"qwen-lora": {"enabled": True, "team": "team-a"}}

    return mutated("dev", mutate)


def _settings(vm_size: str, quota: int) -> Any:
    config = _two_teams_on(vm_size, quota)["config"]
    return parse_settings({k.removeprefix(P): v for k, v in config.items()}, stack="dev")


@pytest.mark.parametrize("vm_size", GPU_SIZES)
@pytest.mark.parametrize("workload", GPU_WORKLOADS)
def test_n_gpus_of_quota_admit_an_n_gpu_gang_and_a_full_node_runs_a_full_gang(
    workload: str, vm_size: str
) -> None:
    spec = WORKLOADS[workload]
    gpus = VM_SIZES[vm_size].gpus
    if not fits_share(minimum_per_gpu(spec), vm_size):
        pytest.skip("the payload's minimum exceeds this size's GPU share: the plan refuses it")
    requests = worker_requests(spec)
    assert gpus_used_per_node(requests, vm_size) == gpus
    assert packing(requests, vm_size) == 1.0
    for quota in sorted({1, gpus, 2 * gpus}):
        settings = _settings(vm_size, quota)
        queues = team_queues(settings)
        gang = PodSet("gpu", quota, dict(requests.nonzero()))
        # Own quota only: nothing to borrow, and it is admitted on its pool.
        assert assign_pod_sets([gang], queues["team-a"], borrowable={}) == [
            dict.fromkeys(gang.total, "gpu")
        ]
        # One more worker needs the cohort's GPUs, and CPU and memory come with them.
        bigger = PodSet("gpu", quota + 1, dict(requests.nonzero()))
        lendable = cohort_borrowable(list(queues.values()), "team-a")
        assert assign_pod_sets([bigger], queues["team-a"], borrowable=lendable)


def test_the_issue_stack_two_teams_on_an_nd96_run_an_eight_gpu_gang(tmp_path: Any) -> None:
    """Two teams of 4 H100s each on one Standard_ND96isr_H100_v5 pool: qwen-lora's 8-worker
    gang borrows only GPUs' worth of the other team's quota and one node holds all 8."""
    document = _two_teams_on("Standard_ND96isr_H100_v5", 4)
    document["config"][P + "workloads"]["qwen-lora"]["workers"] = 8
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    assert result.ok, result.problems
    planned = plan(result)
    findings = run_checks(planned)
    assert findings.errors == []
    (qwen,) = planned.workloads
    gpu = qwen.pod_sets[1]
    assert (gpu.flavor, gpu.pods_per_node["gpu"]) == ("gpu", 8)
    share = gpu_share("Standard_ND96isr_H100_v5")
    assert (share["cpu"], share["memory"] // 2**20) == (11_814, 238_622)
    assert per_gpu(WORKLOADS["qwen-lora"]).fits_in(share)


def test_cpu_per_gpu_above_the_share_is_reported_at_the_key(tmp_path: Any) -> None:
    document = _two_teams_on("Standard_ND96isr_H100_v5", 8)
    document["config"][P + "workloads"]["qwen-lora"]["cpuPerGpu"] = 12
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    assert result.ok, result.problems
    errors = run_checks(plan(result)).errors
    assert [e.path for e in errors if "per GPU" in e.message] == ["workloads.qwen-lora.cpuPerGpu"]
    message = next(e.message for e in errors if e.path == "workloads.qwen-lora.cpuPerGpu")
    assert "qwen-lora asks 12 CPU per GPU" in message
    assert "pool gpu is 11.814 CPU" in message
    assert "lower cpuPerGpu to at most 11.814 CPU" in message


def test_the_issues_ask_leaves_no_room_for_the_daemon_sets_and_is_refused(tmp_path: Any) -> None:
    """`cpuPerGpu: 11867m` on Standard_ND96isr_H100_v5 (allocatable / 8) planned as 8/8 GPUs
    while a real node, whose daemon sets request 425m, fits 7: now an error naming the
    workload, the pool and both numbers, and the node's parts; the share itself plans."""
    document = _two_teams_on("Standard_ND96isr_H100_v5", 8)
    document["config"][P + "workloads"]["qwen-lora"]["cpuPerGpu"] = "11867m"
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    errors = [e for e in run_checks(plan(result)).errors if "per GPU" in e.message]
    assert [e.path for e in errors] == ["workloads.qwen-lora.cpuPerGpu"]
    assert errors[0].message.startswith(
        "qwen-lora asks 11.867 CPU per GPU, but one GPU's share of a Standard_ND96isr_H100_v5 "
        "node of pool gpu is 11.814 CPU ((node allocatable 94.94 CPU less the GPU node's daemon "
        "sets' 0.425 CPU) / 8 GPUs)"
    )
    document["config"][P + "workloads"]["qwen-lora"]["cpuPerGpu"] = "11814m"
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    assert [e for e in run_checks(plan(result)).errors if "per GPU" in e.message] == []


def test_a_minimum_above_the_share_is_reported_at_the_pools_vm_size(tmp_path: Any) -> None:
    document = _two_teams_on("Standard_NC8as_T4_v3", 1)  # 8 vCPUs for one T4: 7.82 allocatable
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    assert result.ok, result.problems
    errors = [e for e in run_checks(plan(result)).errors if "per GPU" in e.message]
    assert [e.path for e in errors] == ["cluster.gpuPools[0].vmSize"]
    assert "qwen-lora asks 11 CPU, 96Gi per GPU" in errors[0].message
    assert "Standard_NC8as_T4_v3 node of pool gpu is 7.395 CPU" in errors[0].message
    assert "payload's minimum (10 CPUs for LLaMA-Factory" in errors[0].message


def test_cpu_per_gpu_below_the_minimum_is_refused() -> None:
    def mutate(config: dict[str, Any]) -> None:
        config[P + "workloads"]["qwen-lora"]["cpuPerGpu"] = 4

    config = mutated("dev", mutate)["config"]
    problems: list[Any] = []
    try:
        parse_settings({k.removeprefix(P): v for k, v in config.items()}, stack="dev")
    except Exception as exc:  # noqa: BLE001 - the settings error carries the problems
        problems = list(getattr(exc, "problems", [exc]))
    paths = [getattr(p, "path", "") for p in problems]
    assert "workloads.qwen-lora.cpuPerGpu" in paths


def test_worker_pods_and_ray_follow_the_same_numbers(tmp_path: Any) -> None:
    """The pod's requests, Ray's num-cpus and memory, and the payload's CPUs are one number."""
    document = _two_teams_on("Standard_ND96isr_H100_v5", 8)
    document["config"][P + "workloads"]["qwen-lora"].update(cpuPerGpu="11500m", run="1")
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    assert result.ok, result.problems
    (workload,) = [w for w in result.settings.workloads if w.name == "qwen-lora"]
    (group,) = ray_pods.worker_groups(WORKLOADS["qwen-lora"], workload)
    assert (group.pod.cpu, group.pod.memory) == ("11500m", "96Gi")
    assert ray_pods.ray_start_resources(group.pod) == {
        "num-cpus": "11",
        "memory": str(96 * 2**30),
    }
    job = next(r for r in result.resources if r.type.endswith(":RayJob"))
    cluster = job.inputs["spec"]["rayClusterSpec"]
    (worker,) = cluster["workerGroupSpecs"]
    assert worker["rayStartParams"]["num-cpus"] == "11"
    container = worker["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"]["cpu"] == "11500m"
    head_env = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "AKSRAY_GPU_WORKER_CPUS", "value": "11"} in head_env
    assert GPU_RESOURCE in container["resources"]["limits"]


@pytest.mark.parametrize(
    "path",
    [
        *(stack_file(name) for name in STACKS),
        *sorted((PROJECT_ROOT / "tests" / "stacks").glob("*.yaml")),
    ],
    ids=lambda p: p.stem,
)
def test_every_shipped_and_test_stack_packs_its_pools_full(path: Any) -> None:
    """The performance figure `make bench` prints: 100 % for every GPU workload and pool."""
    result = run_program(path)
    assert result.ok, result.problems
    rows = pool_packing(result.settings)
    assert [row.line() for row in rows if row.share < 1.0] == []
    if path.stem == "Pulumi.prod":
        assert {(row.pool, row.workload, row.used_per_node) for row in rows} >= {
            ("h100", "vllm-batch", 8),
            ("a100", "qwen-lora", 4),
        }


def test_packing_names_what_strands() -> None:
    """Before the sizes followed the node, qwen-lora's 12 CPU per GPU stranded an H100 of 8."""
    requests = Amounts.of(gpu=1, cpu=12_000, memory=96 * 2**30)
    assert gpus_used_per_node(requests, "Standard_ND96isr_H100_v5") == 7
    assert packing(requests, "Standard_ND96isr_H100_v5") == 7 / 8
