"""The whole platform for one stack: cluster, team namespaces and what runs in them."""

from __future__ import annotations

import pulumi

from components.cluster import AksCluster
from components.namespaces import TeamNamespaces
from components.settings import Settings
from components.workloads import RayWorkloads

# Integration point (storage): until the BlobStorage component is wired here, the workloads get
# this stand-in for its account name. Replace it with the component's account name output.
STORAGE_ACCOUNT_STAND_IN = "unwired-storage-account"


class Platform(pulumi.ComponentResource):
    cluster: AksCluster
    namespaces: TeamNamespaces
    workloads: RayWorkloads

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
        # Integration point (operators, queues): `ready` takes the queues' `ready` list and the
        # Kueue (webhook serving) and KubeRay releases, so every RayJob/RayService is created
        # after them and deleted before them.
        self.workloads = RayWorkloads(
            f"{name}-workloads",
            settings,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            storage_account=STORAGE_ACCOUNT_STAND_IN if settings.storage.enabled else None,
            ready=[],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"clusterName": self.cluster.cluster_name})
