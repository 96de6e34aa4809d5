"""The security and safety invariants of aks-ray-platform, one pure validator per rule.

Each rule reads resource inputs exactly as the engine hands them to a policy pack (camelCase wire
names), so the same rules run under `pulumi preview --policy-pack policy` and in the tests over
the resources `aksray` records. MANDATORY rules guard safety, ADVISORY ones cost. A stack that
needs an exception passes a policy config file naming it (README "Policy pack"), never an edit
here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
RAY_KINDS = ("RayJob", "RayService", "RayCluster")
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
WORKLOAD_IDENTITY_USE = "azure.workload.identity/use"
WORKLOAD_IDENTITY_CLIENT_ID = "azure.workload.identity/client-id"

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
# Env names whose value must come from a Secret, never inline.
_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCOUNT_?KEY|CONNECTION_?STRING"
    r"|CREDENTIAL)",
    re.IGNORECASE,
)
# Values that are credentials whatever they are called.
_SECRET_VALUE = re.compile(
    r"(hf_[A-Za-z0-9]{20,}|AccountKey=|SharedAccessSignature=|sig=[A-Za-z0-9%]"
    r"{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)
# A mask or a deploy-time placeholder is not a secret.
_MASKED = ("[secret]", "<unknown until deploy")


class Resource(Protocol):
    @property
    def resource_type(self) -> str: ...
    @property
    def props(self) -> Mapping[str, Any]: ...
    @property
    def urn(self) -> str: ...


class StackResource(Resource, Protocol):
    @property
    def property_dependencies(self) -> Mapping[str, Sequence[Any]]: ...


def _get(props: Mapping[str, Any], *path: str) -> Any:
    node: Any = props
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _kind(resource: Resource) -> str:
    kind = resource.props.get("kind")
    return kind if isinstance(kind, str) else resource.resource_type.rsplit(":", 1)[-1]


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
        if _get(resource.props, key, "enabled") is not True:
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
    if _get(props, "oidcIssuerProfile", "enabled") is not True:
        problems.append("the OIDC issuer must be on (oidcIssuerProfile.enabled)")
    if _get(props, "securityProfile", "workloadIdentity", "enabled") is not True:
        problems.append("workload identity must be on (securityProfile.workloadIdentity.enabled)")
    if _get(props, "aadProfile", "enableAzureRBAC") is not True:
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
    channel = _get(resource.props, "autoUpgradeProfile", "upgradeChannel")
    if not channel or str(channel).lower() == "none":
        problems.append(
            "an automatic upgrade channel must be set (autoUpgradeProfile.upgradeChannel)"
        )
    node_channel = _get(resource.props, "autoUpgradeProfile", "nodeOSUpgradeChannel")
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
    """Data roles on one storage account; the one exception is the deploying identity's
    Kubernetes RBAC admin role on this stack's own cluster (Entra ID with Azure RBAC and no
    local accounts leaves no other way for `pulumi up` to reach the Kubernetes API)."""
    violations = []
    for assignment in (r for r in resources if r.resource_type == ROLE_ASSIGNMENT):
        if _role_guid(assignment.props) == AKS_RBAC_CLUSTER_ADMIN:
            if _scoped_to(assignment, MANAGED_CLUSTER, _MANAGED_CLUSTER_SCOPE):
                continue
            what = "the stack's own AKS cluster"
        elif _scoped_to(assignment, STORAGE_ACCOUNT, _STORAGE_ACCOUNT_SCOPE):
            continue
        else:
            what = "a single storage account"
        violations.append(
            (
                assignment.urn,
                f"role assignment scope {assignment.props.get('scope')!r} is not {what}; "
                "never assign wider",
            )
        )
    return violations


# ---- Kubernetes ------------------------------------------------------------------------------


def _ray_cluster_spec(props: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = props.get("spec") or {}
    kind = props.get("kind")
    if kind == "RayJob":
        return spec.get("rayClusterSpec") or {}
    if kind == "RayService":
        return spec.get("rayClusterConfig") or {}
    return spec if isinstance(spec, Mapping) else {}


def ray_pod_templates(props: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(group name, pod template) for the head and every worker group of a Ray resource."""
    cluster = _ray_cluster_spec(props)
    head = _get(cluster, "headGroupSpec", "template")
    if isinstance(head, Mapping):
        yield "head", head
    for group in cluster.get("workerGroupSpecs") or []:
        template = group.get("template") if isinstance(group, Mapping) else None
        if isinstance(template, Mapping):
            yield str(group.get("groupName", "worker")), template


def _is_ray(resource: Resource) -> bool:
    return resource.resource_type.startswith("kubernetes:ray.io/") and _kind(resource) in RAY_KINDS


def ray_pods_use_workload_identity(resources: Sequence[StackResource]) -> list[tuple[str, str]]:
    identity_accounts = {
        (_get(r.props, "metadata", "namespace"), _get(r.props, "metadata", "name"))
        for r in resources
        if r.resource_type == "kubernetes:core/v1:ServiceAccount"
        and WORKLOAD_IDENTITY_CLIENT_ID in (_get(r.props, "metadata", "annotations") or {})
    }
    violations = []
    for ray in (r for r in resources if _is_ray(r)):
        namespace = _get(ray.props, "metadata", "namespace")
        for group, template in ray_pod_templates(ray.props):
            account = _get(template, "spec", "serviceAccountName")
            if (namespace, account) not in identity_accounts:
                continue
            labels = _get(template, "metadata", "labels") or {}
            if labels.get(WORKLOAD_IDENTITY_USE) != "true":
                violations.append(
                    (
                        ray.urn,
                        f"pod template {group} runs as workload-identity "
                        f"service account {account} without the label "
                        f'{WORKLOAD_IDENTITY_USE}: "true"',
                    )
                )
    return violations


