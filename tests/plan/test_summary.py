"""`aksray plan`'s summary: dev's numbers exactly, as data and as the text tables."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.plan.model.graph import (
    critical_path,
)
from aksray.plan.model.plan import plan
from aksray.plan.report.critical_path import critical_path_lines
from aksray.plan.report.summary import (
    pod_sets_table,
    summary,
    summary_lines,
    workloads_table,
)
from tests.support.harness import planned


def _dev_summary() -> dict[str, Any]:
    result = planned("dev")
    data: dict[str, Any] = summary(plan(result), critical_path(result))
    return data


def test_dev_pools() -> None:
    assert _dev_summary()["pools"] == [
        {
            "pool": "cpu",
            "flavor": "cpu",
            "vmSize": "Standard_D8ds_v6",
            "gpuModel": None,
            "gpusPerNode": 0,
            "minCount": 1,
            "maxCount": 3,
            "spot": False,
            "maxGpus": 0,
            "idleGpuNodes": 0,
            "idleGpus": 0,
            # 8 vCPU - 180m; 32 GiB - (20 MiB x 250 + 50 MiB) - 100 MiB
            "nodeAllocatable": {"gpu": 0, "cpu": "7820m", "memory": "27618Mi"},
        },
        {
            "pool": "a100",
            "flavor": "a100",
            "vmSize": "Standard_NC24ads_A100_v4",
            "gpuModel": "A100 80GB PCIe",
            "gpusPerNode": 1,
            "minCount": 0,
            "maxCount": 5,
            "spot": False,
            "maxGpus": 5,
            "idleGpuNodes": 0,
            "idleGpus": 0,
            # 24 vCPU - 340m; 220 GiB - 5050 MiB - 100 MiB
            "nodeAllocatable": {"gpu": 1, "cpu": "23660m", "memory": "220130Mi"},
        },
    ]


def test_dev_queues() -> None:
    assert _dev_summary()["queues"] == [
        {
            "team": "team-a",
            "department": "research",
            "cohort": "research",
            "namespace": "team-a",
            "localQueue": "team-a",
            "flavors": [
                {
                    "flavor": "cpu",
                    "nominal": {"cpu": "10", "memory": "40Gi", "gpu": 0},
                    "borrowingLimit": {"gpu": 0},  # the CPU flavor never borrows GPUs
                    "lendingLimit": None,
                },
                {
                    "flavor": "a100",
                    "nominal": {"cpu": "118300m", "memory": "1100650Mi", "gpu": 5},
                    "borrowingLimit": None,
                    "lendingLimit": None,
                },
            ],
            # the team's KAI leaf: where KAI places its pods (the quota is the ClusterQueue's)
            "kai": {"queue": "team-a", "parent": "research"},
        }
    ]


def test_dev_kai_queue_tree_is_unlimited_and_kai_only_places() -> None:
    data = _dev_summary()
    unlimited = {"cpu": -1, "gpu": -1, "memory": -1}
    assert data["kaiQueues"] == [
        {"queue": "research", "parent": None, "quota": unlimited, "limit": unlimited},
        {"queue": "team-a", "parent": "research", "quota": unlimited, "limit": unlimited},
    ]
    assert data["schedulers"]["kaiActions"] == ["allocate"]


def test_dev_workloads() -> None:
    head = {
        "name": "head",
        "count": 1,
        "requests": {"gpu": 0, "cpu": "2", "memory": "8Gi"},
        "nodeSelector": {"kubernetes.azure.com/agentpool": "cpu"},
        "flavor": "cpu",
        "mayUse": ["cpu"],
        "vmSize": "Standard_D8ds_v6",
        "podsPerNode": {"cpu": 3},  # 7820m / 2000m and 27618Mi / 8Gi
        "fitsNode": True,
        "gpusUsedPerNode": None,
    }

    def gpu(count: int, cpu: str, memory: str) -> dict[str, Any]:
        return {
            "name": "gpu",
            "count": count,
            "requests": {"gpu": 1, "cpu": cpu, "memory": memory},
            "nodeSelector": {},
            "flavor": "a100",
            "mayUse": ["a100"],
            "vmSize": "Standard_NC24ads_A100_v4",
            "podsPerNode": {"a100": 1},
            "fitsNode": True,
            "gpusUsedPerNode": {"used": 1, "of": 1},
        }

    def workload(name: str, kind: str, priority: str, value: int, workers: int) -> dict[str, Any]:
        return {
            "workload": name,
            "team": "team-a",
            "kind": kind,
            "priority": priority,
            "priorityValue": value,
            "gangPods": 1 + workers,
            "gangGpus": workers,
            "elastic": False,
            "maxGpus": workers,
            "maxAdmissibleWorkers": None,
            # dev stages its jobs (no `run` yet); the endpoint is deployed.
            "status": "staged" if kind == "RayJob" else "deployed",
            "admissible": True,
            "podSets": [
                head,
                gpu(workers, "11", "96Gi") if name == "qwen-lora" else gpu(1, "8", "64Gi"),
            ],
        }

    batch = workload("vllm-batch", "RayJob", "train", 50, 1)
    # elastic (1..2 GPU workers): its head carries the Ray autoscaler, 500m / 512Mi more
    batch["podSets"][0] = head | {"requests": {"gpu": 0, "cpu": "2500m", "memory": "8704Mi"}}
    batch |= {"elastic": True, "maxGpus": 2}  # minWorkers 1, maxWorkers 2: both admissible
    stage = workload("model-stage", "RayJob", "train", 50, 0)
    small_head = head | {
        "requests": {"gpu": 0, "cpu": "1", "memory": "4Gi"},
        "podsPerNode": {"cpu": 6},  # 7820m / 1000m and 27618Mi / 4Gi
    }
    stage["podSets"] = [small_head]  # a copy on the head: no GPU worker
    # dev ships its endpoint off: only the (staged) jobs are planned.
    assert _dev_summary()["workloads"] == [
        workload("aurora-finetune", "RayJob", "train", 50, 1),
        workload("qwen-lora", "RayJob", "train", 50, 4),
        batch,
        stage,
    ]


def test_summary_text_shows_the_same_numbers() -> None:
    text = "\n".join(summary_lines(_dev_summary()))
    assert "a100  Standard_NC24ads_A100_v4  A100 80GB PCIe  1          0..5   no    5" in text
    assert "team-a  research  a100    5            118300m      1100650Mi" in text
    assert (
        "KAI queues (placement only: the quota is Kueue's, above; KAI actions: allocate):\n"
        "  queue     parent    quota      limit\n"
        "  research  -         unlimited  unlimited\n"
        "  team-a    research  unlimited  unlimited\n"
    ) in text
    assert "qwen-lora        staged  team-a  RayJob  train 50  5 / 4\n" in text
    assert "gpu      4     gpu 1, cpu 11, memory 96Gi  a100    yes (1 per node), 1/1 GPUs\n" in text


# What a terminal shows without wrapping: the workloads, their pod sets and the critical path
# were 158 and 273 columns wide.
WIDTH = 100


@pytest.mark.parametrize("stack", ["dev", "prod", "dev+run", "prod+run"])
def test_workloads_and_the_critical_path_fit_the_terminal(stack: str) -> None:
    result = planned(stack)
    data = summary(plan(result), critical_path(result))
    lines = [
        *workloads_table(data["workloads"]),
        *pod_sets_table(data["workloads"]),
        *critical_path_lines(data["criticalPath"]),
    ]
    assert max(len(line) for line in lines) <= WIDTH, max(lines, key=len)
