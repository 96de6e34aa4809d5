"""`cluster.imageCache`: the Ray image pulled through an Azure Container Registry of the stack.

Every Ray pod runs `rayproject/ray-llm` (about 10 GB) from Docker Hub, which allows 10 pulls an
hour per IP address without credentials, while an AKS cluster's nodes share a few outbound IPs.
With the cache on, the stack creates a registry with an artifact cache rule for that image and
the nodes pull it from there. ACR caches from Docker Hub only with credentials (a credential set
whose secrets are in a Key Vault: ACR's artifact cache docs, "Docker Hub supports authenticated
pulls only"), so the stack names a Key Vault and two of its secrets that the owner creates:
`dockerHub: {keyVaultId, usernameSecret, passwordSecret}`.
"""

from __future__ import annotations

import re
from typing import Final

from settings.defaults import (
    DEFAULT_DOCKER_HUB_PASSWORD_SECRET,
    DEFAULT_DOCKER_HUB_USERNAME_SECRET,
    DEFAULT_IMAGE_CACHE_ENABLED,
    DEFAULT_REGISTRY_SKU,
)
from settings.model import REGISTRY_SKUS, ClusterMode, ImageCache
from settings.reader import Section, join

IMAGE_CACHE_KEYS: Final = ("enabled", "sku", "dockerHub")
_DOCKER_HUB_KEYS: Final = ("keyVaultId", "usernameSecret", "passwordSecret")
# An ARM id of a Key Vault; the vault name is 3-24 letters, digits and '-', from a letter.
_KEY_VAULT_ID = re.compile(
    r"/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[-\w._()]{1,90}"
    r"/providers/Microsoft\.KeyVault/vaults/[a-zA-Z][a-zA-Z0-9-]{1,22}[a-zA-Z0-9]",
    re.IGNORECASE,
)
_SECRET_NAME = re.compile(r"[a-zA-Z0-9-]{1,127}")
_OFF: Final = ImageCache(
    enabled=False,
    sku=DEFAULT_REGISTRY_SKU,
    key_vault_id="",
    username_secret=DEFAULT_DOCKER_HUB_USERNAME_SECRET,
    password_secret=DEFAULT_DOCKER_HUB_PASSWORD_SECRET,
)


def parse_image_cache(cluster: Section, mode: ClusterMode) -> ImageCache:
    section = cluster.mapping("imageCache", IMAGE_CACHE_KEYS)
    if section is None:
        return _OFF
    enabled = section.boolean("enabled", DEFAULT_IMAGE_CACHE_ENABLED)
    sku = section.literal("sku", REGISTRY_SKUS, DEFAULT_REGISTRY_SKU)
    if enabled and mode != "aks":
        section.problem(
            join(section.path, "enabled"),
            "is only for mode aks (the registry is attached to the cluster the stack creates); "
            "on an existing cluster, pull through a registry attached where it is managed and "
            "remove this",
        )
        return _OFF
    hub = section.mapping("dockerHub", _DOCKER_HUB_KEYS)
    if hub is None:
        if enabled and not section.has("dockerHub"):
            section.problem(join(section.path, "dockerHub"), _CREDENTIALS_NEEDED)
        return ImageCache(enabled, sku, "", _OFF.username_secret, _OFF.password_secret)
    vault = hub.string(
        "keyVaultId",
        required=enabled,
        pattern=_KEY_VAULT_ID,
        hint="the Key Vault's resource id, /subscriptions/<id>/resourceGroups/<group>/providers/"
        "Microsoft.KeyVault/vaults/<name> (az keyvault show -n <name> --query id)",
    )
    secrets = [
        hub.string(
            key,
            default,
            pattern=_SECRET_NAME,
            hint="a Key Vault secret name: 1-127 letters, digits and '-'",
        )
        for key, default in (
            ("usernameSecret", DEFAULT_DOCKER_HUB_USERNAME_SECRET),
            ("passwordSecret", DEFAULT_DOCKER_HUB_PASSWORD_SECRET),
        )
    ]
    return ImageCache(enabled, sku, vault, secrets[0], secrets[1])


_CREDENTIALS_NEEDED: Final = (
    "is required with imageCache enabled: ACR caches Docker Hub images only with credentials. "
    "Create a Key Vault (Azure RBAC permission model) with two secrets, your Docker Hub user "
    "name and an access token, and name them here: {keyVaultId: <the vault's resource id>, "
    "usernameSecret: dockerhub-username, passwordSecret: dockerhub-token}"
)
