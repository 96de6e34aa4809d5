"""The whole platform for one stack: cluster, team namespaces and what runs in them."""

from __future__ import annotations

import pulumi

from catalog.versions import KAI_API_VERSION, KUEUE_API_VERSION, RAY_API_VERSION
from components.cluster import AksCluster
from components.namespaces import TeamNamespaces
from components.observability import Observability
from components.operators import ClusterOperators
from components.queues import SchedulingQueues
from components.storage import BlobStorage
from components.workloads import RayWorkloads
from settings.blob_access import blob_grants
from settings.model import ClusterSettings, Settings


class Platform(pulumi.ComponentResource):
    cluster: AksCluster
    storage: BlobStorage | None  # None when storage.enabled is false
    namespaces: TeamNamespaces
    operators: ClusterOperators
    queues: SchedulingQueues
    workloads: RayWorkloads
    observability: Observability | None  # None when observability.enabled is false

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        huggingface_token: pulumi.Output[str] | None = None,
        cluster: ClusterSettings | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`huggingface_token`: the stack's token as a Pulumi secret, or None. `cluster`: the
        AKS cluster to create when it is not `settings.cluster` (a MultiKueue manager, whose
        settings carry its workers' pools as flavors)."""
        super().__init__("aksray:platform:Platform", name, None, opts)
        self.cluster = AksCluster(
            f"{name}-cluster",
            cluster or settings.cluster,
            location=settings.location,
            stack=settings.stack,
            metrics_addon=settings.observability.enabled and settings.cluster.mode == "aks",
            opts=pulumi.ResourceOptions(parent=self),
        )
        creates_storage = settings.storage.enabled and not settings.storage.existing_account
        self.storage = self._blob_storage(name, settings) if creates_storage else None
        self.namespaces = TeamNamespaces(
            f"{name}-teams",
            settings.scheduling.teams,
            provider=self.cluster.provider,
            identities=self.storage.identities if self.storage else None,
            elastic_teams=settings.elastic_teams,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # GPU Operator, KubeRay, Kueue, KAI: on the CPU pool, which the provider waits for.
        self.operators = ClusterOperators(
            f"{name}-operators",
            settings,
            provider=self.cluster.provider,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # Kueue and KAI objects need their operators' CRDs and webhooks (each release is None
        # when the stack does not install operators).
        self.queues = SchedulingQueues(
            f"{name}-queues",
            settings,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            # The releases that install the Kueue and KAI CRDs (None when not installed).
            kueue=self.operators.release_for(KUEUE_API_VERSION),
            kai=self.operators.release_for(KAI_API_VERSION),
            # KAI's queue webhook is registered after its release is ready: a Job proves it
            # serves before any KAI Queue is created.
            kai_webhook=self.operators.kai_queue_webhook,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # A RayJob created before Kueue's webhook serves starts unsuspended and bypasses quota:
        # every Ray object waits for its team's queues, the Kueue release (ready only once the
        # webhook serves) and the KubeRay release (its CRDs); destroy then removes it first.
        self.workloads = RayWorkloads(
            f"{name}-workloads",
            settings,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            storage_account=(
                self.storage.account_name
                if self.storage
                else settings.storage.existing_account or None
            ),
            queues=self.queues,
            huggingface_token=huggingface_token,
            ready=[
                r
                for r in (self.operators.kueue, self.operators.release_for(RAY_API_VERSION))
                if r is not None
            ],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.observability = (
            Observability(
                f"{name}-observability",
                settings,
                cluster=self.cluster,
                # The targets' namespaces: the releases' and the teams'.
                ready=[
                    *self.operators.namespaces.values(),
                    *self.namespaces.namespaces.values(),
                ],
                opts=pulumi.ResourceOptions(parent=self),
            )
            if settings.observability.enabled
            else None
        )
        self.register_outputs({"clusterName": self.cluster.cluster_name})

    def _blob_storage(self, name: str, settings: Settings) -> BlobStorage:
        issuer = self.cluster.oidc_issuer_url
        if issuer is None:  # the settings allow storage only on an aks cluster
            raise ValueError("storage needs the OIDC issuer of an AKS cluster")
        return BlobStorage(
            f"{name}-storage",
            settings.storage,
            teams=settings.scheduling.teams,
            grants=blob_grants(
                [team.name for team in settings.scheduling.teams],
                settings.storage.containers,
                settings.workloads,
            ),
            location=settings.location,
            stack=settings.stack,
            oidc_issuer_url=issuer,
            create_role_assignments=settings.cluster.create_role_assignments,
            elastic_teams=settings.elastic_teams,
            opts=pulumi.ResourceOptions(parent=self),
        )
