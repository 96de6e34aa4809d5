"""Blob storage for the Ray workloads, and the per-team identities that reach it.

The shared containers (`storage.containers`) and one container per team (`<team>-data`); each
team identity's roles are the grants of settings/blob_access.py, each scoped to one container.

Account, containers and identities wait for nothing of the cluster: they are created while AKS
is still provisioning. Only the federated identity credentials consume a cluster output (its
OIDC issuer URL) and so come after it.
"""

from __future__ import annotations

import pulumi
import pulumi_random as random
from pulumi_azure_native import authorization, managedidentity, resources, storage

from components.namespaces import WorkloadIdentity
from manifests.identity import BLOB_ROLE_IDS, TeamIdentity, role_definition_id, team_identities
from manifests.storage import (
    account_name_prefix,
    account_suffix_args,
    blob_service_properties_args,
    container_args,
    data_resource_group_name,
    storage_account_args,
)
from settings.blob_access import BlobGrant
from settings.model import StorageSettings, TeamSettings
from workloads.common.layout import team_container


class BlobStorage(pulumi.ComponentResource):
    """A locked-down StorageV2 account, private containers (shared ones and one per team), and
    one identity per team with its grants."""

    resource_group_name: pulumi.Output[str]
    account: storage.StorageAccount
    account_name: pulumi.Output[str]
    blob_endpoint: pulumi.Output[str]
    dfs_endpoint: pulumi.Output[str]
    containers: dict[str, storage.BlobContainer]  # by container name, shared and teams' own
    # By team name: what TeamNamespaces annotates each team's service account with.
    identities: dict[str, WorkloadIdentity]
    managed_identities: dict[str, managedidentity.UserAssignedIdentity]
    # by team name: one per service account its Ray pods run as
    federated_credentials: dict[str, list[managedidentity.FederatedIdentityCredential]]
    # By (team, container): the team identity's role on that container.
    role_assignments: dict[tuple[str, str], authorization.RoleAssignment]

    def __init__(
        self,
        name: str,
        settings: StorageSettings,
        *,
        teams: tuple[TeamSettings, ...],
        grants: tuple[BlobGrant, ...],
        location: str,
        stack: str,
        oidc_issuer_url: pulumi.Input[str] | None,
        create_role_assignments: bool = True,
        elastic_teams: frozenset[str] = frozenset(),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`grants`: settings/blob_access.py's, for these teams. `create_role_assignments`:
        false leaves each team identity's Blob roles to an admin (the identity running
        `pulumi up` may not write role assignments). `elastic_teams`: teams whose elastic
        heads' account the identity trusts too. `oidc_issuer_url`: the cluster whose team pods
        the identities trust; None where no team pod runs (a MultiKueue manager: the workers
        add their own credentials)."""
        super().__init__("aksray:platform:BlobStorage", name, None, opts)
        # What holds data is protected where the stack says so (storage.protect): `pulumi
        # destroy` then refuses to delete it. The soft-delete settings and the group are
        # protected with the account, so a destroy never leaves data without them. So is the
        # account name's random suffix: an account cannot be renamed, so a new suffix (a changed
        # `account_suffix_args`, `pulumi up --replace`, a suffix lost from the state) means a
        # new account. Unprotected, Pulumi would create the new suffix and only then refuse to
        # replace the protected account; protected, it stops at the suffix. The suffix lives
        # only in the stack's state, so `retain_on_delete` would change nothing.
        data = pulumi.ResourceOptions(parent=self, protect=settings.protect)
        group = resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=data_resource_group_name(stack),
            location=location,
            opts=data,
        )
        self.account = self._account(name, group, location=location, stack=stack, opts=data)
        names = (*settings.containers, *(team_container(team.name) for team in teams))
        self.containers = self._containers(name, names, group, opts=data)
        self.identities = {}
        self.managed_identities = {}
        self.federated_credentials = {}
        self.role_assignments = {}
        roles = self._blob_roles() if create_role_assignments else None
        pairs = ((team.name, team.namespace) for team in teams)
        for plan in team_identities(stack, pairs, elastic_teams):
            self._team_identity(
                name,
                plan,
                group,
                location=location,
                oidc_issuer_url=oidc_issuer_url,
                grants=[g for g in grants if g.team == plan.team] if roles else [],
                roles=roles or {},
            )
        self.resource_group_name = group.name
        self.account_name = self.account.name
        endpoints = self.account.primary_endpoints
        self.blob_endpoint = endpoints.apply(lambda e: e.blob)
        self.dfs_endpoint = endpoints.apply(lambda e: e.dfs)
        self.register_outputs(
            {
                "accountName": self.account_name,
                "blobEndpoint": self.blob_endpoint,
                "containers": list(self.containers),
            }
        )

    def _account(
        self,
        name: str,
        group: resources.ResourceGroup,
        *,
        location: str,
        stack: str,
        opts: pulumi.ResourceOptions,
    ) -> storage.StorageAccount:
        """The account (its name made unique by a random suffix) and its soft-delete settings."""
        suffix = random.RandomString(f"{name}-suffix", **account_suffix_args(), opts=opts)
        account = storage.StorageAccount(
            f"{name}-account",
            resource_group_name=group.name,
            account_name=suffix.result.apply(lambda s: account_name_prefix(stack) + s),
            **storage_account_args(location),
            opts=opts,
        )
        storage.BlobServiceProperties(
            f"{name}-blob-service",
            resource_group_name=group.name,
            account_name=account.name,
            **blob_service_properties_args(),
            opts=opts,
        )
        return account

    def _containers(
        self,
        name: str,
        containers: tuple[str, ...],
        group: resources.ResourceGroup,
        *,
        opts: pulumi.ResourceOptions,
    ) -> dict[str, storage.BlobContainer]:
        return {
            container: storage.BlobContainer(
                f"{name}-{container}",
                resource_group_name=group.name,
                account_name=self.account.name,
                **container_args(container),
                opts=opts,
            )
            for container in containers
        }

    def _blob_roles(self) -> dict[str, pulumi.Output[str]]:
        """Role definitions are subscription resources: the ids need the subscription id."""
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )
        return {
            role: _role_definition(client.subscription_id, role_id)
            for role, role_id in BLOB_ROLE_IDS.items()
        }

    def _team_identity(
        self,
        name: str,
        plan: TeamIdentity,
        group: resources.ResourceGroup,
        *,
        location: str,
        oidc_issuer_url: pulumi.Input[str] | None,
        grants: list[BlobGrant],
        roles: dict[str, pulumi.Output[str]],
    ) -> None:
        """One team's identity, the credential that trusts its pods, and its roles on
        containers; what the team's service account is annotated with comes last."""
        plain = pulumi.ResourceOptions(parent=self, protect=False)
        identity = managedidentity.UserAssignedIdentity(
            f"{name}-{plan.team}",
            resource_group_name=group.name,
            resource_name_=plan.identity_name,
            location=location,
            opts=plain,
        )
        # One credential per service account (see manifests/identity.py), chained with
        # depends_on: Azure rejects concurrent writes of federated credentials to the same
        # identity. The first keeps the name it always had.
        federated: list[managedidentity.FederatedIdentityCredential] = []
        for credential in plan.credentials if oidc_issuer_url is not None else ():
            suffix = "" if not federated else f"-{credential.account}"
            federated.append(
                managedidentity.FederatedIdentityCredential(
                    f"{name}-{plan.team}-federation{suffix}",
                    resource_group_name=group.name,
                    resource_name_=identity.name,
                    federated_identity_credential_resource_name=credential.name,
                    issuer=oidc_issuer_url,
                    subject=credential.subject,
                    audiences=list(credential.audiences),
                    opts=plain.merge(pulumi.ResourceOptions(depends_on=federated[-1:])),
                )
            )
        # The client id reaches the service accounts only once the identity can actually be
        # used: trusted for the team's tokens and allowed on its containers. Pods that start
        # earlier would fail their first token exchange or Blob request. Without grants an
        # admin grants the Blob roles (docs/aks.md); the identity waits for no assignment here.
        usable: list[pulumi.Input[str]] = [identity.client_id, *(f.id for f in federated)]
        for grant in grants:
            assignment = self._blob_assignment(name, grant, identity, roles[grant.role])
            self.role_assignments[(grant.team, grant.container)] = assignment
            usable.append(assignment.id)
        client_id = pulumi.Output.all(*usable).apply(lambda values: str(values[0]))
        self.identities[plan.team] = WorkloadIdentity(client_id, identity.tenant_id)
        self.managed_identities[plan.team] = identity
        self.federated_credentials[plan.team] = federated

    def _blob_assignment(
        self,
        name: str,
        grant: BlobGrant,
        identity: managedidentity.UserAssignedIdentity,
        role: pulumi.Output[str],
    ) -> authorization.RoleAssignment:
        """Data access on one container only, never on the account, its group or the
        subscription."""
        team = grant.team
        access = "read and write" if grant.role == "contributor" else "read"
        return authorization.RoleAssignment(
            f"{name}-{team}-blob-{grant.role}-{grant.container}",
            scope=self.containers[grant.container].id,
            principal_id=identity.principal_id,
            # The identity was just created: telling Azure its type spares the lookup that
            # fails while the new principal replicates through Entra ID.
            principal_type="ServicePrincipal",
            role_definition_id=role,
            description=f"Ray pods of team {team} {access} container {grant.container}",
            opts=pulumi.ResourceOptions(parent=self, protect=False),
        )


def _role_definition(subscription: pulumi.Output[str], role: str) -> pulumi.Output[str]:
    definition: pulumi.Output[str] = subscription.apply(lambda s: role_definition_id(s, role))
    return definition
