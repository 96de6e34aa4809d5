"""Workload identity for team namespaces: which Entra identities exist, whom they trust, and
which role they hold. Plain data; components/storage.py registers it.

Granularity: one user-assigned identity per team, with one federated identity credential per
service account the team's Ray pods run as: `ray-workload` always, and `ray-elastic-head` for a
team that runs an elastic workload (its heads hold the Ray autoscaler's Kubernetes rights, so
they run as an account of their own: manifests/access/autoscaler.py). Each team's pods can then
act only as their own identity, role assignments and sign-in logs stay per team, and the Azure
limit of 20 federated credentials per identity is never approached however many teams a stack
has (a hundred teams are a hundred identities with at most two credentials each).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Final

from manifests.namespaces import (
    ELASTIC_HEAD_SERVICE_ACCOUNT,
    RAY_SERVICE_ACCOUNT,
    workload_identity_subject,
)

# Azure: at most 20 federated identity credentials on one user-assigned identity.
MAX_FEDERATED_CREDENTIALS_PER_IDENTITY: Final = 20
# The audience Entra ID expects in a Kubernetes service-account token it exchanges.
FEDERATION_AUDIENCE: Final = "api://AzureADTokenExchange"
# Built-in role "Storage Blob Data Contributor": read, write and delete blobs and containers'
# contents; no management of the account, its keys or its access. Not assigned by the stack (its
# management actions would let a team delete any container of the account through Azure
# Resource Manager when assigned on the account); named for what an admin may know it by.
STORAGE_BLOB_DATA_CONTRIBUTOR_ROLE: Final = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
STORAGE_BLOB_DATA_READER_ROLE: Final = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
# The stack's own role (one per stack, assignable in its data resource group only): the Blob data
# actions and nothing else but reading a container's properties. Each team holds it once, on the
# account, with a condition naming its containers (settings/access/blob_condition.py).
BLOB_DATA_ROLE_NAME: Final = "aksray Blob data"
BLOB_DATA_ACTIONS: Final = (
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read",
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write",
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/delete",
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/add/action",
    "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/move/action",
)
BLOB_ROLE_ACTIONS: Final = ("Microsoft.Storage/storageAccounts/blobServices/containers/read",)


def blob_data_role_name(stack: str, subscription: str) -> str:
    """Role names are unique in a tenant: the stack and its subscription make this one so."""
    return f"{BLOB_DATA_ROLE_NAME} ({stack}, {subscription})"


def blob_data_role_args() -> dict[str, Any]:
    """The stack's Blob data role: `authorization.RoleDefinition` arguments but its scope,
    name and assignable scopes (the data resource group, known at deploy)."""
    return {
        "description": (
            "Ray pods of one team: read, write and delete blobs where the assignment's "
            "condition allows; no management of containers, the account or access"
        ),
        "role_type": "CustomRole",
        "permissions": [
            {
                "actions": list(BLOB_ROLE_ACTIONS),
                "not_actions": [],
                "data_actions": list(BLOB_DATA_ACTIONS),
                "not_data_actions": [],
            }
        ],
    }


def role_definition_id(subscription_id: str, role: str) -> str:
    """The resource id of a built-in role definition in a subscription."""
    return (
        f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{role}"
    )


@dataclass(frozen=True)
class FederatedCredential:
    name: str
    subject: str
    account: str = RAY_SERVICE_ACCOUNT  # the service account `subject` names
    audiences: tuple[str, ...] = (FEDERATION_AUDIENCE,)


@dataclass(frozen=True)
class TeamIdentity:
    team: str
    namespace: str
    identity_name: str
    credentials: tuple[FederatedCredential, ...]


def team_identities(
    stack: str, teams: Iterable[tuple[str, str]], elastic_teams: Collection[str] = ()
) -> tuple[TeamIdentity, ...]:
    """One identity per `(team, namespace)`, trusting the team's Ray service account, and the
    elastic heads' account of the teams in `elastic_teams`.

    Names: identity 3-128 and credential 3-120 characters of letters, digits, '-' and '_';
    with a stack name of at most 40 and DNS-label team names (at most 63) both always fit.
    """
    return tuple(
        TeamIdentity(
            team=team,
            namespace=namespace,
            identity_name=f"id-aksray-{stack}-{team}",
            credentials=tuple(
                FederatedCredential(
                    name=f"{namespace}-{account}",
                    subject=workload_identity_subject(namespace, account),
                    account=account,
                )
                for account in team_service_accounts(team, elastic_teams)
            ),
        )
        for team, namespace in teams
    )


def team_service_accounts(team: str, elastic_teams: Collection[str]) -> tuple[str, ...]:
    """The service accounts a team's Ray pods run as."""
    if team in elastic_teams:
        return (RAY_SERVICE_ACCOUNT, ELASTIC_HEAD_SERVICE_ACCOUNT)
    return (RAY_SERVICE_ACCOUNT,)
