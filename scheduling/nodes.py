"""What a node and a pool can hold: node allocatable, one GPU's share of a node, pool capacity.

Node allocatable follows AKS's node resource reservations for Kubernetes 1.29 and later
(Microsoft Learn, "Node resource reservations in Azure Kubernetes Service (AKS)",
MicrosoftDocs/azure-aks-docs `articles/aks/node-resource-reservations.md`):

- CPU, kube-reserved, by cores on the host: 60m for the first core (6%), 40m for the second
  (4%), 20m each for cores 3-4 (2%), 10m for every core beyond 4 (1%) — which reproduces the
  published table 1/2/4/8/16/32/64 cores -> 60/100/140/180/260/420/740m; larger hosts continue
  at 1% per core.
- Memory, kube-reserved: the lesser of 20 MiB x maxPods + 50 MiB and 25% of the host's memory;
  plus the kubelet's eviction threshold `memory.available < 100Mi`.
- maxPods: 250, AKS's default per node with Azure CNI overlay (how the cluster is built).

capacity = the VM size's vCPUs and the memory its kernel reports (nominal x 63/64 - 256 MiB:
catalog/node_overhead.py says why and where the numbers come from); the 25% cap of kube-reserved
is taken of the nominal memory, as AKS does (Azure/AKS#3525: 1024 MiB on a 4 GiB node).
allocatable = capacity - kube-reserved - eviction threshold: what AKS reports as allocatable.

What the stack's pods can request on a GPU node (`node_free`) is its allocatable less the
requests of the daemon sets every GPU node runs (catalog/node_overhead.py): one GPU's share
(`gpu_share`), a pool's capacity and how many pods a node holds are counted from it. The system
and CPU pools' daemon sets are not modelled (their pods are heads and operators, sized far below
a node).
"""

from __future__ import annotations

from typing import Final

from catalog.node_overhead import (
    KERNEL_KEPT_DENOMINATOR,
    KERNEL_KEPT_FIXED_BYTES,
    KERNEL_KEPT_NUMERATOR,
    daemon_set_cpu_millis,
    daemon_set_memory_bytes,
)
from catalog.quantities import GPU_RESOURCE, RESOURCE_KINDS, RESOURCES
from catalog.vm_sizes import VM_SIZES
from scheduling.amounts import Amounts
from settings.model import ClusterSettings

MAX_PODS_PER_NODE: Final = 250
MIB: Final = 1024**2
EVICTION_MEMORY_BYTES: Final = 100 * MIB


def kube_reserved_cpu_millis(cores: int) -> int:
    """AKS kube-reserved CPU for a host with `cores` vCPUs."""
    reserved = 60 * min(cores, 1) + 40 * min(max(cores - 1, 0), 1)
    reserved += 20 * min(max(cores - 2, 0), 2) + 10 * max(cores - 4, 0)
    return reserved


def kube_reserved_memory_bytes(memory_bytes: int, max_pods: int = MAX_PODS_PER_NODE) -> int:
    """AKS (1.29+) kube-reserved memory: min(20 MiB x maxPods + 50 MiB, 25% of memory)."""
    return min(20 * MIB * max_pods + 50 * MIB, memory_bytes // 4)


def node_capacity(vm_size: str) -> Amounts:
    """What a node of this size reports as its capacity: its vCPUs, the memory its kernel
    reports (nominal less what the kernel keeps), its GPUs."""
    size = VM_SIZES[vm_size]
    nominal = size.memory_gib * 1024**3
    memory = nominal * KERNEL_KEPT_NUMERATOR // KERNEL_KEPT_DENOMINATOR - KERNEL_KEPT_FIXED_BYTES
    return Amounts({"cpu": size.vcpus * 1000, "memory": memory, GPU_RESOURCE: size.gpus})


def node_allocatable(vm_size: str, max_pods: int = MAX_PODS_PER_NODE) -> Amounts:
    """What AKS reports as allocatable on one node of this size: capacity less kube-reserved
    (of the nominal size) and the eviction threshold."""
    size = VM_SIZES[vm_size]
    capacity = node_capacity(vm_size)
    nominal = size.memory_gib * 1024**3
    return Amounts(
        {
            "cpu": capacity["cpu"] - kube_reserved_cpu_millis(size.vcpus),
            "memory": capacity["memory"]
            - kube_reserved_memory_bytes(nominal, max_pods)
            - EVICTION_MEMORY_BYTES,
            GPU_RESOURCE: size.gpus,
        }
    )


def daemon_set_requests(vm_size: str) -> Amounts:
    """What the daemon sets every node of this size runs request (GPU sizes; zero otherwise)."""
    if not VM_SIZES[vm_size].is_gpu:
        return Amounts({"cpu": 0, "memory": 0, GPU_RESOURCE: 0})
    return Amounts(
        {"cpu": daemon_set_cpu_millis(), "memory": daemon_set_memory_bytes(), GPU_RESOURCE: 0}
    )


def node_free(vm_size: str) -> Amounts:
    """What the stack's pods can request on one node of this size: allocatable less the daemon
    sets' requests."""
    allocatable = node_allocatable(vm_size)
    daemons = daemon_set_requests(vm_size)
    return Amounts({r: allocatable[r] - daemons[r] for r in RESOURCES})


def gpu_share(vm_size: str) -> Amounts:
    """One GPU's share of what the stack's pods can request on a node (`node_free`): CPU in
    whole millicores, memory in whole MiB (the units a pod's requests are written in, so N
    shares are exactly N pods' requests)."""
    node = node_free(vm_size)
    gpus = node[GPU_RESOURCE]
    if gpus == 0:
        raise ValueError(f"{vm_size} has no GPUs")
    share = {GPU_RESOURCE: 1}
    for resource in RESOURCES:
        if resource != GPU_RESOURCE:
            whole = MIB if RESOURCE_KINDS[resource].unit == "bytes" else 1
            share[resource] = node[resource] // gpus // whole * whole
    return Amounts(share)


def pool_capacity(cluster: ClusterSettings, flavor: str) -> Amounts:
    """Everything the stack's pods can request on the flavor's pool at its maximum size."""
    pool = cluster.pool(flavor)
    return node_free(pool.vm_size).times(pool.max_count)


def pods_per_node(requests: Amounts, vm_size: str) -> int:
    """How many pods of these requests one node of the size holds (by `node_free`)."""
    return requests.copies_in(node_free(vm_size))
