"""The manager's MultiKueue objects: a kubeconfig Secret and a MultiKueueCluster per worker,
and per team a MultiKueueConfig and the AdmissionCheck its ClusterQueue waits for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from manifests.multikueue import KUBECONFIG_KEY, kubeconfig_secret, manager_objects
from settings.model import Settings


class MultiKueueManager(pulumi.ComponentResource):
    objects: list[pulumi.Resource]

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
        child = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(ready))
        secrets = []
        for worker, kubeconfig in kubeconfigs.items():
            manifest = kubeconfig_secret(worker)
            secrets.append(
                k8s.core.v1.Secret(
                    f"{name}-{worker}-kubeconfig",
                    metadata=manifest["metadata"],
                    type=manifest["type"],
                    string_data={KUBECONFIG_KEY: kubeconfig},  # a secret already
                    opts=child,
                )
            )
        after_secrets = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=secrets)
        )
        self.objects = [
            create_object(f"{name}-{o['kind'].lower()}-{o['metadata']['name']}", o, after_secrets)
            for o in manager_objects(settings)
        ]
        self.register_outputs({"workers": sorted(kubeconfigs)})
