"""What the stack's node pools would cost at most in a month, from the price table (an estimate).

Every pool the stack creates, at its largest (`maxCount`; the system pool's fixed `count`),
running all month (catalog/prices.py: HOURS_PER_MONTH) at its list price. An `existing` cluster
is not the stack's: nothing is estimated for it.
"""

from __future__ import annotations

from typing import Any

from catalog.prices import HOURS_PER_MONTH, PRICE_SOURCE, price
from settings.model import Settings

SYSTEM_POOL = "system"  # the name AKS's system pool has in the cost table


def _pools(settings: Settings) -> list[tuple[str, str, int]]:
    """(pool, VM size, nodes at most) of every pool the stack creates."""
    cluster = settings.cluster
    if cluster.mode != "aks":
        return []
    return [
        (SYSTEM_POOL, cluster.system_pool.vm_size, cluster.system_pool.count),
        *(
            (flavor, cluster.pool(flavor).vm_size, cluster.pool(flavor).max_count)
            for flavor in cluster.flavors
        ),
    ]


def monthly_cost(settings: Settings) -> dict[str, Any]:
    """Per pool and in total: USD per month at most (None for a size the table has no price
    for), with where the figures come from."""
    rows: list[dict[str, Any]] = []
    for pool, vm_size, nodes in _pools(settings):
        found = price(vm_size, settings.location)
        rows.append(
            {
                "pool": pool,
                "vmSize": vm_size,
                "nodesAtMost": nodes,
                "usdPerNodeHour": found.usd_per_hour if found else None,
                "priceRegion": found.region if found else None,
                "usdPerMonthAtMost": round(found.usd_per_hour * nodes * HOURS_PER_MONTH, 2)
                if found
                else None,
            }
        )
    priced = [r["usdPerMonthAtMost"] for r in rows if r["usdPerMonthAtMost"] is not None]
    return {
        "region": settings.location,
        "hoursPerMonth": HOURS_PER_MONTH,
        "source": PRICE_SOURCE,
        "pools": rows,
        "usdPerMonthAtMost": round(sum(priced), 2),
        "unpriced": [r["pool"] for r in rows if r["usdPerMonthAtMost"] is None],
        "createsNodes": bool(rows),
    }
