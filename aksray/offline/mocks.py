"""Pulumi mocks for the offline run: what `pulumi up` would learn only from Azure and Kubernetes.

Outputs the program reads but only a deploy can know (an OIDC issuer URL, an identity's client id,
a random suffix) come back as visible placeholders, so every rendered object shows exactly where
a deploy-time value will go.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, Final

from pulumi.runtime import MockCallArgs, MockResourceArgs, Mocks

from catalog.versions import CHART_SETS

PLACEHOLDER_PREFIX: Final = "<unknown until deploy: "


def placeholder(what: str) -> str:
    return f"{PLACEHOLDER_PREFIX}{what}>"


def is_placeholder(value: object) -> bool:
    return isinstance(value, str) and PLACEHOLDER_PREFIX in value


def _random_string(args: MockResourceArgs) -> dict[str, Any]:
    # A fixed, obviously fake value that still obeys the requested shape (length, character
    # classes), so names built from it pass the same naming rules a real suffix would.
    length = int(args.inputs.get("length", 8))
    numeric_only = args.inputs.get("upper") is False and args.inputs.get("lower") is False
    return {"result": ("0" if numeric_only else "x") * length}


def _managed_cluster(args: MockResourceArgs) -> dict[str, Any]:
    name = args.inputs.get("resourceName", args.name)
    return {
        "name": name,
        "fqdn": placeholder(f"API server FQDN of {name}"),
        "nodeResourceGroup": args.inputs.get("nodeResourceGroup")
        or placeholder(f"node resource group of {name}"),
        "oidcIssuerProfile": {
            **dict(args.inputs.get("oidcIssuerProfile") or {}),
            "issuerURL": placeholder(f"OIDC issuer URL of {name}"),
        },
        "identityProfile": {
            "kubeletidentity": {
                "clientId": placeholder(f"kubelet identity client id of {name}"),
                "objectId": placeholder(f"kubelet identity object id of {name}"),
            }
        },
    }


def _user_assigned_identity(args: MockResourceArgs) -> dict[str, Any]:
    name = args.inputs.get("resourceName", args.name)
    return {
        "name": name,
        "clientId": placeholder(f"client id of identity {name}"),
        "principalId": placeholder(f"principal id of identity {name}"),
        "tenantId": placeholder("tenant id"),
    }


def _storage_account(args: MockResourceArgs) -> dict[str, Any]:
    name = args.inputs.get("accountName", args.name)
    return {
        "name": name,
        "primaryEndpoints": {
            "blob": f"https://{name}.blob.core.windows.net/",
            "dfs": f"https://{name}.dfs.core.windows.net/",
        },
    }


# The input that carries an azure-native resource's own name, per type; without it the provider
# auto-names the resource at deploy time.
_AZURE_NAME_INPUT: Final[dict[str, str]] = {
    "azure-native:resources:ResourceGroup": "resourceGroupName",
    "azure-native:containerservice:ManagedCluster": "resourceName",
    "azure-native:containerservice:AgentPool": "agentPoolName",
    "azure-native:storage:StorageAccount": "accountName",
    "azure-native:storage:BlobContainer": "containerName",
    "azure-native:storage:BlobServiceProperties": "blobServicesName",
    "azure-native:managedidentity:UserAssignedIdentity": "resourceName",
    "azure-native:managedidentity:FederatedIdentityCredential": (
        "federatedIdentityCredentialResourceName"
    ),
    "azure-native:authorization:RoleAssignment": "roleAssignmentName",
    "azure-native:monitor:AzureMonitorWorkspace": "azureMonitorWorkspaceName",
    "azure-native:monitor:DataCollectionEndpoint": "dataCollectionEndpointName",
    "azure-native:monitor:DataCollectionRule": "dataCollectionRuleName",
    "azure-native:monitor:DataCollectionRuleAssociation": "associationName",
    "azure-native:dashboard:Grafana": "workspaceName",
    "azure-native:containerregistry:Registry": "registryName",
    "azure-native:containerregistry:CredentialSet": "credentialSetName",
    "azure-native:containerregistry:CacheRule": "cacheRuleName",
}


def _azure_name(args: MockResourceArgs) -> dict[str, Any]:
    key = _AZURE_NAME_INPUT.get(args.typ)
    if key is not None and key in args.inputs:
        return {"name": args.inputs[key]}
    return {"name": placeholder(f"auto-name of {args.name}")}


def _grafana(args: MockResourceArgs) -> dict[str, Any]:
    name = args.inputs.get("workspaceName", args.name)
    return {
        "name": name,
        "identity": {
            **dict(args.inputs.get("identity") or {}),
            "principalId": placeholder(f"principal id of Grafana {name}"),
        },
        "properties": {
            **dict(args.inputs.get("properties") or {}),
            "endpoint": placeholder(f"endpoint of Grafana {name}"),
        },
    }


def _registry(args: MockResourceArgs) -> dict[str, Any]:
    name = args.inputs.get("registryName", args.name)
    return {"name": name, "loginServer": f"{name}.azurecr.io"}


def _credential_set(args: MockResourceArgs) -> dict[str, Any]:
    name = args.inputs.get("credentialSetName", args.name)
    return {
        "name": name,
        "identity": {
            **dict(args.inputs.get("identity") or {}),
            "principalId": placeholder(f"principal id of credential set {name}"),
        },
    }


_COMPUTED: Final[dict[str, Callable[[MockResourceArgs], dict[str, Any]]]] = {
    "random:index/randomString:RandomString": _random_string,
    "azure-native:containerservice:ManagedCluster": _managed_cluster,
    "azure-native:managedidentity:UserAssignedIdentity": _user_assigned_identity,
    "azure-native:storage:StorageAccount": _storage_account,
    "azure-native:dashboard:Grafana": _grafana,
    "azure-native:containerregistry:Registry": _registry,
    "azure-native:containerregistry:CredentialSet": _credential_set,
}


def _kubeconfig(cluster: str) -> str:
    text = (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {cluster}\n  cluster:\n    server: {placeholder('API server URL')}\n"
        f"contexts:\n- name: {cluster}\n  context:\n    cluster: {cluster}\n    user: {cluster}\n"
        f"current-context: {cluster}\nusers:\n- name: {cluster}\n  user: {{}}\n"
    )
    return base64.b64encode(text.encode()).decode()


def _credentials(args: MockCallArgs) -> dict[str, Any]:
    cluster = str(args.args.get("resourceName", "cluster"))
    return {"kubeconfigs": [{"name": "clusterUser", "value": _kubeconfig(cluster)}]}


def _chart_crds(args: MockCallArgs) -> dict[str, Any]:
    """`kubernetes:helm:template` offline: no chart is fetched, so the chart's CRDs are the ones
    the catalog lists for it, each schema a placeholder naming the chart and version (not where
    it comes from: both registries publish the same chart, so a switch changes no schema)."""
    options = json.loads(str(args.args.get("jsonOpts") or "{}"))
    chart = options.get("chart")
    found = [c for s in CHART_SETS.values() for c in s.charts if c.chart_ref == chart]
    if not found:
        return {"result": []}
    return {
        "result": [
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": name},
                "spec": placeholder(
                    f"the schema of {name} in chart {found[0].chart} {found[0].version}"
                ),
            }
            for name in found[0].stack_crds
        ]
    }


_INVOKES: Final[dict[str, Callable[[MockCallArgs], dict[str, Any]]]] = {
    "kubernetes:helm:template": _chart_crds,
    "azure-native:containerservice:listManagedClusterUserCredentials": _credentials,
    "azure-native:containerservice:listManagedClusterAdminCredentials": _credentials,
    "azure-native:authorization:getClientConfig": lambda _args: {
        "clientId": placeholder("client id of the deploying principal"),
        "objectId": placeholder("object id of the deploying principal"),
        "subscriptionId": placeholder("subscription id"),
        "tenantId": placeholder("tenant id"),
    },
    "azure-native:authorization:getClientToken": lambda _args: {
        "token": placeholder("Entra ID token of the deploying principal"),
    },
}


def resource_id(args: MockResourceArgs) -> str:
    if args.typ.startswith("kubernetes:") and not args.typ.startswith("pulumi:providers"):
        metadata = args.inputs.get("metadata") or {}
        name = metadata.get("name", args.name)
        namespace = metadata.get("namespace")
        return f"{namespace}/{name}" if namespace else str(name)
    return placeholder(f"id of {args.typ.split(':')[-1]} {args.name}")


class PlatformMocks(Mocks):
    """Echo inputs as outputs and add placeholders for what only a deploy can know."""

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ.startswith("azure-native:"):
            outputs.update(_azure_name(args))
        computed = _COMPUTED.get(args.typ)
        if computed is not None:
            outputs.update(computed(args))
        return resource_id(args), outputs

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        handler = _INVOKES.get(args.token)
        return (handler(args) if handler else {}), []
