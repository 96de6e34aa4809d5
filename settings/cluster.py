"""`cluster`: the cluster mode, the Kubernetes version, the node pools and planned maintenance."""

from __future__ import annotations

import re
from typing import Final

from catalog.azure import (
    AKS_POOL_NAME_PATTERN,
    MAX_MAINTENANCE_HOURS,
    MAX_MAINTENANCE_INTERVAL_WEEKS,
    MAX_POOL_NODES,
    MIN_MAINTENANCE_HOURS,
    WEEK_DAYS,
)
from catalog.pools import RESERVED_POOL_NAMES
from catalog.vm_sizes import VM_SIZES, cpu_sizes, gpu_sizes
from settings.defaults import (
    DEFAULT_CLUSTER_MODE,
    DEFAULT_CLUSTER_TIER,
    DEFAULT_CPU_POOL,
    DEFAULT_CREATE_ROLE_ASSIGNMENTS,
    DEFAULT_DEPLOYER_PRINCIPAL_TYPE,
    DEFAULT_GPU_DRIVER,
    DEFAULT_GPU_POOL_MIN_COUNT,
    DEFAULT_GPU_POOL_SPOT,
    DEFAULT_KUBECONFIG_CONTEXT,
    DEFAULT_KUBERNETES_VERSION,
    DEFAULT_LOCAL_ACCOUNTS,
    DEFAULT_MAINTENANCE_WINDOW,
    DEFAULT_RENDER_YAML_TO,
    DEFAULT_SYSTEM_POOL,
)
from settings.errors import Problem
from settings.image_cache import parse_image_cache
from settings.model import (
    CLUSTER_MODES,
    CLUSTER_TIERS,
    DEPLOYER_PRINCIPAL_TYPES,
    GPU_DRIVERS,
    ClusterMode,
    ClusterSettings,
    ClusterTier,
    CpuPool,
    GpuPool,
    MaintenanceWindow,
    SystemPool,
)
from settings.reader import Section, choices_text, describe, join

CLUSTER_KEYS: Final = (
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
    "createRoleAssignments",
    "maintenanceWindow",
    "tier",
    "imageCache",
)
_SYSTEM_POOL_KEYS: Final = ("vmSize", "count")
_CPU_POOL_KEYS: Final = ("vmSize", "minCount", "maxCount")
_GPU_POOL_KEYS: Final = ("name", "vmSize", "minCount", "maxCount", "spot")
_MAINTENANCE_KEYS: Final = ("dayOfWeek", "startTime", "durationHours", "utcOffset", "intervalWeeks")

_K8S_VERSION = re.compile(r"^1\.[0-9]{2}(\.[0-9]+)?\Z")
# Planned maintenance: a start time "HH:MM" (00:00-23:59) and a UTC offset "+HH:MM"/"-HH:MM".
_CLOCK_TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]\Z")
_UTC_OFFSET = re.compile(r"^[+-](0[0-9]|1[0-4]):[0-5][0-9]\Z")


