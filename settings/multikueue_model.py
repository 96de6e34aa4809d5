"""The frozen model of `multikueue`: worker clusters in named regions behind one manager.

Absent from a stack, `Settings.multikueue` is None and the stack is one cluster, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from settings.model import ClusterSettings, GpuPool, Resources


def worker_path(index: int) -> str:
    """`multikueue.workers[<index>]`: how every problem about a worker is reported."""
    return f"multikueue.workers[{index}]"


@dataclass(frozen=True)
class WorkerCluster:
    """One worker: its own AKS cluster in its own region, and each team's quota there."""

    name: str  # the MultiKueueCluster's name, and part of the worker's Azure names
    location: str
    cluster: ClusterSettings
    # team -> flavor -> nominal quota in this worker; a team not named has no quota here.
    quota: Mapping[str, Mapping[str, Resources]]

    def team_quota(self, team: str) -> Mapping[str, Resources]:
        return self.quota.get(team, {})


@dataclass(frozen=True)
class MultiKueueSettings:
    workers: tuple[WorkerCluster, ...]
    # Workloads that are not dispatched but run in one named worker (workload -> worker):
    # elastic ones must, MultiKueue does not resize a remote Ray cluster.
    regional: Mapping[str, str]
    # A label in the name of the manager's token Secret on each worker: a new label mints new
    # tokens at the next `pulumi up` and deletes the old ones ("" : the Secret keeps its name).
    token_rotation: str = ""

    def worker(self, name: str) -> WorkerCluster:
        return next(worker for worker in self.workers if worker.name == name)

    def worker_path(self, name: str) -> str:
        index = next(i for i, worker in enumerate(self.workers) if worker.name == name)
        return worker_path(index)

    @property
    def gpu_pools(self) -> tuple[GpuPool, ...]:
        """Every GPU pool by name, first worker's first: one flavor per pool name."""
        seen: dict[str, GpuPool] = {}
        for worker in self.workers:
            for pool in worker.cluster.gpu_pools:
                seen.setdefault(pool.name, pool)
        return tuple(seen.values())
