"""What the checks report, and the words they report it in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from aksray.plan.model.plan import PodSetPlan
from catalog.pools import CPU_POOL_NAME
from catalog.quantities import RESOURCE_KEYS
from scheduling.amounts import Amounts, describe_amount, describe_amounts
from settings.errors import Problem
from settings.model import Settings, TeamSettings

MAX_LISTED: Final = 5  # teams named in one message before "and N more"


@dataclass
class Findings:
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def error(self, path: str, message: str) -> None:
        self.errors.append(Problem(path, message))

    def warning(self, path: str, message: str) -> None:
        self.warnings.append(Problem(path, message))

    def to_json(self) -> dict[str, list[dict[str, str]]]:
        return {
            "errors": [{"path": p.path, "message": p.message} for p in self.errors],
            "warnings": [{"path": p.path, "message": p.message} for p in self.warnings],
        }


# The core's one formatter, under the names the checks use.
amount = describe_amount
amounts = describe_amounts


def listed(items: list[str]) -> str:
    shown = items[:MAX_LISTED]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def quota_path(settings: Settings, team: TeamSettings, flavor: str | None, resource: str) -> str:
    base = f"{settings.scheduling.team_path(team.name)}.quota"
    if flavor is None:
        return base
    return f"{base}.{flavor}.{RESOURCE_KEYS[resource]}"


def gpu_flavor(team: TeamSettings, settings: Settings) -> str | None:
    return next(
        (f for f in settings.cluster.flavors if f != CPU_POOL_NAME and f in team.quota), None
    )


def node_amounts(node: Amounts) -> dict[str, int]:
    return dict(node)


def pod_words(pod_set: PodSetPlan) -> tuple[str, str]:
    """(`head` / `3 gpu workers`, the verb that goes with it)."""
    count = pod_set.pod_set.count
    noun = "head" if pod_set.pod_set.name == "head" else f"{pod_set.pod_set.name} worker"
    if count == 1:
        return noun, "needs"
    return f"{count} {noun}s", "need"
