"""The stack configuration as one typed, frozen, validated model.

`load_settings()` reads `pulumi.Config` once, before any resource exists. Every problem in the
stack file is collected (not just the first) and raised together as a `SettingsError`, a
`pulumi.RunError`, so `pulumi up` prints the lines without a traceback and registers nothing.
Each problem names its config path the way `pulumi config set --path` spells it.

Parsing is pure (`parse_settings`) so the rules are tested without the Pulumi runtime.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

import pulumi
from pulumi.runtime import config as runtime_config

from catalog.azure import (
    AKS_POOL_NAME_PATTERN,
    BLOB_CONTAINER_NAME_PATTERN,
    MAX_MAINTENANCE_HOURS,
    MAX_MAINTENANCE_INTERVAL_WEEKS,
    MAX_POOL_NODES,
    MAX_STACK_NAME_LENGTH,
    MIN_MAINTENANCE_HOURS,
    STACK_NAME_PATTERN,
    WEEK_DAYS,
)
from catalog.pools import CPU_POOL_NAME, RESERVED_POOL_NAMES
from catalog.priorities import PRIORITY_CLASSES
from catalog.quantities import UNLIMITED, QuantityError, parse_cpu_millis, parse_memory_bytes
from catalog.versions import (
    CHARTS,
    KAI_RESOURCE_RESERVATION_NAMESPACE,
    KAI_SCALE_ADJUST_NAMESPACE,
)
from catalog.vm_sizes import VM_SIZES, cpu_sizes, gpu_sizes
from workloads.catalog import WORKLOADS

PROJECT: Final = "aks-ray-platform"
# Config namespaces a stack file may use besides the project's: the providers' own settings.
KNOWN_NAMESPACES: Final = frozenset({"azure-native", "kubernetes", "random", "pulumi"})

ClusterMode = Literal["aks", "existing"]
GpuDriver = Literal["operator", "aks"]
# Azure's principal type of the identity running `pulumi up` (Azure checks it), or None to grant it
# nothing on the cluster.
DeployerPrincipalType = Literal["User", "ServicePrincipal", "None"]
QueueingStrategy = Literal["BestEffortFIFO", "StrictFIFO"]
QUEUEING_STRATEGIES: Final[tuple[QueueingStrategy, ...]] = ("BestEffortFIFO", "StrictFIFO")

# Names that must not be team namespaces: the cluster's own and the operators'.
RESERVED_NAMESPACES: Final = frozenset(
    {
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        *(chart.namespace for chart in CHARTS),
        KAI_RESOURCE_RESERVATION_NAMESPACE,
        KAI_SCALE_ADJUST_NAMESPACE,
    }
)
DEFAULT_CONTAINERS: Final = ("datasets", "checkpoints", "models")
# Sanity bounds: a number past these is a typo, not a plan.
MAX_GPUS: Final = 100_000
MAX_CPU_MILLIS: Final = 10_000_000 * 1000
MAX_MEMORY_BYTES: Final = 2**60  # 1 EiB

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_K8S_VERSION = re.compile(r"^1\.[0-9]{2}(\.[0-9]+)?$")
_RUN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$")
_LOCATION = re.compile(r"^[a-z][a-z0-9]*$")
# Planned maintenance: a start time "HH:MM" (00:00-23:59) and a UTC offset "+HH:MM"/"-HH:MM".
_CLOCK_TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
_UTC_OFFSET = re.compile(r"^[+-](0[0-9]|1[0-4]):[0-5][0-9]$")


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


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


# Sunday 00:00-04:00 UTC, every week: the shortest window AKS accepts, at the quietest time of a
# typical week, weekly because a new node image ships every week.
DEFAULT_MAINTENANCE_WINDOW: Final = MaintenanceWindow(
    day_of_week="Sunday",
    start_time="00:00",
    duration_hours=MIN_MAINTENANCE_HOURS,
    utc_offset="+00:00",
    interval_weeks=1,
)


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
    deployer_principal_type: DeployerPrincipalType = "User"
    # When AKS may upgrade and re-image (aks mode only).
    maintenance_window: MaintenanceWindow = DEFAULT_MAINTENANCE_WINDOW

    def gpu_pool(self, name: str) -> GpuPool:
        return next(pool for pool in self.gpu_pools if pool.name == name)

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


@dataclass(frozen=True)
class Resources:
    """An amount per resource; None where the stack left it out, UNLIMITED (-1) where a quota
    says `unlimited`."""

    gpu: int | None = None
    cpu_millis: int | None = None
    memory_bytes: int | None = None


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
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"


@dataclass(frozen=True)
class DepartmentSettings:
    name: str
    teams: tuple[TeamSettings, ...]


@dataclass(frozen=True)
class SchedulingSettings:
    departments: tuple[DepartmentSettings, ...]
    # Let Σ team quotas of a flavor exceed what its pool holds at max size.
    allow_overcommit: bool
    # Kueue ClusterQueue queueing strategy of every team without its own.
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"

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
class WorkloadSettings:
    name: str
    enabled: bool
    team: str
    priority: str
    workers: int | None  # only for payloads whose spec accepts `workers`
    # Use the LoRA adapter from Blob (`loraAdapter`, payloads whose spec accepts it; default
    # true). Off, vllm-batch and llm-serve use the base model only (llm-serve then needs no Blob).
    lora_adapter: bool = False
    # RayJobs only: the run this stack asks for (`run`). Empty: the job is planned and checked
    # but not submitted yet ("staged") — its inputs must be in Blob first; a new value submits a
    # new run. A RayService has no runs: it is deployed whenever it is enabled.
    run: str = ""

    @property
    def staged(self) -> bool:
        return self.enabled and WORKLOADS[self.name].kind == "RayJob" and not self.run


@dataclass(frozen=True)
class OperatorSettings:
    metrics: bool  # Prometheus metrics endpoints of Kueue and friends
    gpu_sharing: bool  # KAI fractional GPU sharing
    # Install the GPU Operator, KubeRay, Kueue and KAI. False: the cluster already runs them
    # (an existing cluster), or nothing can be installed (rendering YAML offline).
    install: bool


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
    # The Hugging Face token as a Pulumi secret, or None. Never a plain string.
    huggingface_token: pulumi.Output[str] | None = field(default=None, compare=False)

    @property
    def enabled_workloads(self) -> tuple[WorkloadSettings, ...]:
        return tuple(w for w in self.workloads if w.enabled)


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return _printable(f"{self.path}: {self.message}")


class SettingsError(pulumi.RunError):
    """Every problem found in the stack configuration, one line each."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"the stack configuration has {count} {noun}:\n{lines}")


