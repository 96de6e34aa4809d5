"""Observability: the scrape objects Prometheus reads, and on AKS where the metrics go.

- `cluster.mode: aks`: the Azure side (workspace, data collection, Managed Grafana and its
  dashboards: components/azure_monitoring.py, imported only then: its SDK modules are large)
  and `azmonitoring.coreos.com` scrape objects for the cluster's metrics add-on, which also
  installs their CRDs. The add-on's service account may read Kueue's authenticated metrics.
- `cluster.mode: existing` with `observability.prometheusOperator`: the same scrape objects in
  the `monitoring.coreos.com` flavour, for the cluster's own Prometheus Operator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from manifests.dashboards import dashboards
from manifests.scrape import kueue_metrics_reader_binding, scrape_objects, scrape_targets
from settings.model import Settings

if TYPE_CHECKING:
    from components.cluster import AksCluster


class Observability(pulumi.ComponentResource):
    grafana_endpoint: pulumi.Output[str] | None  # None without Managed Grafana
    dashboards: tuple[str, ...]  # titles of the dashboards provisioned

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        cluster: AksCluster,
        ready: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`ready`: what the scrape objects' targets need first (namespaces, releases)."""
        super().__init__("aksray:platform:Observability", name, None, opts)
        managed = settings.cluster.mode == "aks"
        self.grafana_endpoint = None
        self.dashboards = ()
        after = list(ready)
        if managed:
            from components.azure_monitoring import AzureMonitoring

            azure = AzureMonitoring(
                f"{name}-azure", settings, cluster=cluster, opts=pulumi.ResourceOptions(parent=self)
            )
            self.grafana_endpoint = azure.grafana_endpoint
            if settings.observability.grafana:
                self.dashboards = tuple(d.title for d in dashboards())
            # The add-on scrapes through the association: the scrape objects come after it.
            after.append(azure.association)
        self._scrape(name, settings, cluster.provider, after, managed=managed)
        self.register_outputs(
            {"grafanaEndpoint": self.grafana_endpoint, "dashboards": list(self.dashboards)}
        )

    def _scrape(
        self,
        name: str,
        settings: Settings,
        provider: k8s.Provider,
        after: list[pulumi.Resource],
        *,
        managed: bool,
    ) -> None:
        targets = scrape_targets([team.namespace for team in settings.scheduling.teams])
        options = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=after)
        for manifest in scrape_objects(targets, managed=managed):
            meta = manifest["metadata"]
            create_object(f"{name}-{meta['namespace']}-{meta['name']}", manifest, options)
        if managed:
            create_object(f"{name}-kueue-metrics-reader", kueue_metrics_reader_binding(), options)