def ray_workloads_are_queued(resource: Resource) -> list[str]:
    if not _is_ray(resource) or _kind(resource) == "RayCluster":
        return []
    labels = _get(resource.props, "metadata", "labels") or {}
    if not labels.get(QUEUE_LABEL):
        return [f"{_kind(resource)} has no {QUEUE_LABEL} label: it would bypass Kueue's quota"]
    return []


def _strings(node: Any, path: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _strings(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, f"{path}[{index}]")
    elif isinstance(node, str):
        yield path, node


def _env_lists(node: Any, path: str = "") -> Iterable[tuple[str, list[Any]]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            child = f"{path}.{key}" if path else str(key)
            if key == "env" and isinstance(value, list):
                yield child, value
            else:
                yield from _env_lists(value, child)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _env_lists(value, f"{path}[{index}]")


def no_plain_text_secrets(resource: Resource) -> list[str]:
    if not resource.resource_type.startswith("kubernetes:"):
        return []
    if resource.resource_type == "kubernetes:core/v1:Secret":
        return []  # a Secret is where secret values belong (Pulumi keeps them encrypted)
    problems = []
    for path, value in _strings(resource.props):
        if _SECRET_VALUE.search(value) and not value.startswith(_MASKED):
            problems.append(
                f"{path} holds what looks like a credential in plain text; "
                "reference a Secret instead"
            )
    for path, env in _env_lists(resource.props):
        for index, entry in enumerate(env):
            if not isinstance(entry, Mapping) or "value" not in entry:
                continue
            inline = entry.get("value")
            if _SECRET_NAME.search(str(entry.get("name", ""))) and inline not in ("", None):
                problems.append(
                    f"{path}[{index}] ({entry.get('name')}) sets a secret inline; "
                    "use valueFrom.secretKeyRef"
                )
    return problems


def helm_versions_pinned(resource: Resource) -> list[str]:
    if resource.resource_type not in HELM_TYPES:
        return []
    version = str(resource.props.get("version") or "")
    if (
        not version
        or version.lower() in ("latest", "*")
        or version.startswith((">", "<", "~", "^"))
    ):
        return [
            f"Helm chart {resource.props.get('chart')!r} must pin an exact version, got "
            f"{version or 'none'!r}"
        ]
    return []


# ---- the pack --------------------------------------------------------------------------------

ResourceRule = Callable[[Resource], list[str]]
StackRule = Callable[[Sequence[StackResource]], list[tuple[str, str]]]


def _resource_policy(
    name: str,
    description: str,
    rule: ResourceRule,
    level: EnforcementLevel = EnforcementLevel.MANDATORY,
) -> Policy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        for problem in rule(args):
            report(problem, None)

    return ResourceValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level
    )


def _stack_policy(
    name: str,
    description: str,
    rule: StackRule,
    level: EnforcementLevel = EnforcementLevel.MANDATORY,
) -> Policy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for urn, problem in rule(args.resources):
            report(problem, urn)

    return StackValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level
    )


ADVISORY = EnforcementLevel.ADVISORY

POLICIES: list[Policy] = [
    _resource_policy(
        "storage-account-locked-down",
        "Storage: no public blob access, no shared keys, TLS 1.2, HTTPS only.",
        storage_account_locked_down,
    ),
    _resource_policy(
        "blob-soft-delete", "Storage: blob and container soft delete on.", blob_soft_delete_on
    ),
    _stack_policy(
        "storage-account-has-soft-delete",
        "Storage: every account has blob service properties with soft delete.",
        every_account_has_soft_delete,
    ),
    _resource_policy(
        "aks-identity-and-access",
        "AKS: OIDC issuer, workload identity and Azure RBAC on.",
        aks_identity_and_access,
    ),
    _resource_policy(
        "aks-local-accounts-disabled", "AKS: local accounts off.", aks_local_accounts_disabled
    ),
    _resource_policy(
        "aks-upgrade-channels",
        "AKS: automatic and node OS upgrade channels set.",
        aks_upgrade_channel_set,
    ),
    _resource_policy(
        "gpu-pools-scale-to-zero",
        "AKS: GPU pools autoscale from 0 (cost).",
        gpu_pools_scale_to_zero,
        ADVISORY,
    ),
    _resource_policy(
        "no-privileged-roles",
        "Identity: no Owner, Contributor or access-administration role.",
        no_privileged_roles,
    ),
    _stack_policy(
        "role-assignments-scoped-to-storage",
        "Identity: data roles scoped to one storage account, the deployer's AKS RBAC admin "
        "role to the stack's own cluster; never wider.",
        role_assignments_scoped_to_a_storage_account,
    ),
    _stack_policy(
        "ray-pods-use-workload-identity",
        "Kubernetes: Ray pods under a workload-identity service account carry the "
        "azure.workload.identity/use label.",
        ray_pods_use_workload_identity,
    ),
    _resource_policy(
        "ray-workloads-queued",
        "Kubernetes: every RayJob and RayService has a Kueue queue label.",
        ray_workloads_are_queued,
    ),
    _resource_policy(
        "no-plain-text-secrets",
        "Kubernetes: no plain-text secret in any custom resource or pod env.",
        no_plain_text_secrets,
    ),
    _resource_policy(
        "helm-versions-pinned",
        "Kubernetes: every Helm release pins its version.",
        helm_versions_pinned,
    ),
]
