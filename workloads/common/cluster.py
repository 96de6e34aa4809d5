"""The driver's view of its Ray cluster (the driver already called ray.init): run a function on
every node, and reserve what the job needs before it starts any work.

A RayJob's Ray cluster has exactly the pods Kueue admitted: what a payload asks Ray for must fit
those pods, or Ray waits for nodes that never come while the job keeps its GPUs. So each
payload reserves its GPU bundles in a placement group first, and fails within
`RESERVE_TIMEOUT_S` with what it needed and what the cluster offers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# KubeRay submits a RayJob once every pod of its cluster is ready, so the nodes have joined by
# then; the wait covers a slow join, never a pod that does not exist.
RESERVE_TIMEOUT_S = 300.0
# The resources a bundle is described by, in this order, in messages.
_SHOWN = ("CPU", "GPU")

Bundle = Mapping[str, float]

# The CPUs Ray advertises on each GPU worker of this job (its `num-cpus`), set by the platform on
# every Ray container from the same numbers as the pod's requests (manifests/ray_pods.py).
WORKER_CPUS_ENV = "AKSRAY_GPU_WORKER_CPUS"


def gpu_worker_cpus(default: int) -> int:
    """The CPUs of one GPU worker, as the platform sized it (`default` outside the platform)."""
    import os

    value = os.environ.get(WORKER_CPUS_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else default


class ClusterTooSmallError(RuntimeError):
    """The Ray cluster cannot hold what the payload needs."""


def on_every_node(function: Callable[..., Any], *args: Any) -> list[Any]:
    """Call `function(*args)` on each alive node, pinned there; return the results."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(num_cpus=0, max_retries=0)(function)
    nodes = [node["NodeID"] for node in ray.nodes() if node["Alive"]]
    refs = [
        task.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)
        ).remote(*args)
        for node_id in nodes
    ]
    return list(ray.get(refs))


def describe_resources(resources: Mapping[str, float]) -> str:
    """`{CPU: 10, GPU: 1}`: CPU and GPU always, other resources never (node ids, memory)."""
    return "{" + ", ".join(f"{key}: {resources.get(key, 0):g}" for key in _SHOWN) + "}"


def describe_nodes(nodes: Iterable[Mapping[str, Any]]) -> str:
    """Each alive node's CPUs and GPUs, as `ray.nodes()` reports them."""
    alive = [node for node in nodes if node.get("Alive")]
    if not alive:
        return "no alive node"
    return ", ".join(describe_resources(node.get("Resources", {})) for node in alive)


def unsatisfiable(
    purpose: str,
    bundles: Sequence[Bundle],
    strategy: str,
    timeout_s: float,
    nodes: Iterable[Mapping[str, Any]],
) -> str:
    """The one-paragraph reason a reservation failed, with the fix."""
    shapes = sorted({describe_resources(bundle) for bundle in bundles})
    return (
        f"{purpose} needs {len(bundles)} x {' + '.join(shapes)} ({strategy}) and the Ray "
        f"cluster could not reserve it within {timeout_s:g} s; its nodes offer "
        f"{describe_nodes(nodes)}. Each worker pod of the RayJob must offer one bundle: "
        "give the worker group that many pods with at least these CPUs and GPUs each, "
        "or ask for less."
    )


def reserve(
    bundles: Sequence[Bundle],
    *,
    purpose: str,
    strategy: str = "PACK",
    timeout_s: float = RESERVE_TIMEOUT_S,
) -> Any:
    """A ready placement group of `bundles`, or ClusterTooSmallError after `timeout_s` (and the
    pending group removed, so nothing stays queued in Ray)."""
    import ray
    from ray.util.placement_group import placement_group, remove_placement_group

    group = placement_group([dict(bundle) for bundle in bundles], strategy=strategy)
    if group.wait(timeout_seconds=timeout_s):
        return group
    remove_placement_group(group)
    raise ClusterTooSmallError(unsatisfiable(purpose, bundles, strategy, timeout_s, ray.nodes()))


def bundle_nodes(group: Any) -> list[str]:
    """The node id each bundle of a ready placement group was placed on, by bundle index."""
    from ray.util.placement_group import placement_group_table

    placed = placement_group_table(group)["bundles_to_node_id"]
    return [placed[index] for index in range(len(placed))]


def node_addresses() -> dict[str, str]:
    """Node id -> the node's IP address, for every alive node."""
    import ray

    return {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes() if node["Alive"]}
