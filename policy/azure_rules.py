"""The Azure invariants: storage locked down, AKS signed in through Entra ID, roles never wide."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from resource_inputs import (
    AGENT_POOL,
    BLOB_SERVICE,
    CONTAINER_REGISTRY,
    GRAFANA,
    KEY_VAULT_SECRET,
    MANAGED_CLUSTER,
    MONITOR_WORKSPACE,
    ROLE_ASSIGNMENT,
    ROLE_DEFINITION,
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
_STORAGE_ACCOUNT_SCOPE = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Storage/"
    r"storageAccounts/[^/]+$",
    re.IGNORECASE,
)
# The only actions a role the stack defines may hold: the Blob data actions, and reading a
# container's properties (its management actions would let a team delete any container).
BLOB_ROLE_ACTIONS = frozenset({"Microsoft.Storage/storageAccounts/blobServices/containers/read"})
BLOB_ROLE_DATA_ACTIONS = frozenset(
    f"Microsoft.Storage/storageAccounts/blobServices/containers/blobs/{action}"
    for action in ("read", "write", "delete", "add/action", "move/action")
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
    # Azure Kubernetes Service Cluster User Role: a team's group fetches the kubeconfig.
    "4abbcc35-e782-43d8-92c5-2d3f1bd2253f": (
        MANAGED_CLUSTER,
        _MANAGED_CLUSTER_SCOPE,
        "the stack's own AKS cluster",
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


def _blob_data_assignment(assignment: StackResource) -> str | None:
    """What is wrong with a Blob data assignment (one of the stack's own role), or None: on
    one storage account, with a condition (version 2.0) that names what it allows."""
    if not _scoped_to(assignment, STORAGE_ACCOUNT, _STORAGE_ACCOUNT_SCOPE):
        return f"scope {assignment.props.get('scope')!r} is not one storage account"
    condition = str(assignment.props.get("condition") or "")
    if assignment.props.get("conditionVersion") != "2.0" or "ActionMatches" not in condition:
        return "it has no condition naming the containers it allows (conditionVersion 2.0)"
    return None


def role_assignments_scoped_to_a_storage_account(
    resources: Sequence[StackResource],
) -> list[tuple[str, str]]:
    """Blob data access is the stack's own Blob data role on one storage account, conditioned
    to the containers each team may use; the other roles the stack assigns are each on one
    resource of the stack (SCOPED_ROLES): the deployer's Kubernetes RBAC admin role and the
    teams' groups' kubeconfig role on its own cluster (Entra ID with Azure RBAC and no local
    accounts leaves no other way to reach the Kubernetes API), the monitoring roles on its own
    workspace and Grafana, and the image cache's AcrPull on its own registry and Key Vault
    Secrets User on one secret each."""
    violations = []
    for assignment in (r for r in resources if r.resource_type == ROLE_ASSIGNMENT):
        sources = assignment.property_dependencies.get("roleDefinitionId", [])
        roles = [dependency.resource_type for dependency in sources]
        if roles == [ROLE_DEFINITION]:
            wrong = _blob_data_assignment(assignment)
            if wrong is not None:
                violations.append((assignment.urn, f"a Blob data assignment: {wrong}"))
            continue
        scoped = SCOPED_ROLES.get(_role_guid(assignment.props))
        if scoped is not None:
            resource_type, pattern, what = scoped
            if _scoped_to(assignment, resource_type, pattern):
                continue
        else:
            what = "one resource of the stack (an unknown role)"
        violations.append(
            (
                assignment.urn,
                f"role assignment scope {assignment.props.get('scope')!r} is not {what}; "
                "never assign wider",
            )
        )
    return violations


def roles_hold_blob_data_actions_only(resource: Resource) -> list[str]:
    """A role the stack defines holds the Blob data actions and reading container properties,
    nothing else, and is assignable in one resource group."""
    if resource.resource_type != ROLE_DEFINITION:
        return []
    problems = []
    for permission in resource.props.get("permissions") or []:
        extra = set(permission.get("actions") or []) - BLOB_ROLE_ACTIONS
        extra |= set(permission.get("dataActions") or []) - BLOB_ROLE_DATA_ACTIONS
        if extra:
            problems.append(
                f"the role holds {', '.join(sorted(extra))}: a role of this stack holds the "
                "Blob data actions only"
            )
    scopes = resource.props.get("assignableScopes") or []
    if len(scopes) != 1:
        problems.append(f"the role is assignable at {len(scopes)} scopes; one resource group only")
    return problems