# --------------------------------------------------------------------------------------------
# A small reader that walks the raw config with paths and collects problems
# --------------------------------------------------------------------------------------------


def _printable(text: str) -> str:
    """One line, whatever a stack file held: control characters are shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _describe(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Map:
    """A config map at `path`; reports keys it does not know when created."""

    def __init__(
        self, value: Mapping[str, Any], path: str, problems: list[Problem], known: tuple[str, ...]
    ) -> None:
        self.value = value
        self.path = path
        self.problems = problems
        for key in value:
            if key not in known:
                self.problem(_join(path, str(key)), _unknown_key_message(str(key), known))

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def has(self, key: str) -> bool:
        return key in self.value and self.value[key] is not None

    def string(
        self,
        key: str,
        default: str = "",
        *,
        required: bool = False,
        pattern: re.Pattern[str] | None = None,
        hint: str = "",
    ) -> str:
        path = _join(self.path, key)
        if not self.has(key):
            if required:
                self.problem(path, f"is required{': ' + hint if hint else ''}")
            return default
        value = self.value[key]
        if not isinstance(value, str):
            self.problem(
                path,
                f"must be a string, got {_describe(value)}"
                f"{' (quote it in YAML)' if isinstance(value, (int, float)) else ''}",
            )
            return default
        if pattern is not None and not pattern.match(value):
            self.problem(path, f"{_describe(value)} is not valid: {hint}")
            return default
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        path = _join(self.path, key)
        value = self.value.get(key, default)
        if value is None:
            return default
        if value not in choices:
            self.problem(path, f"must be one of {', '.join(choices)}, got {_describe(value)}")
            return default
        return str(value)

    def boolean(self, key: str, default: bool) -> bool:
        path = _join(self.path, key)
        if not self.has(key):
            return default
        value = self.value[key]
        if not isinstance(value, bool):
            self.problem(path, f"must be true or false, got {_describe(value)}")
            return default
        return value

    def integer(
        self,
        key: str,
        default: int,
        *,
        minimum: int = 0,
        maximum: int | None = None,
        required: bool = False,
        what: str = "",
    ) -> int:
        path = _join(self.path, key)
        if not self.has(key):
            if required:
                self.problem(path, "is required")
            return default
        return _integer(
            self.value[key],
            path,
            self.problems,
            minimum=minimum,
            maximum=maximum,
            what=what,
            default=default,
        )

    def mapping(self, key: str, known: tuple[str, ...] | None) -> _Map | None:
        """A nested map; `known=None` accepts any key (the caller checks them)."""
        path = _join(self.path, key)
        if not self.has(key):
            return None
        value = self.value[key]
        if not isinstance(value, Mapping):
            self.problem(path, f"must be a map, got {_describe(value)}")
            return None
        return _Map(value, path, self.problems, known if known is not None else tuple(value))

    def items(self, key: str) -> Iterator[tuple[str, Any]]:
        """(path, value) per entry of a list."""
        path = _join(self.path, key)
        if not self.has(key):
            return
        value = self.value[key]
        if not isinstance(value, list):
            self.problem(path, f"must be a list, got {_describe(value)}")
            return
        for index, entry in enumerate(value):
            yield f"{path}[{index}]", entry

    def child(self, path: str, value: object, known: tuple[str, ...]) -> _Map | None:
        if not isinstance(value, Mapping):
            self.problem(path, f"must be a map, got {_describe(value)}")
            return None
        return _Map(value, path, self.problems, known)


def _integer(
    value: object,
    path: str,
    problems: list[Problem],
    *,
    minimum: int,
    maximum: int | None,
    what: str,
    default: int,
) -> int:
    bound = f" between {minimum} and {maximum}" if maximum is not None else f" >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(Problem(path, f"must be a whole number{bound}, got {_describe(value)}"))
        return default
    if value < minimum or (maximum is not None and value > maximum):
        problems.append(
            Problem(
                path,
                f"must be a whole number{bound}{' (' + what + ')' if what else ''}, got {value}",
            )
        )
        return default
    return value


def _unknown_key_message(key: str, known: tuple[str, ...]) -> str:
    guess = difflib.get_close_matches(key, known, n=1)
    hint = f'did you mean "{guess[0]}"? ' if guess else ""
    return f"unknown key; {hint}known keys here: {', '.join(known) if known else '(none)'}"


# --------------------------------------------------------------------------------------------
# Parsing, section by section
# --------------------------------------------------------------------------------------------

TOP_LEVEL_KEYS: Final = (
    "location",
    "cluster",
    "storage",
    "scheduling",
    "workloads",
    "operators",
    "huggingfaceToken",
)
_CLUSTER_KEYS: Final = (
    "mode",
    "kubeconfigContext",
    "kubernetesVersion",
    "gpuDriver",
    "systemPool",
    "cpuPool",
    "gpuPools",
    "renderYamlTo",
    "localAccounts",
    "deployerPrincipalType",
    "maintenanceWindow",
)
_MAINTENANCE_KEYS: Final = ("dayOfWeek", "startTime", "durationHours", "utcOffset", "intervalWeeks")
_RESOURCE_KEYS: Final = ("gpu", "cpu", "memory")
_TEAM_KEYS: Final = (
    "name",
    "namespace",
    "localQueue",
    "quota",
    "borrowingLimit",
    "lendingLimit",
    "overQuotaWeight",
    "queueingStrategy",
)
_SCHEDULING_KEYS: Final = ("departments", "allowOvercommit", "queueingStrategy")


def _vm_size(section: _Map, key: str, default: str, *, gpu: bool) -> str:
    path = _join(section.path, key)
    name = section.string(key, default, required=not default)
    if not name:
        return default
    known = gpu_sizes() if gpu else cpu_sizes()
    size = VM_SIZES.get(name)
    if size is None or size.is_gpu != gpu:
        kind = "GPU" if gpu else "CPU (non-GPU)"
        if size is not None:
            reason = f"{name} is {'a GPU' if size.is_gpu else 'not a GPU'} size"
        else:
            reason = f"unknown VM size {name!r}"
        section.problem(path, f"{reason}; known {kind} sizes: {', '.join(known)}")
        return default
    return name


def _parse_cluster(raw: _Map | None, problems: list[Problem]) -> ClusterSettings:
    section = raw or _Map({}, "cluster", problems, _CLUSTER_KEYS)
    mode = section.choice("mode", ("aks", "existing"), "aks")
    context = section.string("kubeconfigContext")
    render_to = section.string("renderYamlTo")
    version = section.string(
        "kubernetesVersion",
        "1.35",
        pattern=_K8S_VERSION,
        hint='write the AKS minor version as a quoted string, e.g. "1.35"',
    )
    if mode == "existing" and not context and not render_to:
        section.problem(
            _join(section.path, "kubeconfigContext"),
            "is required when mode is existing: name the kubeconfig context of the cluster "
            "(or set renderYamlTo to render YAML without a cluster)",
        )
    if mode == "aks" and context:
        section.problem(
            _join(section.path, "kubeconfigContext"),
            "is only used when mode is existing; remove it (an aks stack builds its own "
            "kubeconfig from the cluster it creates)",
        )

    system = section.mapping("systemPool", ("vmSize", "count"))
    system_pool = SystemPool(
        vm_size=_vm_size(system, "vmSize", "Standard_D4ds_v6", gpu=False)
        if system
        else "Standard_D4ds_v6",
        count=system.integer(
            "count", 2, minimum=1, maximum=MAX_POOL_NODES, what="AKS needs at least one system node"
        )
        if system
        else 2,
    )

    cpu = section.mapping("cpuPool", ("vmSize", "minCount", "maxCount"))
    if cpu is not None:
        cpu_pool = CpuPool(
            vm_size=_vm_size(cpu, "vmSize", "Standard_D8ds_v6", gpu=False),
            min_count=cpu.integer(
                "minCount",
                1,
                minimum=1,
                maximum=MAX_POOL_NODES,
                what="the operators and their webhooks run on this pool",
            ),
            max_count=cpu.integer("maxCount", 3, minimum=1, maximum=MAX_POOL_NODES),
        )
        if cpu_pool.min_count > cpu_pool.max_count:
            cpu.problem(
                _join(cpu.path, "minCount"),
                f"minCount {cpu_pool.min_count} is above maxCount {cpu_pool.max_count}; "
                "raise maxCount or lower minCount",
            )
    else:
        cpu_pool = CpuPool("Standard_D8ds_v6", 1, 3)

    pools: list[GpuPool] = []
    seen: dict[str, str] = {}
    for path, entry in section.items("gpuPools"):
        pool = section.child(path, entry, ("name", "vmSize", "minCount", "maxCount", "spot"))
        if pool is None:
            continue
        name = pool.string(
            "name",
            required=True,
            pattern=AKS_POOL_NAME_PATTERN,
            hint="AKS pool names are 1-12 lowercase letters and digits, starting with a letter",
        )
        if name in RESERVED_POOL_NAMES:
            pool.problem(
                _join(path, "name"), f"{name!r} is reserved for the {name} pool; pick another name"
            )
        elif name in seen:
            pool.problem(_join(path, "name"), f"duplicate pool name {name!r} (also {seen[name]})")
        elif name:
            seen[name] = path
        gpu_pool = GpuPool(
            name=name,
            vm_size=_vm_size(pool, "vmSize", "", gpu=True),
            min_count=pool.integer("minCount", 0, maximum=MAX_POOL_NODES),
            max_count=pool.integer("maxCount", 0, minimum=1, maximum=MAX_POOL_NODES, required=True),
            spot=pool.boolean("spot", False),
        )
        if gpu_pool.min_count > gpu_pool.max_count and pool.has("maxCount"):
            pool.problem(
                _join(path, "minCount"),
                f"minCount {gpu_pool.min_count} is above maxCount {gpu_pool.max_count}; "
                "raise maxCount or lower minCount (0 keeps idle GPU cost at zero)",
            )
        if name and name not in RESERVED_POOL_NAMES:
            pools.append(gpu_pool)  # an invalid name is reported once, not again as a flavor

    maintenance_window = _parse_maintenance_window(section, mode)

    return ClusterSettings(
        mode="existing" if mode == "existing" else "aks",
        kubeconfig_context=context,
        kubernetes_version=version,
        gpu_driver="aks"
        if section.choice("gpuDriver", ("operator", "aks"), "operator") == "aks"
        else "operator",
        system_pool=system_pool,
        cpu_pool=cpu_pool,
        gpu_pools=tuple(pools),
        render_yaml_to=render_to,
        local_accounts=section.boolean("localAccounts", False),
        deployer_principal_type=_deployer_principal_type(
            section.choice("deployerPrincipalType", ("User", "ServicePrincipal", "None"), "User")
        ),
        maintenance_window=maintenance_window,
    )


def _parse_maintenance_window(cluster: _Map, mode: str) -> MaintenanceWindow:
    """`cluster.maintenanceWindow`: every key optional, each defaulting to
    DEFAULT_MAINTENANCE_WINDOW's."""
    default = DEFAULT_MAINTENANCE_WINDOW
    section = cluster.mapping("maintenanceWindow", _MAINTENANCE_KEYS)
    if section is None:
        return default
    if mode != "aks":
        cluster.problem(
            section.path,
            "is only used when mode is aks (AKS planned maintenance); remove it, an existing "
            "cluster's maintenance is configured where that cluster is managed",
        )
        return default
    return MaintenanceWindow(
        day_of_week=section.choice("dayOfWeek", WEEK_DAYS, default.day_of_week),
        start_time=section.string(
            "startTime",
            default.start_time,
            pattern=_CLOCK_TIME,
            hint='write the start as a quoted "HH:MM" from "00:00" to "23:59", e.g. "22:00"',
        ),
        duration_hours=section.integer(
            "durationHours",
            default.duration_hours,
            minimum=MIN_MAINTENANCE_HOURS,
            maximum=MAX_MAINTENANCE_HOURS,
            what="AKS needs a window of at least 4 hours for automatic upgrades",
        ),
        utc_offset=section.string(
            "utcOffset",
            default.utc_offset,
            pattern=_UTC_OFFSET,
            hint='write a quoted "+HH:MM" or "-HH:MM" from "-14:00" to "+14:00", e.g. "+01:00"',
        ),
        interval_weeks=section.integer(
            "intervalWeeks",
            default.interval_weeks,
            minimum=1,
            maximum=MAX_MAINTENANCE_INTERVAL_WEEKS,
            what="the window repeats every 1 to 4 weeks",
        ),
    )


