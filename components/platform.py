"""The whole platform for one stack: cluster, team namespaces and what runs in them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pulumi

from components.cluster import AksCluster
from components.cluster_jobs import AdmissionChecks, cluster_jobs
from components.namespaces import TeamNamespaces
from components.observability import Observability
from components.operators import ClusterOperators
from components.queues import SchedulingQueues
from components.storage import BlobStorage
from components.workloads import RayWorkloads
from settings.blob_access import blob_grants
from settings.model import ClusterSettings, Settings

# A MultiKueue manager's dispatch, built from the manager so far and its operators: per team,
# the AdmissionCheck its queues come after (components/multikueue_platform.py).
Dispatch = Callable[["Platform", ClusterOperators], Mapping[str, Sequence[pulumi.Resource]]]


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
        runs_jobs: bool = True,
        dispatch: Dispatch | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`huggingface_token`: the stack's token as a Pulumi secret, or None. `cluster`: the
        AKS cluster to create when it is not `settings.cluster` (a MultiKueue manager, whose
        settings carry its workers' pools as flavors). `runs_jobs`: False on that manager: its
        Ray objects run on the workers, so no team pod runs here to trust (no federated
        credential) and no GPU pod (no GPU Operator). `dispatch`: on that manager, builds what
        dispatches to the workers once this cluster, its storage, namespaces and operators exist,
        and returns per team the AdmissionCheck its queues come after."""
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
        self.storage = self._blob_storage(name, settings, runs_jobs) if creates_storage else None
        self.namespaces = TeamNamespaces(
            f"{name}-teams",
            settings.scheduling.teams,
            provider=self.cluster.provider,
            identities=self.storage.identities if self.storage else None,
            elastic_teams=settings.elastic_teams,
            opts=pulumi.ResourceOptions(parent=self),
        )
        jobs = cluster_jobs(
            name,
            settings,
            parent=self,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            storage_account=(
                self.storage.account_name
                if self.storage
                else settings.storage.existing_account or None
            ),
            huggingface_token=huggingface_token,
            runs_jobs=runs_jobs,
            multikueue=dispatch is not None,
            admission_checks=self._admission_checks(dispatch),
        )
        self.operators, self.queues, self.workloads = jobs.operators, jobs.queues, jobs.workloads
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

    def _admission_checks(self, dispatch: Dispatch | None) -> AdmissionChecks | None:
        if dispatch is None:
            return None
        return lambda operators: dispatch(self, operators)

    def _blob_storage(self, name: str, settings: Settings, runs_jobs: bool) -> BlobStorage:
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
            oidc_issuer_url=issuer if runs_jobs else None,
            create_role_assignments=settings.cluster.create_role_assignments,
            elastic_teams=settings.elastic_teams,
            opts=pulumi.ResourceOptions(parent=self),
        )
