"""The Blob storage account and its containers, as keyword arguments for pulumi-azure-native.

Every key is an argument name of the pinned SDK (`storage.StorageAccount`,
`BlobServiceProperties`, `BlobContainer`; API version 2024-01-01). Nothing here imports Pulumi.
"""

from __future__ import annotations

from typing import Any, Final

# Azure: a storage account name is 3-24 lowercase letters and digits, unique across all of Azure.
ACCOUNT_NAME_MAX: Final = 24
# A random suffix (pulumi-random, lowercase letters and digits) makes the name globally unique:
# 36**8 ≈ 2.8e12 values.
ACCOUNT_SUFFIX_LENGTH: Final = 8
ACCOUNT_PREFIX_MAX: Final = ACCOUNT_NAME_MAX - ACCOUNT_SUFFIX_LENGTH
# Deleted blobs and containers stay restorable this long (the Azure portal's default).
SOFT_DELETE_DAYS: Final = 7


def data_resource_group_name(stack: str) -> str:
    """The resource group of the stack's data: apart from the cluster's, so the two have
    separate lifecycles (deleting the cluster's group never touches checkpoints and models)."""
    return f"rg-aksray-{stack}-data"


def account_name_prefix(stack: str) -> str:
    """The readable part of the account name; the random suffix completes it.

    Only lowercase letters and digits of the stack name are kept and the prefix is cut to
    `ACCOUNT_PREFIX_MAX`, so prefix + suffix fits Azure's 3-24 rule for every stack name.
    """
    kept = "".join(c for c in stack.lower() if c.isascii() and c.isalnum())
    return f"staksray{kept}"[:ACCOUNT_PREFIX_MAX]


def account_suffix_args() -> dict[str, Any]:
    """The `random.RandomString` that makes the account name unique."""
    return {
        "length": ACCOUNT_SUFFIX_LENGTH,
        "special": False,
        "upper": False,
        "lower": True,
        "numeric": True,
    }


def storage_account_args(location: str) -> dict[str, Any]:
    """A StorageV2 account reachable only with Entra ID tokens, over TLS 1.2+."""
    return {
        "location": location,
        "kind": "StorageV2",
        "sku": {"name": "Standard_LRS"},
        "access_tier": "Hot",
        # Hierarchical namespace (Data Lake Storage): real directories with atomic renames for
        # checkpoints, and the `abfss://` (dfs endpoint) as well as the `azure://` (blob
        # endpoint) URIs Ray reads. Blob and container soft delete work with it.
        "is_hns_enabled": True,
        # No anonymous reads, whatever a container says.
        "allow_blob_public_access": False,
        # No account keys and no SAS signed with them: only Entra ID (workload identity for
        # pods, Azure RBAC for people). Pulumi creates containers through the management plane,
        # which needs no key.
        "allow_shared_key_access": False,
        "default_to_o_auth_authentication": True,
        "minimum_tls_version": "TLS1_2",
        "enable_https_traffic_only": True,
        "allow_cross_tenant_replication": False,
    }


def blob_service_properties_args() -> dict[str, Any]:
    """Soft delete for blobs and for whole containers."""
    retention = {"enabled": True, "days": SOFT_DELETE_DAYS}
    return {
        "blob_services_name": "default",  # the only name Azure accepts
        "delete_retention_policy": dict(retention),
        "container_delete_retention_policy": dict(retention),
    }


def container_args(name: str) -> dict[str, Any]:
    """A private container: no anonymous access at any level."""
    return {"container_name": name, "public_access": "None"}
