"""The whole platform for one stack: cluster, team namespaces and what runs in them."""

from __future__ import annotations

import pulumi

from components.cluster import AksCluster
from components.namespaces import TeamNamespaces
from components.queues import SchedulingQueues
from components.settings import Settings


class Platform(pulumi.ComponentResource):
    cluster: AksCluster
    namespaces: TeamNamespaces
    queues: SchedulingQueues

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
        # Kueue and KAI objects need their operators' CRDs and webhooks: pass the releases
        # (`kueue=self.operators.kueue, kai=self.operators.kai`, each None when the stack does
        # not install operators) once ClusterOperators is wired in before this point.
        self.queues = SchedulingQueues(
            f"{name}-queues",
            settings,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"clusterName": self.cluster.cluster_name})
