"""Per team: its namespace and the service accounts its Ray pods run as (the elastic heads'
only for a team that runs an elastic workload)."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from manifests.identity import team_service_accounts
from manifests.namespaces import (
    CLIENT_ID_ANNOTATION,
    RAY_SERVICE_ACCOUNT,
    TENANT_ID_ANNOTATION,
    team_namespace,
    team_service_account,
)
from settings.access.teams import allowed_priorities
from settings.model import TeamSettings, WorkloadSettings


class WorkloadIdentity:
    """The identity a team's pods federate to: client and tenant id (deploy-time values)."""

    def __init__(self, client_id: pulumi.Input[str], tenant_id: pulumi.Input[str]) -> None:
        self.client_id = client_id
        self.tenant_id = tenant_id


class TeamNamespaces(pulumi.ComponentResource):
    namespaces: dict[str, pulumi.CustomResource]  # by team name
    service_accounts: dict[str, pulumi.CustomResource]  # by team name: workers', fixed heads'
    # by team name, for teams that run an elastic workload: the elastic heads' account
    head_service_accounts: dict[str, pulumi.CustomResource]

    def __init__(
        self,
        name: str,
        teams: tuple[TeamSettings, ...],
        *,
        provider: k8s.Provider,
        identities: Mapping[str, WorkloadIdentity] | None = None,
        elastic_teams: frozenset[str] = frozenset(),
        workloads: tuple[WorkloadSettings, ...] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`workloads`: the stack's, whose priorities are those a team may use where it does
        not name its own (settings/access/teams.py)."""
        super().__init__("aksray:platform:TeamNamespaces", name, None, opts)
        self.namespaces = {}
        self.service_accounts = {}
        self.head_service_accounts = {}
        for team in teams:
            namespace = create_object(
                f"{name}-{team.name}",
                team_namespace(
                    team.namespace,
                    team.name,
                    team.department,
                    local_queue=team.local_queue,
                    priorities=allowed_priorities(team, workloads),
                ),
                pulumi.ResourceOptions(parent=self, provider=provider),
            )
            identity = (identities or {}).get(team.name)
            annotations = (
                {CLIENT_ID_ANNOTATION: identity.client_id, TENANT_ID_ANNOTATION: identity.tenant_id}
                if identity
                else None
            )
            for account in team_service_accounts(team.name, elastic_teams):
                created = create_object(
                    f"{name}-{team.name}-ray"
                    + ("" if account == RAY_SERVICE_ACCOUNT else "-elastic-head"),
                    team_service_account(team.namespace, team.name, annotations, name=account),
                    pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
                )
                if account == RAY_SERVICE_ACCOUNT:
                    self.service_accounts[team.name] = created
                else:
                    self.head_service_accounts[team.name] = created
            self.namespaces[team.name] = namespace
        self.register_outputs({"namespaces": [team.namespace for team in teams]})
