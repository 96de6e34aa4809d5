"""Who may use each team's namespace (manifests/access/team_roles.py): the member's and the viewer's
ClusterRoles, one RoleBinding each per team that names such groups, and on an AKS cluster the
one Azure role a group needs to fetch the cluster's kubeconfig."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization

from components.k8s_objects import create_object
from components.namespaces import TeamNamespaces
from manifests.access.team_roles import (
    AKS_CLUSTER_USER_ROLE,
    MEMBER_ROLE,
    VIEWER_ROLE,
    team_role_binding,
    team_roles,
)
from manifests.identity import role_definition_id
from settings.model import TeamSettings


class TeamAccess(pulumi.ComponentResource):
    roles: dict[str, pulumi.CustomResource]  # by ClusterRole name
    bindings: dict[tuple[str, str], pulumi.CustomResource]  # by (team, role)
    # by group: its "Azure Kubernetes Service Cluster User Role" on the cluster
    kubeconfig_grants: dict[str, authorization.RoleAssignment]

    def __init__(
        self,
        name: str,
        teams: tuple[TeamSettings, ...],
        *,
        provider: k8s.Provider,
        namespaces: TeamNamespaces,
        cluster_id: pulumi.Output[str] | None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`cluster_id`: the AKS cluster whose kubeconfig each group may fetch; None where the
        stack grants no Azure role (an existing cluster, `createRoleAssignments: false`)."""
        super().__init__("aksray:platform:TeamAccess", name, None, opts)
        kube = pulumi.ResourceOptions(parent=self, provider=provider)
        self.roles, self.bindings, self.kubeconfig_grants = {}, {}, {}
        if any(team.members or team.viewers for team in teams):
            self.roles = {
                role["metadata"]["name"]: create_object(
                    f"{name}-{role['metadata']['name']}", role, kube
                )
                for role in team_roles()
            }
        for team in teams:
            for role, groups in ((MEMBER_ROLE, team.members), (VIEWER_ROLE, team.viewers)):
                if groups:
                    self.bindings[(team.name, role)] = create_object(
                        f"{name}-{team.name}-{role.removeprefix('aksray-team-')}",
                        team_role_binding(team.namespace, team.name, role, groups),
                        kube.merge(
                            pulumi.ResourceOptions(
                                depends_on=[namespaces.namespaces[team.name], self.roles[role]]
                            )
                        ),
                    )
        if cluster_id is not None:
            self._kubeconfig_grants(name, teams, cluster_id)
        self.register_outputs({"bindings": [f"{t}/{r}" for t, r in self.bindings]})

    def _kubeconfig_grants(
        self, name: str, teams: tuple[TeamSettings, ...], cluster_id: pulumi.Output[str]
    ) -> None:
        """One assignment per group, however many teams name it: `az aks get-credentials`
        without --admin, nothing inside the cluster (that is the RoleBindings')."""
        groups = dict.fromkeys(g for team in teams for g in (*team.members, *team.viewers))
        if not groups:
            return
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )
        role = client.subscription_id.apply(
            lambda subscription: role_definition_id(subscription, AKS_CLUSTER_USER_ROLE)
        )
        for group in groups:
            self.kubeconfig_grants[group] = authorization.RoleAssignment(
                f"{name}-kubeconfig-{group}",
                scope=cluster_id,
                principal_id=group,
                principal_type="Group",
                role_definition_id=role,
                description="a team's people: fetch the cluster's kubeconfig (Entra ID sign-in)",
                opts=pulumi.ResourceOptions(parent=self),
            )
