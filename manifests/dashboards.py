"""The Grafana dashboards of the stack: JSON files in dashboards/, provisioned as they are.

Each file is a complete Grafana dashboard model. Its queries name only metrics that
dashboards/metrics.yaml lists for an exporter the stack scrapes (the tests hold them to it), and
its data source is a variable of type `prometheus`: in Azure Managed Grafana the one the Azure
Monitor workspace integration creates, elsewhere whichever Prometheus the viewer picks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from catalog.prices import PRICE_SOURCE, price

DASHBOARDS_DIR: Final = Path(__file__).resolve().parent.parent / "dashboards"
# Dashboard file names, in the order the plan lists them.
DASHBOARD_FILES: Final = ("gpu-fleet.json", "queues.json", "endpoint.json", "usage.json")
# The Grafana folder the stack owns: its dashboards and nothing else.
DASHBOARD_FOLDER: Final = "aks-ray-platform"
FOLDER_UID: Final = "aksray"


@dataclass(frozen=True)
class Dashboard:
    file: str
    uid: str
    title: str
    model: str  # the dashboard JSON as Grafana takes it

    @property
    def name(self) -> str:
        return self.file.removesuffix(".json")


# GPU-hours of one pool (flavor) per team over the dashboard's range: Kueue's admitted usage,
# a gauge sampled each minute (one replica of Kueue counted), summed and divided by 60.
GPU_HOURS: Final = (
    "sum by (cluster_queue, flavor) (sum_over_time(kueue_cluster_queue_resource_usage{{"
    'cluster=~"$cluster", resource="nvidia.com/gpu", replica_role!="follower", '
    'flavor="{flavor}"}}[$__range:1m])) / 60'
)


@dataclass(frozen=True)
class GpuPrices:
    """What a GPU-hour costs in each pool of a stack: its node's list price over its GPUs."""

    per_gpu_hour: tuple[tuple[str, float], ...] = ()  # (flavor, USD)
    unpriced: tuple[str, ...] = ()  # flavors whose VM size has no price in the catalog


def gpu_prices(pools: Iterable[tuple[str, str, int]], region: str) -> GpuPrices:
    """From (flavor, VM size, GPUs per node) of each GPU pool and the stack's region."""
    priced, unpriced = [], []
    for flavor, vm_size, gpus in pools:
        found = price(vm_size, region)
        if found is None or not gpus:
            unpriced.append(flavor)
        else:
            priced.append((flavor, round(found.usd_per_hour / gpus, 4)))
    return GpuPrices(tuple(priced), tuple(unpriced))


def gpu_cost_query(prices: GpuPrices) -> str:
    """USD per team and pool over the range: each pool's GPU-hours at its price, joined; a
    stack without a priced pool gets a query that finds nothing (the panel says No data)."""
    terms = [f"({GPU_HOURS.format(flavor=f)} * {usd})" for f, usd in prices.per_gpu_hour]
    return " or ".join(terms) or f"({GPU_HOURS.format(flavor='')} * 0)"


def _priced(model: dict[str, Any], prices: GpuPrices) -> dict[str, Any]:
    """The usage dashboard's placeholders filled in with the stack's prices."""
    listed = ", ".join(f"{f} ${usd:g}" for f, usd in prices.per_gpu_hour) or "none"
    words = {
        "__GPU_COST__": gpu_cost_query(prices),
        "__PRICE_SOURCE__": PRICE_SOURCE,
        "__UNPRICED__": ", ".join(prices.unpriced) or "none here",
        "__PRICES__": listed,
    }
    for panel in model.get("panels", []):
        for target in panel["targets"]:
            for word, value in words.items():
                target["expr"] = target["expr"].replace(word, value)
        for word, value in words.items():
            panel["description"] = panel["description"].replace(word, value)
    return model


@cache
def dashboards(prices: GpuPrices = GpuPrices()) -> tuple[Dashboard, ...]:
    """Every dashboard, the usage dashboard's cost at `prices` (the stack's, gpu_prices)."""
    found = []
    for file in DASHBOARD_FILES:
        text = (DASHBOARDS_DIR / file).read_text()
        model = json.loads(text)
        if "__GPU_COST__" in text:  # the usage dashboard: the stack's prices filled in
            model = _priced(model, prices)
            text = json.dumps(model, indent=2, ensure_ascii=False) + "\n"
        found.append(Dashboard(file=file, uid=model["uid"], title=model["title"], model=text))
    return tuple(found)