def _deployer_principal_type(value: str) -> DeployerPrincipalType:
    if value == "ServicePrincipal":
        return "ServicePrincipal"
    return "None" if value == "None" else "User"


def _parse_storage(raw: _Map | None, problems: list[Problem]) -> StorageSettings:
    section = raw or _Map({}, "storage", problems, ("enabled", "containers", "protect"))
    containers: list[str] = []
    if section.has("containers") and isinstance(section.value["containers"], list):
        for path, name in section.items("containers"):
            if not isinstance(name, str) or not BLOB_CONTAINER_NAME_PATTERN.match(name):
                section.problem(
                    path,
                    f"{_describe(name)} is not a Blob container name: 3-63 "
                    "lowercase letters, digits and single hyphens",
                )
            elif name in containers:
                section.problem(path, f"duplicate container {name!r}")
            else:
                containers.append(name)
    else:
        # Not given, or not a list (reported by `items`): the defaults, so the workloads that
        # need them are not reported a second time.
        list(section.items("containers"))
        containers = list(DEFAULT_CONTAINERS)
    return StorageSettings(
        enabled=section.boolean("enabled", True),
        containers=tuple(containers),
        protect=section.boolean("protect", False),
    )


def _check_azure(
    stack: str, cluster: ClusterSettings, storage: StorageSettings, problems: list[Problem]
) -> None:
    """What Azure itself would reject, found before anything is created."""
    if cluster.mode == "aks" and not STACK_NAME_PATTERN.match(stack):
        problems.append(
            Problem(
                "stack",
                f"{stack!r} cannot be part of Azure names (resource groups, cluster, DNS "
                f"prefix, identities); name the stack with 1-{MAX_STACK_NAME_LENGTH} lowercase "
                "letters, digits and '-', starting and ending with a letter or digit",
            )
        )
    if cluster.mode == "aks" and cluster.kubernetes_version.count(".") == 2:
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"{cluster.kubernetes_version!r} pins a patch release, but AKS upgrades patches "
                "by itself (upgrade channel `patch`) and a later update would ask for a "
                f"downgrade; write the minor version only, e.g. "
                f'"{cluster.kubernetes_version.rsplit(".", 1)[0]}"',
            )
        )
    if cluster.mode == "existing" and storage.enabled:
        problems.append(
            Problem(
                "storage.enabled",
                "Blob storage and workload identity trust the OIDC issuer of the AKS cluster "
                "this stack creates; with cluster.mode existing set storage.enabled to false",
            )
        )


