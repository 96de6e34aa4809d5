"""The shape of a workload spec: what each payload needs from the platform.

A spec is plain data. The program (settings validation, the Ray manifest builders, the planner)
reads specs; it never imports payload code, which runs only inside Ray.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Final, Literal

WorkloadKind = Literal["RayJob", "RayService"]
# Field metadata: a fact about the workload that only the planner reads.
PLANNER_ONLY: Final = "planner_only"


@dataclass(frozen=True)
class PodShape:
    """Requests of one pod. Memory and GPU limits equal the requests; CPU has no limit."""

    cpu: str
    memory: str
    gpus: int = 0


@dataclass(frozen=True)
class WorkerGroup:
    """A group of Ray workers. For a GPU group, `pod`'s cpu and memory are the payload's
    MINIMUM per GPU (`minimum_why` says why): the platform sizes each pod from it and from the
    pool it runs on (scheduling/workers.py), never below it, never above a GPU's share of a node.
    """

    name: str
    replicas: int  # the gang Kueue admits first (minReplicas); a fixed group never changes
    pod: PodShape
    # Elastic groups only: the Ray autoscaler may grow the group up to this many pods, each
    # step admitted by Kueue as a workload slice. None: fixed (maxReplicas == replicas).
    max_replicas: int | None = None
    minimum_why: str = ""


@dataclass(frozen=True)
class WorkloadSpec:
    name: str  # the config key under `workloads:`; also the RayJob/RayService name stem
    package: str  # the folder under workloads/
    kind: WorkloadKind
    default_priority: str
    head: PodShape
    workers: tuple[WorkerGroup, ...]
    # Shared Blob containers (workloads/common/layout.py) the payload always reads.
    containers: tuple[str, ...]
    # Extra per-workload config keys this payload accepts besides enabled/team/priority.
    options: frozenset[str] = field(default_factory=frozenset)
    description: str = ""
    # RayJob: the module the job runs (`python -m <module> <args>`); None for a RayService.
    entrypoint_module: str | None = None
    # Shared containers the payload writes (model-stage stages models for every team): its
    # team gets write access to them.
    writes_shared: tuple[str, ...] = ()
    # The payload's command-line option naming its team's own container (`<team>-data`), where
    # it writes its outputs; None: it writes none.
    team_container_option: str | None = None
    # While the LoRA adapter is used (`loraAdapter: true`), reads it from the container of the
    # team that runs qwen-lora.
    reads_adapter: bool = False
    # Shared containers needed only while the base model streams from Blob (`modelSource: blob`).
    model_containers: tuple[str, ...] = ()
    # Environment every Ray container of this workload gets (plain, non-secret values).
    env: tuple[tuple[str, str], ...] = ()
    # Payload modules from other folders under workloads/ that this payload imports.
    shared_packages: tuple[str, ...] = ("common",)
    # RayJob: seconds KubeRay keeps the finished job's Ray cluster (logs, dashboard) before
    # deleting it. Kueue releases the job's quota the moment it finishes, so for this long the
    # cluster's GPUs are held outside any quota: keep it short (outputs and metrics go to Blob).
    # The RayJob object itself stays: it is a stack resource.
    ttl_seconds_after_finished: int = 60
    # GPU memory (GB, as Azure quotes a GPU's memory) one GPU worker needs to hold the model and
    # run; the planner refuses a pool whose GPUs have less (aksray/plan/checks/fit.py). 0: no GPU.
    # What the planner checks, not what runs: outside the run digest (`run_fields`).
    gpu_memory_gb: int = field(default=0, metadata={PLANNER_ONLY: True})

    def run_fields(self) -> dict[str, Any]:
        """The spec as a run depends on it: every field but those only the planner reads, so
        that a new planner fact never turns a finished job into a new run."""
        planner_only = {f.name for f in fields(self) if f.metadata.get(PLANNER_ONLY)}
        return {k: v for k, v in asdict(self).items() if k not in planner_only}

    @property
    def gpu_group(self) -> WorkerGroup | None:
        """The GPU worker group, if the payload has one."""
        return next((group for group in self.workers if group.pod.gpus), None)

    def containers_for(self, *, blob_model: bool = False) -> tuple[str, ...]:
        """Every shared Blob container the payload reads or writes with these settings."""
        model = self.model_containers if blob_model else ()
        return tuple(dict.fromkeys((*self.containers, *self.writes_shared, *model)))

    def uses_blob(self, *, lora_adapter: bool, blob_model: bool = False) -> bool:
        """Whether the payload reaches Blob at all with these settings."""
        return (
            bool(self.containers_for(blob_model=blob_model))
            or self.team_container_option is not None
            or (self.reads_adapter and lora_adapter)
        )
