"""LLaMA-Factory's training workers on the GPU pods of the RayJob: one worker per GPU.

The driver starts the workers itself rather than through LLaMA-Factory's Ray launcher
(`run_exp` with USE_RAY=1), because in LLaMA-Factory 0.9.5 that launcher cannot work from this
driver, which runs on the Ray head (no GPU):
- it decides the device on the driver: without CUDA there it is "cpu", so its placement group
  is one {CPU: 10} bundle, with no GPU, per CPU of the cluster (4 pods of 12 CPUs: 48 bundles,
  480 CPUs), and it waits for that group without a timeout, for ever, holding the admitted GPUs;
- it takes no per-worker resources or placement strategy (its Ray arguments are only
  ray_num_workers, ray_init_kwargs, master_addr and master_port);
- MASTER_ADDR defaults to the head's address, where no rank runs.
Launching it from a one-GPU task instead would hold one of the GPUs its own group then needs.

So: one {CPU: 10, GPU: 1} bundle per worker, reserved with a timeout (common/cluster.py); in
each bundle one LLaMA-Factory `Worker` actor (it sets LOCAL_RANK and the CUDA device and runs
LLaMA-Factory's training function); ranks ordered by node, MASTER_ADDR the node of rank 0.
Ray and LLaMA-Factory are imported only when the workers start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workloads.common.cluster import (
    RESERVE_TIMEOUT_S,
    bundle_nodes,
    gpu_worker_cpus,
    node_addresses,
    reserve,
)

# CPUs of each GPU pod kept for the staging and upload tasks; the training worker takes the rest
# (at least 10, as LLaMA-Factory's own launcher reserves: the pod's minimum is 11, spec.py).
SIDE_TASK_CPUS = 1
# Outside the platform (tests), the pod's minimum.
WORKER_CPUS = gpu_worker_cpus(11) - SIDE_TASK_CPUS
# torch.distributed's default port, on rank 0's pod, which runs nothing else.
MASTER_PORT = 29500


def worker_bundles(workers: int) -> list[dict[str, float]]:
    """The placement group: one bundle, one GPU, per training worker."""
    return [{"CPU": WORKER_CPUS, "GPU": 1} for _ in range(workers)]


def rank_order(nodes: Sequence[str], addresses: Mapping[str, str]) -> list[int]:
    """Bundle indices in rank order: by node address, so ranks on one node are adjacent."""
    return sorted(range(len(nodes)), key=lambda index: (addresses[nodes[index]], index))


def worker_env(rank: int, world_size: int, master_addr: str) -> dict[str, str]:
    """What torch.distributed reads in each worker (the variables LLaMA-Factory sets too)."""
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "MASTER_ADDR": master_addr,
        "MASTER_PORT": str(MASTER_PORT),
        "TORCHELASTIC_USE_AGENT_STORE": "False",
    }


def reserve_workers(workers: int, *, timeout_s: float = RESERVE_TIMEOUT_S) -> Any:
    """The ready placement group for `workers` training workers, or ClusterTooSmallError."""
    return reserve(
        worker_bundles(workers),
        purpose=f"qwen-lora's {workers} training workers (--workers {workers})",
        timeout_s=timeout_s,
    )


def start_training(
    group: Any,
    args: Mapping[str, Any],
    *,
    worker_class: type | None = None,
    timeout_s: float | None = None,
) -> list[Any]:
    """One worker actor per bundle of `group`, each training with `args`; waits for all
    (for ever by default: training takes as long as it takes)."""
    import ray
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    if worker_class is None:
        from llamafactory.train.tuner import Worker

        worker_class = Worker
    nodes = bundle_nodes(group)
    addresses = node_addresses()
    order = rank_order(nodes, addresses)
    master_addr = addresses[nodes[order[0]]]
    actor = ray.remote(worker_class)
    workers = [
        actor.options(
            num_cpus=WORKER_CPUS,
            num_gpus=1,
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=group, placement_group_bundle_index=index
            ),
            runtime_env={"env_vars": worker_env(rank, len(order), master_addr)},
        ).remote()
        for rank, index in enumerate(order)
    ]
    config = {"args": dict(args), "callbacks": []}
    runs = [worker._training_function.remote(config=config) for worker in workers]
    return list(ray.get(runs, timeout=timeout_s))