def _parse_resources(
    section: _Map, key: str, flavors: tuple[str, ...], *, allow_unlimited: bool = False
) -> dict[str, Resources]:
    """A `flavor -> {gpu, cpu, memory}` map (quota, borrowingLimit or lendingLimit).

    A quota amount may be `unlimited` (the whole pool in Kueue, -1 in KAI); limits may not: an
    absent limit already means "no limit"."""
    per_flavor = section.mapping(key, None)
    if per_flavor is None:
        return {}
    result: dict[str, Resources] = {}
    for flavor, amounts in per_flavor.value.items():
        path = _join(per_flavor.path, str(flavor))
        if flavor not in flavors:
            section.problem(
                path,
                f"no pool provides flavor {flavor!r}; flavors are "
                f"{', '.join(flavors)} (the CPU pool is `cpu`, GPU pools by name)",
            )
            continue
        entry = section.child(path, amounts, _RESOURCE_KEYS)
        if entry is None:
            continue
        gpu = cpu = memory = None
        unlimited = {
            resource
            for resource in _RESOURCE_KEYS
            if entry.has(resource) and entry.value[resource] == "unlimited"
        }
        if unlimited and not allow_unlimited:
            for resource in sorted(unlimited):
                entry.problem(
                    _join(path, resource),
                    "only a quota can be unlimited; leave a limit out for no limit",
                )
            # Reported once: the amount is not read again as a number.
            result[str(flavor)] = Resources()
            continue
        if "gpu" in unlimited:
            gpu = UNLIMITED
        elif entry.has("gpu"):
            gpu = entry.integer("gpu", 0, maximum=MAX_GPUS)
        if "cpu" in unlimited:
            cpu = UNLIMITED
        elif entry.has("cpu"):
            cpu = _quantity(
                entry,
                "cpu",
                parse_cpu_millis,
                MAX_CPU_MILLIS,
                "write cores or millicores, e.g. 16 or 500m",
            )
        if "memory" in unlimited:
            memory = UNLIMITED
        elif entry.has("memory"):
            memory = _quantity(
                entry, "memory", parse_memory_bytes, MAX_MEMORY_BYTES, "write e.g. 64Gi or 512Mi"
            )
        if flavor == CPU_POOL_NAME and gpu:
            entry.problem(
                _join(path, "gpu"), "the CPU pool has no GPUs; put GPU quota on a GPU pool's flavor"
            )
        if key == "quota" and flavor == CPU_POOL_NAME:
            for resource in ("cpu", "memory"):
                if not entry.has(resource):
                    entry.problem(
                        _join(path, resource),
                        "is required: the CPU pool has no GPUs to derive it from (Ray heads "
                        "request cpu and memory); write e.g. cpu: 8, memory: 32Gi",
                    )
        result[str(flavor)] = Resources(gpu=gpu, cpu_millis=cpu, memory_bytes=memory)
    return result


