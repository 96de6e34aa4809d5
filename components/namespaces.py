"""Per team: its namespace and the service account its Ray pods run as."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from manifests.namespaces import (
    CLIENT_ID_ANNOTATION,
    TENANT_ID_ANNOTATION,
    team_namespace,
    team_service_account,
)
from settings.model import TeamSettings


class WorkloadIdentity:
    """The identity a team's pods federate to: client and tenant id (deploy-time values)."""

    def __init__(self, client_id: pulumi.Input[str], tenant_id: pulumi.Input[str]) -> None:
        self.client_id = client_id
        self.tenant_id = tenant_id


class TeamNamespaces(pulumi.ComponentResource):
    namespaces: dict[str, pulumi.CustomResource]  # by team name
    service_accounts: dict[str, pulumi.CustomResource]  # by team name

    def __init__(
        self,
        name: str,
        teams: tuple[TeamSettings, ...],
        *,
        provider: k8s.Provider,
        identities: Mapping[str, WorkloadIdentity] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aksray:platform:TeamNamespaces", name, None, opts)
        self.namespaces = {}
        self.service_accounts = {}
        for team in teams:
            namespace = create_object(
                f"{name}-{team.name}",
                team_namespace(team.namespace, team.name, team.department),
                pulumi.ResourceOptions(parent=self, provider=provider),
            )
            identity = (identities or {}).get(team.name)
            annotations = (
                {CLIENT_ID_ANNOTATION: identity.client_id, TENANT_ID_ANNOTATION: identity.tenant_id}
                if identity
                else None
            )
            self.service_accounts[team.name] = create_object(
                f"{name}-{team.name}-ray",
                team_service_account(team.namespace, team.name, annotations),
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
            )
            self.namespaces[team.name] = namespace
        self.register_outputs({"namespaces": [team.namespace for team in teams]})
