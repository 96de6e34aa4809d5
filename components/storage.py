"""Blob storage for the Ray workloads, and the per-team identities that reach it.

The shared containers (`storage.containers`) and one container per team (`<team>-data`); each
team identity holds the stack's Blob data role once, on the account, with a condition that
names what settings/access/blob.py lets it read and write (settings/access/blob_condition.py): one
role assignment per team, however many containers it reaches.

Account, containers and identities wait for nothing of the cluster: they are created while AKS
is still provisioning. Only the federated identity credentials consume a cluster output (its
OIDC issuer URL) and so come after it.
"""

from __future__ import annotations

import pulumi
import pulumi_random as random
from pulumi_azure_native import authorization, managedidentity, resources, storage

from components.namespaces import WorkloadIdentity
from manifests.identity import (
    TeamIdentity,
    blob_data_role_args,
    blob_data_role_name,
    role_definition_id,
    team_identities,
)
from manifests.storage import (
    account_name_prefix,
    account_suffix_args,
    blob_service_properties_args,
    container_args,
    data_resource_group_name,
    storage_account_args,
)
from settings.access.blob import TeamBlobAccess
from settings.access.blob_condition import CONDITION_VERSION, blob_condition
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
    # The stack's Blob data role; None where the stack writes no role (createRoleAssignments).
    blob_role: authorization.RoleDefinition | None
    # By team: its identity's one Blob role assignment, on the account, with its condition.
    role_assignments: dict[str, authorization.RoleAssignment]
    _blob_role_id: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        settings: StorageSettings,
        *,
        teams: tuple[TeamSettings, ...],
        access: tuple[TeamBlobAccess, ...],
        location: str,
        stack: str,
        oidc_issuer_url: pulumi.Input[str] | None,
        create_role_assignments: bool = True,
        elastic_teams: frozenset[str] = frozenset(),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`access`: settings/access/blob.py's, for these teams. `create_role_assignments`:
        false leaves the Blob role and each team identity's assignment to an admin (the
        identity running `pulumi up` may not write them). `elastic_teams`: teams whose elastic
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
        self.blob_role = (
            self._blob_role(name, group, stack) if create_role_assignments and teams else None
        )
        by_team = {a.team: a for a in access}
        pairs = ((team.name, team.namespace) for team in teams)
        for plan in team_identities(stack, pairs, elastic_teams):
            self._team_identity(
                name,
                plan,
                group,
                location=location,
                oidc_issuer_url=oidc_issuer_url,
                access=by_team[plan.team] if self.blob_role is not None else None,
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

    def _blob_role(
        self, name: str, group: resources.ResourceGroup, stack: str
    ) -> authorization.RoleDefinition:
        """The Blob data actions and no management action, assignable in the data resource
        group only; `_blob_role_id` is what an assignment names it by."""
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )
        role = authorization.RoleDefinition(
            f"{name}-blob-role",
            scope=group.id,
            role_name=client.subscription_id.apply(lambda s: blob_data_role_name(stack, s)),
            assignable_scopes=[group.id],
            **blob_data_role_args(),
            opts=pulumi.ResourceOptions(parent=self, protect=False),
        )
        self._blob_role_id = pulumi.Output.all(client.subscription_id, role.name).apply(
            lambda values: role_definition_id(str(values[0]), str(values[1]))
        )
        return role

    def _team_identity(
        self,
        name: str,
        plan: TeamIdentity,
        group: resources.ResourceGroup,
        *,
        location: str,
        oidc_issuer_url: pulumi.Input[str] | None,
        access: TeamBlobAccess | None,
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
        # earlier would fail their first token exchange or Blob request. Without its
        # assignment an admin grants it (docs/aks.md); the identity waits for none here.
        usable: list[pulumi.Input[str]] = [identity.client_id, *(f.id for f in federated)]
        if access is not None:
            assignment = self._blob_assignment(name, access, identity)
            self.role_assignments[plan.team] = assignment
            usable.append(assignment.id)
        client_id = pulumi.Output.all(*usable).apply(lambda values: str(values[0]))
        self.identities[plan.team] = WorkloadIdentity(client_id, identity.tenant_id)
        self.managed_identities[plan.team] = identity
        self.federated_credentials[plan.team] = federated

    def _blob_assignment(
        self,
        name: str,
        access: TeamBlobAccess,
        identity: managedidentity.UserAssignedIdentity,
    ) -> authorization.RoleAssignment:
        """The Blob data role on the account, conditioned to the team's containers and
        prefixes: one assignment per team."""
        return authorization.RoleAssignment(
            f"{name}-{access.team}-blob",
            scope=self.account.id,
            principal_id=identity.principal_id,
            # The identity was just created: telling Azure its type spares the lookup that
            # fails while the new principal replicates through Entra ID.
            principal_type="ServicePrincipal",
            role_definition_id=self._blob_role_id,
            condition=blob_condition(access),
            condition_version=CONDITION_VERSION,
            description=f"Ray pods of team {access.team}: the Blob containers its condition names",
            opts=pulumi.ResourceOptions(parent=self, protect=False),
        )
