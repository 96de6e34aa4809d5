"""The cluster: an AKS cluster with its node pools, or an existing cluster by kube context.

Either way the component exports the `kubernetes.Provider` every in-cluster resource uses.

How the provider signs in to AKS: the cluster has Entra ID with Azure RBAC and no local accounts
(unless `cluster.localAccounts`), so there is no static credential. The kubeconfig comes from
`listManagedClusterUserCredentials` in `exec` format: it runs `kubelogin get-token`, which signs
in as whoever runs `pulumi up` (`AAD_LOGIN_METHOD` picks how: azurecli, workloadidentity,
spn...). That identity is granted "Azure Kubernetes Service RBAC Cluster Admin" on this cluster
(and nothing wider) by the program itself, so the first `pulumi up` needs no manual step
(`cluster.deployerPrincipalType: None` leaves that to you); the provider waits until the API
server honours that assignment (components/deployer_access.py).
"""

from __future__ import annotations

import base64
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization, containerservice, resources

from catalog.pools import CPU_POOL_NAME
from components.deployer_access import DeployerAccess
from manifests.aks import (
    AKS_RBAC_CLUSTER_ADMIN_ROLE,
    MAINTENANCE_SCHEDULES,
    MANAGED_CLUSTER_IGNORED_FIELDS,
    aks_names,
    cpu_pool_args,
    gpu_pool_args,
    maintenance_configuration_args,
    managed_cluster_args,
    pool_ignored_fields,
    system_pool_profile,
)
from manifests.identity import role_definition_id
from manifests.monitoring import azure_monitor_profile
from settings.model import ClusterSettings, DeployerPrincipalType, MaintenanceWindow


