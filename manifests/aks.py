"""The AKS cluster and its node pools, as plain keyword arguments for pulumi-azure-native.

Every key is an argument name of the pinned SDK (`containerservice.ManagedCluster`, `AgentPool`,
API version 2025-09-01); nested values are the SDK's `...ArgsDict` shapes. Nothing here imports
Pulumi, so the choices below are tested as plain data.

Taints come from catalog/pools.py, so the Kueue flavors tolerate exactly these nodes. No
node labels are declared: AKS itself labels each node with its pool name
(`kubernetes.azure.com/agentpool`, a reserved prefix a pool may not set), and the flavors select
on that label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from catalog.pools import (
    CPU_POOL_NAME,
    CRITICAL_ADDONS_TAINT,
    SYSTEM_POOL_NAME,
    gpu_pool_declared_taints,
    taint_string,
)

GpuDriverMode = Literal["operator", "aks"]

# Fields of the ManagedCluster that AKS owns once the cluster exists (Pulumi `ignore_changes`,
# engine property names). The inline system pool is the only pool the stack declares in
# `agentPoolProfiles`, but Azure reports every pool there (the separately managed AgentPools too)
# with the counts it currently runs, and `pulumi refresh` copies that into the stack's state: a
# later `pulumi up` would then diff the list and send a cluster update (pulumi-azure-native
# #1532; #4264: an inline profile update puts every pool into `Scaling`). The pinned SDK itself
# says the property cannot be updated through the cluster once it exists (AKS wants per-pool
# operations), so after creation the list is AKS's: the system pool is scaled, given another
# VM size or moved to a new Kubernetes minor with `az aks nodepool` (docs/aks.md, "Node pools
# after creation"); patch releases reach it through the `patch` upgrade channel.
MANAGED_CLUSTER_IGNORED_FIELDS: Final = ("agentPoolProfiles",)
# Fields of an autoscaled AgentPool that the cluster autoscaler owns: `count` is only the size the
# pool is created with (its minCount). Left in the diff, a `pulumi up` after `pulumi refresh`
# would send the old count back and fight the autoscaler over running nodes.
AUTOSCALED_POOL_IGNORED_FIELDS: Final = ("count",)

# Planned maintenance (AKS "planned maintenance"; `containerservice.MaintenanceConfiguration`,
# API 2025-09-01). The cluster's upgrade channels (`patch`, `NodeImage`, below) drain and
# re-image nodes whenever AKS has an update, GPU nodes mid-training included; these two
# configurations, named exactly so, confine that to a weekly window: Kubernetes patch upgrades
# and node image upgrades respectively. AKS treats the window as best effort and may still run
# urgent maintenance outside it.
AUTO_UPGRADE_SCHEDULE: Final = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_SCHEDULE: Final = "aksManagedNodeOSUpgradeSchedule"
# Configuration name -> the short name the stack's resource is named after.
MAINTENANCE_SCHEDULES: Final = {
    AUTO_UPGRADE_SCHEDULE: "auto-upgrade",
    NODE_OS_UPGRADE_SCHEDULE: "node-os-upgrade",
}

# Built-in role "Azure Kubernetes Service RBAC Cluster Admin": every Kubernetes API action on the
# cluster, granted through Azure RBAC (the cluster has no Kubernetes-native admin credential).
AKS_RBAC_CLUSTER_ADMIN_ROLE: Final = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
AKS_RBAC_CLUSTER_ADMIN_ROLE_NAME: Final = "Azure Kubernetes Service RBAC Cluster Admin"


@dataclass(frozen=True)
class AksNames:
    """The Azure names of one stack's cluster, all derived from the stack name."""

    resource_group: str  # holds the cluster
    cluster: str
    dns_prefix: str
    node_resource_group: str  # AKS creates and owns it (VM scale sets, disks, load balancer)


