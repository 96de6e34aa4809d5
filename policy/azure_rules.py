"""The Azure invariants: storage locked down, AKS signed in through Entra ID, roles never wide."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from resource_inputs import (
    AGENT_POOL,
    BLOB_CONTAINER,
    BLOB_SERVICE,
    CONTAINER_REGISTRY,
    GRAFANA,
    KEY_VAULT_SECRET,
    MANAGED_CLUSTER,
    MONITOR_WORKSPACE,
    ROLE_ASSIGNMENT,
    STORAGE_ACCOUNT,
    Resource,
    StackResource,
    get,
)

# Built-in roles that grant control over resources or access: never assigned by this stack.
FORBIDDEN_ROLES = {
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635": "Owner",
    "b24988ac-6180-42a0-ab88-20f7382dd24c": "Contributor",
    "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9": "User Access Administrator",
    "f58310d9-a9f6-439a-9e8d-f62e7b41a168": "Role Based Access Control Administrator",
}
# "Azure Kubernetes Service RBAC Cluster Admin": allowed only on the stack's own cluster.
AKS_RBAC_CLUSTER_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
_MANAGED_CLUSTER_SCOPE = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ContainerService/"
    r"managedClusters/[^/]+$",
    re.IGNORECASE,
)
_BLOB_CONTAINER_SCOPE = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Storage/"
    r"storageAccounts/[^/]+/blobServices/default/containers/[^/]+$",
    re.IGNORECASE,
)


def _one(provider_type: str) -> re.Pattern[str]:
    return re.compile(
        rf"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/{re.escape(provider_type)}/[^/]+$",
        re.IGNORECASE,
    )


# Roles allowed on one resource of the stack only, other than a storage account's data role:
# role -> (the resource type, its ARM id pattern, how a message names it).
SCOPED_ROLES = {
    AKS_RBAC_CLUSTER_ADMIN: (
        MANAGED_CLUSTER,
        _MANAGED_CLUSTER_SCOPE,
        "the stack's own AKS cluster",
    ),
    # Monitoring Data Reader: Managed Grafana reads the workspace's metrics.
    "b0d8363b-8ddd-447d-831f-62ca05bff136": (
        MONITOR_WORKSPACE,
        _one("Microsoft.Monitor/accounts"),
        "the stack's Azure Monitor workspace",
    ),
    # Grafana Editor: the deployer provisions the dashboards.
    "a79a5197-3a5c-4973-a920-486035ffd60f": (
        GRAFANA,
        _one("Microsoft.Dashboard/grafana"),
        "the stack's Managed Grafana",
    ),
    # AcrPull: the kubelet identity pulls the Ray image through the stack's image cache.
    "7f951dda-4ed3-4680-a7ca-43fe172d538d": (
        CONTAINER_REGISTRY,
        _one("Microsoft.ContainerRegistry/registries"),
        "the stack's image cache registry",
    ),
    # Key Vault Secrets User: the registry's credential set reads one Docker Hub secret.
    "4633458b-17de-408a-b874-0445c86b69e6": (
        KEY_VAULT_SECRET,
        re.compile(
            r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.KeyVault/"
            r"vaults/[^/]+/secrets/[^/]+$",
            re.IGNORECASE,
        ),
        "one Key Vault secret",
    ),
}


# ---- storage ---------------------------------------------------------------------------------


def storage_account_locked_down(resource: Resource) -> list[str]:
    if resource.resource_type != STORAGE_ACCOUNT:
        return []
    props = resource.props
    problems = []
    if props.get("allowBlobPublicAccess") is not False:
        problems.append("public blob access must be off (allowBlobPublicAccess: false)")
    if props.get("allowSharedKeyAccess") is not False:
        problems.append(
            "shared-key access must be off (allowSharedKeyAccess: false): use "
            "Entra ID and workload identity"
        )
    if props.get("minimumTlsVersion") != "TLS1_2":
        problems.append(
            f"minimum TLS version must be TLS1_2, got {props.get('minimumTlsVersion')!r}"
        )
    if props.get("enableHttpsTrafficOnly") is not True:
        problems.append("HTTPS-only traffic must be on (enableHttpsTrafficOnly: true)")
    return problems


def blob_soft_delete_on(resource: Resource) -> list[str]:
    if resource.resource_type != BLOB_SERVICE:
        return []
    problems = []
    for key in ("deleteRetentionPolicy", "containerDeleteRetentionPolicy"):
        if get(resource.props, key, "enabled") is not True:
            problems.append(
                f"{key}.enabled must be true (soft delete keeps deleted data recoverable)"
            )
    return problems


def every_account_has_soft_delete(resources: Sequence[StackResource]) -> list[tuple[str, str]]:
    accounts = [r for r in resources if r.resource_type == STORAGE_ACCOUNT]
    covered = {
        dep.urn
        for r in resources
        if r.resource_type == BLOB_SERVICE
        for dep in r.property_dependencies.get("accountName", [])
    }
    return [
        (a.urn, "storage account has no BlobServiceProperties with soft delete")
        for a in accounts
        if a.urn not in covered
    ]


# ---- AKS -------------------------------------------------------------------------------------


def aks_identity_and_access(resource: Resource) -> list[str]:
    if resource.resource_type != MANAGED_CLUSTER:
        return []
    props = resource.props
    problems = []
    if get(props, "oidcIssuerProfile", "enabled") is not True:
        problems.append("the OIDC issuer must be on (oidcIssuerProfile.enabled)")
    if get(props, "securityProfile", "workloadIdentity", "enabled") is not True:
        problems.append("workload identity must be on (securityProfile.workloadIdentity.enabled)")
    if get(props, "aadProfile", "enableAzureRBAC") is not True:
        problems.append("Azure RBAC for Kubernetes must be on (aadProfile.enableAzureRBAC)")
    return problems


def aks_local_accounts_disabled(resource: Resource) -> list[str]:
    if resource.resource_type != MANAGED_CLUSTER:
        return []
    if resource.props.get("disableLocalAccounts") is not True:
        return [
            "local accounts must be disabled (disableLocalAccounts: true): static admin "
            "credentials bypass Entra ID"
        ]
    return []


def aks_upgrade_channel_set(resource: Resource) -> list[str]:
    if resource.resource_type != MANAGED_CLUSTER:
        return []
    problems = []
    channel = get(resource.props, "autoUpgradeProfile", "upgradeChannel")
    if not channel or str(channel).lower() == "none":
        problems.append(
            "an automatic upgrade channel must be set (autoUpgradeProfile.upgradeChannel)"
        )
    node_channel = get(resource.props, "autoUpgradeProfile", "nodeOSUpgradeChannel")
    if not node_channel or str(node_channel).lower() == "none":
        problems.append(
            "a node OS upgrade channel must be set (autoUpgradeProfile.nodeOSUpgradeChannel)"
        )
    return problems


def gpu_pools_scale_to_zero(resource: Resource) -> list[str]:
    if resource.resource_type != AGENT_POOL:
        return []
    # Every Azure GPU family is an N-series size (NC, ND, NV).
    if not str(resource.props.get("vmSize", "")).startswith("Standard_N"):
        return []
    problems = []
    if resource.props.get("enableAutoScaling") is not True:
        problems.append("GPU pools should autoscale (enableAutoScaling: true)")
    if resource.props.get("minCount") != 0:
        problems.append(
            f"GPU pool keeps {resource.props.get('minCount')} idle node(s) "
            "(minCount > 0): idle GPUs are billed"
        )
    return problems


# ---- identity --------------------------------------------------------------------------------


def no_privileged_roles(resource: Resource) -> list[str]:
    if resource.resource_type != ROLE_ASSIGNMENT:
        return []
    role = _role_guid(resource.props)
    if role in FORBIDDEN_ROLES:
        return [f"the {FORBIDDEN_ROLES[role]} role must not be assigned by this stack"]
    return []


def _role_guid(props: Mapping[str, Any]) -> str:
    return str(props.get("roleDefinitionId", "")).rstrip("/").rsplit("/", 1)[-1].lower()


def _scoped_to(assignment: StackResource, resource_type: str, arm_scope: re.Pattern[str]) -> bool:
    """The scope is one resource of `resource_type`: by its ARM id, or (before deploy, when the
    id is still unknown) because the scope input comes from exactly that resource."""
    scope = assignment.props.get("scope")
    if isinstance(scope, str) and arm_scope.match(scope):
        return True
    sources = [dep.resource_type for dep in assignment.property_dependencies.get("scope", [])]
    return sources == [resource_type]


def role_assignments_scoped_to_a_storage_account(
    resources: Sequence[StackResource],
) -> list[tuple[str, str]]:
    """Data roles on one Blob container (a team's data apart from every other team's); the
    exceptions are the deploying identity's
    Kubernetes RBAC admin role on this stack's own cluster (Entra ID with Azure RBAC and no
    local accounts leaves no other way for `pulumi up` to reach the Kubernetes API), and the
    monitoring roles on the stack's own workspace and Grafana, and the image cache's AcrPull on
    its own registry and Key Vault Secrets User on one secret each (SCOPED_ROLES)."""
    violations = []
    for assignment in (r for r in resources if r.resource_type == ROLE_ASSIGNMENT):
        scoped = SCOPED_ROLES.get(_role_guid(assignment.props))
        if scoped is not None:
            resource_type, pattern, what = scoped
            if _scoped_to(assignment, resource_type, pattern):
                continue
        elif _scoped_to(assignment, BLOB_CONTAINER, _BLOB_CONTAINER_SCOPE):
            continue
        else:
            what = "a single Blob container"
        violations.append(
            (
                assignment.urn,
                f"role assignment scope {assignment.props.get('scope')!r} is not {what}; "
                "never assign wider",
            )
        )
    return violations
