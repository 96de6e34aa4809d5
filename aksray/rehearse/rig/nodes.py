"""kwok Nodes shaped like the stack's AKS pools, from the same catalog `aksray plan` uses.

One Node per pool node up to the pool's maximum size (a pool scales there at most): the labels
AKS puts on its nodes (agent pool, mode, instance type, spot priority) and the GPU Operator's
(GPU present, product, count), the taints of the pool (`manifests/pools.py`), and the capacity
(the memory the kernel reports) and allocatable (less AKS's reservations) of the model
`aksray plan` uses (`scheduling/nodes.py`). kwok keeps the status it is created with, so the rig
checks the catalog and the formula too.

Each GPU node also gets one pod per daemon set an AKS GPU node runs, with that daemon set's
requests (catalog/node_overhead.py), bound to the node and run by kwok: the schedulers place the
stack's pods beside them, as on AKS, where the daemon sets' pods take their share of every node
before any worker arrives. They live in kube-system, labelled with the rehearsal, and go with
their node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from catalog.node_overhead import GPU_NODE_DAEMON_SETS
from catalog.pools import (
    CPU_POOL_NAME,
    CRITICAL_ADDONS_TAINT,
    POOL_LABEL_KEY,
    SPOT_TAINT,
    SYSTEM_POOL_NAME,
    gpu_pool_node_taints,
)
from catalog.quantities import GPU_RESOURCE
from catalog.vm_sizes import VM_SIZES
from scheduling.nodes import MAX_PODS_PER_NODE, node_allocatable, node_capacity

if TYPE_CHECKING:
    from settings.model import ClusterSettings

# Marks the Nodes (and daemon-set stand-ins) a rehearsal created, so cleanup on a user's cluster
# touches only those.
REHEARSAL_LABEL: Final = "aksray.io/rehearsal"
# On a daemon-set stand-in: the daemon set it stands for, and the node it runs on.
STANDS_FOR_LABEL: Final = "aksray.io/stands-for"
NODE_LABEL: Final = "aksray.io/node"
DAEMON_SET_NAMESPACE: Final = "kube-system"


@dataclass(frozen=True)
class PoolNodes:
    """The nodes one pool can have: name, VM size, how many, and what they carry."""

    pool: str
    vm_size: str
    count: int
    mode: str  # AKS node pool mode: System or User
    spot: bool
    taints: tuple[dict[str, str], ...]


def cluster_pools(cluster: ClusterSettings) -> list[PoolNodes]:
    pools = [
        PoolNodes(
            SYSTEM_POOL_NAME,
            cluster.system_pool.vm_size,
            cluster.system_pool.count,
            "System",
            False,
            (dict(CRITICAL_ADDONS_TAINT),) if cluster.mode == "aks" else (),
        ),
        PoolNodes(
            CPU_POOL_NAME, cluster.cpu_pool.vm_size, cluster.cpu_pool.max_count, "User", False, ()
        ),
    ]
    for pool in cluster.gpu_pools:
        taints = tuple(gpu_pool_node_taints(pool.spot))
        pools.append(PoolNodes(pool.name, pool.vm_size, pool.max_count, "User", pool.spot, taints))
    return pools


def node_name(pool: str, index: int, scale_set: int = 0) -> str:
    """AKS's naming: aks-<pool>-<scale set id>-vmss<6-digit index>; a pool AKS replaces (a new
    VM size) comes back with a new scale set, hence new node names (`scale_set`)."""
    return f"aks-{pool}-{10000000 + scale_set}-vmss{index:06d}"


def node_object(pool: PoolNodes, index: int, rehearsal: str, scale_set: int = 0) -> dict[str, Any]:
    size = VM_SIZES[pool.vm_size]
    capacity_of = node_capacity(pool.vm_size)
    allocatable = node_allocatable(pool.vm_size)
    name = node_name(pool.pool, index, scale_set)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": pool.vm_size,
        POOL_LABEL_KEY: pool.pool,
        "agentpool": pool.pool,
        "kubernetes.azure.com/mode": pool.mode.lower(),
        "type": "kwok",
        REHEARSAL_LABEL: rehearsal,
    }
    if pool.spot:
        labels[SPOT_TAINT["key"]] = SPOT_TAINT["value"]
    capacity = {
        "cpu": f"{capacity_of['cpu']}m",
        "memory": f"{capacity_of['memory'] // 1024}Ki",
        "pods": str(MAX_PODS_PER_NODE),
        "ephemeral-storage": "256Gi",
    }
    alloc = {
        "cpu": f"{allocatable['cpu']}m",
        "memory": f"{allocatable['memory'] // 1024}Ki",
        "pods": str(MAX_PODS_PER_NODE),
        "ephemeral-storage": "256Gi",
    }
    if size.gpus:
        labels.update(
            {
                "kubernetes.azure.com/accelerator": "nvidia",
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.count": str(size.gpus),
                "nvidia.com/gpu.product": size.gpu_model.replace(" ", "-"),
            }
        )
        capacity[GPU_RESOURCE] = str(size.gpus)
        alloc[GPU_RESOURCE] = str(size.gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            # kwok manages the node (heartbeats, pod lifecycle); no kubelet exists.
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": [dict(t) for t in pool.taints]},
        "status": {
            "capacity": capacity,
            "allocatable": alloc,
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kubeletVersion": "fake",
                "kubeProxyVersion": "fake",
                "bootID": "",
                "containerRuntimeVersion": "",
                "kernelVersion": "",
                "machineID": "",
                "osImage": "",
                "systemUUID": "",
            },
        },
    }


def pool_node_objects(
    pool: PoolNodes, rehearsal: str, count: int | None = None
) -> list[dict[str, Any]]:
    return [node_object(pool, i, rehearsal) for i in range(pool.count if count is None else count)]


def daemon_set_pods(pool: PoolNodes, index: int, rehearsal: str) -> list[dict[str, Any]]:
    """One pod per daemon set an AKS GPU node runs, with its requests, bound to that node; none
    on a node without GPUs."""
    if not VM_SIZES[pool.vm_size].is_gpu:
        return []
    node = node_name(pool.pool, index)
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{daemon.name}-{node}",
                "namespace": DAEMON_SET_NAMESPACE,
                "labels": {
                    REHEARSAL_LABEL: rehearsal,
                    STANDS_FOR_LABEL: daemon.name,
                    NODE_LABEL: node,
                },
            },
            "spec": {
                "nodeName": node,
                "tolerations": [{"operator": "Exists"}],
                "containers": [
                    {
                        "name": "stand-in",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {
                            "requests": {
                                "cpu": f"{daemon.cpu_millis}m",
                                "memory": f"{daemon.memory_mib}Mi",
                            }
                        },
                    }
                ],
            },
        }
        for daemon in GPU_NODE_DAEMON_SETS
    ]
