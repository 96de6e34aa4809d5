"""The whole platform for one stack: cluster, team namespaces and what runs in them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pulumi

from components.admission import AdmissionPolicies
from components.cluster import AksCluster
from components.cluster_jobs import AdmissionChecks, cluster_jobs
from components.image_cache import ImageCache
from components.namespaces import TeamNamespaces
from components.observability import Observability
from components.operators import ClusterOperators
from components.queues import SchedulingQueues
from components.storage import BlobStorage
from components.team_access import TeamAccess
from components.workloads import RayWorkloads
from settings.access.blob import blob_access
from settings.model import ClusterSettings, Settings

# A MultiKueue manager's dispatch, built from the manager so far and its operators: per team,
# the AdmissionCheck its queues come after (components/multikueue/platform.py).
Dispatch = Callable[["Platform", ClusterOperators], Mapping[str, Sequence[pulumi.Resource]]]


class Platform(pulumi.ComponentResource):
    cluster: AksCluster
    storage: BlobStorage | None  # None when storage.enabled is false
    namespaces: TeamNamespaces
    admission: AdmissionPolicies
    access: TeamAccess
    operators: ClusterOperators
    queues: SchedulingQueues
    workloads: RayWorkloads
    observability: Observability | None  # None when observability.enabled is false
    image_cache: ImageCache | None  # None when cluster.imageCache.enabled is false

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
        self.image_cache = self._image_cache(name, settings)
        creates_storage = settings.storage.enabled and not settings.storage.existing_account
        self.storage = self._blob_storage(name, settings, runs_jobs) if creates_storage else None
        self.namespaces = TeamNamespaces(
            f"{name}-teams",
            settings.scheduling.teams,
            provider=self.cluster.provider,
            identities=self.storage.identities if self.storage else None,
            elastic_teams=settings.elastic_teams,
            workloads=settings.workloads,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # Where the teams submit: every GPU behind their queues, and their people's rights.
        self.admission = AdmissionPolicies(
            f"{name}-admission",
            provider=self.cluster.provider,
            namespaces=list(self.namespaces.namespaces.values()),
            kuberay_service_account=settings.operators.kuberay_service_account,
            opts=pulumi.ResourceOptions(parent=self),
        )
        grants_roles = settings.cluster.mode == "aks" and settings.cluster.create_role_assignments
        self.access = TeamAccess(
            f"{name}-access",
            settings.scheduling.teams,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            cluster_id=self.cluster.cluster_id if grants_roles else None,
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
            image_cache=self.image_cache,
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

    def _image_cache(self, name: str, settings: Settings) -> ImageCache | None:
        """The registry the Ray image is pulled through, when `cluster.imageCache` is on (the
        settings allow it on an aks cluster only)."""
        cache = settings.cluster.image_cache
        group, kubelet = self.cluster.resource_group_name, self.cluster.kubelet_object_id
        if not cache.enabled or group is None or kubelet is None:
            return None
        return ImageCache(
            f"{name}-image-cache",
            cache,
            stack=settings.stack,
            location=settings.location,
            resource_group_name=group,
            kubelet_object_id=kubelet,
            create_role_assignments=settings.cluster.create_role_assignments,
            opts=pulumi.ResourceOptions(parent=self),
        )

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
            access=blob_access(
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
