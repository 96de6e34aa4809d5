"""Scenarios never ask for the impossible: gangs sized from what the stack admits and binds (the
scheduling core), "not applicable" with the reason otherwise, and a timed-out wait reports the
last Kueue condition message whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import run_program
from aksray.rehearse.record import Sample
from aksray.rehearse.scenarios.sizing import (
    NotApplicableError,
    admissible_gpus,
    bindable_gpus,
    lending_pair,
    require_fit,
    room_for_the_owner,
)
from aksray.rehearse.scenarios.workload_state import last_kueue_condition
from tests.support.harness import P, mutated, write_stack


def _pool_of_two_teams(
    tmp_path: Path, vm_size: str, *, gpus: int, nodes: int, lend: int | None = None
) -> Any:
    """One GPU pool, two teams of one cohort with `gpus` each (each lends at most `lend`)."""

    def mutate(config: dict[str, Any]) -> None:
        config[P + "cluster"]["gpuPools"] = [
            {"name": "gpu", "vmSize": vm_size, "minCount": 0, "maxCount": nodes, "spot": False}
        ]
        team: dict[str, Any] = {
            "quota": {"gpu": {"gpu": gpus}, "cpu": {"cpu": 4, "memory": "16Gi"}}
        }
        if lend is not None:
            team["lendingLimit"] = {"gpu": {"gpu": lend}}
        config[P + "scheduling"]["departments"] = [
            {"name": "research", "teams": [{"name": "team-a", **team}, {"name": "team-b", **team}]}
        ]
        config[P + "scheduling"]["allowOvercommit"] = True
        config[P + "workloads"] = {"qwen-lora": {"enabled": True, "team": "team-a"}}

    document = mutated("dev", mutate)
    result = run_program(write_stack(tmp_path, document, "Pulumi.dev.yaml"), stack="dev")
    assert result.ok, result.problems
    return result.settings


def test_the_issue_stack_borrows_a_gang_of_all_eight_gpus_of_one_node(tmp_path: Path) -> None:
    settings = _pool_of_two_teams(tmp_path, "Standard_ND96isr_H100_v5", gpus=4, nodes=1)
    assert bindable_gpus(settings, "gpu") == 8
    team_a = settings.scheduling.team("team-a")
    assert admissible_gpus(settings, team_a, "gpu") == 8
    lending = lending_pair(settings)
    assert lending is not None
    assert (lending.borrower.name, lending.owner.name, lending.gang) == ("team-a", "team-b", 8)
    assert lending.reclaim_expected is True
    assert room_for_the_owner(settings, lending) == 8


def test_a_gang_is_never_larger_than_the_nodes_hold(tmp_path: Path) -> None:
    """Quota for 16 GPUs on a pool of one 8-GPU node: the gang is 8, not 16."""
    settings = _pool_of_two_teams(tmp_path, "Standard_ND96isr_H100_v5", gpus=8, nodes=1)
    assert admissible_gpus(settings, settings.scheduling.team("team-a"), "gpu") == 8


def test_an_owner_that_keeps_gpus_gets_a_node_left_for_its_job(tmp_path: Path) -> None:
    """Each team lends 2 of its 4 and keeps 2, on one 8-GPU node: the
    borrower may take 6, and leaves a GPU of the node for the owner's one-GPU job (which
    reclaims nothing: it runs on the GPUs the owner kept)."""
    settings = _pool_of_two_teams(tmp_path, "Standard_ND96isr_H100_v5", gpus=4, nodes=1, lend=2)
    lending = lending_pair(settings)
    assert lending is not None and lending.reclaim_expected is False
    assert lending.gang == 6
    assert room_for_the_owner(settings, lending) == 6
    full = _pool_of_two_teams(tmp_path, "Standard_ND96isr_H100_v5", gpus=5, nodes=1, lend=3)
    lending = lending_pair(full)
    assert lending is not None and lending.gang == 8  # 5 + 3, the whole node
    assert room_for_the_owner(full, lending) == 7  # one GPU left for the owner's job


def test_not_applicable_where_the_workers_cannot_fill_a_node(tmp_path: Path) -> None:
    settings = _pool_of_two_teams(tmp_path, "Standard_NC8as_T4_v3", gpus=1, nodes=1)
    with pytest.raises(NotApplicableError, match=r"qwen-lora asks 1 GPU, 11 CPU, 96Gi per GPU"):
        require_fit(settings, "gpu", "qwen-lora")
    assert bindable_gpus(settings, "gpu") == 0  # an 11-CPU worker on a 7.82-CPU node: none


def test_a_timed_out_wait_reports_the_last_kueue_condition_whole() -> None:
    message = (
        "couldn't assign flavors to pod set gpu: insufficient quota for nvidia.com/gpu in "
        "flavor h100, previously considered podsets requests (0) + current podset request (8) > "
        "maximum capacity (4)"
    )
    workload = {
        "metadata": {
            "namespace": "team-a",
            "ownerReferences": [{"kind": "RayJob", "name": "qwen-lora-1"}],
        },
        "status": {
            "conditions": [
                {"type": "Created", "status": "True", "lastTransitionTime": "2026-12-04T05:00:00Z"},
                {
                    "type": "QuotaReserved",
                    "status": "False",
                    "reason": "Pending",
                    "message": message,
                    "lastTransitionTime": "2026-12-04T05:00:03Z",
                },
            ]
        },
    }
    owner = {"metadata": {"name": "qwen-lora-1", "labels": {"aksray.io/workload": "qwen-lora"}}}
    sample = Sample(
        t=3.0,
        workloads=[workload],
        pods=[],
        owners={("team-a", "RayJob", "qwen-lora-1"): owner},
        clusters={},
        nodes={},
        flavor_pool={},
        queues={},
    )
    assert last_kueue_condition(sample, "qwen-lora") == (
        f"last Kueue condition of qwen-lora: QuotaReserved False (Pending): {message}"
    )
    assert last_kueue_condition(None, "qwen-lora") == "qwen-lora has no Kueue Workload"


def test_the_full_node_scenario_plays_prods_eight_gpu_h100_node() -> None:
    from aksray.offline.runner import stack_file
    from aksray.rehearse.scenarios.full_node_gang import FullNode, full_node_plan

    prod = run_program(stack_file("prod")).settings
    target = full_node_plan(prod)
    assert target == FullNode("training", "h100", 8, "Standard_ND96isr_H100_v5")
    # Each worker asks exactly one GPU's share: the node's daemon sets keep the rest.
    assert target.share() == {"cpuPerGpu": "11814m", "memoryPerGpu": "238622Mi"}
    dev = run_program(stack_file("dev")).settings
    with pytest.raises(NotApplicableError, match="no GPU pool of more than one GPU per node"):
        full_node_plan(dev)


def test_the_full_node_scenario_needs_a_team_that_covers_the_node(tmp_path: Path) -> None:
    from aksray.rehearse.scenarios.full_node_gang import FullNode, full_node_plan

    two = _pool_of_two_teams(tmp_path, "Standard_ND96isr_H100_v5", gpus=4, nodes=1)
    # 4 + 4 borrowed
    assert full_node_plan(two) == FullNode("team-a", "gpu", 8, "Standard_ND96isr_H100_v5")
    alone = _pool_of_two_teams(tmp_path, "Standard_ND96isr_H100_v5", gpus=4, nodes=1, lend=0)
    with pytest.raises(NotApplicableError, match="covers a whole Standard_ND96isr_H100_v5 node"):
        full_node_plan(alone)


def test_the_full_node_check_reads_where_the_gpu_workers_are_bound() -> None:
    from aksray.rehearse.scenarios.full_node_gang import gpu_nodes_of

    def pod(node: str, gpus: int) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"aksray.io/workload": "qwen-lora"}},
            "spec": {
                "nodeName": node,
                "containers": [{"resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}],
            },
        }

    sample = Sample(
        t=1.0, workloads=[], pods=[pod("cpu-0", 0), pod("h100-0", 1), pod("h100-0", 1)],
        owners={}, clusters={}, nodes={}, flavor_pool={}, queues={},
    )  # fmt: skip
    assert gpu_nodes_of(sample, "qwen-lora") == ["h100-0", "h100-0"]
