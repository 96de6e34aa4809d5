"""A stack with `multikueue`: the manager Platform, one MultiKueueWorker per region, and the
manager's MultiKueue objects that reach them (docs/multikueue.md)."""

from __future__ import annotations

import pulumi

from catalog.versions import KUEUE_API_VERSION
from components.multikueue_manager import MultiKueueManager
from components.multikueue_worker import MultiKueueWorker
from components.platform import Platform
from manifests.multikueue import watched_kinds
from scheduling.multikueue import manager_settings, team_workers, worker_settings
from settings.model import Settings


class MultiKueuePlatform(pulumi.ComponentResource):
    manager: Platform
    workers: dict[str, MultiKueueWorker]
    dispatch: MultiKueueManager

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        huggingface_token: pulumi.Output[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aksray:platform:MultiKueuePlatform", name, None, opts)
        if settings.multikueue is None:
            raise ValueError("MultiKueuePlatform needs a stack with multikueue")
        managed = manager_settings(settings)
        # The manager's AKS cluster is the stack's own: no GPU pool is created on it.
        self.manager = Platform(
            name,
            managed,
            huggingface_token=huggingface_token,
            cluster=settings.cluster,
            runs_jobs=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        storage = self.manager.storage
        chain: dict[str, pulumi.Resource] = (
            {team: creds[-1] for team, creds in storage.federated_credentials.items() if creds}
            if storage
            else {}
        )
        kinds = watched_kinds()
        where = team_workers(settings)
        submitted = [
            w
            for w in settings.enabled_workloads
            if not w.staged and w.name not in settings.multikueue.regional
        ]
        self.workers = {}
        for worker in settings.multikueue.workers:
            self.workers[worker.name] = MultiKueueWorker(
                f"{name}-{worker.name}",
                worker.name,
                worker_settings(settings, worker),
                storage=storage,
                kinds=kinds,
                token_rotation=settings.multikueue.token_rotation,
                api_server=worker.api_server,
                federation_chain=chain,
                dispatched=tuple(w for w in submitted if worker.name in where.get(w.team, ())),
                huggingface_token=huggingface_token,
                opts=pulumi.ResourceOptions(parent=self),
            )
        kueue = self.manager.operators.release_for(KUEUE_API_VERSION)
        self.dispatch = MultiKueueManager(
            f"{name}-multikueue",
            settings,
            provider=self.manager.cluster.provider,
            kubeconfigs={w: worker.kubeconfig for w, worker in self.workers.items()},
            ready=[kueue] if kueue is not None else [],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"workers": sorted(self.workers)})
