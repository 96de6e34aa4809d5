"""The manager's MultiKueue objects: a kubeconfig Secret and a MultiKueueCluster per worker,
and per team a MultiKueueConfig and the AdmissionCheck its ClusterQueue waits for, each created
after what it names (and deleted before it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from manifests.multikueue import (
    KUBECONFIG_KEY,
    admission_check,
    kubeconfig_secret,
    multikueue_cluster,
    multikueue_config,
)
from scheduling.multikueue import team_workers
from settings.model import Settings


class MultiKueueManager(pulumi.ComponentResource):
    objects: list[pulumi.Resource]
    checks: dict[str, pulumi.Resource]  # by team: its AdmissionCheck

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        provider: k8s.Provider,
        kubeconfigs: Mapping[str, pulumi.Output[str]],
        ready: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`kubeconfigs`: per worker, the kubeconfig of its manager account (Pulumi secrets);
        `ready`: the manager's Kueue release (its CRDs and webhooks)."""
        super().__init__("aksray:platform:MultiKueueManager", name, None, opts)
        self._provider = provider
        self._ready = list(ready)
        clusters: dict[str, pulumi.Resource] = {}
        for worker, kubeconfig in kubeconfigs.items():
            manifest = kubeconfig_secret(worker)
            secret = k8s.core.v1.Secret(
                f"{name}-{worker}-kubeconfig",
                metadata=manifest["metadata"],
                type=manifest["type"],
                string_data={KUBECONFIG_KEY: kubeconfig},  # a secret already
                opts=self._after(),
            )
            clusters[worker] = self._object(name, multikueue_cluster(worker), [secret])
        self.objects = list(clusters.values())
        self.checks = {}
        for team, workers in team_workers(settings).items():
            config = self._object(
                name, multikueue_config(team, workers), [clusters[w] for w in workers]
            )
            self.checks[team] = self._object(name, admission_check(team), [config])
            self.objects += [config, self.checks[team]]
        self.register_outputs({"workers": sorted(kubeconfigs)})

    def _after(self, *resources: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(
            parent=self, provider=self._provider, depends_on=[*self._ready, *resources]
        )

    def _object(
        self, name: str, manifest: dict[str, object], after: Sequence[pulumi.Resource]
    ) -> pulumi.Resource:
        kind = str(manifest["kind"]).lower()
        meta = manifest["metadata"]
        assert isinstance(meta, dict)
        return create_object(f"{name}-{kind}-{meta['name']}", manifest, self._after(*after))
