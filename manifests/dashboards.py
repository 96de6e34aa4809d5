"""The Grafana dashboards of the stack: JSON files in dashboards/, provisioned as they are.

Each file is a complete Grafana dashboard model. Its queries name only metrics that
dashboards/metrics.yaml lists for an exporter the stack scrapes (the tests hold them to it), and
its data source is a variable of type `prometheus`: in Azure Managed Grafana the one the Azure
Monitor workspace integration creates, elsewhere whichever Prometheus the viewer picks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

DASHBOARDS_DIR: Final = Path(__file__).resolve().parent.parent / "dashboards"
# Dashboard file names, in the order the plan lists them.
DASHBOARD_FILES: Final = ("gpu-fleet.json", "queues.json", "endpoint.json")
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


@cache
def dashboards() -> tuple[Dashboard, ...]:
    found = []
    for file in DASHBOARD_FILES:
        text = (DASHBOARDS_DIR / file).read_text()
        model = json.loads(text)
        found.append(Dashboard(file=file, uid=model["uid"], title=model["title"], model=text))
    return tuple(found)
