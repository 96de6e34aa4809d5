"""One source of truth for how a node pool is recognised and kept to itself.

The AKS agent pools (components/cluster.py), the Kueue ResourceFlavors (manifests/kueue.py) and
the capacity checks of `aksray plan` all read the labels and taints from here, so a pod that a
flavor admits always carries exactly the node selector and tolerations of the pool it will run on.
"""

from __future__ import annotations

from typing import Final

SYSTEM_POOL_NAME: Final = "system"
# The CPU user pool: operators and Ray heads. Its Kueue flavor has the same name.
CPU_POOL_NAME: Final = "cpu"
RESERVED_POOL_NAMES: Final = frozenset({SYSTEM_POOL_NAME, CPU_POOL_NAME})

# AKS labels every node with the name of its agent pool under this key (a reserved prefix: AKS
# sets it, a pool definition may not). On an existing cluster, label the nodes of each pool the
# same way.
POOL_LABEL_KEY: Final = "kubernetes.azure.com/agentpool"

# Keeps everything but GPU workloads off GPU nodes. The GPU Operator's device plugin and the
# NVIDIA-aware pods tolerate it.
GPU_TAINT: Final[dict[str, str]] = {
    "key": "nvidia.com/gpu",
    "value": "present",
    "effect": "NoSchedule",
}
# AKS adds this taint to every spot node pool by itself (it cannot be removed); pods that may run
# on spot must tolerate it.
SPOT_TAINT: Final[dict[str, str]] = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "value": "spot",
    "effect": "NoSchedule",
}
# The system pool only runs critical add-ons.
CRITICAL_ADDONS_TAINT: Final[dict[str, str]] = {
    "key": "CriticalAddonsOnly",
    "value": "true",
    "effect": "NoSchedule",
}


def taint_string(taint: dict[str, str]) -> str:
    """The `key=value:Effect` form AKS agent pools take in `nodeTaints`."""
    return f"{taint['key']}={taint['value']}:{taint['effect']}"


def pool_node_labels(pool_name: str) -> dict[str, str]:
    """Labels that select the nodes of exactly this pool."""
    return {POOL_LABEL_KEY: pool_name}


def gpu_pool_declared_taints() -> list[dict[str, str]]:
    """Taints we ask AKS to put on a GPU pool (AKS adds the spot taint by itself)."""
    return [dict(GPU_TAINT)]


def gpu_pool_node_taints(spot: bool) -> list[dict[str, str]]:
    """Every taint a node of a GPU pool carries, the ones AKS adds included."""
    taints = gpu_pool_declared_taints()
    if spot:
        taints.append(dict(SPOT_TAINT))
    return taints


def tolerations_for(taints: list[dict[str, str]]) -> list[dict[str, str]]:
    """Tolerations that match exactly the given taints."""
    return [
        {"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]}
        for t in taints
    ]
