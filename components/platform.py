"""The whole platform for one stack: cluster, team namespaces and what runs in them."""

from __future__ import annotations

import pulumi

from components.cluster import AksCluster
from components.namespaces import TeamNamespaces
from components.operators import ClusterOperators
from components.settings import Settings


class Platform(pulumi.ComponentResource):
    cluster: AksCluster
    namespaces: TeamNamespaces
    operators: ClusterOperators

    def __init__(
        self, name: str, settings: Settings, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("aksray:platform:Platform", name, None, opts)
        self.cluster = AksCluster(
            f"{name}-cluster",
            settings.cluster,
            location=settings.location,
            stack=settings.stack,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.namespaces = TeamNamespaces(
            f"{name}-teams",
            settings.scheduling.teams,
            provider=self.cluster.provider,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # GPU Operator, KubeRay, Kueue, KAI: on the CPU pool, which the provider waits for.
        self.operators = ClusterOperators(
            f"{name}-operators",
            settings,
            provider=self.cluster.provider,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"clusterName": self.cluster.cluster_name})