def parse_cluster(raw: Section | None, problems: list[Problem]) -> ClusterSettings:
    section = raw or Section({}, "cluster", problems, CLUSTER_KEYS)
    mode = section.literal("mode", CLUSTER_MODES, DEFAULT_CLUSTER_MODE)
    context = section.string("kubeconfigContext", DEFAULT_KUBECONFIG_CONTEXT)
    render_to = section.string("renderYamlTo", DEFAULT_RENDER_YAML_TO)
    version = section.string(
        "kubernetesVersion",
        DEFAULT_KUBERNETES_VERSION,
        pattern=_K8S_VERSION,
        hint='write the AKS minor version as a quoted string, e.g. "1.35"',
    )
    _check_kubeconfig_context(section, mode, context=context, render_to=render_to)
    system_pool = _system_pool(section)
    cpu_pool = _cpu_pool(section)
    gpu_pools = _gpu_pools(section)
    maintenance_window = _maintenance_window(section, mode)
    return ClusterSettings(
        mode=mode,
        kubeconfig_context=context,
        kubernetes_version=version,
        gpu_driver=section.literal("gpuDriver", GPU_DRIVERS, DEFAULT_GPU_DRIVER),
        system_pool=system_pool,
        cpu_pool=cpu_pool,
        gpu_pools=gpu_pools,
        render_yaml_to=render_to,
        local_accounts=section.boolean("localAccounts", DEFAULT_LOCAL_ACCOUNTS),
        deployer_principal_type=section.literal(
            "deployerPrincipalType", DEPLOYER_PRINCIPAL_TYPES, DEFAULT_DEPLOYER_PRINCIPAL_TYPE
        ),
        create_role_assignments=_create_role_assignments(section, mode),
        maintenance_window=maintenance_window,
        tier=_tier(section, mode),
        image_cache=parse_image_cache(section, mode),
    )


def _tier(section: Section, mode: ClusterMode) -> ClusterTier:
    """`cluster.tier`: the AKS pricing tier, exactly as Azure spells it (aks mode only)."""
    if mode != "aks" and section.has("tier"):
        section.problem(
            join(section.path, "tier"),
            "is only used when mode is aks (the AKS pricing tier of the cluster the stack "
            "creates); remove it, an existing cluster's tier is set where that cluster is managed",
        )
        return DEFAULT_CLUSTER_TIER
    value = section.value.get("tier")
    if isinstance(value, str) and value not in CLUSTER_TIERS:
        spelled = next((t for t in CLUSTER_TIERS if t.lower() == value.strip().lower()), None)
        hint = f"; write {spelled!r}" if spelled else ""
        section.problem(
            join(section.path, "tier"),
            f"must be one of {', '.join(CLUSTER_TIERS)} (the AKS pricing tier), "
            f"got {describe(value)}{hint}",
        )
        return DEFAULT_CLUSTER_TIER
    return section.literal("tier", CLUSTER_TIERS, DEFAULT_CLUSTER_TIER)


def _create_role_assignments(section: Section, mode: ClusterMode) -> bool:
    """`cluster.createRoleAssignments`: the Azure role assignments exist in aks mode only."""
    key = "createRoleAssignments"
    if mode != "aks" and section.has(key):
        section.problem(
            join(section.path, key),
            "is only used when mode is aks (the Azure role assignments an aks stack creates); "
            "remove it, an existing cluster's stack creates none",
        )
        return DEFAULT_CREATE_ROLE_ASSIGNMENTS
    return section.boolean(key, DEFAULT_CREATE_ROLE_ASSIGNMENTS)


def _check_kubeconfig_context(
    section: Section, mode: ClusterMode, *, context: str, render_to: str
) -> None:
    """An existing cluster is reached by its context (or rendered); an aks one never is."""
    path = join(section.path, "kubeconfigContext")
    if mode == "existing" and not context and not render_to:
        section.problem(
            path,
            "is required when mode is existing: name the kubeconfig context of the cluster "
            "(or set renderYamlTo to render YAML without a cluster)",
        )
    if mode == "aks" and context:
        section.problem(
            path,
            "is only used when mode is existing; remove it (an aks stack builds its own "
            "kubeconfig from the cluster it creates)",
        )


def _vm_size(section: Section, key: str, default: str, *, gpu: bool) -> str:
    """A VM size of the catalog, of the right kind (GPU or not); required without a default."""
    path = join(section.path, key)
    known = gpu_sizes() if gpu else cpu_sizes()
    kind = "GPU" if gpu else "CPU (non-GPU)"
    name = section.string(
        key, default, required=not default, hint=f"name a {kind} VM size: {choices_text('', known)}"
    )
    if not name:
        return default
    size = VM_SIZES.get(name)
    if size is None or size.is_gpu != gpu:
        if size is not None:
            reason = f"{name} is {'a GPU' if size.is_gpu else 'not a GPU'} size"
        else:
            reason = f"unknown VM size {name!r}"
        section.problem(path, f"{reason}; known {kind} sizes: {choices_text(name, known)}")
        return default
    return name


