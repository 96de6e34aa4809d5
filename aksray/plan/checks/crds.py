"""No object is created whose CRD nothing installs first: not by a chart, not by the stack.

The switches and the objects behind them are catalog/chart_objects.py. A switch counts with the
value the release really gets: ours where the values set it, else the chart's default (the GPU
Operator's DCGM ServiceMonitor is on by default). A CRD is there when a release of this stack
ships it (catalog.versions.CRD_GROUP_RELEASES); nothing else in the stack installs CRDs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import HELM_RELEASE, Plan
from catalog.chart_objects import (
    AZURE_MONITOR_SCRAPE_GROUP,
    PROMETHEUS_OPERATOR_GROUP,
    SWITCHED_OBJECTS,
    SwitchedObject,
    chart_groups,
    is_built_in_group,
    value_at,
)
from catalog.versions import CHARTS

# Where it is reported: no setting turns these switches on (manifests/helm_values.py keeps
# them off), so the setting that installs the releases.
RELEASES_PATH: Final = "operators.install"
MANAGED_CLUSTER: Final = "azure-native:containerservice:ManagedCluster"
# Where a missing CRD of the stack's own objects is reported, by API group.
GROUP_PATHS: Final = {
    AZURE_MONITOR_SCRAPE_GROUP: "observability.enabled",
    PROMETHEUS_OPERATOR_GROUP: "observability.prometheusOperator",
}


def check_chart_objects_have_crds(plan: Plan, out: Findings) -> None:
    releases = {
        str(r.inputs.get("name") or r.name): r.inputs.get("values") or {}
        for r in plan.result.by_type(HELM_RELEASE)
    }
    present = {group for release in releases for group in chart_groups(release)}
    missing: dict[tuple[str, str], list[SwitchedObject]] = {}
    for entry in SWITCHED_OBJECTS:
        values = releases.get(entry.release)
        if values is None or entry.group in present or not _switched_on(values, entry):
            continue
        missing.setdefault((entry.release, entry.value), []).append(entry)
    for (release, value), entries in missing.items():
        first = entries[0]
        kinds = " and ".join(dict.fromkeys(f"{e.api_version} {e.kind}" for e in entries))
        out.error(
            RELEASES_PATH,
            f"the {release} release's {value}: true makes "
            f"{'its operator' if first.by_operator else 'the chart'} create {kinds} objects, "
            f"whose CRD nothing in this stack installs (no release ships {first.group}), so "
            f"the first `pulumi up` of a new cluster fails there; {_fix(first)}",
        )


def _switched_on(values: Mapping[str, Any], entry: SwitchedObject) -> bool:
    ours = value_at(values, entry.value)
    return bool(entry.default if ours is None else ours)


def _fix(entry: SwitchedObject) -> str:
    if entry.kind in ("ServiceMonitor", "PodMonitor"):
        return (
            "AKS's managed Prometheus reads its own azmonitoring.coreos.com objects, never "
            "these: turn it off"
        )
    return "keep it off"


def check_objects_have_crds(plan: Plan, out: Findings) -> None:
    """Every custom resource the stack registers has a CRD that something installs: a release
    of the stack, the cluster's own operators (operators.install false), AKS's metrics add-on
    (azmonitoring.coreos.com), or a Prometheus Operator the stack file declares."""
    present = _installed_groups(plan)
    missing: dict[str, set[str]] = {}
    for resource in plan.result.resources:
        group, kind = _group_and_kind(resource.type)
        if group is None or is_built_in_group(group) or group in present:
            continue
        missing.setdefault(group, set()).add(kind)
    for group, kinds in sorted(missing.items()):
        out.error(
            GROUP_PATHS.get(group, RELEASES_PATH),
            f"the stack creates {', '.join(sorted(kinds))} objects of {group}, whose CRD "
            "nothing installs first (no release ships it, and the cluster is not said to have "
            "it), so `pulumi up` fails there",
        )


def _installed_groups(plan: Plan) -> set[str]:
    releases = [str(r.inputs.get("name") or r.name) for r in plan.result.by_type(HELM_RELEASE)]
    settings = plan.settings
    if not settings.operators.install:  # the cluster's own operators (docs/cluster-software.md)
        releases = [chart.release for chart in CHARTS]
    present = {group for release in releases for group in chart_groups(release)}
    for cluster in plan.result.by_type(MANAGED_CLUSTER):
        metrics = (cluster.inputs.get("azureMonitorProfile") or {}).get("metrics") or {}
        if metrics.get("enabled") is True:
            present.add(AZURE_MONITOR_SCRAPE_GROUP)
    if settings.observability.prometheus_operator:
        present.add(PROMETHEUS_OPERATOR_GROUP)
    return present


def _group_and_kind(type_token: str) -> tuple[str | None, str]:
    """`kubernetes:<group>/<version>:<Kind>` -> (group, Kind); (None, "") for anything else
    (other providers, Helm releases, the core group)."""
    package, _, rest = type_token.partition(":")
    if package != "kubernetes" or type_token.startswith("kubernetes:helm.sh/"):
        return None, ""
    api_version, _, kind = rest.rpartition(":")
    group = api_version.rpartition("/")[0]
    return (None, "") if group in ("", "core") else (group, kind)
