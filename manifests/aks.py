"""AKS node pool shapes, as plain keyword arguments for azure-native's AgentPool.

Taints come from manifests/pools.py, so the Kueue flavors tolerate exactly these nodes. No
node labels are declared: AKS itself labels each node with its pool name
(`kubernetes.azure.com/agentpool`, a reserved prefix a pool may not set), and the flavors select
on that label.
"""

from __future__ import annotations

from typing import Any, Literal

from manifests.pools import (
    CPU_POOL_NAME,
    CRITICAL_ADDONS_TAINT,
    SYSTEM_POOL_NAME,
    gpu_pool_declared_taints,
    taint_string,
)

GpuDriverMode = Literal["operator", "aks"]


def system_pool_profile(vm_size: str, count: int, kubernetes_version: str) -> dict[str, Any]:
    """The inline system pool of the ManagedCluster: critical add-ons only."""
    return {
        "name": SYSTEM_POOL_NAME,
        "mode": "System",
        "vm_size": vm_size,
        "count": count,
        "enable_auto_scaling": False,
        "os_type": "Linux",
        "os_sku": "AzureLinux",
        "type": "VirtualMachineScaleSets",
        "orchestrator_version": kubernetes_version,
        "node_taints": [taint_string(CRITICAL_ADDONS_TAINT)],
    }


def cpu_pool_args(
    vm_size: str, min_count: int, max_count: int, kubernetes_version: str
) -> dict[str, Any]:
    """The CPU user pool: operators and Ray heads, autoscaled, never tainted."""
    return {
        "agent_pool_name": CPU_POOL_NAME,
        "mode": "User",
        "vm_size": vm_size,
        "count": min_count,
        "min_count": min_count,
        "max_count": max_count,
        "enable_auto_scaling": True,
        "os_type": "Linux",
        "os_sku": "AzureLinux",
        "type": "VirtualMachineScaleSets",
        "orchestrator_version": kubernetes_version,
    }


def gpu_pool_args(
    name: str,
    vm_size: str,
    *,
    min_count: int,
    max_count: int,
    spot: bool,
    gpu_driver: GpuDriverMode,
    kubernetes_version: str,
) -> dict[str, Any]:
    """A GPU user pool: autoscaled from `min_count`, tainted for GPU work only.

    `gpu_driver: operator` leaves the driver to the NVIDIA GPU Operator (`driver: None`);
    `aks` has AKS install it (`driver: Install`). The two are never mixed in one cluster.
    """
    args: dict[str, Any] = {
        "agent_pool_name": name,
        "mode": "User",
        "vm_size": vm_size,
        "count": min_count,
        "min_count": min_count,
        "max_count": max_count,
        "enable_auto_scaling": True,
        "os_type": "Linux",
        "os_sku": "Ubuntu",  # the GPU Operator's driver containers target Ubuntu node images
        "type": "VirtualMachineScaleSets",
        "orchestrator_version": kubernetes_version,
        "node_taints": [taint_string(t) for t in gpu_pool_declared_taints()],
        "gpu_profile": {"driver": "None" if gpu_driver == "operator" else "Install"},
    }
    if spot:
        # AKS adds the taint kubernetes.azure.com/scalesetpriority=spot:NoSchedule by itself.
        args.update(
            scale_set_priority="Spot",
            scale_set_eviction_policy="Delete",
            spot_max_price=-1,  # pay up to the on-demand price; never evicted for price
        )
    return args
