"""The shape of a workload spec and the catalog of the four payloads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

WorkloadKind = Literal["RayJob", "RayService"]


@dataclass(frozen=True)
class PodShape:
    """Requests of one pod (limits equal requests for GPUs)."""

    cpu: str
    memory: str
    gpus: int = 0


@dataclass(frozen=True)
class WorkerGroup:
    name: str
    replicas: int  # fixed: minReplicas == maxReplicas == replicas (gangs never autoscale)
    pod: PodShape


@dataclass(frozen=True)
class WorkloadSpec:
    name: str  # the config key under `workloads:`
    package: str  # the folder under workloads/
    kind: WorkloadKind
    default_priority: str
    head: PodShape
    workers: tuple[WorkerGroup, ...]
    # Blob containers the payload reads or writes; empty when it needs no Blob at all.
    containers: tuple[str, ...]
    # Extra per-workload config keys this payload accepts besides enabled/team/priority.
    options: frozenset[str] = field(default_factory=frozenset)
    description: str = ""
