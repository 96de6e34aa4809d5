"""What each payload reserves in Ray, against the Ray cluster its RayJob creates, without Ray.

The same reservations run on a real Ray cluster of those nodes in
tests/workloads/test_payloads_ray.py
(`make test-payloads`); here: that they fit the planned RayJobs exactly (one GPU per worker,
nothing on the head), and how the reservation fails when it cannot be had.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from tests.support.harness import planned
from tests.support.ray_shape import RayNode, entrypoint_argv, fits, ray_nodes, stack_ray_job
from workloads.aurora_finetune import main as aurora
from workloads.common import cluster
from workloads.qwen_lora import launch
from workloads.qwen_lora import main as qwen
from workloads.vllm_batch import main as vllm

RAY_JOB = "kubernetes:ray.io/v1:RayJob"


def _reservation(payload: str, argv: list[str]) -> list[dict[str, float]]:
    """The bundles the payload reserves for the arguments its RayJob gives it."""
    if payload == "qwen-lora":
        return launch.worker_bundles(qwen.parse_args(argv).workers)
    if payload == "aurora-finetune":
        aurora.parse_args(argv)
        return [dict(aurora.TRAIN_BUNDLE)]
    return vllm.engine_bundles(vllm.parse_args(argv))


@pytest.mark.parametrize("stack", ["dev+run", "prod+run"])
def test_every_ray_job_holds_what_its_payload_reserves_one_gpu_per_worker(stack: str) -> None:
    jobs = planned(stack).by_type(RAY_JOB)
    assert {job.inputs["metadata"]["labels"]["aksray.io/workload"] for job in jobs} == {
        "qwen-lora",
        "aurora-finetune",
        "vllm-batch",
        "model-stage",
    }
    for job in jobs:
        payload = job.inputs["metadata"]["labels"]["aksray.io/workload"]
        if payload == "model-stage":
            # It copies files in its driver and schedules no Ray work: no workers to hold any.
            assert ray_nodes(job.inputs)[1] == [], payload
            continue
        bundles = _reservation(payload, entrypoint_argv(job.inputs))
        head, workers = ray_nodes(job.inputs)
        assert head == RayNode(num_cpus=0, num_gpus=0), payload  # no work on the head
        assert all(bundle["GPU"] == 1 for bundle in bundles), payload
        assert fits(bundles, workers), (payload, bundles, workers)
        # qwen-lora: exactly one training worker per GPU pod, no GPU left idle.
        if payload == "qwen-lora":
            assert len(bundles) == sum(node.num_gpus for node in workers) == len(workers)


def test_the_ray_clusters_the_payload_tier_starts_are_the_planned_ones() -> None:
    """tests/support/ray_shape.py builds the dev RayJobs without Pulumi; the Ray nodes are
    those of the RayJobs the program plans."""
    planned_jobs = {
        job.inputs["metadata"]["labels"]["aksray.io/workload"]: job.inputs
        for job in planned("dev+run").by_type(RAY_JOB)
    }
    for payload, job in planned_jobs.items():
        assert ray_nodes(stack_ray_job(payload)) == ray_nodes(job), payload
    assert ray_nodes(planned_jobs["qwen-lora"]) == (RayNode(0, 0), [RayNode(11, 1)] * 4)
    assert ray_nodes(planned_jobs["aurora-finetune"]) == (RayNode(0, 0), [RayNode(8, 1)])


def test_bundles_that_exceed_the_pods_do_not_fit() -> None:
    pods = [RayNode(11, 1)] * 4
    assert fits(launch.worker_bundles(4), pods)
    assert not fits(launch.worker_bundles(5), pods)  # more workers than GPU pods
    assert not fits(launch.worker_bundles(4), [RayNode(8, 1)] * 4)  # pods of too few CPUs
    assert not fits(launch.worker_bundles(1), [RayNode(0, 0)])  # the head alone


def test_ranks_follow_the_nodes_and_rank_0s_node_is_the_rendezvous() -> None:
    nodes = ["n2", "n1", "n3", "n1"]
    addresses = {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3"}
    assert launch.rank_order(nodes, addresses) == [1, 3, 0, 2]
    assert launch.worker_env(1, 4, "10.0.0.1") == {
        "RANK": "1",
        "WORLD_SIZE": "4",
        "MASTER_ADDR": "10.0.0.1",
        "MASTER_PORT": "29500",
        "TORCHELASTIC_USE_AGENT_STORE": "False",
    }


_NODES = [
    {"Alive": True, "Resources": {"CPU": 0.0, "memory": 1.0, "node:__internal_head__": 1.0}},
    {"Alive": True, "Resources": {"CPU": 12.0, "GPU": 1.0}},
    {"Alive": False, "Resources": {"CPU": 12.0, "GPU": 1.0}},
]


def test_an_unsatisfiable_reservation_names_what_was_needed_and_what_the_nodes_offer() -> None:
    message = cluster.unsatisfiable(
        "qwen-lora's 4 training workers (--workers 4)",
        launch.worker_bundles(4),
        "PACK",
        300,
        _NODES,
    )
    assert message == (
        "qwen-lora's 4 training workers (--workers 4) needs 4 x {CPU: 10, GPU: 1} (PACK) and "
        "the Ray cluster could not reserve it within 300 s; its nodes offer {CPU: 0, GPU: 0}, "
        "{CPU: 12, GPU: 1}. Each worker pod of the RayJob must offer one bundle: give the "
        "worker group that many pods with at least these CPUs and GPUs each, or ask for less."
    )
    assert cluster.describe_nodes([]) == "no alive node"


class _FakeGroup:
    def __init__(self, bundles: list[dict[str, float]], strategy: str, ready: bool) -> None:
        self.bundles, self.strategy, self.ready = bundles, strategy, ready
        self.waited: list[float] = []

    def wait(self, timeout_seconds: float) -> bool:
        self.waited.append(timeout_seconds)
        return self.ready


def _fake_ray(monkeypatch: pytest.MonkeyPatch, *, ready: bool) -> dict[str, Any]:
    """A `ray` module whose placement groups are ready or never are; records what was done."""
    seen: dict[str, Any] = {"removed": []}

    def placement_group(bundles: list[dict[str, float]], strategy: str) -> _FakeGroup:
        group = seen["group"] = _FakeGroup(bundles, strategy, ready)
        return group

    fake = types.ModuleType("ray")
    fake.nodes = lambda: _NODES  # type: ignore[attr-defined]
    util = types.ModuleType("ray.util")
    groups = types.ModuleType("ray.util.placement_group")
    groups.placement_group = placement_group  # type: ignore[attr-defined]
    groups.remove_placement_group = seen["removed"].append  # type: ignore[attr-defined]
    for name, module in (("ray", fake), ("ray.util", util), ("ray.util.placement_group", groups)):
        monkeypatch.setitem(sys.modules, name, module)
    return seen


def test_a_reservation_that_is_not_ready_in_time_is_removed_and_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _fake_ray(monkeypatch, ready=False)
    with pytest.raises(cluster.ClusterTooSmallError) as failure:
        launch.reserve_workers(5, timeout_s=7)
    group = seen["group"]
    assert (group.bundles, group.strategy, group.waited) == (
        launch.worker_bundles(5),
        "PACK",
        [7],
    )
    assert seen["removed"] == [group]  # nothing stays queued in Ray
    assert str(failure.value).startswith(
        "qwen-lora's 5 training workers (--workers 5) needs 5 x {CPU: 10, GPU: 1} (PACK) and "
        "the Ray cluster could not reserve it within 7 s; its nodes offer {CPU: 0, GPU: 0}, "
        "{CPU: 12, GPU: 1}."
    )


def test_a_ready_reservation_is_kept_and_waited_for_at_most_the_default_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _fake_ray(monkeypatch, ready=True)
    assert launch.reserve_workers(4) is seen["group"]
    assert seen["group"].waited == [cluster.RESERVE_TIMEOUT_S] == [300.0]
    assert seen["removed"] == []
