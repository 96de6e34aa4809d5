"""The frozen model of a stack's configuration: what every builder and component reads.

Configuration defaults are not here: a parser fills every field, from settings/defaults.py where
the stack file says nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from catalog.pools import CPU_POOL_NAME
from catalog.versions import ChartSource
from catalog.vm_sizes import VM_SIZES
from workloads.catalog import WORKLOADS

ClusterMode = Literal["aks", "existing"]
CLUSTER_MODES: Final[tuple[ClusterMode, ...]] = ("aks", "existing")
# The AKS pricing tier (the ManagedCluster's `sku.tier`): Free has no uptime SLA and is meant for
# clusters of up to 10 nodes; Standard adds the financially backed uptime SLA and a control
# plane sized for up to 5,000 nodes; Premium is Standard plus Long Term Support eligibility.
ClusterTier = Literal["Free", "Standard", "Premium"]
CLUSTER_TIERS: Final[tuple[ClusterTier, ...]] = ("Free", "Standard", "Premium")
GpuDriver = Literal["operator", "aks"]
GPU_DRIVERS: Final[tuple[GpuDriver, ...]] = ("operator", "aks")
# Azure's principal type of the identity running `pulumi up` (Azure checks it), or None to grant it
# nothing on the cluster.
DeployerPrincipalType = Literal["User", "ServicePrincipal", "None"]
DEPLOYER_PRINCIPAL_TYPES: Final[tuple[DeployerPrincipalType, ...]] = (
    "User",
    "ServicePrincipal",
    "None",
)
# Where vllm-batch and llm-serve load the base model from: the Hub at every start, or the copy
# model-stage put in Blob, streamed to the GPUs (Run:ai Model Streamer).
ModelSource = Literal["huggingface", "blob"]
MODEL_SOURCES: Final[tuple[ModelSource, ...]] = ("huggingface", "blob")
QueueingStrategy = Literal["BestEffortFIFO", "StrictFIFO"]
QUEUEING_STRATEGIES: Final[tuple[QueueingStrategy, ...]] = ("BestEffortFIFO", "StrictFIFO")
# Azure Container Registry service tiers that have artifact cache rules.
RegistrySku = Literal["Basic", "Standard", "Premium"]
REGISTRY_SKUS: Final[tuple[RegistrySku, ...]] = ("Basic", "Standard", "Premium")


@dataclass(frozen=True)
class SystemPool:
    vm_size: str
    count: int


@dataclass(frozen=True)
class CpuPool:
    vm_size: str
    min_count: int
    max_count: int


@dataclass(frozen=True)
class GpuPool:
    name: str
    vm_size: str
    min_count: int
    max_count: int
    spot: bool

    @property
    def gpus_per_node(self) -> int:
        return VM_SIZES[self.vm_size].gpus


@dataclass(frozen=True)
class MaintenanceWindow:
    """The weekly window in which AKS may upgrade the cluster and re-image its nodes."""

    day_of_week: str
    start_time: str  # "HH:MM" in the time zone of `utc_offset`
    duration_hours: int
    utc_offset: str  # "+HH:MM" or "-HH:MM"
    interval_weeks: int


@dataclass(frozen=True)
class ImageCache:
    """`cluster.imageCache`: an Azure Container Registry the nodes pull the Ray image through
    (an artifact cache rule for it, with the Docker Hub credentials a Key Vault holds). Off:
    every node pulls from Docker Hub itself."""

    enabled: bool
    sku: RegistrySku
    key_vault_id: str  # the Key Vault (resource id) holding the Docker Hub credentials
    username_secret: str  # its secret with the Docker Hub user name
    password_secret: str  # its secret with a Docker Hub access token

    @property
    def vault_name(self) -> str:
        return self.key_vault_id.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class ClusterSettings:
    mode: ClusterMode
    kubeconfig_context: str
    kubernetes_version: str
    gpu_driver: GpuDriver
    system_pool: SystemPool
    cpu_pool: CpuPool
    gpu_pools: tuple[GpuPool, ...]
    render_yaml_to: str
    # AKS local accounts (the static admin kubeconfig). Off unless a stack opts in.
    local_accounts: bool
    # Who `pulumi up` runs as; that principal gets cluster admin through Azure RBAC.
    deployer_principal_type: DeployerPrincipalType
    # Whether the stack writes its Azure role assignments (needs roleAssignments/write); false
    # leaves every one of them to an admin (aks mode only).
    create_role_assignments: bool
    # When AKS may upgrade and re-image (aks mode only).
    maintenance_window: MaintenanceWindow
    # The AKS pricing tier (aks mode only).
    tier: ClusterTier
    # The registry the Ray image is pulled through (aks mode only).
    image_cache: ImageCache

    def gpu_pool(self, name: str) -> GpuPool:
        return next(pool for pool in self.gpu_pools if pool.name == name)

    def pool(self, flavor: str) -> CpuPool | GpuPool:
        """The node pool behind a flavor: the CPU pool for `cpu`, else the GPU pool so named."""
        return self.cpu_pool if flavor == CPU_POOL_NAME else self.gpu_pool(flavor)

    def pool_path(self, flavor: str) -> str:
        """The config path of the pool behind a flavor: `cluster.cpuPool` or
        `cluster.gpuPools[<index>]`."""
        if flavor == CPU_POOL_NAME:
            return "cluster.cpuPool"
        index = next(i for i, pool in enumerate(self.gpu_pools) if pool.name == flavor)
        return f"cluster.gpuPools[{index}]"

    @property
    def flavors(self) -> tuple[str, ...]:
        """Kueue flavor names: the CPU pool's, then one per GPU pool in stack order."""
        return (CPU_POOL_NAME, *(pool.name for pool in self.gpu_pools))


