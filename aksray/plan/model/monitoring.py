"""The plan summary's monitoring part: where metrics go, what scrapes them, where to look."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aksray.plan.model.plan import Plan
from manifests.dashboards import DASHBOARD_FOLDER, dashboards
from manifests.monitoring import monitoring_names

# The stack outputs that say where to look (__main__.py).
GRAFANA_OUTPUT: Final = "grafanaEndpoint"
SCRAPE_KINDS: Final = ("PodMonitor", "ServiceMonitor")


def monitoring(plan: Plan) -> dict[str, Any]:
    settings = plan.settings
    observed = settings.observability
    scrape = sorted(
        (
            {
                "kind": r.inputs["kind"],
                "apiVersion": r.inputs["apiVersion"],
                "namespace": r.inputs["metadata"]["namespace"],
                "name": r.inputs["metadata"]["name"],
            }
            for r in plan.result.resources
            if r.type.startswith("kubernetes:") and r.inputs.get("kind") in SCRAPE_KINDS
        ),
        key=lambda o: (o["namespace"], o["name"]),
    )
    managed = observed.enabled and settings.cluster.mode == "aks"
    names = monitoring_names(settings.stack) if managed else None
    return {
        "enabled": observed.enabled,
        "backend": (
            "azure-managed-prometheus"
            if managed
            else ("prometheus-operator" if observed.enabled else None)
        ),
        "workspace": names.workspace if names else None,
        "grafana": names.grafana if names and observed.grafana else None,
        "grafanaOutput": GRAFANA_OUTPUT if names and observed.grafana else None,
        "dashboards": [d.title for d in dashboards()] if observed.enabled else [],
        "dashboardFolder": DASHBOARD_FOLDER if names and observed.grafana else None,
        "scrapeObjects": scrape,
    }


def monitoring_lines(data: Mapping[str, Any]) -> list[str]:
    if not data["enabled"]:
        return ["Monitoring: off (observability.enabled: false; docs/monitoring.md)"]
    objects = data["scrapeObjects"]
    api = ", ".join(sorted({o["apiVersion"] for o in objects}))
    lines = [f"Monitoring ({_where(data)}):"]
    if data["grafana"]:
        lines.append(
            f"  dashboards: {', '.join(data['dashboards'])} in Grafana {data['grafana']}, "
            f"folder {data['dashboardFolder']} (stack output {data['grafanaOutput']})"
        )
    else:
        lines.append(
            f"  dashboards: {', '.join(data['dashboards'])} (import dashboards/*.json into "
            "your Grafana)"
        )
    lines.append(
        f"  scrape objects ({api}): "
        + ", ".join(o["name"].removeprefix("aksray-") for o in objects)
    )
    return lines


def _where(data: Mapping[str, Any]) -> str:
    if data["backend"] == "azure-managed-prometheus":
        return f"Azure Monitor managed Prometheus, workspace {data['workspace']}"
    return "the cluster's own Prometheus Operator"
