"""`observability`: metrics, where they go and the dashboards on them (docs/monitoring.md)."""

from __future__ import annotations

from typing import Final

from settings.defaults import (
    DEFAULT_GRAFANA,
    DEFAULT_OBSERVABILITY_ENABLED,
    DEFAULT_PROMETHEUS_OPERATOR,
)
from settings.errors import Problem
from settings.model import ClusterSettings, ObservabilitySettings
from settings.reader import Section, join

OBSERVABILITY_KEYS: Final = ("enabled", "grafana", "prometheusOperator")


def parse_observability(
    raw: Section | None, problems: list[Problem], cluster: ClusterSettings
) -> ObservabilitySettings:
    section = raw or Section({}, "observability", problems, OBSERVABILITY_KEYS)
    enabled = section.boolean("enabled", DEFAULT_OBSERVABILITY_ENABLED)
    grafana = section.boolean("grafana", DEFAULT_GRAFANA)
    prometheus_operator = section.boolean("prometheusOperator", DEFAULT_PROMETHEUS_OPERATOR)
    path = section.path
    if cluster.mode == "aks" and prometheus_operator:
        section.problem(
            join(path, "prometheusOperator"),
            "is only for cluster.mode existing: an aks cluster's metrics go to Azure's managed "
            "Prometheus, whose agent reads azmonitoring.coreos.com objects; remove it",
        )
    if cluster.mode == "existing":
        if section.has("grafana") and grafana:
            section.problem(
                join(path, "grafana"),
                "is only for cluster.mode aks (Azure Managed Grafana); an existing cluster "
                "imports the dashboards/*.json files into its own Grafana: set it to false",
            )
        grafana = False
        if enabled and not prometheus_operator:
            section.problem(
                join(path, "enabled"),
                "an existing cluster gets scrape objects only for a Prometheus Operator it "
                "runs (monitoring.coreos.com CRDs): set observability.prometheusOperator: true "
                "if it does, else leave observability off",
            )
    return ObservabilitySettings(
        enabled=enabled,
        grafana=enabled and grafana,
        prometheus_operator=prometheus_operator,
    )