@dataclass(frozen=True)
class StorageSettings:
    enabled: bool
    containers: tuple[str, ...]
    protect: bool
    # `existing` clusters: a Blob account the workloads use, created and secured outside the
    # stack (its access is the cluster owner's business: no identity is created for it).
    existing_account: str = ""


@dataclass(frozen=True)
class Resources:
    """What the stack file gives per resource (by Kubernetes resource name, canonical units of
    catalog/quantities.py RESOURCE_TABLE): absent where it left one out, UNLIMITED (-1) where a
    quota says `unlimited`. scheduling/queues.py fills in the rest."""

    given: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def amount(self, resource: str) -> int | None:
        """The amount given of a Kubernetes resource (`cpu`, `memory`, `nvidia.com/gpu`)."""
        return self.given.get(resource)


@dataclass(frozen=True)
class TeamSettings:
    name: str
    department: str
    namespace: str
    local_queue: str
    quota: Mapping[str, Resources]  # flavor -> nominal quota
    borrowing_limit: Mapping[str, Resources]
    lending_limit: Mapping[str, Resources]
    over_quota_weight: int
    queueing_strategy: QueueingStrategy
    # Groups whose users submit the team's work, and groups that only read it, in the team's
    # namespace (settings/access/teams.py); Entra ID object ids on an aks cluster.
    members: tuple[str, ...] = ()
    viewers: tuple[str, ...] = ()
    # The priority classes its Ray objects may name; None: those of its workloads
    # (settings/access/teams.py `allowed_priorities`).
    priorities: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DepartmentSettings:
    name: str
    teams: tuple[TeamSettings, ...]


def department_path(index: int) -> str:
    """`scheduling.departments[<index>]`: how every problem about a department is reported."""
    return f"scheduling.departments[{index}]"


def team_path(department: int, team: int) -> str:
    """`scheduling.departments[<d>].teams[<t>]`: how every problem about a team is reported."""
    return f"{department_path(department)}.teams[{team}]"


def workload_path(name: str) -> str:
    """`workloads.<name>`: how every problem about a workload is reported."""
    return f"workloads.{name}"


@dataclass(frozen=True)
class PodsReady:
    """Kueue's pod-readiness wait (manifests/helm_values.py `kueue_pods_ready`)."""

    # From admission until every pod of the job is ready; then Kueue evicts and requeues it.
    timeout_minutes: int
    # Requeues after such an eviction; one more timeout and Kueue deactivates the job.
    requeue_limit: int


@dataclass(frozen=True)
class SchedulingSettings:
    departments: tuple[DepartmentSettings, ...]
    # Let Σ team quotas of a flavor exceed what its pool holds at max size.
    allow_overcommit: bool
    # Kueue ClusterQueue queueing strategy of every team without its own.
    queueing_strategy: QueueingStrategy
    pods_ready: PodsReady
    # What the stack file wrote as team names that were refused (each reported at its name):
    # a workload or a worker's quota naming one is the same mistake, not a second one.
    refused_team_names: frozenset[str] = frozenset()

    # Derived once per (immutable) settings object: teams are looked up by name in loops over
    # teams and workloads, which must not be quadratic in the size of the organisation.
    @functools.cached_property
    def teams(self) -> tuple[TeamSettings, ...]:
        return tuple(team for dept in self.departments for team in dept.teams)

    @functools.cached_property
    def _team_paths(self) -> dict[str, tuple[TeamSettings, str]]:
        return {
            team.name: (team, team_path(d, t))
            for d, dept in enumerate(self.departments)
            for t, team in enumerate(dept.teams)
        }

    def team(self, name: str) -> TeamSettings:
        return self._team_paths[name][0]

    def team_path(self, name: str) -> str:
        """The config path of a team: `scheduling.departments[<d>].teams[<t>]`."""
        return self._team_paths[name][1]

    def department_path(self, name: str) -> str:
        """The config path of a department: `scheduling.departments[<d>]`."""
        index = next(d for d, dept in enumerate(self.departments) if dept.name == name)
        return department_path(index)


