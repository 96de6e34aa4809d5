"""GPU-hours and their cost per team and pool (dashboards/usage.json, manifests/dashboards.py):
Kueue's admitted usage summed over the range, at the catalog's price per GPU-hour of each pool."""

from __future__ import annotations

import json
from typing import Any

from manifests.dashboards import GPU_HOURS, GpuPrices, dashboards, gpu_cost_query, gpu_prices

SELECTOR = 'cluster=~"$cluster", resource="nvidia.com/gpu", replica_role!="follower"'


NO_PRICES = GpuPrices()


def _usage(prices: GpuPrices = NO_PRICES) -> dict[str, Any]:
    board = next(b for b in dashboards(prices) if b.name == "usage")
    model: dict[str, Any] = json.loads(board.model)
    return model


def test_a_gpu_hour_costs_the_nodes_price_over_its_gpus() -> None:
    prices = gpu_prices(
        [
            ("a100", "Standard_NC96ads_A100_v4", 4),  # $14.692 a node-hour
            ("h100", "Standard_ND96isr_H100_v5", 8),  # $98.32
            ("v100", "Standard_NC6s_v3", 1),  # not in the catalog's table
        ],
        "westeurope",  # planned at the East US price, as the plan's cost
    )
    assert prices == GpuPrices((("a100", 3.673), ("h100", 12.29)), ("v100",))


def test_gpu_hours_are_the_admitted_usage_sampled_each_minute_over_the_range() -> None:
    """A gauge of 2 GPUs held for an hour, sampled each minute: 60 samples of 2, summed and
    divided by 60, is 2 GPU-hours."""
    assert GPU_HOURS.format(flavor="a100") == (
        "sum by (cluster_queue, flavor) (sum_over_time(kueue_cluster_queue_resource_usage{"
        f'{SELECTOR}, flavor="a100"}}[$__range:1m])) / 60'
    )
    model = _usage()
    hours = next(p for p in model["panels"] if p["title"] == "GPU-hours per team and pool")
    assert hours["targets"][0]["expr"] == (
        "sum by (cluster_queue, flavor) (sum_over_time(kueue_cluster_queue_resource_usage{"
        f"{SELECTOR}}}[$__range:1m])) / 60"
    )
    assert hours["targets"][0]["instant"] is True


def test_the_cost_is_each_pools_hours_at_its_price() -> None:
    prices = GpuPrices((("a100", 3.673), ("h100", 12.29)), ("v100",))
    expected = (
        f"({GPU_HOURS.format(flavor='a100')} * 3.673) or ({GPU_HOURS.format(flavor='h100')} "
        "* 12.29)"
    )
    assert gpu_cost_query(prices) == expected
    model = _usage(prices)
    costs = [p for p in model["panels"] if "Cost" in p["title"]]
    assert [p["targets"][0]["expr"] for p in costs] == [f"sum({expected})", expected]
    assert "pools without a price are left out (v100)" in costs[0]["description"]
    assert all("__" not in p["description"] for p in model["panels"])


def test_a_stack_without_a_priced_pool_shows_no_cost() -> None:
    assert gpu_cost_query(GpuPrices()) == f"({GPU_HOURS.format(flavor='')} * 0)"
