"""VM list prices, for the plan's cost estimate only: an estimate, never a quote.

`aksray plan --format markdown` multiplies each pool's nodes at its maximum by these hourly prices
and by 730 hours: what a month would cost at most if every pool ran full all month. Real bills
differ: prices change, discounts (reservations, savings plans, enterprise agreements) apply,
spot nodes cost less (they are counted at the pay-as-you-go price, an upper bound), and disks,
the storage account, network and the AKS tier are not counted.

Source: Azure's published pay-as-you-go prices for Linux VMs in East US, in USD per hour (the
figures of the Azure Retail Prices API, `https://prices.azure.com/api/retail/prices`, meter
`<size>` with `priceType eq 'Consumption'`, as public price trackers publish them; the API itself
could not be queried where this table was written). Recorded 2026-12-03. No regional figure
was confirmed, so every region is planned at the East US price, and the plan says so; a region
whose price differs gets its own row in REGIONAL. Sizes without a figure are planned as
"unpriced". To refresh a row: GET the API with `$filter=serviceName eq 'Virtual Machines' and
armSkuName eq '<size>' and armRegionName eq '<region>' and priceType eq 'Consumption'` and take
the item whose productName ends in ` Series` (Linux) and whose meterName has no `Spot` or
`Low Priority`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

HOURS_PER_MONTH: Final = 730  # Azure's own month for monthly prices (8760 h / 12)
PRICES_AS_OF: Final = "2026-12-03"
PRICE_REGION: Final = "eastus"  # where the figures in USD_PER_HOUR are from
PRICE_SOURCE: Final = "Azure pay-as-you-go Linux list prices, East US, recorded 2026-12-03"

# USD per node-hour, East US, Linux, pay-as-you-go.
USD_PER_HOUR: Final[dict[str, float]] = {
    "Standard_NC24ads_A100_v4": 3.673,
    "Standard_NC48ads_A100_v4": 7.346,
    "Standard_NC96ads_A100_v4": 14.692,
    "Standard_ND96isr_H100_v5": 98.32,
}
# (size, region) -> USD per node-hour, where a region's price is known to differ.
REGIONAL: Final[dict[tuple[str, str], float]] = {}


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    region: str  # the region the figure is from


def price(vm_size: str, region: str) -> Price | None:
    """The hourly price of one node in `region`; None when the table has no figure."""
    if (vm_size, region) in REGIONAL:
        return Price(REGIONAL[(vm_size, region)], region)
    if vm_size in USD_PER_HOUR:
        return Price(USD_PER_HOUR[vm_size], PRICE_REGION)
    return None