@dataclass(frozen=True)
class WorkloadSettings:
    name: str
    enabled: bool
    team: str
    priority: str
    workers: int | None  # only for payloads whose spec accepts `workers`
    # Use the LoRA adapter from Blob (`loraAdapter`, payloads whose spec accepts it). Off,
    # vllm-batch and llm-serve use the base model only (llm-serve then needs no Blob).
    lora_adapter: bool
    # RayJobs only: the run this stack asks for (`run`). Empty: the job is planned and checked
    # but not submitted yet ("staged") — its inputs must be in Blob first; a new value submits a
    # new run. A RayService has no runs: it is deployed whenever it is enabled.
    run: str
    # `modelSource` (vllm-batch, llm-serve); "huggingface" for payloads without the option.
    model_source: ModelSource = "huggingface"
    # The staged model's revision: `workloads.model-stage.revision`, the same for every workload
    # (model-stage writes that copy, the others stream it).
    model_revision: str = "main"
    # GPU workers of an elastic payload (llm-serve: `minReplicas`/`maxReplicas`, one Serve
    # replica per GPU worker; vllm-batch: `minWorkers`/`maxWorkers`); None for the others.
    min_workers: int | None = None
    max_workers: int | None = None
    # `cpuPerGpu` / `memoryPerGpu` (millicores, bytes): what each GPU worker asks per GPU, above
    # the payload's minimum; None: the minimum (scheduling/workers.py).
    cpu_per_gpu: int | None = None
    memory_per_gpu: int | None = None

    @property
    def elastic(self) -> bool:
        """Grows and shrinks between min_workers and max_workers (the Ray autoscaler, Kueue
        workload slices); False for a fixed gang."""
        return (self.max_workers or 0) > (self.min_workers or 0)

    @property
    def staged(self) -> bool:
        return self.enabled and WORKLOADS[self.name].kind == "RayJob" and not self.run


@dataclass(frozen=True)
class OperatorSettings:
    gpu_sharing: bool  # KAI fractional GPU sharing
    # Install the GPU Operator, KubeRay, Kueue and KAI. False: the cluster already runs them
    # (an existing cluster), or nothing can be installed (rendering YAML offline).
    install: bool
    # With install False: the actions the cluster's own KAI scheduler runs, as the stack file
    # declares them (catalog/kai.py names); None: not declared (the planner warns).
    kai_actions: tuple[str, ...] | None
    # Where KubeRay's and Kueue's charts come from (catalog/versions.py CHART_SETS).
    chart_source: ChartSource
    # With install False: `<namespace>/<name>` of the service account the cluster's own
    # KubeRay operator runs as; None: not declared (the chart's, kuberay-system/kuberay-operator).
    kuberay_service_account: str | None = None


@dataclass(frozen=True)
class ObservabilitySettings:
    """Metrics and dashboards (docs/monitoring.md)."""

    # aks: Azure Monitor workspace, managed Prometheus and scrape objects the metrics add-on
    # reads; existing: the same scrape objects for the cluster's own Prometheus Operator.
    enabled: bool
    # aks only: Azure Managed Grafana on the workspace, with the stack's dashboards.
    grafana: bool
    # existing only: the cluster runs the Prometheus Operator (monitoring.coreos.com CRDs).
    prometheus_operator: bool


# -- MultiKueue: worker clusters in named regions behind one manager ----------------------
def worker_path(index: int) -> str:
    """`multikueue.workers[<index>]`: how every problem about a worker is reported."""
    return f"multikueue.workers[{index}]"


@dataclass(frozen=True)
class WorkerCluster:
    """One worker: its own cluster in its own region (AKS, or existing with the manager), and
    each team's quota there."""

    name: str  # the MultiKueueCluster's name, and part of the worker's Azure names
    location: str
    cluster: ClusterSettings
    # team -> flavor -> nominal quota in this worker; a team not named has no quota here.
    quota: Mapping[str, Mapping[str, Resources]]
    api_server: str = ""  # where the manager reaches an existing worker ("": AKS says it)

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


@dataclass(frozen=True)
class Settings:
    project: str
    stack: str
    location: str
    cluster: ClusterSettings
    storage: StorageSettings
    scheduling: SchedulingSettings
    workloads: tuple[WorkloadSettings, ...]
    operators: OperatorSettings
    observability: ObservabilitySettings
    # Worker clusters behind this one (MultiKueueSettings); None: one cluster.
    multikueue: MultiKueueSettings | None = None
    # No Hugging Face token here: settings/load.py hands it over as a Pulumi secret.

    @property
    def enabled_workloads(self) -> tuple[WorkloadSettings, ...]:
        return tuple(w for w in self.workloads if w.enabled)

    @property
    def elastic_teams(self) -> frozenset[str]:
        """Teams with an enabled elastic workload (staged ones too): their elastic heads run
        as a service account of their own (manifests/access/autoscaler.py)."""
        return frozenset(w.team for w in self.enabled_workloads if w.elastic)
