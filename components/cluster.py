"""The cluster: an AKS cluster with its node pools, or an existing cluster by kube context.

Either way the component exports the `kubernetes.Provider` every in-cluster resource uses.
"""

from __future__ import annotations

import base64

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice, resources

from components.settings import ClusterSettings
from manifests.aks import cpu_pool_args, gpu_pool_args, system_pool_profile


class AksCluster(pulumi.ComponentResource):
    """AKS (or an existing cluster) plus the Kubernetes provider that reaches it."""

    provider: k8s.Provider
    cluster_name: pulumi.Output[str]
    resource_group_name: pulumi.Output[str] | None
    oidc_issuer_url: pulumi.Output[str] | None
    node_resource_group: pulumi.Output[str] | None
    kubeconfig: pulumi.Output[str] | None
    # The resources the GPU pools and everything in-cluster must come after.
    ready: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        settings: ClusterSettings,
        *,
        location: str,
        stack: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aksray:platform:AksCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        render_to = settings.render_yaml_to or None

        if settings.mode == "existing":
            self.resource_group_name = None
            self.oidc_issuer_url = None
            self.node_resource_group = None
            self.kubeconfig = None
            self.cluster_name = pulumi.Output.from_input(settings.kubeconfig_context or "rendered")
            self.provider = k8s.Provider(
                f"{name}-k8s",
                context=settings.kubeconfig_context or None,
                render_yaml_to_directory=render_to,
                # Provider 4.25 applies server-side and adopts objects that already exist on an
                # existing cluster (from 4.29 on that needs `upsert_existing_objects=True`).
                opts=child,
            )
            self.ready = []
            self.register_outputs({"clusterName": self.cluster_name})
            return

        group = resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=f"rg-aksray-{stack}",
            location=location,
            opts=child,
        )
        cluster = containerservice.ManagedCluster(
            f"{name}-aks",
            resource_group_name=group.name,
            resource_name_=f"aks-aksray-{stack}",
            location=location,
            dns_prefix=f"aksray-{stack}",
            kubernetes_version=settings.kubernetes_version,
            identity=containerservice.ManagedClusterIdentityArgs(
                type=containerservice.ResourceIdentityType.SYSTEM_ASSIGNED,
            ),
            agent_pool_profiles=[
                containerservice.ManagedClusterAgentPoolProfileArgs(
                    **system_pool_profile(
                        settings.system_pool.vm_size,
                        settings.system_pool.count,
                        settings.kubernetes_version,
                    )
                )
            ],
            oidc_issuer_profile=containerservice.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
            security_profile=containerservice.ManagedClusterSecurityProfileArgs(
                workload_identity=containerservice.ManagedClusterSecurityProfileWorkloadIdentityArgs(
                    enabled=True,
                ),
            ),
            aad_profile=containerservice.ManagedClusterAADProfileArgs(
                managed=True,
                enable_azure_rbac=True,
            ),
            disable_local_accounts=not settings.local_accounts,
            auto_upgrade_profile=containerservice.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel=containerservice.UpgradeChannel.PATCH,
                node_os_upgrade_channel=containerservice.NodeOSUpgradeChannel.NODE_IMAGE,
            ),
            network_profile=containerservice.ContainerServiceNetworkProfileArgs(
                network_plugin=containerservice.NetworkPlugin.AZURE,
                network_plugin_mode=containerservice.NetworkPluginMode.OVERLAY,
                network_dataplane=containerservice.NetworkDataplane.CILIUM,
                network_policy=containerservice.NetworkPolicy.CILIUM,
            ),
            opts=child,
        )
        pool_opts = pulumi.ResourceOptions(parent=self)
        cpu_pool = containerservice.AgentPool(
            f"{name}-pool-cpu",
            resource_group_name=group.name,
            resource_name_=cluster.name,
            **cpu_pool_args(
                settings.cpu_pool.vm_size,
                settings.cpu_pool.min_count,
                settings.cpu_pool.max_count,
                settings.kubernetes_version,
            ),
            opts=pool_opts,
        )
        for pool in settings.gpu_pools:
            containerservice.AgentPool(
                f"{name}-pool-{pool.name}",
                resource_group_name=group.name,
                resource_name_=cluster.name,
                **gpu_pool_args(
                    pool.name,
                    pool.vm_size,
                    min_count=pool.min_count,
                    max_count=pool.max_count,
                    spot=pool.spot,
                    gpu_driver=settings.gpu_driver,
                    kubernetes_version=settings.kubernetes_version,
                ),
                opts=pool_opts,
            )

        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=group.name,
            resource_name=cluster.name,
            # kubelogin-based exec kubeconfig: Entra ID tokens, no static credentials.
            format="exec",
        )
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs[0].value.apply(lambda v: base64.b64decode(v).decode())
        )
        self.resource_group_name = group.name
        self.cluster_name = cluster.name
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(
            lambda profile: profile.issuer_url if profile else ""
        )
        self.node_resource_group = cluster.node_resource_group.apply(lambda v: v or "")
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            render_yaml_to_directory=render_to,
            # Operators and Ray heads need the CPU pool before anything is scheduled.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cpu_pool]),
        )
        self.ready = [cpu_pool]
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "oidcIssuerUrl": self.oidc_issuer_url,
                "nodeResourceGroup": self.node_resource_group,
                "kubeconfig": self.kubeconfig,
            }
        )
