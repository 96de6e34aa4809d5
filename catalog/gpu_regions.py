"""Where Azure offers each GPU size of the catalog, as data with its source and date.

Source: the Azure Retail Prices API (`https://prices.azure.com/api/retail/prices`, Linux
pay-as-you-go meters of `serviceName eq 'Virtual Machines'`, one row per `armSkuName` and
`armRegionName`), as compiled for the US regions in the public SkyPilot catalog
(skypilot-org/skypilot-catalog, `catalogs/v6/azure/vms.csv`, commit 098741e7); read AS_OF. A
size with no price in a region cannot be bought there. The list covers REGIONS only: for any
other region, or a size the table does not list, it proves nothing, and the planner says so as a
warning (aksray/plan/checks/offer.py); within REGIONS a size it does not list there is refused
(settings/deployable.py). To refresh a row: `az vm list-skus -l <region> --size <size> -o table`
(a size with restrictions `NotAvailableForSubscription` is offered, but not to that
subscription), or the API query of catalog/prices.py per region.
"""

from __future__ import annotations

import datetime
from typing import Final

SOURCE: Final = "Azure Retail Prices API, Linux VM meters per region"
AS_OF: Final = datetime.date(2026, 12, 4)

# The regions the table covers: every region it holds a row of any VM size for.
REGIONS: Final = frozenset(
    {
        "centralus", "eastus", "eastus2", "northcentralus", "southcentralus", "westcentralus",
        "westus", "westus2", "westus3",
    }
)  # fmt: skip

_A100_PCIE: Final = frozenset(
    {"centralus", "eastus", "eastus2", "southcentralus", "westus", "westus2", "westus3"}
)
_H100_NVL: Final = frozenset({"eastus", "eastus2", "southcentralus", "westus3"})
_T4: Final = frozenset(
    {
        "centralus", "eastus", "eastus2", "northcentralus", "southcentralus", "westus",
        "westus2", "westus3",
    }
)  # fmt: skip
_A10: Final = frozenset(
    {"eastus", "eastus2", "northcentralus", "southcentralus", "westus", "westus2", "westus3"}
)

# GPU size -> the regions of REGIONS that offer it. Retired sizes are not listed: they are
# refused wherever they are asked for.
GPU_SIZE_REGIONS: Final[dict[str, frozenset[str]]] = {
    "Standard_NC24ads_A100_v4": _A100_PCIE,
    "Standard_NC48ads_A100_v4": _A100_PCIE,
    "Standard_NC96ads_A100_v4": _A100_PCIE,
    "Standard_ND96asr_v4": frozenset({"eastus", "southcentralus", "westus2"}),
    "Standard_ND96amsr_A100_v4": frozenset({"eastus", "eastus2", "southcentralus"}),
    "Standard_NC40ads_H100_v5": _H100_NVL,
    "Standard_NC80adis_H100_v5": _H100_NVL,
    "Standard_ND96isr_H100_v5": frozenset({"eastus", "eastus2", "westus"}),
    "Standard_NC4as_T4_v3": _T4,
    "Standard_NC8as_T4_v3": _T4,
    "Standard_NC16as_T4_v3": _T4,
    "Standard_NC64as_T4_v3": _T4,
    "Standard_NV36ads_A10_v5": _A10,
    "Standard_NV36adms_A10_v5": _A10,
    "Standard_NV72ads_A10_v5": _A10,
}


def offered(vm_size: str, region: str) -> bool | None:
    """Whether `region` offers `vm_size`; None when the table cannot tell."""
    regions = GPU_SIZE_REGIONS.get(vm_size)
    if regions is None or region not in REGIONS:
        return None
    return region in regions


def regions_offering(vm_size: str) -> list[str]:
    return sorted(GPU_SIZE_REGIONS.get(vm_size, ()))


def sizes_offered_in(region: str) -> list[str]:
    return sorted(size for size, regions in GPU_SIZE_REGIONS.items() if region in regions)
