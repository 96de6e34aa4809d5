"""The dashboards: valid Grafana models whose every query names only metrics the pinned
exporters emit (dashboards/metrics.yaml, with where each name was read) and that the stack
scrapes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

import pytest
import yaml

from manifests.dashboards import DASHBOARD_FILES, DASHBOARDS_DIR, dashboards
from manifests.helm_values import kai_scheduler_values
from manifests.scrape import scrape_targets

METRICS: Final = yaml.safe_load((DASHBOARDS_DIR / "metrics.yaml").read_text())["exporters"]
HISTOGRAM_SERIES: Final = ("_bucket", "_sum", "_count")
# PromQL words that are not metric names.
KEYWORDS: Final = frozenset(
    {
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "and",
        "or",
        "unless",
        "offset",
        "le",
        "inf",
        "nan",
    }
)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers that are neither functions,
    keywords, label names (inside braces or a by/on list) nor strings."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        after = text[match.end() :].lstrip()
        if after.startswith("("):
            continue  # a function
        if match.group(0).lower() not in KEYWORDS:
            names.add(match.group(0))
    return names


def panel_queries(model: dict[str, Any]) -> Iterator[str]:
    for panel in model["panels"]:
        for target in panel["targets"]:
            yield target["expr"]


def queries(model: dict[str, Any]) -> Iterator[str]:
    """The panels' queries and the metric each variable takes its values from."""
    yield from panel_queries(model)
    for variable in model["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            yield re.sub(r"^label_values\((.*),\s*\w+\)$", r"\1", query["query"])


def listed() -> dict[str, tuple[str, str]]:
    """Metric name -> (exporter, type)."""
    return {
        name: (exporter, entry["type"])
        for exporter, e in METRICS.items()
        for name, entry in e["metrics"].items()
    }


def build_fq_name(namespace: str, subsystem: str, name: str) -> str:
    """client_golang's BuildFQName: the non-empty parts joined by "_"."""
    return "_".join(part for part in (namespace, subsystem, name) if part)


def base(name: str, known: dict[str, tuple[str, str]]) -> str:
    for suffix in HISTOGRAM_SERIES:
        stem = name.removesuffix(suffix)
        if stem != name and known.get(stem, ("", ""))[1] == "histogram":
            return stem
    return name


def test_the_name_reader_finds_metrics_and_nothing_else() -> None:
    expr = (
        "histogram_quantile(0.9, sum by (le, cluster_queue) (rate(kueue_admission_wait_time_"
        'seconds_bucket{cluster=~"$cluster", x="a b"}[$__rate_interval]))) / on(pod) '
        'group_left(node) label_replace(DCGM_FI_DEV_GPU_UTIL, "pool", "$1", "node", "(.*)") '
        "or vector(0)"
    )
    assert metric_names(expr) == {
        "kueue_admission_wait_time_seconds_bucket",
        "DCGM_FI_DEV_GPU_UTIL",
    }


def test_there_are_the_four_dashboards_each_valid_and_unique() -> None:
    boards = dashboards()
    assert [b.title for b in boards] == ["GPU fleet", "Queues", "Endpoint", "GPU usage and cost"]
    assert sorted(p.name for p in DASHBOARDS_DIR.glob("*.json")) == sorted(DASHBOARD_FILES)
    assert len({b.uid for b in boards}) == 4
    for board in boards:
        model = json.loads(board.model)
        variables = {v["name"]: v for v in model["templating"]["list"]}
        assert variables["datasource"]["type"] == "datasource"
        assert variables["datasource"]["query"] == "prometheus"
        ids = [p["id"] for p in model["panels"]]
        assert len(ids) == len(set(ids)) and len(ids) >= 8
        for panel in model["panels"]:
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["targets"] and panel["title"] and panel["description"]


@pytest.mark.parametrize("board", dashboards(), ids=lambda b: b.name)
def test_every_query_names_only_metrics_the_exporters_emit(board: Any) -> None:
    known = listed()
    used = {
        base(name, known)
        for expr in queries(json.loads(board.model))
        for name in metric_names(expr)
    }
    assert used and used <= set(known), sorted(used - set(known))


def test_every_listed_metric_has_its_source_and_a_scraped_exporter_and_is_used() -> None:
    scraped = {t.name for t in scrape_targets(["team"])}
    for exporter, entry in METRICS.items():
        assert exporter in scraped, exporter
        assert entry["version"] and entry["source"]
        kinds = {metric["type"] for metric in entry["metrics"].values()}
        assert kinds <= {"gauge", "counter", "histogram"}
    known = listed()
    used = {
        base(name, known)
        for board in dashboards()
        for expr in queries(json.loads(board.model))
        for name in metric_names(expr)
    }
    assert set(known) == used  # no metric kept in the list that no dashboard reads


# The exporters whose names client_golang builds from a namespace, a subsystem and a name.
BUILT_NAMES: Final = ("kueue", "kai-queue-controller", "kai-scheduler")


@pytest.mark.parametrize("exporter", BUILT_NAMES)
def test_every_listed_name_is_the_one_the_exporters_source_builds(exporter: str) -> None:
    """A dashboard reads the full name; the source registers a name under a namespace and a
    subsystem. Leaving a part out (KAI's `kai`) gives a panel that shows nothing."""
    entry = METRICS[exporter]
    prefix = entry["prefix"]
    assert set(prefix) <= {"namespace", "subsystem"} and prefix
    assert all(part["value"] and part["read"] for part in prefix.values())
    for full, metric in entry["metrics"].items():
        assert metric["file"].endswith(".go"), full
        built = build_fq_name(
            prefix.get("namespace", {}).get("value", ""),
            prefix.get("subsystem", {}).get("value", ""),
            metric["name"],
        )
        assert full == built, (exporter, full, built)


def test_kai_metrics_carry_the_kai_namespace_the_stack_leaves_at_its_default() -> None:
    """KAI's scheduler and queue controller default --metrics-namespace to `kai`
    (pkg/common/constants DefaultMetricsNamespace); the stack sets no other."""
    for exporter in ("kai-queue-controller", "kai-scheduler"):
        assert METRICS[exporter]["prefix"]["namespace"]["value"] == "kai"
        assert all(name.startswith("kai_") for name in METRICS[exporter]["metrics"])
    for gpu_sharing in (False, True):
        values = json.dumps(kai_scheduler_values("operator", gpu_sharing=gpu_sharing))
        assert "metricsNamespace" not in values and "metrics-namespace" not in values


def test_histograms_are_read_through_their_series_and_counters_through_rates() -> None:
    known = listed()
    for board in dashboards():
        for expr in panel_queries(json.loads(board.model)):
            for name in metric_names(expr):
                kind = known.get(base(name, known), ("", ""))[1]
                if kind == "histogram":
                    assert name.endswith(HISTOGRAM_SERIES), (board.name, name)
                if kind == "counter":
                    assert re.search(rf"(rate|increase)\({name}\b", expr), (board.name, name)


def test_the_gpu_dashboards_pool_comes_from_the_node_names_aks_gives() -> None:
    """AKS names nodes aks-<pool>-<id>-vmss<n>; pool names are lowercase letters and digits."""
    model = json.loads(dashboards()[0].model)
    pattern = next(
        re.search(r'"node", "([^"]+)"\)', t["expr"]).group(1)  # type: ignore[union-attr]
        for p in model["panels"]
        for t in p["targets"]
        if "label_replace" in t["expr"]
    )
    assert re.fullmatch(pattern, "aks-a100spot-12345678-vmss000001")
    assert re.match(pattern, "aks-a100spot-12345678-vmss000001").group(1) == "a100spot"  # type: ignore[union-attr]