def _quantity(
    entry: _Map, key: str, parse: Callable[[object], int], maximum: int, hint: str
) -> int | None:
    path = _join(entry.path, key)
    try:
        amount = parse(entry.value[key])
    except QuantityError as exc:
        entry.problem(path, f"{exc}")
        return None
    if amount < 0 or amount > maximum:
        entry.problem(path, f"{_describe(entry.value[key])} is out of range; {hint}")
        return None
    if key == "memory" and 0 < amount < 2**20:
        # A bare number is bytes: `memory: 32` is 32 bytes, surely a missing unit.
        entry.problem(
            path,
            f"{_describe(entry.value[key])} is {amount} bytes, less than 1Mi: add the unit, "
            f'e.g. "{entry.value[key]}Gi"',
        )
        return None
    return amount


def _check_limits_within_quota(section: _Map, team: TeamSettings) -> None:
    for key, limits in (
        ("borrowingLimit", team.borrowing_limit),
        ("lendingLimit", team.lending_limit),
    ):
        for flavor, limit in limits.items():
            path = _join(_join(section.path, key), flavor)
            if flavor not in team.quota:
                section.problem(
                    path,
                    f"flavor {flavor!r} has no quota for this team; add "
                    f"quota.{flavor} (gpu: 0 to only borrow) or remove it",
                )
                continue
            nominal = team.quota[flavor]
            for resource, given, have in (
                ("gpu", limit.gpu, nominal.gpu),
                ("cpu", limit.cpu_millis, nominal.cpu_millis),
                ("memory", limit.memory_bytes, nominal.memory_bytes),
            ):
                if given is not None and have == UNLIMITED:
                    section.problem(
                        _join(path, resource),
                        f"quota.{flavor}.{resource} is unlimited (the whole pool); a "
                        f"{key} on top of it means nothing, remove it",
                    )
            if key != "lendingLimit":
                continue
            for resource, lent, have in (
                ("gpu", limit.gpu, nominal.gpu),
                ("cpu", limit.cpu_millis, nominal.cpu_millis),
                ("memory", limit.memory_bytes, nominal.memory_bytes),
            ):
                if lent is not None and have is not None and have != UNLIMITED and lent > have:
                    section.problem(
                        _join(path, resource),
                        "a team cannot lend more than its nominal quota; lower the "
                        f"lendingLimit or raise quota.{flavor}.{resource}",
                    )


