"""Which input changes make a provider replace a resource instead of updating it.

One row per resource type the program registers, each key with where the rule comes from. The
planner's change model (aksray/plan/change/) reads these rows; nothing here is guessed where a
schema exists, and what can be checked offline is checked by tests/conformance/test_replacement.py.

azure-native (3.29.0) decides in its `Diff` (provider/pkg/provider/diff.go
`calculateDetailedDiff`): every URL path parameter of the resource's PUT replaces, and so does
every input its metadata marks `forceNew` (top level, or one level down). The metadata is
embedded in the provider binary and not published offline, so each key says which of the
provider's rules produced it:

- `path`: a URL path parameter. The SDK publishes them: they are exactly the arguments of the
  resource's `get_<resource>` invoke (the GET has the same URL), less its query parameters
  (`tenantId`, `expand`), which the conformance test reads from the installed SDK.
- `x-ms-mutability`: the provider's code generator marks a resource-level property `forceNew`
  when the Azure REST spec says it may be set at create but not at update; `location` of every
  tracked resource (common-types `TrackedResource.location`: read, create). Generated metadata.
- `forceNewMap`: the provider's hand-kept list (provider/pkg/gen/replacement.go): AKS's DNS
  prefix, node resource group and network settings, an agent pool's VM size and GPU instance
  profile (PR #3655), a role assignment's principal, a storage account's hierarchical namespace.
  A documented rule of the provider, not generated metadata.

pulumi-kubernetes (4.25.0, provider/pkg/provider/diff.go `forceNewProperties`): a change of
`metadata.name` or `metadata.namespace` replaces any object; a few built-in kinds add fields
(below). Custom resources add none. A Helm release (helm_release.go `Diff`) replaces only on
its name or namespace. pulumi-random (4.21.4, terraform-provider-random): every input of a
RandomString forces a new one. pulumiverse-grafana (2.44.0, terraform-provider-grafana): a
dashboard's `orgId`, and its `configJson` when the JSON's `uid` changes; a folder's `orgId` and
`uid`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

# The provider versions the rows were read at (tests: each equals the installed SDK's version).
AZURE_NATIVE_VERSION: Final = "3.29.0"
KUBERNETES_VERSION: Final = "4.25.0"
RANDOM_VERSION: Final = "4.21.4"
GRAFANA_VERSION: Final = "2.44.0"

AzureRule = Literal["path", "x-ms-mutability", "forceNewMap"]

_AZURE_RULES: Final[dict[AzureRule, str]] = {
    "path": f"azure-native {AZURE_NATIVE_VERSION}: a URL path parameter of the resource's PUT "
    "(diff.go calculateDetailedDiff; the arguments of the SDK's get invoke)",
    "x-ms-mutability": f"azure-native {AZURE_NATIVE_VERSION}: generated metadata, create-only "
    "in the Azure REST spec (x-ms-mutability read, create)",
    "forceNewMap": f"azure-native {AZURE_NATIVE_VERSION}: the provider's forceNewMap "
    "(provider/pkg/gen/replacement.go)",
}


@dataclass(frozen=True)
class ReplaceKey:
    """An input path whose change replaces the resource, and the rule that says so."""

    path: str  # an SDK input name (camelCase), or `parent.child` one level down
    rule: str  # `path`, `x-ms-mutability`, `forceNewMap`, or another provider's rule name
    source: str  # the provider version and where the rule lives


@dataclass(frozen=True)
class AzureRow:
    """One azure-native resource type: its REST API version and what replaces it."""

    type: str
    api_version: str  # the Azure REST API version the SDK class calls (its docstrings)
    path: tuple[str, ...]  # URL path parameters, the resource's own name last
    create_only: tuple[tuple[str, AzureRule], ...] = ()  # (input path, rule)
    query: tuple[str, ...] = ()  # arguments of the get invoke that are query parameters

    @property
    def name_input(self) -> str:
        """The input that names the resource (set: azure-native deletes before replacing)."""
        return self.path[-1]

    def replace_keys(self) -> tuple[ReplaceKey, ...]:
        found = [ReplaceKey(p, "path", _AZURE_RULES["path"]) for p in self.path]
        found += [ReplaceKey(p, rule, _AZURE_RULES[rule]) for p, rule in self.create_only]
        return tuple(found)


_LOCATION: Final = (("location", "x-ms-mutability"),)
_AKS_NETWORK: Final = tuple(
    (f"networkProfile.{field}", "forceNewMap")
    for field in (
        "serviceCidr", "serviceCidrs", "dnsServiceIP", "networkMode", "networkPlugin",
        "networkPluginMode", "podCidr", "networkDataplane", "networkPolicy", "outboundType",
    )
)  # fmt: skip

AZURE_ROWS: Final[tuple[AzureRow, ...]] = (
    AzureRow(
        "azure-native:resources:ResourceGroup", "2024-03-01",
        ("resourceGroupName",), (("location", "forceNewMap"),),
    ),
    AzureRow(
        "azure-native:containerservice:ManagedCluster", "2025-09-01",
        ("resourceGroupName", "resourceName"),
        (
            *_LOCATION, ("dnsPrefix", "forceNewMap"), ("fqdnSubdomain", "forceNewMap"),
            ("diskEncryptionSetID", "forceNewMap"), ("nodeResourceGroup", "forceNewMap"),
            ("linuxProfile", "forceNewMap"), ("windowsProfile", "forceNewMap"), *_AKS_NETWORK,
        ),
    ),
    AzureRow(
        "azure-native:containerservice:AgentPool", "2025-09-01",
        ("resourceGroupName", "resourceName", "agentPoolName"),
        (
            ("vmSize", "forceNewMap"), ("gpuInstanceProfile", "forceNewMap"),
            ("networkProfile.nodePublicIPTags", "forceNewMap"),
        ),
    ),
    AzureRow(
        "azure-native:containerservice:MaintenanceConfiguration", "2025-09-01",
        ("resourceGroupName", "resourceName", "configName"),
    ),
    AzureRow(
        "azure-native:storage:StorageAccount", "2024-01-01",
        ("resourceGroupName", "accountName"),
        (("location", "forceNewMap"), ("isHnsEnabled", "forceNewMap")), ("expand",),
    ),
    AzureRow(
        "azure-native:storage:BlobContainer", "2024-01-01",
        ("resourceGroupName", "accountName", "containerName"),
    ),
    AzureRow(
        "azure-native:storage:BlobServiceProperties", "2024-01-01",
        ("resourceGroupName", "accountName", "blobServicesName"),
    ),
    AzureRow(
        "azure-native:managedidentity:UserAssignedIdentity", "2023-01-31",
        ("resourceGroupName", "resourceName"), _LOCATION,
    ),
    AzureRow(
        "azure-native:managedidentity:FederatedIdentityCredential", "2023-01-31",
        ("resourceGroupName", "resourceName", "federatedIdentityCredentialResourceName"),
    ),
    AzureRow(
        "azure-native:authorization:RoleAssignment", "2022-04-01",
        ("scope", "roleAssignmentName"), (("principalId", "forceNewMap"),), ("tenantId",),
    ),
    AzureRow(
        "azure-native:monitor:AzureMonitorWorkspace", "2023-04-03",
        ("resourceGroupName", "azureMonitorWorkspaceName"), _LOCATION,
    ),
    AzureRow(
        "azure-native:monitor:DataCollectionEndpoint", "2022-06-01",
        ("resourceGroupName", "dataCollectionEndpointName"), _LOCATION,
    ),
    AzureRow(
        "azure-native:monitor:DataCollectionRule", "2022-06-01",
        ("resourceGroupName", "dataCollectionRuleName"), _LOCATION,
    ),
    AzureRow(
        "azure-native:monitor:DataCollectionRuleAssociation", "2022-06-01",
        ("resourceUri", "associationName"),
    ),
    AzureRow(
        "azure-native:dashboard:Grafana", "2024-10-01",
        ("resourceGroupName", "workspaceName"), _LOCATION,
    ),
)  # fmt: skip
AZURE_BY_TYPE: Final[dict[str, AzureRow]] = {row.type: row for row in AZURE_ROWS}

# --------------------------------------------------------------------------------------------
# pulumi-kubernetes
# --------------------------------------------------------------------------------------------

K8S_SOURCE: Final = (
    f"pulumi-kubernetes {KUBERNETES_VERSION}: provider/pkg/provider/diff.go forceNewProperties"
)
HELM_SOURCE: Final = (
    f"pulumi-kubernetes {KUBERNETES_VERSION}: helm_release.go Diff (forceNewFields: name, "
    "namespace)"
)
HELM_RELEASE: Final = "kubernetes:helm.sh/v3:Release"
# Every object: a new name or namespace is a new object.
K8S_METADATA_KEYS: Final = ("metadata.name", "metadata.namespace")
# Built-in kinds with more (`apiVersion`, `kind`) -> input paths; a changed leaf under one
# replaces. Secret and ConfigMap data replace unless the provider sets enableSecretMutable /
# enableConfigMapMutable (both off by default, and off in this program). Pod and
# PersistentVolume are in the provider's table too; the program creates neither.
K8S_FORCE_NEW: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("apps/v1", "Deployment"): ("spec.selector",),
    ("apps/v1", "DaemonSet"): ("spec.selector",),
    ("apps/v1", "StatefulSet"): (
        "spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.selector",
        "spec.serviceName", "spec.volumeClaimTemplates",
    ),
    ("v1", "PersistentVolumeClaim"): (
        "spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName",
    ),
    ("v1", "ResourceQuota"): ("spec.scopes",),
    ("v1", "Service"): ("spec.clusterIP",),
    ("v1", "Secret"): ("type", "stringData", "data"),
    ("v1", "ConfigMap"): ("binaryData", "data"),
    ("policy/v1beta1", "PodDisruptionBudget"): ("spec",),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("roleRef",),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ("roleRef",),
    ("storage.k8s.io/v1", "StorageClass"): ("parameters", "provisioner"),
    ("batch/v1", "Job"): ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
}  # fmt: skip
# Secret and ConfigMap keys the provider's mutable switches release (all but Secret `type`).
K8S_MUTABLE_SWITCH: Final[dict[tuple[str, str], str]] = {
    ("v1", "Secret"): "enableSecretMutable",
    ("v1", "ConfigMap"): "enableConfigMapMutable",
}
K8S_PROVIDER_SOURCE: Final = (
    f"pulumi-kubernetes {KUBERNETES_VERSION}: DiffConfig (a kubeconfig unknown until deploy, or "
    "another active cluster, replaces the provider and every object it manages)"
)

# --------------------------------------------------------------------------------------------
# Terraform-bridged providers: every input, or the ones named
# --------------------------------------------------------------------------------------------

EVERY_INPUT: Final = "*"
BRIDGED_SOURCES: Final[dict[str, str]] = {
    "random:index/randomString:RandomString": f"pulumi-random {RANDOM_VERSION}: "
    "terraform-provider-random string schema (every argument ForceNew)",
    "grafana:oss/dashboard:Dashboard": f"pulumiverse-grafana {GRAFANA_VERSION}: "
    "terraform-provider-grafana resource_dashboard.go (org_id ForceNew; config_json when its "
    "uid changes)",
    "grafana:oss/folder:Folder": f"pulumiverse-grafana {GRAFANA_VERSION}: "
    "terraform-provider-grafana resource_folder.go (org_id, uid ForceNew)",
}
BRIDGED_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "random:index/randomString:RandomString": (EVERY_INPUT,),
    "grafana:oss/dashboard:Dashboard": ("orgId", "configJson.uid"),
    "grafana:oss/folder:Folder": ("orgId", "uid"),
}
