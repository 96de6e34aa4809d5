"""Every default of the stack file, in one table: what a parser fills in for a key left out.

Nothing else in the project spells a default (Pulumi.yaml's `default:` for `location` is checked
against this table by the tests). Defaults that derive from another value are the parsers' own
rule, named here so the table is complete:

- a team's `namespace` and `localQueue` default to the team's name;
- a workload's `priority` defaults to its spec's `default_priority` (workloads/*/spec.py), its
  `workers` to the replicas of its spec's worker groups;
- a team's `queueingStrategy` defaults to `scheduling.queueingStrategy`;
- a workload's `modelSource` defaults to `blob` where `storage.enabled` is true, else
  `huggingface` (DEFAULT_MODEL_SOURCE_*); its `maxReplicas` / `maxWorkers` to its minimum (a
  fixed size).
"""

from __future__ import annotations

from typing import Final

from catalog.azure import MIN_MAINTENANCE_HOURS
from catalog.versions import ChartSource
from settings.model import (
    ClusterMode,
    ClusterTier,
    CpuPool,
    DeployerPrincipalType,
    GpuDriver,
    MaintenanceWindow,
    ModelSource,
    QueueingStrategy,
    RegistrySku,
    SystemPool,
)
from workloads.common.layout import DATASETS_CONTAINER, MODELS_CONTAINER

DEFAULT_LOCATION: Final = "eastus2"

# cluster
DEFAULT_CLUSTER_MODE: Final[ClusterMode] = "aks"
DEFAULT_KUBECONFIG_CONTEXT: Final = ""  # only an existing cluster names one
DEFAULT_KUBERNETES_VERSION: Final = "1.35"
# Standard unless a stack says otherwise: a cluster that runs GPU bills gets the uptime SLA and
# the control plane AKS sizes for more than 10 nodes (Free is "not advised for production").
# Standard costs a fixed fee per cluster-hour, less than a tenth of one A100 node-hour; a
# throwaway stack opts into Free (stacks/Pulumi.dev.yaml).
DEFAULT_CLUSTER_TIER: Final[ClusterTier] = "Standard"
DEFAULT_GPU_DRIVER: Final[GpuDriver] = "operator"
DEFAULT_SYSTEM_POOL: Final = SystemPool(vm_size="Standard_D4ds_v6", count=2)
DEFAULT_CPU_POOL: Final = CpuPool(vm_size="Standard_D8ds_v6", min_count=1, max_count=3)
DEFAULT_GPU_POOL_MIN_COUNT: Final = 0  # no idle GPU node, no idle GPU cost
DEFAULT_GPU_POOL_SPOT: Final = False
DEFAULT_RENDER_YAML_TO: Final = ""  # empty: apply to the cluster, render nothing
DEFAULT_LOCAL_ACCOUNTS: Final = False
DEFAULT_DEPLOYER_PRINCIPAL_TYPE: Final[DeployerPrincipalType] = "User"
DEFAULT_CREATE_ROLE_ASSIGNMENTS: Final = True
# Sunday 00:00-04:00 UTC, every week: the shortest window AKS accepts, at the quietest time of a
# typical week, weekly because a new node image ships every week.
DEFAULT_MAINTENANCE_WINDOW: Final = MaintenanceWindow(
    day_of_week="Sunday",
    start_time="00:00",
    duration_hours=MIN_MAINTENANCE_HOURS,
    utc_offset="+00:00",
    interval_weeks=1,
)

# Off unless a stack turns it on (prod does): it needs a Key Vault with Docker Hub credentials,
# which only the stack's owner can provide.
DEFAULT_IMAGE_CACHE_ENABLED: Final = False
# Standard: 100 GiB of included storage (the Ray image is about 10 GB per tag); Basic's 10 GiB
# holds one tag; Premium adds geo-replication, private endpoints and artifact streaming.
DEFAULT_REGISTRY_SKU: Final[RegistrySku] = "Standard"
# The names (not the values) of the two Key Vault secrets.
DEFAULT_DOCKER_HUB_USERNAME_SECRET: Final = "dockerhub-username"  # noqa: S105 - a name
DEFAULT_DOCKER_HUB_PASSWORD_SECRET: Final = "dockerhub-token"  # noqa: S105 - a name

# storage
DEFAULT_STORAGE_ENABLED: Final = True
# The shared containers every team reads (workloads/common/layout.py); each team also gets its
# own `<team>-data`, which is not listed here.
DEFAULT_CONTAINERS: Final = (DATASETS_CONTAINER, MODELS_CONTAINER)
DEFAULT_STORAGE_PROTECT: Final = False

# scheduling
DEFAULT_ALLOW_OVERCOMMIT: Final = False
DEFAULT_QUEUEING_STRATEGY: Final[QueueingStrategy] = "BestEffortFIFO"
DEFAULT_OVER_QUOTA_WEIGHT: Final = 1
# Kueue's pod-readiness timeout. It must hold the slowest healthy start of any workload, which
# Kueue times from admission: a GPU node scaled up from 0 (minutes), the GPU Operator's driver
# on it, the Ray image (~10 GB) pulled, and for the endpoint its model loaded too. 45 minutes
# leaves room over that; a job whose nodes never come holds its quota that long per attempt.
DEFAULT_PODS_READY_TIMEOUT_MINUTES: Final = 45
# Requeues after a pod-readiness eviction before Kueue deactivates the job: with the 60 s backoff
# base, four attempts over about three hours, then the quota is free for good.
DEFAULT_REQUEUE_LIMIT: Final = 3

# workloads
DEFAULT_WORKLOAD_ENABLED: Final = False
DEFAULT_LORA_ADAPTER: Final = True  # payloads whose spec accepts `loraAdapter`
DEFAULT_RUN: Final = ""  # no run yet: an enabled RayJob is staged
DEFAULT_MODEL_SOURCE_WITH_STORAGE: Final[ModelSource] = "blob"  # streamed from model-stage's copy
DEFAULT_MODEL_SOURCE_WITHOUT_STORAGE: Final[ModelSource] = "huggingface"
DEFAULT_MODEL_REVISION: Final = "main"  # model-stage's `revision`: pin a commit to fix the copy
DEFAULT_MIN_WORKERS: Final = 1  # llm-serve `minReplicas`, vllm-batch `minWorkers`

# operators
DEFAULT_OPERATORS_INSTALL: Final = True
DEFAULT_GPU_SHARING: Final = False
# observability: off unless a stack asks (it is Azure spend; prod turns it on). When on, an aks
# stack gets Managed Grafana with it.
DEFAULT_OBSERVABILITY_ENABLED: Final = False
DEFAULT_GRAFANA: Final = True
DEFAULT_PROMETHEUS_OPERATOR: Final = False

# The projects' own charts; `mcr` takes Microsoft's builds of KubeRay and Kueue.
DEFAULT_CHART_SOURCE: Final[ChartSource] = "upstream"
# What an existing cluster's KAI scheduler runs: not declared, so the planner warns that the
# stack cannot see or turn off its eviction actions.
DEFAULT_KAI_ACTIONS: Final[tuple[str, ...] | None] = None
