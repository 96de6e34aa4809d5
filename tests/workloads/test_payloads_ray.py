"""Each payload's Ray launch path on a real Ray cluster shaped like the RayJob that runs it.

The cluster (`ray.cluster_utils.Cluster`) has the nodes the dev stack's RayJob creates: a head
of 0 CPUs and 0 GPUs and one node per worker pod with that pod's CPUs and one GPU, as KubeRay
declares them to Ray (tests/support/ray_shape.py). Ray schedules on declared resources, so no
GPU is needed. Each payload runs its own reservation and launch code up to the point where its
workers hold their GPU bundles; the function the workers run records what they were given
instead of training. Where the cluster cannot hold the payload, it must fail within its
timeout, with a message naming what it needed and what the nodes offer.

Every wait is bounded: each reservation and each result is waited for with a timeout, so a hang
fails the test (Ray's blocking waits ignore signals, so an alarm could not). As a last resort,
`make test-payloads` ends the run with every thread's traceback when one test takes longer than
its faulthandler timeout. Payload tier: `make test-payloads`.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.ray_shape import entrypoint_argv, ray_nodes, stack_ray_job
from workloads.aurora_finetune import main as aurora
from workloads.common.cluster import ClusterTooSmallError
from workloads.qwen_lora import launch
from workloads.qwen_lora import main as qwen
from workloads.vllm_batch import main as vllm

pytestmark = pytest.mark.payload

# A result comes within this (four workers importing LLaMA-Factory on two cores), or the test
# fails.
RESULT_TIMEOUT_S = 180.0
FAIL_FAST_S = 5.0  # the reservation timeout the failing cases are given
# Ray would otherwise start one idle worker process per declared CPU: 48 on 2 real cores.
_RAY_ENV = {"RAY_enable_worker_prestart": "0"}


def _pending_groups() -> str:
    return f"placement groups not removed: {_groups()}"


def _groups(*states: str) -> list[tuple[str, list[Any]]]:
    """(state, bundles) of the placement groups in `states` (default: all but REMOVED)."""
    from ray.util.placement_group import placement_group_table

    return [
        (g["state"], list(g["bundles"].values()))
        for g in placement_group_table().values()
        if (g["state"] in states if states else g["state"] != "REMOVED")
    ]


class Clusters:
    """One Ray cluster at a time, started again only when the next test needs other nodes."""

    def __init__(self) -> None:
        self.shape: Any = None
        self.cluster: Any = None

    def start(self, job: dict[str, Any]) -> Any:
        import ray
        from ray.cluster_utils import Cluster

        shape = ray_nodes(job)
        if shape == self.shape:
            return self.cluster
        self.stop()
        head, workers = shape
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": head.num_cpus,
                "num_gpus": head.num_gpus,
                "include_dashboard": False,
            },
        )
        for node in workers:
            cluster.add_node(num_cpus=node.num_cpus, num_gpus=node.num_gpus)
        ray.init(address=cluster.address)
        cluster.wait_for_nodes()
        self.shape, self.cluster = shape, cluster
        return cluster

    def stop(self) -> None:
        import ray

        if self.cluster is not None:
            ray.shutdown()
            self.cluster.shutdown()
        self.shape = self.cluster = None


@pytest.fixture(scope="module")
def clusters() -> Iterator[Clusters]:
    saved = {key: os.environ.get(key) for key in _RAY_ENV}
    os.environ.update(_RAY_ENV)
    started = Clusters()
    try:
        yield started
    finally:
        started.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _gpu_nodes() -> dict[str, str]:
    """Node id -> address of every alive node that declares a GPU."""
    import ray

    return {
        n["NodeID"]: n["NodeManagerAddress"]
        for n in ray.nodes()
        if n["Alive"] and n["Resources"].get("GPU", 0) >= 1
    }


def _where_am_i() -> dict[str, Any]:
    """What a Ray worker was given: its resources, placement group, node and environment."""
    import ray

    context = ray.get_runtime_context()
    return {
        "resources": context.get_assigned_resources(),
        "gpu_ids": context.get_accelerator_ids()["GPU"],
        "placement_group": context.get_placement_group_id(),
        "node": context.get_node_id(),
        "env": {
            key: os.environ.get(key)
            for key in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK")
        },
    }


def _recording_worker() -> type:
    """LLaMA-Factory's own Worker (its __init__ sets LOCAL_RANK and the device), whose
    training function records what the worker was given instead of training."""
    from llamafactory.train.tuner import Worker

    class RecordingWorker(Worker):  # type: ignore[misc]
        def _training_function(self, config: dict[str, Any]) -> dict[str, Any]:
            return {**_where_am_i(), "args": config["args"]}

    return RecordingWorker


def _holding_every_gpu() -> Any:
    """A placement group that takes every GPU of the cluster, so nothing else can have one."""
    import ray
    from ray.util.placement_group import placement_group

    group = placement_group([{"GPU": 1}] * int(ray.cluster_resources()["GPU"]))
    assert group.wait(timeout_seconds=30)
    return group


def _fails_fast(call: Callable[[], Any]) -> str:
    """The ClusterTooSmallError message of `call`, which must come within the timeout and
    leave no reservation waiting in Ray."""
    started = time.monotonic()
    with pytest.raises(ClusterTooSmallError) as failure:
        call()
    assert time.monotonic() - started < FAIL_FAST_S + 15
    assert _groups("PENDING", "RESCHEDULING") == []
    return str(failure.value)


def _split_offer(message: str) -> tuple[str, list[str], str]:
    """(text before the nodes, the nodes in sorted order, text after): Ray lists nodes in no
    fixed order."""
    head, rest = message.split("its nodes offer ", 1)
    nodes, tail = rest.split(". ", 1)
    return head, sorted(re.findall(r"\{[^}]*\}", nodes)), tail


# --------------------------------------------------------------------------------------------
# qwen-lora: one LLaMA-Factory worker per GPU pod
# --------------------------------------------------------------------------------------------


def test_qwen_lora_training_workers_each_hold_one_gpu_bundle(clusters: Clusters) -> None:
    from ray.util.placement_group import remove_placement_group

    job = stack_ray_job("qwen-lora")
    cluster = clusters.start(job)
    options = qwen.parse_args(entrypoint_argv(job))
    gpu_nodes = _gpu_nodes()
    assert options.workers == len(gpu_nodes) == 4
    args = qwen.llamafactory_args(options)
    group = launch.reserve_workers(options.workers, timeout_s=60)
    try:
        records = launch.start_training(
            group, args, worker_class=_recording_worker(), timeout_s=RESULT_TIMEOUT_S
        )
    finally:
        remove_placement_group(group)
    assert [r["env"]["RANK"] for r in records] == [str(rank) for rank in range(4)]
    for record in records:
        assert record["resources"] == {"CPU": launch.WORKER_CPUS, "GPU": 1.0}
        assert len(record["gpu_ids"]) == 1
        assert record["placement_group"] == group.id.hex()
        assert record["env"]["WORLD_SIZE"] == "4"
        assert record["env"]["LOCAL_RANK"] == "0"  # set by LLaMA-Factory's Worker
        assert record["args"] == args
    # One worker on each GPU pod, none on the head; the rendezvous is rank 0's pod.
    nodes = [r["node"] for r in records]
    assert sorted(nodes) == sorted(gpu_nodes)
    assert cluster.head_node.node_id not in nodes
    assert {r["env"]["MASTER_ADDR"] for r in records} == {gpu_nodes[nodes[0]]}
    assert {r["env"]["MASTER_PORT"] for r in records} == {str(launch.MASTER_PORT)}


def test_qwen_lora_fails_fast_when_there_are_fewer_gpu_pods_than_workers(
    clusters: Clusters,
) -> None:
    job = stack_ray_job("qwen-lora")
    clusters.start(job)
    options = dataclasses.replace(qwen.parse_args(entrypoint_argv(job)), workers=5)
    message = _fails_fast(lambda: launch.reserve_workers(options.workers, timeout_s=FAIL_FAST_S))
    before, nodes, after = _split_offer(message)
    assert before == (
        "qwen-lora's 5 training workers (--workers 5) needs 5 x {CPU: 10, GPU: 1} (PACK) and "
        f"the Ray cluster could not reserve it within {FAIL_FAST_S:g} s; "
    )
    # What each GPU pod offers Ray: the CPU the stack derives per GPU (dev: 11), not a constant.
    (worker,) = set(ray_nodes(job)[1])
    offer = f"{{CPU: {worker.num_cpus}, GPU: {worker.num_gpus}}}"
    assert (worker.num_cpus, worker.num_gpus) == (11, 1)
    assert nodes == sorted(["{CPU: 0, GPU: 0}"] + [offer] * 4)
    assert after.startswith("Each worker pod of the RayJob must offer one bundle")


# --------------------------------------------------------------------------------------------
# aurora-finetune and vllm-batch: one GPU task or engine on the one GPU pod
# --------------------------------------------------------------------------------------------


def test_aurora_training_task_holds_the_gpu_pods_gpu(clusters: Clusters) -> None:
    job = stack_ray_job("aurora-finetune")
    cluster = clusters.start(job)
    options = aurora.parse_args(entrypoint_argv(job))

    def record(received: dict[str, Any]) -> dict[str, Any]:
        return {**_where_am_i(), "options": received}

    result = aurora.launch(
        options, function=record, timeout_s=60, result_timeout_s=RESULT_TIMEOUT_S
    )
    assert result["resources"] == {"CPU": 4.0, "GPU": 1.0}
    assert len(result["gpu_ids"]) == 1
    assert result["node"] in _gpu_nodes() and result["node"] != cluster.head_node.node_id
    assert result["options"]["run_id"] == options.run_id
    assert _pending_groups() == "placement groups not removed: []"


def test_aurora_fails_fast_without_a_free_gpu(clusters: Clusters) -> None:
    from ray.util.placement_group import remove_placement_group

    job = stack_ray_job("aurora-finetune")
    clusters.start(job)
    options = aurora.parse_args(entrypoint_argv(job))
    holder = _holding_every_gpu()
    try:
        message = _fails_fast(
            lambda: aurora.launch(options, function=lambda _: None, timeout_s=FAIL_FAST_S)
        )
    finally:
        remove_placement_group(holder)
    before, nodes, _ = _split_offer(message)
    assert before == (
        "aurora-finetune's training task needs 1 x {CPU: 4, GPU: 1} (PACK) and the Ray "
        f"cluster could not reserve it within {FAIL_FAST_S:g} s; "
    )
    assert nodes == ["{CPU: 0, GPU: 0}", "{CPU: 8, GPU: 1}"]


def test_vllm_engine_check_passes_and_leaves_the_gpu_to_ray_data(clusters: Clusters) -> None:
    import ray

    job = stack_ray_job("vllm-batch")
    clusters.start(job)
    options = vllm.parse_args(entrypoint_argv(job))
    vllm.check_engine_fits(options, timeout_s=60)
    assert _pending_groups() == "placement groups not removed: []"
    for _ in range(50):  # the probe's GPU comes back for Ray Data's engine actor
        if ray.available_resources().get("GPU") == 1.0:
            break
        time.sleep(0.2)
    assert ray.available_resources().get("GPU") == 1.0


def test_vllm_fails_fast_without_a_free_gpu(clusters: Clusters) -> None:
    from ray.util.placement_group import remove_placement_group

    job = stack_ray_job("vllm-batch")
    clusters.start(job)
    options = vllm.parse_args(entrypoint_argv(job))
    holder = _holding_every_gpu()
    try:
        message = _fails_fast(lambda: vllm.check_engine_fits(options, timeout_s=FAIL_FAST_S))
    finally:
        remove_placement_group(holder)
    before, nodes, _ = _split_offer(message)
    assert before == (
        "vllm-batch's vLLM engine needs 1 x {CPU: 0, GPU: 1} (PACK) and the Ray cluster "
        f"could not reserve it within {FAIL_FAST_S:g} s; "
    )
    assert nodes == ["{CPU: 0, GPU: 0}", "{CPU: 8, GPU: 1}"]