def _parse_scheduling(
    raw: _Map | None, problems: list[Problem], flavors: tuple[str, ...]
) -> SchedulingSettings:
    section = raw or _Map({}, "scheduling", problems, _SCHEDULING_KEYS)
    strategy = _queueing_strategy(section, "BestEffortFIFO")
    departments: list[DepartmentSettings] = []
    team_paths: dict[str, str] = {}
    namespace_paths: dict[str, str] = {}
    department_paths: dict[str, str] = {}
    for dept_path, dept_value in section.items("departments"):
        dept = section.child(dept_path, dept_value, ("name", "teams"))
        if dept is None:
            continue
        dept_name = dept.string(
            "name",
            required=True,
            pattern=_DNS_LABEL,
            hint="use a DNS-1123 label: lowercase letters, digits and '-'",
        )
        if dept_name in department_paths:
            dept.problem(
                _join(dept_path, "name"),
                f"duplicate department {dept_name!r} (also {department_paths[dept_name]})",
            )
        elif dept_name:
            department_paths[dept_name] = _join(dept_path, "name")
        teams: list[TeamSettings] = []
        if not dept.has("teams") or dept.value["teams"] == []:
            dept.problem(
                _join(dept_path, "teams"), "is required: a department needs one team or more"
            )
        for team_path, team_value in dept.items("teams"):
            team_map = dept.child(team_path, team_value, _TEAM_KEYS)
            if team_map is None:
                continue
            team = _parse_team(team_map, dept_name, flavors, strategy)
            name_path = _join(team_path, "name")
            for value, seen, what, path in (
                (team.name, team_paths, "team", name_path),
                (
                    team.namespace,
                    namespace_paths,
                    "namespace",
                    _join(team_path, "namespace") if team_map.has("namespace") else name_path,
                ),
            ):
                if not value:
                    continue
                if value in seen:
                    team_map.problem(
                        path,
                        f"duplicate {what} {value!r} (also {seen[value]}); "
                        f"every team needs its own {what}",
                    )
                    break  # a namespace defaulted from a duplicate name is the same mistake
                seen[value] = path
            teams.append(team)
        departments.append(DepartmentSettings(name=dept_name, teams=tuple(teams)))

    # KAI queues are cluster-scoped and share one name space: a department's parent queue and a
    # team's leaf queue must not collide.
    for team_name, path in team_paths.items():
        if team_name in department_paths:
            section.problem(
                path,
                f"{team_name!r} is also a department name; KAI queues of both "
                "share one name space, rename one",
            )
    return SchedulingSettings(
        departments=tuple(departments),
        allow_overcommit=section.boolean("allowOvercommit", False),
        queueing_strategy=strategy,
    )


def _queueing_strategy(section: _Map, default: QueueingStrategy) -> QueueingStrategy:
    chosen = section.choice("queueingStrategy", QUEUEING_STRATEGIES, default)
    return next(s for s in QUEUEING_STRATEGIES if s == chosen)


