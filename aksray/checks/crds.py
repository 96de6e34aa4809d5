"""No release makes its chart create an object whose CRD nothing installs first.

The switches and the objects behind them are catalog/chart_objects.py. A switch counts with the
value the release really gets: ours where the values set it, else the chart's default (the GPU
Operator's DCGM ServiceMonitor is on by default). A CRD is there when a release of this stack
ships it (catalog.versions.CRD_GROUP_CHARTS); nothing else in the stack installs CRDs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aksray.checks.findings import Findings
from aksray.model import HELM_RELEASE, Plan
from catalog.chart_objects import SWITCHED_OBJECTS, SwitchedObject, chart_groups, value_at
from manifests.helm_values import SETTING_OF_VALUE

# Where a switch no setting of ours drives is reported: the key that installs the release.
RELEASES_PATH: Final = "operators.install"


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
            SETTING_OF_VALUE.get((release, value), RELEASES_PATH),
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
    return "set it to false"