def aks_names(stack: str) -> AksNames:
    """Names within Azure's limits for every stack name `catalog.azure.STACK_NAME_PATTERN` accepts.

    Limits (Azure naming rules): resource group 1-90, managed cluster 1-63, DNS prefix 1-54
    characters. The node resource group is named explicitly: AKS's default
    `MC_<group>_<cluster>_<region>` may not exceed 80 characters and would repeat the stack name.
    """
    return AksNames(
        resource_group=f"rg-aksray-{stack}",
        cluster=f"aks-aksray-{stack}",
        dns_prefix=f"aksray-{stack}",
        node_resource_group=f"rg-aksray-{stack}-nodes",
    )


def system_pool_profile(vm_size: str, count: int, kubernetes_version: str) -> dict[str, Any]:
    """The inline system pool of the ManagedCluster: critical add-ons only."""
    return {
        "name": SYSTEM_POOL_NAME,
        "mode": "System",
        "vm_size": vm_size,
        "count": count,
        "enable_auto_scaling": False,
        "os_type": "Linux",
        "os_sku": "AzureLinux",
        "type": "VirtualMachineScaleSets",
        "orchestrator_version": kubernetes_version,
        # Only pods tolerating CriticalAddonsOnly (CoreDNS, metrics-server, konnectivity...) land
        # here; operators and Ray heads go to the CPU pool.
        "node_taints": [taint_string(CRITICAL_ADDONS_TAINT)],
    }


