"""Resources as a policy pack sees them: the engine's type tokens and camelCase input names.

The rules in azure_rules.py and kubernetes_rules.py read only these shapes, so the same rules
run under `pulumi preview --policy-pack policy` and in the tests over the resources `aksray`
records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
BLOB_CONTAINER = "azure-native:storage:BlobContainer"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITION = "azure-native:authorization:RoleDefinition"
MONITOR_WORKSPACE = "azure-native:monitor:AzureMonitorWorkspace"
GRAFANA = "azure-native:dashboard:Grafana"
CONTAINER_REGISTRY = "azure-native:containerregistry:Registry"
KEY_VAULT_SECRET = "azure-native:keyvault:Secret"  # noqa: S105 - a type token
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
RAY_KINDS = ("RayJob", "RayService", "RayCluster")
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
WORKLOAD_IDENTITY_USE = "azure.workload.identity/use"
WORKLOAD_IDENTITY_CLIENT_ID = "azure.workload.identity/client-id"


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


def get(props: Mapping[str, Any], *path: str) -> Any:
    """The value at a path of nested maps; None where any step is missing."""
    node: Any = props
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def kind(resource: Resource) -> str:
    """A Kubernetes object's kind (from its inputs, else from its type token)."""
    kind = resource.props.get("kind")
    return kind if isinstance(kind, str) else resource.resource_type.rsplit(":", 1)[-1]
