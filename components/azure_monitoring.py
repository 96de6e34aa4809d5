"""Azure Monitor managed Prometheus and Azure Managed Grafana for the stack's AKS cluster.

Imported only when a stack turns observability on for an aks cluster: pulumi-azure-native's
`monitor` module alone takes about a second to load, which no other stack should pay.

Who may do what (least privilege, manifests/monitoring.py):
- Grafana's system identity: Monitoring Data Reader on the workspace, nothing else.
- The deployer (the identity running `pulumi up`): Grafana Editor on the Grafana instance, to
  provision the dashboards through Grafana's HTTP API with its own Entra ID token. Nobody else
  is granted anything: viewers get "Grafana Viewer" from whoever manages access (docs/
  monitoring.md). With `cluster.deployerPrincipalType: None` the stack grants nothing and the
  deployer must already hold the role.

Grafana's API honours a new role assignment only once Azure has propagated it (minutes), so the
Grafana provider retries refusals (403) for up to about five minutes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import pulumi
import pulumiverse_grafana as grafana
from pulumi_azure_native import authorization, dashboard, monitor

from manifests.dashboards import (
    DASHBOARD_FOLDER,
    FOLDER_UID,
    GpuPrices,
    dashboards,
    gpu_prices,
)
from manifests.identity import role_definition_id
from manifests.monitoring import (
    GRAFANA_EDITOR_ROLE,
    GRAFANA_TOKEN_AUDIENCE,
    MONITORING_DATA_READER_ROLE,
    association_args,
    endpoint_args,
    grafana_args,
    rule_args,
    workspace_args,
)
from settings.model import Settings

if TYPE_CHECKING:
    from components.cluster import AksCluster

GRAFANA_API_RETRIES: Final = 10
GRAFANA_API_RETRY_SECONDS: Final = 30


class AzureMonitoring(pulumi.ComponentResource):
    association: monitor.DataCollectionRuleAssociation
    grafana_endpoint: pulumi.Output[str] | None

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        cluster: AksCluster,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aksray:platform:AzureMonitoring", name, None, opts)
        group, cluster_id = cluster.resource_group_name, cluster.cluster_id
        if group is None or cluster_id is None:  # the settings allow it only on aks
            raise ValueError("managed Prometheus needs the stack's AKS cluster")
        stack, location = settings.stack, settings.location
        own = pulumi.ResourceOptions(parent=self)
        workspace = monitor.AzureMonitorWorkspace(
            f"{name}-workspace",
            resource_group_name=group,
            **workspace_args(stack, location=location),
            opts=own,
        )
        endpoint = monitor.DataCollectionEndpoint(
            f"{name}-endpoint",
            resource_group_name=group,
            **endpoint_args(stack, location=location),
            opts=own,
        )
        rule = monitor.DataCollectionRule(
            f"{name}-rule",
            resource_group_name=group,
            **rule_args(
                stack, location=location, endpoint_id=endpoint.id, workspace_id=workspace.id
            ),
            opts=own,
        )
        self.association = monitor.DataCollectionRuleAssociation(
            f"{name}-association",
            **association_args(stack, cluster_id=cluster_id, rule_id=rule.id),
            opts=own,
        )
        self.grafana_endpoint = None
        if settings.observability.grafana:
            self.grafana_endpoint = self._grafana(name, settings, group, workspace)
        self.register_outputs(
            {"workspaceId": workspace.id, "grafanaEndpoint": self.grafana_endpoint}
        )

    def _grafana(
        self,
        name: str,
        settings: Settings,
        group: pulumi.Output[str],
        workspace: monitor.AzureMonitorWorkspace,
    ) -> pulumi.Output[str]:
        own = pulumi.ResourceOptions(parent=self)
        instance = dashboard.Grafana(
            f"{name}-grafana",
            resource_group_name=group,
            **grafana_args(settings.stack, location=settings.location, workspace_id=workspace.id),
            opts=own,
        )
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )

        after: list[pulumi.Resource] = [instance]
        # Without roleAssignments/write (createRoleAssignments: false) an admin grants both.
        if settings.cluster.create_role_assignments:
            after += self._grafana_roles(name, settings, instance, workspace, client)
        endpoint: pulumi.Output[str] = instance.properties.apply(lambda p: p.endpoint or "")
        pools = ((p.name, p.vm_size, p.gpus_per_node) for p in settings.cluster.gpu_pools)
        self._dashboards(name, endpoint, after, gpu_prices(pools, settings.location))
        return endpoint

    def _grafana_roles(
        self,
        name: str,
        settings: Settings,
        instance: dashboard.Grafana,
        workspace: monitor.AzureMonitorWorkspace,
        client: pulumi.Output[authorization.GetClientConfigResult],
    ) -> list[pulumi.Resource]:
        """Grafana reads the workspace; the deployer may provision dashboards (the ones the
        dashboards wait for)."""
        own = pulumi.ResourceOptions(parent=self)
        authorization.RoleAssignment(
            f"{name}-grafana-reads-workspace",
            scope=workspace.id,
            principal_id=instance.identity.apply(lambda i: i.principal_id if i else ""),
            principal_type="ServicePrincipal",
            role_definition_id=client.subscription_id.apply(
                lambda s: role_definition_id(s, MONITORING_DATA_READER_ROLE)
            ),
            description="Managed Grafana queries the cluster's Prometheus metrics",
            opts=own,
        )
        principal_type = settings.cluster.deployer_principal_type
        if principal_type == "None":
            return []
        return [
            authorization.RoleAssignment(
                f"{name}-deployer-grafana-editor",
                scope=instance.id,
                principal_id=client.object_id,
                principal_type=principal_type,
                role_definition_id=client.subscription_id.apply(
                    lambda s: role_definition_id(s, GRAFANA_EDITOR_ROLE)
                ),
                description="pulumi up: provisions the platform's Grafana dashboards",
                opts=own,
            )
        ]

    def _dashboards(
        self,
        name: str,
        endpoint: pulumi.Output[str],
        after: list[pulumi.Resource],
        prices: GpuPrices,
    ) -> None:
        """The dashboards, through Grafana's HTTP API as the deployer (an Entra ID token for
        Managed Grafana, kept secret); the usage dashboard's cost at the pools' `prices`."""
        token = authorization.get_client_token_output(
            endpoint=GRAFANA_TOKEN_AUDIENCE, opts=pulumi.InvokeOutputOptions(parent=self)
        ).token
        provider = grafana.Provider(
            f"{name}-grafana-api",
            url=endpoint,
            auth=pulumi.Output.secret(token),
            retries=GRAFANA_API_RETRIES,
            retry_wait=GRAFANA_API_RETRY_SECONDS,
            retry_status_codes=["403", "429", "5xx"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
        api = pulumi.ResourceOptions(parent=self, provider=provider)
        folder = grafana.oss.Folder(
            f"{name}-folder", uid=FOLDER_UID, title=DASHBOARD_FOLDER, opts=api
        )
        for board in dashboards(prices):
            grafana.oss.Dashboard(
                f"{name}-dashboard-{board.name}",
                config_json=board.model,
                folder=folder.uid,
                overwrite=True,
                message="aks-ray-platform: pulumi up",
                opts=api,
            )
