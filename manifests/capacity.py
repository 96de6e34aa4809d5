"""What a node and a pool can hold, and the effective quota of a team in a flavor.

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

The effective quota fills what the stack file leaves out: on a GPU flavor, omitted cpu and memory
are "the GPU share of that pool's node allocatable" (allocatable / GPUs per node, times the
team's GPUs), so a team's GPU quota always comes with the CPU and memory its GPU pods can use on
those nodes. The same share fills cpu/memory of a GPU flavor's borrowing and lending limits when
only their gpu is given. `unlimited` (UNLIMITED) stands for the whole pool at its maximum size.
The Kueue and KAI builders and the planner all read these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from catalog.pools import CPU_POOL_NAME
from catalog.quantities import GPU_RESOURCE, RESOURCES, UNLIMITED
from catalog.vm_sizes import VM_SIZES
from settings.model import ClusterSettings, Resources, Settings, TeamSettings

MAX_PODS_PER_NODE: Final = 250
MIB: Final = 1024**2
EVICTION_MEMORY_BYTES: Final = 100 * MIB

Resource = Literal["cpu", "memory", "nvidia.com/gpu"]
LimitKind = Literal["borrowingLimit", "lendingLimit"]


@dataclass(frozen=True)
class Amounts:
    """CPU in millicores, memory in bytes, whole GPUs."""

    cpu_millis: int
    memory_bytes: int
    gpu: int

    def get(self, resource: str) -> int:
        return {"cpu": self.cpu_millis, "memory": self.memory_bytes, GPU_RESOURCE: self.gpu}[
            resource
        ]

    def times(self, factor: int) -> Amounts:
        return Amounts(self.cpu_millis * factor, self.memory_bytes * factor, self.gpu * factor)


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
        cpu_millis=size.vcpus * 1000 - kube_reserved_cpu_millis(size.vcpus),
        memory_bytes=memory - kube_reserved_memory_bytes(memory, max_pods) - EVICTION_MEMORY_BYTES,
        gpu=size.gpus,
    )


def gpu_share(vm_size: str) -> Amounts:
    """One GPU's share of a node's allocatable CPU (whole millicores) and memory (whole MiB)."""
    node = node_allocatable(vm_size)
    if node.gpu == 0:
        raise ValueError(f"{vm_size} has no GPUs")
    return Amounts(
        cpu_millis=node.cpu_millis // node.gpu,
        memory_bytes=node.memory_bytes // node.gpu // MIB * MIB,
        gpu=1,
    )


def pool_capacity(cluster: ClusterSettings, flavor: str) -> Amounts:
    """Everything pods can request on the flavor's pool at its maximum size."""
    pool = cluster.pool(flavor)
    return node_allocatable(pool.vm_size).times(pool.max_count)


def _given(resources: Resources | None, resource: str) -> int | None:
    return None if resources is None else resources.amount(resource)


def effective_quota(team: TeamSettings, flavor: str, settings: Settings) -> Amounts:
    """The team's nominal quota in a flavor, every resource filled in."""
    cluster = settings.cluster
    quota = team.quota.get(flavor)
    capacity = pool_capacity(cluster, flavor)

    def amount(resource: str, derived: int) -> int:
        given = _given(quota, resource)
        if given == UNLIMITED:
            return capacity.get(resource)
        return derived if given is None else given

    if flavor == CPU_POOL_NAME:
        return Amounts(cpu_millis=amount("cpu", 0), memory_bytes=amount("memory", 0), gpu=0)
    gpu = amount(GPU_RESOURCE, 0)
    share = gpu_share(cluster.pool(flavor).vm_size).times(gpu)
    return Amounts(
        cpu_millis=amount("cpu", share.cpu_millis),
        memory_bytes=amount("memory", share.memory_bytes),
        gpu=gpu,
    )


def effective_limit(
    team: TeamSettings, flavor: str, kind: LimitKind, settings: Settings
) -> dict[str, int | None]:
    """The team's borrowing or lending limit per resource of a flavor; None = no limit.

    The CPU flavor never borrows GPUs (limit 0: no flavor `cpu` anywhere has GPU quota).
    """
    limits = (team.borrowing_limit if kind == "borrowingLimit" else team.lending_limit).get(flavor)
    result: dict[str, int | None] = {r: _given(limits, r) for r in RESOURCES}
    if flavor == CPU_POOL_NAME:
        if kind == "borrowingLimit":
            result[GPU_RESOURCE] = 0
        else:
            result[GPU_RESOURCE] = None
        return result
    gpus = result[GPU_RESOURCE]
    if gpus is not None:
        share = gpu_share(settings.cluster.pool(flavor).vm_size).times(gpus)
        nominal = effective_quota(team, flavor, settings)
        for resource in ("cpu", "memory"):
            if result[resource] is None:
                derived = share.get(resource)
                # A team never lends more than it has (Kueue rejects lendingLimit > nominal).
                if kind == "lendingLimit":
                    derived = min(derived, nominal.get(resource))
                result[resource] = derived
    return result