def _parse_team(
    team: _Map, department: str, flavors: tuple[str, ...], strategy: QueueingStrategy
) -> TeamSettings:
    label_hint = "use a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
    name = team.string("name", required=True, pattern=_DNS_LABEL, hint=label_hint)
    if len(name) > 63:
        team.problem(_join(team.path, "name"), label_hint)
    namespace = team.string("namespace", name, pattern=_DNS_LABEL, hint=label_hint)
    local_queue = team.string("localQueue", name, pattern=_DNS_LABEL, hint=label_hint)
    if name == "default":
        team.problem(
            _join(team.path, "name"),
            "a team must not be named `default`: its LocalQueue would capture every "
            "unlabelled job in its namespace; pick another name",
        )
    elif local_queue == "default":
        team.problem(
            _join(team.path, "localQueue"),
            "a LocalQueue named `default` captures every unlabelled job in its "
            "namespace; pick another name",
        )
    if namespace in RESERVED_NAMESPACES:
        team.problem(
            _join(team.path, "namespace" if team.has("namespace") else "name"),
            f"namespace {namespace!r} belongs to the cluster or an operator; give the "
            "team its own namespace",
        )
    settings = TeamSettings(
        name=name,
        department=department,
        namespace=namespace,
        local_queue=local_queue,
        quota=MappingProxyType(_parse_resources(team, "quota", flavors, allow_unlimited=True)),
        borrowing_limit=MappingProxyType(_parse_resources(team, "borrowingLimit", flavors)),
        lending_limit=MappingProxyType(_parse_resources(team, "lendingLimit", flavors)),
        over_quota_weight=team.integer("overQuotaWeight", 1, maximum=1000),
        queueing_strategy=_queueing_strategy(team, strategy),
    )
    _check_limits_within_quota(team, settings)
    return settings


def _parse_workloads(
    raw: _Map | None,
    problems: list[Problem],
    scheduling: SchedulingSettings,
    storage: StorageSettings,
) -> tuple[WorkloadSettings, ...]:
    section = raw or _Map({}, "workloads", problems, tuple(WORKLOADS))
    teams = {team.name for team in scheduling.teams}
    result: list[WorkloadSettings] = []
    for name, spec in WORKLOADS.items():
        runs = ("run",) if spec.kind == "RayJob" else ()
        known = ("enabled", "team", "priority", *runs, *sorted(spec.options))
        entry = section.mapping(name, known)
        if entry is None:
            result.append(
                WorkloadSettings(
                    name, False, "", spec.default_priority, None, "loraAdapter" in spec.options
                )
            )
            continue
        enabled = entry.boolean("enabled", False)
        team = entry.string(
            "team",
            required=enabled,
            hint=f"name the team that runs it ({', '.join(sorted(teams)) or 'none defined'})",
        )
        if team and team not in teams:
            entry.problem(
                _join(entry.path, "team"),
                f"unknown team {team!r}; teams are: {', '.join(sorted(teams)) or '(none)'}",
            )
        priority = entry.string("priority", spec.default_priority)
        if priority not in PRIORITY_CLASSES:
            entry.problem(
                _join(entry.path, "priority"),
                f"unknown priority {priority!r}; priorities are: {', '.join(PRIORITY_CLASSES)}",
            )
            priority = spec.default_priority
        workers = None
        if "workers" in spec.options:
            default_workers = sum(group.replicas for group in spec.workers)
            workers = entry.integer("workers", default_workers, minimum=1, maximum=MAX_GPUS)
        lora_adapter = "loraAdapter" in spec.options and entry.boolean("loraAdapter", True)
        containers = spec.containers_for(lora_adapter=lora_adapter)
        if enabled and containers:
            adapter_hint = (
                ", or set loraAdapter: false to serve the base model only"
                if lora_adapter and not spec.containers
                else ""
            )
            if not storage.enabled:
                entry.problem(
                    _join(entry.path, "enabled"),
                    f"{name} uses Blob ({', '.join(containers)}) but "
                    f"storage.enabled is false; enable storage or disable this workload"
                    f"{adapter_hint}",
                )
            else:
                missing = [c for c in containers if c not in storage.containers]
                if missing:
                    entry.problem(
                        _join(entry.path, "enabled"),
                        f"{name} needs the Blob containers {', '.join(missing)}; add "
                        f"them to storage.containers{adapter_hint}",
                    )
        run = _run_label(entry) if runs else ""
        result.append(WorkloadSettings(name, enabled, team, priority, workers, lora_adapter, run))
    return tuple(result)


def _run_label(entry: _Map) -> str:
    """`run`: a label, as a string or a whole number (`pulumi config set --path ... 1` stores
    the number 1)."""
    value = entry.value.get("run")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        text = str(value)
        if _RUN.match(text):
            return text
    return entry.string(
        "run",
        pattern=_RUN,
        hint="a run label of 1-20 letters, digits, '.', '_' or '-' starting with a letter or "
        'digit, e.g. 1 or retry-2 (quote a date: "2026-12-01")',
    )


_OPERATOR_KEYS: Final = ("install", "metrics", "gpuSharing")


def _parse_operators(
    raw: _Map | None, problems: list[Problem], cluster: ClusterSettings
) -> OperatorSettings:
    section = raw or _Map({}, "operators", problems, _OPERATOR_KEYS)
    install = section.boolean("install", True)
    if install and cluster.render_yaml_to:
        # A Helm release is installed by the provider talking to the cluster itself; it is never
        # written to the render directory, so a render-only stack would install into whatever
        # cluster the kube context reaches (or fail without one).
        section.problem(
            _join(section.path, "install"),
            "must be false when cluster.renderYamlTo is set: Helm releases cannot be rendered "
            "to YAML; set `operators: {install: false}` (the cluster must run the operators)",
        )
    return OperatorSettings(
        metrics=section.boolean("metrics", False),
        gpu_sharing=section.boolean("gpuSharing", False),
        install=install,
    )


