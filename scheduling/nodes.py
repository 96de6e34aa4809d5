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

allocatable = VM size (vCPUs, memory) - kube-reserved - eviction threshold. The VM's memory is
taken as the node's capacity; the kernel keeps a little more, which this model ignores.
"""

from __future__ import annotations

from typing import Final

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


def node_allocatable(vm_size: str, max_pods: int = MAX_PODS_PER_NODE) -> Amounts:
    """What pods can request on one node of this size."""
    size = VM_SIZES[vm_size]
    memory = size.memory_gib * 1024**3
    return Amounts(
        {
            "cpu": size.vcpus * 1000 - kube_reserved_cpu_millis(size.vcpus),
            "memory": memory - kube_reserved_memory_bytes(memory, max_pods) - EVICTION_MEMORY_BYTES,
            GPU_RESOURCE: size.gpus,
        }
    )


def gpu_share(vm_size: str) -> Amounts:
    """One GPU's share of a node's allocatable: CPU in whole millicores, memory in whole MiB
    (the units a pod's requests are written in, so N shares are exactly N pods' requests)."""
    node = node_allocatable(vm_size)
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
    """Everything pods can request on the flavor's pool at its maximum size."""
    pool = cluster.pool(flavor)
    return node_allocatable(pool.vm_size).times(pool.max_count)


def pods_per_node(requests: Amounts, vm_size: str) -> int:
    """How many pods of these requests one node of the size holds (by node allocatable)."""
    return requests.copies_in(node_allocatable(vm_size))
