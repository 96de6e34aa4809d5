"""Every scenario a rehearsal can play, by name, in the order `--scenario all` plays them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from aksray.rehearse import scenario_names as n
from aksray.rehearse.compete import gangs_compete
from aksray.rehearse.full_node import full_node_gang
from aksray.rehearse.late import endpoint_admitted_late
from aksray.rehearse.scaling import endpoint_scales
from aksray.rehearse.scenarios import SCENARIOS as CORE_SCENARIOS
from aksray.rehearse.scenarios import Context

SCENARIOS: Final[dict[str, Callable[[Context], None]]] = {
    **CORE_SCENARIOS,
    n.FULL_NODE_GANG: full_node_gang,
    n.GANGS_COMPETE: gangs_compete,
    n.LATE_ADMISSION: endpoint_admitted_late,
    n.ENDPOINT_SCALES: endpoint_scales,
}
