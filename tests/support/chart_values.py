"""Check Helm values against the pinned chart's default `values.yaml`.

Helm accepts any key and silently ignores the ones no template reads, so a misspelt key is a
setting that never happens. `unknown_value_paths(chart, values)` names every key path we set
that the upstream default values (the pinned chart's `values.yaml` in the reference data) do
not have.

Rules:
- a map we set is checked key by key against the upstream map at the same path;
- below a free-form map (node selectors, labels, annotations, and any map the chart defaults to
  `{}`) every key is accepted: those maps take arbitrary keys;
- a scalar or a list replaces the upstream value whole, so only its key must exist;
- a map where the upstream default is a scalar or a list is reported (Helm would merge nonsense);
- upstream `null` means "unset, any value": accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final

import yaml

from tests.support.reference import chart as reference_chart

# Keys whose value is a map of arbitrary names, whatever the chart's default holds.
FREE_FORM_KEYS: Final = frozenset(
    {"nodeSelector", "labels", "annotations", "podAnnotations", "podLabels", "additionalLabels"}
)

# Subchart keys: a parent chart's values.yaml does not repeat its subcharts' defaults. Each path
# listed here was checked in the subchart's own values.yaml at the pinned version:
# gpu-operator v26.7.0 bundles node-feature-discovery 0.19.0, whose values.yaml
# (deployments/gpu-operator/charts/node-feature-discovery/values.yaml, git blob
# 12a895d22f79b3c6a3a5f5fbc007509ad494f9a6) has `master.nodeSelector` and `gc.nodeSelector`.
SUBCHART_PATHS: Final[dict[str, frozenset[str]]] = {
    "gpu-operator": frozenset(
        {"node-feature-discovery.master.nodeSelector", "node-feature-discovery.gc.nodeSelector"}
    ),
}


@cache
def chart_defaults(chart: str) -> Mapping[str, Any]:
    document = yaml.safe_load((reference_chart(chart) / "values.yaml").read_text())
    assert isinstance(document, dict), f"{chart}: values.yaml is not a map"
    return document


def unknown_value_paths(chart: str, values: Mapping[str, Any]) -> list[str]:
    """Dotted paths in `values` that the chart's default values.yaml does not define."""
    unknown: list[str] = []
    _walk(values, chart_defaults(chart), "", SUBCHART_PATHS.get(chart, frozenset()), unknown)
    return sorted(unknown)


def _walk(
    ours: Mapping[str, Any],
    upstream: Mapping[str, Any],
    prefix: str,
    vouched: frozenset[str],
    unknown: list[str],
) -> None:
    for key, value in ours.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if path in vouched:
            continue
        if key not in upstream:
            unknown.append(path)
            continue
        default = upstream[key]
        if not isinstance(value, Mapping) or default is None:
            continue
        if not isinstance(default, Mapping):
            unknown.append(path)  # a map where the chart expects a scalar or a list
        elif default and key not in FREE_FORM_KEYS:
            _walk(value, default, path, vouched, unknown)
