"""The organisation per department: what the Markdown plan shows of a stack too large to show
team by team.

Each department's teams and, per flavor, the sum of their nominal quotas: what the department's
Kueue cohort holds in all. Read from the summary's queues (aksray/plan/report/summary.py), which
are read from
the ClusterQueues the program registers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.quantities import RESOURCE_TABLE

# The summary keys its amounts by the stack file's key (gpu, cpu, memory).
_KIND_BY_KEY = {kind.key: kind for kind in RESOURCE_TABLE}


@dataclass
class Department:
    name: str
    cohort: str | None
    teams: list[str] = field(default_factory=list)
    # flavor -> resource key (gpu, cpu, memory) -> the teams' nominal quotas added up, in
    # canonical units (GPUs, CPU millicores, memory bytes); flavors in the order teams list them.
    nominal: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def gpus(self) -> int:
        return sum(amounts.get("gpu", 0) for amounts in self.nominal.values())


def departments(queues: Sequence[Mapping[str, Any]]) -> list[Department]:
    """One entry per department, in the order its first team appears."""
    found: dict[str, Department] = {}
    for queue in queues:
        name = queue["department"]
        department = found.setdefault(name, Department(name, queue["cohort"]))
        department.teams.append(queue["team"])
        for flavor in queue["flavors"]:
            sums = department.nominal.setdefault(flavor["flavor"], {})
            for key, value in flavor["nominal"].items():
                sums[key] = sums.get(key, 0) + _KIND_BY_KEY[key].parse(value)
    return list(found.values())


def shown_resources(nominal: Mapping[str, Any]) -> tuple[str, ...]:
    """The resources a flavor's quota is shown by. On a GPU flavor cpu and memory follow the GPUs
    (their share of a node): the GPUs say it."""
    return ("gpu",) if nominal.get("gpu") else ("cpu", "memory")


def _amount(key: str, value: int) -> str:
    return str(_KIND_BY_KEY[key].format(value))


def flavor_quota_text(flavor: str, sums: Mapping[str, int]) -> str:
    """`a100: gpu 40`, `cpu: cpu 80, memory 320Gi`."""
    keys = [key for key in shown_resources(sums) if key in sums]
    return f"{flavor}: {', '.join(f'{key} {_amount(key, sums[key])}' for key in keys)}"


def quota_text(department: Department) -> str:
    """Every flavor's quota of a department, `; ` between them."""
    return "; ".join(flavor_quota_text(f, sums) for f, sums in department.nominal.items())