def parse_settings(
    raw: Mapping[str, Any],
    *,
    stack: str,
    secret_keys: frozenset[str] = frozenset(),
    huggingface_token: pulumi.Output[str] | None = None,
) -> Settings:
    """Validate raw config values (`key -> value`, structured values already decoded)."""
    problems: list[Problem] = []
    top = _Map(raw, "", problems, TOP_LEVEL_KEYS)

    location = top.string(
        "location",
        "eastus2",
        pattern=_LOCATION,
        hint="an Azure region name such as eastus2 or westeurope",
    )
    cluster = _parse_cluster(top.mapping("cluster", _CLUSTER_KEYS), problems)
    storage = _parse_storage(top.mapping("storage", ("enabled", "containers", "protect")), problems)
    _check_azure(stack, cluster, storage, problems)
    scheduling = _parse_scheduling(
        top.mapping("scheduling", _SCHEDULING_KEYS), problems, cluster.flavors
    )
    workloads = _parse_workloads(
        top.mapping("workloads", tuple(WORKLOADS)), problems, scheduling, storage
    )
    operators = _parse_operators(top.mapping("operators", _OPERATOR_KEYS), problems, cluster)
    if top.has("huggingfaceToken") and "huggingfaceToken" not in secret_keys:
        top.problem(
            "huggingfaceToken",
            "must be a secret, never plain text: run "
            "`pulumi config set --secret huggingfaceToken <token>`",
        )
    elif top.has("huggingfaceToken") and not isinstance(raw["huggingfaceToken"], str):
        top.problem("huggingfaceToken", "must be a string token")

    if problems:
        raise SettingsError(problems)
    return Settings(
        project=PROJECT,
        stack=stack,
        location=location,
        cluster=cluster,
        storage=storage,
        scheduling=scheduling,
        workloads=workloads,
        operators=operators,
        huggingface_token=huggingface_token,
    )


# --------------------------------------------------------------------------------------------
# Reading pulumi.Config, once
# --------------------------------------------------------------------------------------------

# Keys whose value is a map or list in the stack file: Pulumi hands them over as JSON text.
_STRUCTURED_KEYS: Final = frozenset({"cluster", "storage", "scheduling", "workloads", "operators"})


def _decode(key: str, value: Any, problems: list[Problem]) -> Any:
    if key not in _STRUCTURED_KEYS or not isinstance(value, str):
        return value
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError:
        problems.append(Problem(key, f"must be a map of settings, got {_describe(value)}"))
        return None
    if not isinstance(decoded, dict):
        problems.append(Problem(key, f"must be a map of settings, got {_describe(decoded)}"))
        return None
    return decoded


def settings_from_config(
    values: Mapping[str, str],
    secret_keys: frozenset[str] | set[str],
    *,
    stack: str,
    huggingface_token: pulumi.Output[str] | None = None,
) -> Settings:
    """Validate config as Pulumi hands it over: `project:key -> string`, maps as JSON text."""
    prefix = f"{PROJECT}:"
    problems: list[Problem] = []
    raw: dict[str, Any] = {}
    secret: set[str] = set()
    for full_key in sorted(values):
        if not full_key.startswith(prefix):
            namespace = full_key.split(":", 1)[0]
            if namespace not in KNOWN_NAMESPACES:
                guess = difflib.get_close_matches(namespace, [PROJECT], n=1, cutoff=0.8)
                suggestion = (
                    f' (did you mean "{PROJECT}:{full_key.split(":", 1)[-1]}"?)' if guess else ""
                )
                problems.append(
                    Problem(
                        _printable(full_key),
                        f"unknown config namespace {namespace!r}{suggestion}: a stack reads "
                        f"only {PROJECT}: keys and the settings of the providers "
                        f"({', '.join(sorted(KNOWN_NAMESPACES))}); anything else would be "
                        "silently ignored",
                    )
                )
            continue
        key = full_key[len(prefix) :]
        raw[key] = _decode(key, values[full_key], problems)
        if full_key in secret_keys:
            secret.add(key)
    try:
        settings = parse_settings(
            raw, stack=stack, secret_keys=frozenset(secret), huggingface_token=huggingface_token
        )
    except SettingsError as exc:
        raise SettingsError(problems + list(exc.problems)) from None
    if problems:
        raise SettingsError(problems)
    return settings


def load_settings() -> Settings:
    """Read this project's stack configuration from the Pulumi runtime and validate it."""
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    values = {key: runtime_config.get_config(key) for key in keys}
    secret_keys = {key for key in keys if runtime_config.is_config_secret(key)}
    token = pulumi.Config(PROJECT).get_secret("huggingfaceToken")
    return settings_from_config(
        values, secret_keys, stack=pulumi.get_stack(), huggingface_token=token
    )
