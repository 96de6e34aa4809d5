"""GPU demand of a stack: what it bills while idle and what it needs at worst.

An elastic workload counts its minimum where a figure is about idle cost (the endpoint's
minimum replicas run while nothing else does) and its maximum where it is about the worst case
(every enabled workload scaled to its maximum at once, staged jobs included).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from aksray.plan.model.plan import Plan


def gpu_demand(plan: Plan) -> dict[str, int]:
    """`idleNodes`/`idleGpus`: per GPU pool the larger of the nodes it keeps (`minCount`) and the
    nodes the endpoints' minimums fill there, in whole nodes (a node is billed whole);
    `worstCaseGpus`: Σ every enabled workload's maximum; `poolGpus`: what the GPU pools hold at
    `maxCount`."""
    pools = {pool.name: pool for pool in plan.settings.cluster.gpu_pools}
    always_on: dict[str, int] = defaultdict(int)
    for workload in plan.workloads:
        if workload.spec.kind != "RayService":
            continue
        for pod_set in workload.pod_sets:
            if pod_set.flavor in pools and pod_set.pod_set.total_gpus:
                always_on[pod_set.flavor] += pod_set.pod_set.total_gpus
    nodes = {
        name: max(pool.min_count, math.ceil(always_on.get(name, 0) / pool.gpus_per_node))
        for name, pool in pools.items()
    }
    return {
        "idleNodes": sum(nodes.values()),
        "idleGpus": sum(count * pools[name].gpus_per_node for name, count in nodes.items()),
        "worstCaseGpus": sum(w.worst_case_gpus for w in plan.workloads),
        "poolGpus": sum(pool.max_count * pool.gpus_per_node for pool in pools.values()),
    }


def gpu_demand_lines(demand: Mapping[str, Any]) -> list[str]:
    return [
        f"GPU demand: {demand['idleGpus']} GPU(s) on {demand['idleNodes']} node(s) billed while "
        "idle (the endpoints' minimum replicas, the nodes GPU pools keep at minCount), "
        f"{demand['worstCaseGpus']} at worst (every enabled workload at its maximum at once; "
        f"the GPU pools hold {demand['poolGpus']})"
    ]
