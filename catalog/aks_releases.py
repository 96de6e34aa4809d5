"""Which Kubernetes minor versions AKS offers, and until when, as data with its source and date.

Source: Microsoft Learn, "Supported Kubernetes versions in AKS", the release calendar, as of
AS_OF. A version AKS had retired by then is refused; one the calendar does not know yet, or one
whose end of life has passed since, is a warning (aksray/plan/checks/catalogues.py), so a new AKS
release never breaks a stack before this table learns of it. The stack runs on the Standard
tier without long-term support (LTS needs the Premium tier), so community end of life is the
end of support.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Final

SOURCE: Final = "https://learn.microsoft.com/azure/aks/supported-kubernetes-versions"
AS_OF: Final = datetime.date(2026, 8, 21)


@dataclass(frozen=True)
class AksMinor:
    version: str  # "1.35"
    ga: datetime.date  # first day of the month AKS made it generally available
    end_of_life: datetime.date  # last day of community support (end of the month given)


def _month(year: int, month: int, *, end: bool = False) -> datetime.date:
    if not end:
        return datetime.date(year, month, 1)
    following = datetime.date(year + month // 12, month % 12 + 1, 1)
    return following - datetime.timedelta(days=1)


AKS_MINORS: Final[tuple[AksMinor, ...]] = (
    AksMinor("1.29", _month(2024, 3), _month(2025, 3, end=True)),
    AksMinor("1.30", _month(2024, 7), datetime.date(2025, 8, 22)),
    AksMinor("1.31", _month(2024, 11), datetime.date(2025, 11, 1)),
    AksMinor("1.32", _month(2025, 4), _month(2026, 3, end=True)),
    AksMinor("1.33", _month(2025, 6), _month(2026, 7, end=True)),
    AksMinor("1.34", _month(2025, 11), _month(2026, 11, end=True)),
    AksMinor("1.35", _month(2026, 3), _month(2027, 3, end=True)),
    AksMinor("1.36", _month(2026, 6), _month(2027, 6, end=True)),
    AksMinor("1.37", _month(2026, 10), _month(2027, 10, end=True)),
)


def minor_of(version: str) -> str:
    """ "1.35" of "1.35" or "1.35.2"."""
    return ".".join(version.split(".")[:2])


def aks_minor(version: str) -> AksMinor | None:
    return next((m for m in AKS_MINORS if m.version == minor_of(version)), None)


def minor_number(version: str) -> int:
    """35 of "1.35": minors compare as numbers ("1.4" < "1.35")."""
    return int(minor_of(version).split(".")[1])


def supported_on(day: datetime.date) -> tuple[str, ...]:
    """The minors AKS offered on `day`, oldest first (GA and not past end of life)."""
    return tuple(m.version for m in AKS_MINORS if m.ga <= day <= m.end_of_life)


def month_text(day: datetime.date) -> str:
    return day.strftime("%b %Y")
