"""Run a function once on every node of the Ray cluster (the driver already called ray.init)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
