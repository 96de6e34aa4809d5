"""The stacks `make bench` plans: an organisation of N teams, 10 per department.

Every team has its own quota on two GPU pools (A100 and H100) and the CPU pool, sized so the team
quotas add up to exactly what the pools hold at their maximum size (no overcommit: the plan is
clean). The four workloads are enabled once per stack (the config contract has one instance per
workload name), on the first teams; every team also gets its namespace, queues, identity,
federated credential, Blob role assignment and a group of members (its RoleBinding and
kubeconfig role), so the stack grows with the number of teams.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from scheduling.nodes import node_allocatable

P = "aks-ray-platform:"
TEAMS_PER_DEPARTMENT = 10
WORKLOADS = ("aurora-finetune", "qwen-lora", "vllm-batch", "llm-serve")

# Per team: 4 A100 (one Standard_NC96ads_A100_v4 node), 8 H100 (one Standard_ND96isr_H100_v5
# node), 8 CPU / 32 GiB for Ray heads (room for all four workloads' heads).
A100_PER_TEAM = 4
H100_PER_TEAM = 8
HEAD_CPU_PER_TEAM = 8
HEAD_MEMORY_GIB_PER_TEAM = 32
CPU_VM_SIZE = "Standard_D32ds_v6"


def members_group(team: str) -> str:
    """A team's members: an Entra ID group object id, the same for the same team name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"https://example.com/groups/{team}-members"))


def generate_stack(teams: int) -> dict[str, Any]:
    """A stack document with `teams` teams, 10 per department, and the four workloads."""
    departments: list[dict[str, Any]] = []
    for index in range(teams):
        if index % TEAMS_PER_DEPARTMENT == 0:
            departments.append({"name": f"dept-{index // TEAMS_PER_DEPARTMENT:03d}", "teams": []})
        departments[-1]["teams"].append(
            {
                "name": f"team-{index:04d}",
                "quota": {
                    "a100": {"gpu": A100_PER_TEAM},
                    "h100": {"gpu": H100_PER_TEAM},
                    "cpu": {"cpu": HEAD_CPU_PER_TEAM, "memory": f"{HEAD_MEMORY_GIB_PER_TEAM}Gi"},
                },
                "borrowingLimit": {"a100": {"gpu": A100_PER_TEAM}},
                "members": [members_group(f"team-{index:04d}")],
            }
        )
    # Enough CPU nodes for every team's head quota, by node allocatable (cpu and memory).
    node = node_allocatable(CPU_VM_SIZE)
    cpu_nodes = max(
        2,
        math.ceil(teams * HEAD_CPU_PER_TEAM * 1000 / node["cpu"]),
        math.ceil(teams * HEAD_MEMORY_GIB_PER_TEAM * 1024**3 / node["memory"]),
    )
    workloads = {
        name: {"enabled": True, "team": f"team-{index % teams:04d}"}
        for index, name in enumerate(WORKLOADS)
    }
    workloads["qwen-lora"]["workers"] = 4
    # The endpoint downloads its model: no model-stage run to plan (and warn about) here.
    workloads["llm-serve"]["modelSource"] = "huggingface"
    # The endpoint's team never borrows: reclaim takes the whole endpoint down (the plan warns).
    serving = workloads["llm-serve"]["team"]
    for department in departments:
        for team in department["teams"]:
            if team["name"] == serving:
                team["borrowingLimit"] = {
                    "cpu": {"cpu": 0, "memory": 0},
                    "a100": {"gpu": 0},
                    "h100": {"gpu": 0},
                }
    return {
        "config": {
            P + "location": "eastus2",
            P + "cluster": {
                "mode": "aks",
                "kubernetesVersion": "1.35",
                "systemPool": {"vmSize": "Standard_D4ds_v6", "count": 3},
                "cpuPool": {"vmSize": CPU_VM_SIZE, "minCount": 2, "maxCount": cpu_nodes},
                "gpuPools": [
                    {"name": "a100", "vmSize": "Standard_NC96ads_A100_v4", "maxCount": teams},
                    {"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "maxCount": teams},
                ],
            },
            P + "storage": {"enabled": True},
            P + "scheduling": {"departments": departments},
            P + "workloads": workloads,
        }
    }