def _check_min_within_max(section: Section, min_count: int, max_count: int, hint: str) -> None:
    if min_count > max_count:
        section.problem(
            join(section.path, "minCount"),
            f"minCount {min_count} is above maxCount {max_count}; "
            f"raise maxCount or lower minCount{hint}",
        )


def _system_pool(cluster: Section) -> SystemPool:
    default = DEFAULT_SYSTEM_POOL
    section = cluster.mapping("systemPool", _SYSTEM_POOL_KEYS)
    if section is None:
        return default
    return SystemPool(
        vm_size=_vm_size(section, "vmSize", default.vm_size, gpu=False),
        count=section.integer(
            "count",
            default.count,
            minimum=1,
            maximum=MAX_POOL_NODES,
            what="AKS needs at least one system node",
        ),
    )


def _cpu_pool(cluster: Section) -> CpuPool:
    default = DEFAULT_CPU_POOL
    section = cluster.mapping("cpuPool", _CPU_POOL_KEYS)
    if section is None:
        return default
    pool = CpuPool(
        vm_size=_vm_size(section, "vmSize", default.vm_size, gpu=False),
        min_count=section.integer(
            "minCount",
            default.min_count,
            minimum=1,
            maximum=MAX_POOL_NODES,
            what="the operators and their webhooks run on this pool",
        ),
        max_count=section.integer("maxCount", default.max_count, minimum=1, maximum=MAX_POOL_NODES),
    )
    _check_min_within_max(section, pool.min_count, pool.max_count, "")
    return pool


def _gpu_pools(cluster: Section) -> tuple[GpuPool, ...]:
    pools: list[GpuPool] = []
    seen: dict[str, str] = {}  # pool name -> the path of the pool that has it
    for path, entry in cluster.items("gpuPools"):
        section = cluster.child(path, entry, _GPU_POOL_KEYS)
        if section is None:
            continue
        pool = _gpu_pool(section, seen)
        if pool.name and pool.name not in RESERVED_POOL_NAMES:
            pools.append(pool)  # an invalid name is reported once, not again as a flavor
    return tuple(pools)


def _gpu_pool(section: Section, seen: dict[str, str]) -> GpuPool:
    pool = GpuPool(
        name=_gpu_pool_name(section, seen),
        vm_size=_vm_size(section, "vmSize", "", gpu=True),
        min_count=section.integer("minCount", DEFAULT_GPU_POOL_MIN_COUNT, maximum=MAX_POOL_NODES),
        max_count=section.integer("maxCount", 0, minimum=1, maximum=MAX_POOL_NODES, required=True),
        spot=section.boolean("spot", DEFAULT_GPU_POOL_SPOT),
    )
    if section.has("maxCount"):
        _check_min_within_max(
            section, pool.min_count, pool.max_count, " (0 keeps idle GPU cost at zero)"
        )
    return pool


def _gpu_pool_name(section: Section, seen: dict[str, str]) -> str:
    """The pool's name, which is also its flavor's: valid for AKS, not reserved, unique."""
    path = join(section.path, "name")
    name = section.string(
        "name",
        required=True,
        pattern=AKS_POOL_NAME_PATTERN,
        hint="AKS pool names are 1-12 lowercase letters and digits, starting with a letter",
    )
    if name in RESERVED_POOL_NAMES:
        section.problem(path, f"{name!r} is reserved for the {name} pool; pick another name")
    elif name in seen:
        section.problem(path, f"duplicate pool name {name!r} (also {seen[name]})")
    elif name:
        seen[name] = section.path
    return name


def _maintenance_window(cluster: Section, mode: ClusterMode) -> MaintenanceWindow:
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