def managed_cluster_args(
    stack: str,
    *,
    location: str,
    kubernetes_version: str,
    system_pool: dict[str, Any],
    local_accounts: bool,
    tier: str,
    azure_monitor_profile: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ManagedCluster itself (without `resource_group_name`, which is an Output).

    `azure_monitor_profile`: the metrics add-on (managed Prometheus, manifests/monitoring.py),
    or None for none.
    """
    names = aks_names(stack)
    extra = {"azure_monitor_profile": azure_monitor_profile} if azure_monitor_profile else {}
    return extra | {
        "resource_name_": names.cluster,
        "location": location,
        "dns_prefix": names.dns_prefix,
        "node_resource_group": names.node_resource_group,
        "kubernetes_version": kubernetes_version,
        # The pricing tier (settings/model.py ClusterTier); `Base` is the only SKU name of a
        # regular cluster (`Automatic` is AKS Automatic, a different product).
        "sku": {"name": "Base", "tier": tier},
        # The control plane's own identity (for load balancers, disks, scale sets): Azure manages
        # its credential; nothing to rotate.
        "identity": {"type": "SystemAssigned"},
        "agent_pool_profiles": [system_pool],
        # Workload identity: the OIDC issuer signs service-account tokens that Entra ID exchanges
        # for identity tokens (the federated credentials in components/storage.py trust it).
        "oidc_issuer_profile": {"enabled": True},
        "security_profile": {"workload_identity": {"enabled": True}},
        # Entra ID sign-in for people and pipelines, authorised by Azure RBAC role assignments
        # (e.g. "Azure Kubernetes Service RBAC Cluster Admin") instead of static certificates.
        "enable_rbac": True,
        "aad_profile": {"managed": True, "enable_azure_rbac": True},
        # Local accounts are the certificate-based admin kubeconfig that bypasses Entra ID and
        # cannot be revoked per person. Off unless a stack opts in (cluster.localAccounts).
        "disable_local_accounts": not local_accounts,
        "auto_upgrade_profile": {
            # `patch` keeps the minor version the stack file names (the pinned operators are
            # tested against it) while security patches of that minor arrive automatically.
            "upgrade_channel": "patch",
            # Fresh node images (OS security fixes) by re-imaging; GPU drivers come back with the
            # node (the GPU Operator, or AKS with gpuDriver: aks, reinstalls them).
            "node_os_upgrade_channel": "NodeImage",
        },
        # Azure CNI Overlay with the Cilium dataplane. Overlay: pods get addresses from a private
        # CIDR, not from a VNet subnet, so GPU pools can scale out to many nodes and pods
        # without exhausting VNet address space, while pod-to-pod traffic (Ray object transfers,
        # collective ops between workers) stays routed natively, without VXLAN encapsulation.
        # Cilium: eBPF dataplane and network policy enforcement, the AKS-recommended pairing.
        "network_profile": {
            "network_plugin": "azure",
            "network_plugin_mode": "overlay",
            "network_dataplane": "cilium",
            "network_policy": "cilium",
            "load_balancer_sku": "standard",
        },
    }


def maintenance_configuration_args(
    config_name: str,
    *,
    day_of_week: str,
    start_time: str,
    duration_hours: int,
    utc_offset: str,
    interval_weeks: int,
) -> dict[str, Any]:
    """One planned-maintenance configuration: a weekly window (without `resource_group_name`
    and `resource_name_`, which are Outputs of the cluster)."""
    if config_name not in MAINTENANCE_SCHEDULES:
        raise ValueError(f"config_name must be one of {', '.join(MAINTENANCE_SCHEDULES)}")
    return {
        "config_name": config_name,
        "maintenance_window": {
            "schedule": {"weekly": {"day_of_week": day_of_week, "interval_weeks": interval_weeks}},
            "duration_hours": duration_hours,
            # Local time of `utc_offset`, "HH:MM".
            "start_time": start_time,
            "utc_offset": utc_offset,
        },
    }


def _autoscaled_user_pool(
    name: str,
    vm_size: str,
    *,
    min_count: int,
    max_count: int,
    os_sku: str,
    kubernetes_version: str,
) -> dict[str, Any]:
    """What every user pool shares: a Linux scale set autoscaled between min and max."""
    return {
        "agent_pool_name": name,
        "mode": "User",
        "vm_size": vm_size,
        "count": min_count,
        "min_count": min_count,
        "max_count": max_count,
        "enable_auto_scaling": True,
        "os_type": "Linux",
        "os_sku": os_sku,
        "type": "VirtualMachineScaleSets",
        "orchestrator_version": kubernetes_version,
    }


def pool_ignored_fields(pool_args: dict[str, Any]) -> list[str]:
    """What `pulumi up` must leave alone on an AgentPool built here (its `ignore_changes`)."""
    return list(AUTOSCALED_POOL_IGNORED_FIELDS) if pool_args.get("enable_auto_scaling") else []


def cpu_pool_args(
    vm_size: str, min_count: int, max_count: int, kubernetes_version: str
) -> dict[str, Any]:
    """The CPU user pool: operators and Ray heads, autoscaled, never tainted."""
    return _autoscaled_user_pool(
        CPU_POOL_NAME,
        vm_size,
        min_count=min_count,
        max_count=max_count,
        os_sku="AzureLinux",
        kubernetes_version=kubernetes_version,
    )


def gpu_pool_args(
    name: str,
    vm_size: str,
    *,
    min_count: int,
    max_count: int,
    spot: bool,
    gpu_driver: GpuDriverMode,
    kubernetes_version: str,
) -> dict[str, Any]:
    """A GPU user pool: autoscaled from `min_count`, tainted for GPU work only.

    `gpu_driver: operator` leaves the driver to the NVIDIA GPU Operator (`driver: None`);
    `aks` has AKS install it (`driver: Install`). The two are never mixed in one cluster.
    """
    # The GPU Operator's driver containers target Ubuntu node images.
    args = _autoscaled_user_pool(
        name,
        vm_size,
        min_count=min_count,
        max_count=max_count,
        os_sku="Ubuntu",
        kubernetes_version=kubernetes_version,
    )
    args |= {
        "node_taints": [taint_string(t) for t in gpu_pool_declared_taints()],
        "gpu_profile": {"driver": "None" if gpu_driver == "operator" else "Install"},
    }
    if spot:
        # AKS adds the taint kubernetes.azure.com/scalesetpriority=spot:NoSchedule by itself
        # (catalog/pools.py SPOT_TAINT; the flavors tolerate it).
        args.update(
            scale_set_priority="Spot",
            scale_set_eviction_policy="Delete",  # evicted nodes go away; nothing keeps billing
            spot_max_price=-1,  # pay up to the on-demand price; never evicted for price
        )
    return args


# --------------------------------------------------------------------------------------------
# The image cache (`cluster.imageCache`): an Azure Container Registry in the cluster's resource
# group, an artifact cache rule for the Ray image (ACR's artifact cache, Basic tier and up), the
# Docker Hub credentials it pulls with (a credential set whose secrets a Key Vault holds, read by
# the credential set's own identity), and AcrPull for the cluster's kubelet identity (AKS,
# "Integrate Azure Container Registry with AKS"). Pods then pull `<login server>/<repository>`.
# --------------------------------------------------------------------------------------------

# Built-in roles: "AcrPull" (pull from one registry) and "Key Vault Secrets User" (read secret
# values, here of one secret each).
ACR_PULL_ROLE: Final = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
ACR_PULL_ROLE_NAME: Final = "AcrPull"
KEY_VAULT_SECRETS_USER_ROLE: Final = "4633458b-17de-408a-b874-0445c86b69e6"
KEY_VAULT_SECRETS_USER_ROLE_NAME: Final = "Key Vault Secrets User"
DOCKER_HUB: Final = "docker.io"
CREDENTIAL_SET_NAME: Final = "dockerhub"
CACHE_RULE_NAME: Final = "ray-llm"
# A registry name is 5-50 letters and digits, globally unique: a readable prefix from the stack
# name and a random suffix, as the storage account's.
REGISTRY_PREFIX_MAX: Final = 42
REGISTRY_SUFFIX_LENGTH: Final = 8


def registry_name_prefix(stack: str) -> str:
    kept = "".join(c for c in stack.lower() if c.isascii() and c.isalnum())
    return f"aksray{kept}"[:REGISTRY_PREFIX_MAX]


def registry_suffix_args() -> dict[str, Any]:
    """The `random.RandomString` that makes the registry name unique."""
    return {"length": REGISTRY_SUFFIX_LENGTH, "special": False, "upper": False, "numeric": True}


def registry_args(sku: str, location: str) -> dict[str, Any]:
    """`containerregistry.Registry`: pulls with Entra ID only (no admin user, no anonymous
    pull); reached over its public endpoint, as Docker Hub was."""
    return {
        "location": location,
        "sku": {"name": sku},
        "admin_user_enabled": False,
        "anonymous_pull_enabled": False,
        "public_network_access": "Enabled",
    }


def secret_uri(vault_name: str, secret: str) -> str:
    """A Key Vault secret's identifier, latest version (the form a credential set takes)."""
    return f"https://{vault_name}.vault.azure.net/secrets/{secret}"


def secret_scope(key_vault_id: str, secret: str) -> str:
    """The ARM scope of one Key Vault secret: what its reader is granted on."""
    return f"{key_vault_id.rstrip('/')}/secrets/{secret}"


def credential_set_args(
    vault_name: str, username_secret: str, password_secret: str
) -> dict[str, Any]:
    """`containerregistry.CredentialSet` for Docker Hub: its system identity reads the two
    secrets when ACR pulls from upstream."""
    return {
        "credential_set_name": CREDENTIAL_SET_NAME,
        "login_server": DOCKER_HUB,
        "identity": {"type": "SystemAssigned"},
        "auth_credentials": [
            {
                "name": "Credential1",
                "username_secret_identifier": secret_uri(vault_name, username_secret),
                "password_secret_identifier": secret_uri(vault_name, password_secret),
            }
        ],
    }


def cache_rule_args(repository: str) -> dict[str, Any]:
    """`containerregistry.CacheRule`: `<registry>/<repository>` caches Docker Hub's repository of
    the same name (tags are fetched on first pull, then served from the registry)."""
    return {
        "cache_rule_name": CACHE_RULE_NAME,
        "source_repository": f"{DOCKER_HUB}/{repository}",
        "target_repository": repository,
    }


def cached_image(login_server: str, image: str) -> str:
    """The image as pods pull it through the registry: `<login server>/<repository>:<tag>`."""
    return f"{login_server}/{image}"
