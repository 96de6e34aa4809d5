"""A `multikueue` stack split per cluster by the core: each cluster's recorded queues are the
core's queues of that cluster's settings, and the manager's quota is the workers' summed."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.offline.runner import RunResult, run_program, stack_file
from aksray.plan.model.plan import CLUSTER_QUEUE
from aksray.plan.report.multikueue_render import MANAGER_FOLDER, clusters_of
from scheduling.amounts import Amounts
from scheduling.multikueue import (
    manager_quota,
    manager_settings,
    team_workers,
    worker_quotas,
    worker_settings,
)
from scheduling.nodes import gpu_share
from scheduling.queues import read_cluster_queue, team_queues
from settings.model import Settings
from settings.parse import parse_settings
from tests.support.harness import P, stack_document

A100 = "Standard_NC24ads_A100_v4"
GIB = 2**30


@pytest.fixture(scope="module")
def result() -> RunResult:
    return run_program(stack_file("multiregion"), stack="multiregion")


def _settings(mutate: Any = None) -> Settings:
    config = stack_document("multiregion")["config"]
    if mutate is not None:
        mutate(config)
    raw = {key.removeprefix(P): value for key, value in config.items()}
    return parse_settings(raw, stack="multiregion")


def test_each_clusters_recorded_queues_are_the_cores_queues_of_its_settings(
    result: RunResult,
) -> None:
    settings = result.settings
    expected = {
        MANAGER_FOLDER: team_queues(manager_settings(settings)),
        **{w.name: team_queues(worker_settings(settings, w)) for w in settings.multikueue.workers},
    }
    recorded = {
        cluster: {
            str(r.inputs["metadata"]["name"]): read_cluster_queue(r.inputs)
            for r in part.resources
            if r.type == CLUSTER_QUEUE
        }
        for cluster, part in clusters_of(result).items()
    }
    assert recorded == expected
    # Only the manager's queue waits for MultiKueue's dispatch to a worker.
    assert {c: q["team-a"].admission_checks for c, q in recorded.items()} == {
        MANAGER_FOLDER: ("multikueue-team-a",),
        "weu": (),
        "sce": (),
    }


def test_the_manager_quota_is_the_sum_of_each_workers_effective_quota() -> None:
    """weu leaves the A100 flavor's cpu and memory out (its GPU share of the node, times 4);
    sce gives 2 GPUs with 20 CPU and leaves memory out (2 shares of memory)."""

    def sce_types_cpu(config: dict[str, Any]) -> None:
        sce = config[P + "multikueue"]["workers"][1]
        sce["quota"]["team-a"]["a100"] = {"gpu": 2, "cpu": 20}

    settings = _settings(sce_types_cpu)
    share = gpu_share(A100)
    weu_a100 = share.times(4)
    sce_a100 = Amounts.of(gpu=2, cpu=20_000, memory=share["memory"] * 2)
    heads = Amounts.of(cpu=10_000, memory=40 * GIB)
    assert worker_quotas(settings) == {
        "weu": {"team-a": {"a100": weu_a100, "cpu": heads}},
        "sce": {"team-a": {"a100": sce_a100, "cpu": heads}},
    }
    assert manager_quota(settings) == {
        "team-a": {"a100": weu_a100 + sce_a100, "cpu": heads.times(2)}
    }
    manager = team_queues(manager_settings(settings))["team-a"]
    assert manager.nominal("a100") == weu_a100 + sce_a100
    assert manager.nominal("cpu") == heads.times(2)


def test_a_team_without_quota_in_a_worker_is_not_sent_there() -> None:
    def weu_only(config: dict[str, Any]) -> None:
        config[P + "multikueue"]["workers"][1]["quota"] = {}
        config[P + "multikueue"]["regional"] = {"vllm-batch": "weu"}

    settings = _settings(weu_only)
    assert settings.multikueue is not None
    sce = settings.multikueue.worker("sce")
    assert team_workers(settings) == {"team-a": ("weu",)}
    assert worker_quotas(settings)["sce"] == {}
    assert worker_settings(settings, sce).scheduling.teams == ()
    assert manager_quota(settings)["team-a"]["a100"] == gpu_share(A100).times(4)


def test_the_reader_takes_admission_checks_from_either_of_kueues_fields() -> None:
    base = {"metadata": {"name": "q"}, "spec": {"resourceGroups": []}}
    strategy = {**base, "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "a"}]}}}
    plain = {**base, "spec": {"admissionChecks": ["b", "c"]}}
    assert read_cluster_queue(base).admission_checks == ()
    assert read_cluster_queue(strategy).admission_checks == ("a",)
    assert read_cluster_queue(plain).admission_checks == ("b", "c")
