"""A stack with `multikueue`: the manager Platform, one MultiKueueWorker per region, and the
manager's MultiKueue objects that reach them (docs/multikueue.md).

The workers and the manager's MultiKueue objects are built while the manager is, once its
cluster, storage, namespaces and operators exist and before its queues: each team's queues on
the manager come after the team's AdmissionCheck, so the first `pulumi up` submits nothing to
the manager before it can dispatch, whatever order the engine creates the rest in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi

from catalog.versions import KUEUE_API_VERSION
from components.multikueue.manager import MultiKueueManager
from components.multikueue.worker import MultiKueueWorker
from components.operators import ClusterOperators
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
        self._name = name
        self._settings = settings
        self._huggingface_token = huggingface_token
        self.workers = {}
        # The manager's AKS cluster is the stack's own: no GPU pool is created on it.
        self.manager = Platform(
            name,
            manager_settings(settings),
            huggingface_token=huggingface_token,
            cluster=settings.cluster,
            runs_jobs=False,
            dispatch=self._dispatch,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"workers": sorted(self.workers)})

    def _dispatch(
        self, manager: Platform, operators: ClusterOperators
    ) -> Mapping[str, Sequence[pulumi.Resource]]:
        """The workers, then the manager's objects that reach them; per team its check."""
        settings, name = self._settings, self._name
        assert settings.multikueue is not None
        storage = manager.storage
        chain: dict[str, pulumi.Resource] = (
            {team: creds[-1] for team, creds in storage.federated_credentials.items() if creds}
            if storage
            else {}
        )
        where = team_workers(settings)
        submitted = [
            w
            for w in settings.enabled_workloads
            if not w.staged and w.name not in settings.multikueue.regional
        ]
        for worker in settings.multikueue.workers:
            self.workers[worker.name] = MultiKueueWorker(
                f"{name}-{worker.name}",
                worker.name,
                worker_settings(settings, worker),
                storage=storage,
                kinds=watched_kinds(),
                token_rotation=settings.multikueue.token_rotation,
                api_server=worker.api_server,
                federation_chain=chain,
                dispatched=tuple(w for w in submitted if worker.name in where.get(w.team, ())),
                huggingface_token=self._huggingface_token,
                opts=pulumi.ResourceOptions(parent=self),
            )
        kueue = operators.release_for(KUEUE_API_VERSION)
        self.dispatch = MultiKueueManager(
            f"{name}-multikueue",
            settings,
            provider=manager.cluster.provider,
            kubeconfigs={w: worker.kubeconfig for w, worker in self.workers.items()},
            ready=[kueue] if kueue is not None else [],
            opts=pulumi.ResourceOptions(parent=self),
        )
        return {team: [check] for team, check in self.dispatch.checks.items()}