class AksCluster(pulumi.ComponentResource):
    """AKS (or an existing cluster) plus the Kubernetes provider that reaches it."""

    provider: k8s.Provider
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str] | None  # the ManagedCluster's resource id; None if existing
    resource_group_name: pulumi.Output[str] | None
    oidc_issuer_url: pulumi.Output[str] | None
    node_resource_group: pulumi.Output[str] | None
    kubeconfig: pulumi.Output[str] | None
    # The object id of the nodes' kubelet identity (what pulls images); None if existing.
    kubelet_object_id: pulumi.Output[str] | None
    # The agent pools by flavor name (`cpu`, then each GPU pool); empty for an existing cluster.
    pools: dict[str, containerservice.AgentPool]
    # Planned maintenance by configuration name; empty for an existing cluster.
    maintenance: dict[str, containerservice.MaintenanceConfiguration]
    # The resources the GPU pools and everything in-cluster must come after.
    ready: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        settings: ClusterSettings,
        *,
        location: str,
        stack: str,
        metrics_addon: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`metrics_addon`: the cluster runs Azure Monitor's metrics add-on (observability)."""
        super().__init__("aksray:platform:AksCluster", name, None, opts)
        self.pools = {}
        self.maintenance = {}
        self.metrics_addon = metrics_addon
        if settings.mode == "existing":
            self._reach_existing_cluster(name, settings)
        else:
            self._create_aks_cluster(name, settings, location=location, stack=stack)

    def _reach_existing_cluster(self, name: str, settings: ClusterSettings) -> None:
        """No Azure resource and no Azure call: the cluster is reached by kube context only."""
        render_to = settings.render_yaml_to or None
        self.resource_group_name = None
        self.cluster_id = None
        self.oidc_issuer_url = None
        self.node_resource_group = None
        self.kubeconfig = None
        self.kubelet_object_id = None
        self.cluster_name = pulumi.Output.from_input(settings.kubeconfig_context or "rendered")
        self.provider = k8s.Provider(
            f"{name}-k8s",
            # The provider refuses a context or kubeconfig together with a render directory:
            # rendering talks to no cluster at all.
            context=None if render_to else settings.kubeconfig_context or None,
            render_yaml_to_directory=render_to,
            # Provider 4.25 applies server-side and adopts objects that already exist on an
            # existing cluster (from 4.29 on that needs `upsert_existing_objects=True`).
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.ready = []
        self.register_outputs({"clusterName": self.cluster_name})

    def _create_aks_cluster(
        self, name: str, settings: ClusterSettings, *, location: str, stack: str
    ) -> None:
        group = resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=aks_names(stack).resource_group,
            location=location,
            opts=pulumi.ResourceOptions(parent=self),
        )
        cluster = self._managed_cluster(name, settings, group, location=location, stack=stack)
        self.maintenance = self._maintenance(name, settings.maintenance_window, group, cluster)
        self.pools = self._agent_pools(name, settings, group, cluster)
        # Operators and Ray heads need the CPU pool before anything is scheduled, and the
        # provider's identity needs its role, honoured by the API server, before its first
        # request.
        self.ready = [self.pools[CPU_POOL_NAME]]
        self.kubeconfig = self._user_kubeconfig(group, cluster)
        render_to = settings.render_yaml_to or None
        # Without roleAssignments/write (createRoleAssignments: false) an admin grants it.
        if settings.deployer_principal_type != "None" and settings.create_role_assignments:
            admin = self._deployer_admin(name, settings.deployer_principal_type, cluster)
            self.ready.append(admin)
            if render_to is None:  # rendering asks the API server nothing
                self.ready.append(
                    DeployerAccess(
                        f"{name}-deployer-access",
                        kubeconfig=self.kubeconfig,
                        role_assignment=admin.id,
                        opts=pulumi.ResourceOptions(parent=self),
                    )
                )
        self.resource_group_name = group.name
        self.cluster_id = cluster.id
        self.cluster_name = cluster.name
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(
            lambda profile: profile.issuer_url if profile else ""
        )
        self.node_resource_group = cluster.node_resource_group.apply(lambda v: v or "")
        self.kubelet_object_id = cluster.identity_profile.apply(
            lambda ids: (ids or {})["kubeletidentity"].object_id or ""
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=None if render_to else self.kubeconfig,
            render_yaml_to_directory=render_to,
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.ready),
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "oidcIssuerUrl": self.oidc_issuer_url,
                "nodeResourceGroup": self.node_resource_group,
                "kubeconfig": self.kubeconfig,
            }
        )

    def _managed_cluster(
        self,
        name: str,
        settings: ClusterSettings,
        group: resources.ResourceGroup,
        *,
        location: str,
        stack: str,
    ) -> containerservice.ManagedCluster:
        return containerservice.ManagedCluster(
            f"{name}-aks",
            resource_group_name=group.name,
            **managed_cluster_args(
                stack,
                location=location,
                kubernetes_version=settings.kubernetes_version,
                system_pool=system_pool_profile(
                    settings.system_pool.vm_size,
                    settings.system_pool.count,
                    settings.kubernetes_version,
                ),
                local_accounts=settings.local_accounts,
                tier=settings.tier,
                azure_monitor_profile=azure_monitor_profile() if self.metrics_addon else None,
            ),
            # After creation the pool list is AKS's (manifests/aks.py); the system pool changes
            # through `az aks nodepool`.
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=list(MANAGED_CLUSTER_IGNORED_FIELDS)
            ),
        )

    def _maintenance(
        self,
        name: str,
        window: MaintenanceWindow,
        group: resources.ResourceGroup,
        cluster: containerservice.ManagedCluster,
    ) -> dict[str, containerservice.MaintenanceConfiguration]:
        """The upgrade channels drain and re-image nodes only inside this window, never at an
        arbitrary hour under a training job (manifests/aks.py). Created with the cluster, so
        the window is in place before AKS considers its first automatic upgrade."""
        return {
            schedule: containerservice.MaintenanceConfiguration(
                f"{name}-maintenance-{short_name}",
                resource_group_name=group.name,
                resource_name_=cluster.name,
                **maintenance_configuration_args(
                    schedule,
                    day_of_week=window.day_of_week,
                    start_time=window.start_time,
                    duration_hours=window.duration_hours,
                    utc_offset=window.utc_offset,
                    interval_weeks=window.interval_weeks,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for schedule, short_name in MAINTENANCE_SCHEDULES.items()
        }

    def _agent_pools(
        self,
        name: str,
        settings: ClusterSettings,
        group: resources.ResourceGroup,
        cluster: containerservice.ManagedCluster,
    ) -> dict[str, containerservice.AgentPool]:
        """Pools wait for the cluster and nothing else outside it. AKS refuses a second agent
        pool operation on a cluster while one runs ("OperationNotAllowed: Another agentpool
        operation is in progress") and the provider does not retry that conflict, so the pools
        are created (and, in reverse, deleted) one after another: cpu first, then the GPU pools
        in stack order."""
        pools: dict[str, containerservice.AgentPool] = {}
        previous: list[pulumi.Resource] = []
        for flavor, args in _pool_args(settings):
            agent_pool = containerservice.AgentPool(
                f"{name}-pool-{flavor}",
                resource_group_name=group.name,
                resource_name_=cluster.name,
                **args,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=previous,
                    # The autoscaler owns the node count; `count` is only the initial size.
                    ignore_changes=pool_ignored_fields(args),
                ),
            )
            pools[flavor] = agent_pool
            previous = [agent_pool]
        return pools

    def _deployer_admin(
        self,
        name: str,
        principal_type: DeployerPrincipalType,
        cluster: containerservice.ManagedCluster,
    ) -> authorization.RoleAssignment:
        """The identity running `pulumi up` administers this cluster's Kubernetes API through
        Azure RBAC, scoped to this cluster only. Azure checks the principal type it is told, so
        the stack says whether a person or a pipeline deploys (cluster.deployerPrincipalType)."""
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )
        return authorization.RoleAssignment(
            f"{name}-deployer-admin",
            scope=cluster.id,
            principal_id=client.object_id,
            principal_type=principal_type,
            role_definition_id=client.subscription_id.apply(
                lambda subscription: role_definition_id(subscription, AKS_RBAC_CLUSTER_ADMIN_ROLE)
            ),
            description="pulumi up: manages the platform's Kubernetes objects",
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _user_kubeconfig(
        self, group: resources.ResourceGroup, cluster: containerservice.ManagedCluster
    ) -> pulumi.Output[str]:
        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=group.name,
            resource_name=cluster.name,
            # kubelogin-based exec kubeconfig: Entra ID tokens, no static credentials.
            format="exec",
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
            credentials.kubeconfigs[0].value.apply(lambda v: base64.b64decode(v).decode())
        )
        return kubeconfig


def _pool_args(settings: ClusterSettings) -> list[tuple[str, dict[str, Any]]]:
    """(flavor, AgentPool arguments) per user pool: cpu first, then the GPU pools in order."""
    return [
        (
            CPU_POOL_NAME,
            cpu_pool_args(
                settings.cpu_pool.vm_size,
                settings.cpu_pool.min_count,
                settings.cpu_pool.max_count,
                settings.kubernetes_version,
            ),
        ),
        *(
            (
                pool.name,
                gpu_pool_args(
                    pool.name,
                    pool.vm_size,
                    min_count=pool.min_count,
                    max_count=pool.max_count,
                    spot=pool.spot,
                    gpu_driver=settings.gpu_driver,
                    kubernetes_version=settings.kubernetes_version,
                ),
            )
            for pool in settings.gpu_pools
        ),
    ]
