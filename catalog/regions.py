"""Azure public-cloud regions (their programmatic names), as data with its source and date.

Source: the region list of `az account list-locations` (physical regions of the public cloud),
as of AS_OF. A name close to one of them is a typo and refused with the likely one; a name close
to none may be a region newer than this list, so it is a warning only
(aksray/plan/checks/catalogues.py).
"""

from __future__ import annotations

import datetime
from typing import Final

SOURCE: Final = "az account list-locations --query \"[?metadata.regionType=='Physical'].name\""
AS_OF: Final = datetime.date(2026, 10, 1)

AZURE_REGIONS: Final[tuple[str, ...]] = (
    "australiacentral", "australiacentral2", "australiaeast", "australiasoutheast",
    "austriaeast", "belgiumcentral", "brazilsouth", "brazilsoutheast", "canadacentral",
    "canadaeast", "centralindia", "centralus", "chilecentral", "denmarkeast", "eastasia",
    "eastus", "eastus2", "francecentral", "francesouth", "germanynorth", "germanywestcentral",
    "indonesiacentral", "israelcentral", "italynorth", "japaneast", "japanwest", "jioindiacentral",
    "jioindiawest", "koreacentral", "koreasouth", "malaysiawest", "mexicocentral",
    "newzealandnorth", "northcentralus", "northeurope", "norwayeast", "norwaywest",
    "polandcentral", "qatarcentral", "southafricanorth", "southafricawest", "southcentralus",
    "southeastasia", "southindia", "spaincentral", "swedencentral", "switzerlandnorth",
    "switzerlandwest", "taiwannorth", "taiwannorthwest", "uaecentral", "uaenorth", "uksouth",
    "ukwest", "westcentralus", "westeurope", "westindia", "westus", "westus2", "westus3",
)  # fmt: skip
