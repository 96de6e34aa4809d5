"""The registry the Ray image is pulled through (`cluster.imageCache`, manifests/aks.py): an
Azure Container Registry with an artifact cache rule for the image, the Docker Hub credential
set it pulls with, and the role assignments that let it read those credentials and the cluster's
nodes pull from it.

Without the stack's role assignments (`cluster.createRoleAssignments: false`) the registry, the
credential set and the rule are created and `aksray plan` lists the three grants an admin makes.
"""

from __future__ import annotations

import pulumi
import pulumi_random as random
from pulumi_azure_native import authorization, containerregistry

from catalog.versions import RAY_IMAGE, RAY_IMAGE_REPOSITORY
from manifests.aks import (
    ACR_PULL_ROLE,
    KEY_VAULT_SECRETS_USER_ROLE,
    cache_rule_args,
    cached_image,
    credential_set_args,
    registry_args,
    registry_name_prefix,
    registry_suffix_args,
    secret_scope,
)
from manifests.identity import role_definition_id
from settings.model import ImageCache as ImageCacheSettings


class ImageCache(pulumi.ComponentResource):
    """A registry caching the Ray image from Docker Hub, attached to the cluster's nodes."""

    image: pulumi.Output[str]  # the Ray image as pods pull it: through the registry
    registry_name: pulumi.Output[str]
    # What a pull of the image through the registry needs: the cache rule, and the grants.
    ready: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        settings: ImageCacheSettings,
        *,
        stack: str,
        location: str,
        resource_group_name: pulumi.Input[str],
        kubelet_object_id: pulumi.Input[str],
        create_role_assignments: bool,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aksray:platform:ImageCache", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        suffix = random.RandomString(f"{name}-suffix", **registry_suffix_args(), opts=child)
        registry = containerregistry.Registry(
            f"{name}-registry",
            resource_group_name=resource_group_name,
            registry_name=suffix.result.apply(lambda s: registry_name_prefix(stack) + s),
            **registry_args(settings.sku, location),
            opts=child,
        )
        credentials = containerregistry.CredentialSet(
            f"{name}-dockerhub",
            resource_group_name=resource_group_name,
            registry_name=registry.name,
            **credential_set_args(
                settings.vault_name, settings.username_secret, settings.password_secret
            ),
            opts=child,
        )
        rule = containerregistry.CacheRule(
            f"{name}-ray-llm",
            resource_group_name=resource_group_name,
            registry_name=registry.name,
            credential_set_resource_id=credentials.id,
            **cache_rule_args(RAY_IMAGE_REPOSITORY),
            opts=child,
        )
        self.ready = [rule]
        if create_role_assignments:
            self.ready += self._grants(
                name, settings, registry, credentials, kubelet=kubelet_object_id, opts=child
            )
        self.registry_name = registry.name
        self.image = registry.login_server.apply(lambda server: cached_image(server, RAY_IMAGE))
        self.register_outputs({"image": self.image, "registryName": self.registry_name})

    def _grants(
        self,
        name: str,
        settings: ImageCacheSettings,
        registry: containerregistry.Registry,
        credentials: containerregistry.CredentialSet,
        *,
        kubelet: pulumi.Input[str],
        opts: pulumi.ResourceOptions,
    ) -> list[pulumi.Resource]:
        """AcrPull on this registry for the kubelet identity; Key Vault Secrets User on each of
        the two secrets (not the vault) for the credential set's identity."""
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )

        def role(role_id: str) -> pulumi.Output[str]:
            return client.subscription_id.apply(lambda s: role_definition_id(s, role_id))

        reader = credentials.identity.apply(
            lambda identity: identity.principal_id if identity else ""
        )
        grants: list[pulumi.Resource] = [
            authorization.RoleAssignment(
                f"{name}-acr-pull",
                scope=registry.id,
                principal_id=kubelet,
                principal_type="ServicePrincipal",
                role_definition_id=role(ACR_PULL_ROLE),
                description="the cluster's kubelet identity pulls the Ray image through the cache",
                opts=opts,
            )
        ]
        for which, secret in (
            ("username", settings.username_secret),
            ("password", settings.password_secret),
        ):
            grants.append(
                authorization.RoleAssignment(
                    f"{name}-dockerhub-{which}",
                    scope=secret_scope(settings.key_vault_id, secret),
                    principal_id=reader,
                    principal_type="ServicePrincipal",
                    role_definition_id=role(KEY_VAULT_SECRETS_USER_ROLE),
                    description=f"the registry's Docker Hub credential set reads the {which}",
                    opts=opts,
                )
            )
        return grants
