"""GPU workers sized by the node: what each asks per GPU, and how a pool's nodes hold them.

A GPU worker asks, per GPU, the payload's minimum (its spec, with the reason) or what the stack
asks above it (`workloads.<name>.cpuPerGpu` / `memoryPerGpu`), in the units Kubernetes and Kueue
count exactly (millicores, bytes; the minimums are whole cores and Gi). It must never ask more
than one GPU's share of a node of a pool it can run on (scheduling/nodes.py `gpu_share`: the
node's allocatable less its daemon sets' requests, divided by its GPUs, rounded down to a
millicore and a MiB). Then:

- a full node holds a full gang: GPUs-per-node workers fit on one node (no GPU stranded);
- a team's quota of N GPUs on a pool comes with N shares of CPU and memory (scheduling/queues.py),
  so it admits a gang of N one-GPU workers without borrowing CPU or memory.

`checks` in the planner turn a minimum above a share into an error naming both numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from catalog.quantities import GPU_RESOURCE, RESOURCE_KINDS
from catalog.vm_sizes import VM_SIZES
from scheduling.amounts import Amounts
from scheduling.nodes import gpu_share, node_free
from workloads.catalog import WORKLOADS
from workloads.spec import WorkloadSpec

if TYPE_CHECKING:
    from settings.model import Settings


class PerGpuAsk(Protocol):
    """What a workload's settings ask per GPU (settings.model.WorkloadSettings fits)."""

    @property
    def cpu_per_gpu(self) -> int | None: ...
    @property
    def memory_per_gpu(self) -> int | None: ...


def minimum_per_gpu(spec: WorkloadSpec) -> Amounts:
    """What the payload needs per GPU (its spec; the reason is `minimum_why`)."""
    group = spec.gpu_group
    if group is None:
        raise ValueError(f"{spec.name} has no GPU workers")
    parse = {r: RESOURCE_KINDS[r].parse for r in ("cpu", "memory")}
    return Amounts(
        {"cpu": parse["cpu"](group.pod.cpu), "memory": parse["memory"](group.pod.memory)}
    ) + Amounts({GPU_RESOURCE: 1})


def per_gpu(spec: WorkloadSpec, ask: PerGpuAsk | None = None) -> Amounts:
    """What each GPU of a worker comes with: the stack's ask where it gives one, else the
    payload's minimum (the settings never let an ask go below it)."""
    least = minimum_per_gpu(spec)
    cpu = getattr(ask, "cpu_per_gpu", None)
    memory = getattr(ask, "memory_per_gpu", None)
    return Amounts(
        {
            "cpu": least["cpu"] if cpu is None else max(cpu, least["cpu"]),
            "memory": least["memory"] if memory is None else max(memory, least["memory"]),
            GPU_RESOURCE: 1,
        }
    )


def worker_requests(spec: WorkloadSpec, ask: PerGpuAsk | None = None) -> Amounts:
    """One GPU worker pod's requests: per GPU times its GPUs."""
    group = spec.gpu_group
    assert group is not None
    return per_gpu(spec, ask).times(group.pod.gpus)


def ray_cpus(requests: Amounts) -> int:
    """The CPUs Ray advertises for a pod (`num-cpus` takes whole CPUs: rounded down)."""
    return requests["cpu"] // 1000


def ray_resources(requests: Amounts) -> dict[str, str]:
    """A GPU worker's `rayStartParams` resources: the pod's CPUs (whole) and memory (bytes), so
    Ray's accounting and the payloads' reservations use the pod's own numbers."""
    return {"num-cpus": str(ray_cpus(requests)), "memory": str(requests["memory"])}


def gpu_worker_ray_cpus(spec: WorkloadSpec, ask: PerGpuAsk | None = None) -> int | None:
    """The CPUs Ray advertises on each GPU worker of the payload; None without GPU workers."""
    return ray_cpus(worker_requests(spec, ask)) if spec.gpu_group is not None else None


def fits_share(per_gpu_amounts: Amounts, vm_size: str) -> bool:
    """Whether one GPU's worth fits one GPU's share of a node of this size."""
    return per_gpu_amounts.fits_in(gpu_share(vm_size))


def gpus_used_per_node(requests: Amounts, vm_size: str) -> int:
    """GPUs a full node of this size gives such workers at once (the rest stranded)."""
    gpus = VM_SIZES[vm_size].gpus
    pods = requests.copies_in(node_free(vm_size))
    return min(gpus, pods * requests[GPU_RESOURCE])


def packing(requests: Amounts, vm_size: str) -> float:
    """The share of a full pool's GPUs such workers can use at once (1.0: none stranded)."""
    gpus = VM_SIZES[vm_size].gpus
    return gpus_used_per_node(requests, vm_size) / gpus if gpus else 0.0


@dataclass(frozen=True)
class Packing:
    """How much of a full pool one GPU workload can use at once."""

    pool: str
    vm_size: str
    workload: str
    used_per_node: int  # GPUs a full node gives the workload's workers
    gpus_per_node: int

    @property
    def share(self) -> float:
        return self.used_per_node / self.gpus_per_node

    def line(self) -> str:
        return (
            f"{self.pool} ({self.vm_size}): {self.workload} uses {self.used_per_node} of "
            f"{self.gpus_per_node} GPUs per node, {self.share:.0%} of the full pool"
        )


def pool_packing(settings: Settings) -> list[Packing]:
    """Per GPU pool and per enabled GPU workload whose team has quota there: the share of the
    pool's GPUs its workers can use at once, all nodes full (the goal: 100 %)."""
    rows = []
    for pool in settings.cluster.gpu_pools:
        for workload in settings.enabled_workloads:
            spec = WORKLOADS[workload.name]
            team = settings.scheduling.team(workload.team)
            if spec.gpu_group is None or pool.name not in team.quota:
                continue
            requests = worker_requests(spec, workload)
            rows.append(
                Packing(
                    pool.name,
                    pool.vm_size,
                    workload.name,
                    gpus_used_per_node(requests, pool.vm_size),
                    VM_SIZES[pool.vm_size].gpus,
                )
            )
    return rows
