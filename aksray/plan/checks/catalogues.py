"""What the tables of Azure's offer cannot know yet: a Kubernetes minor newer than the AKS
release calendar, one whose end of life has passed since the calendar was read, a region newer
than the region list. Warnings, so that a new AKS release or region never breaks a stack."""

from __future__ import annotations

import datetime

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan
from catalog import aks_releases, regions


def today() -> datetime.date:
    return datetime.date.today()


def check_catalogue_staleness(plan: Plan, out: Findings) -> None:
    settings = plan.settings
    if settings.cluster.mode != "aks":
        return
    _check_version(settings.cluster.kubernetes_version, out)
    if settings.location not in regions.AZURE_REGIONS:
        out.warning(
            "location",
            f"{settings.location!r} is not in the region list this version knows (as of "
            f"{regions.AS_OF}); if Azure offers it, nothing is wrong; check with "
            "az account list-locations -o table",
        )


def _check_version(version: str, out: Findings) -> None:
    path = "cluster.kubernetesVersion"
    known = aks_releases.aks_minor(version)
    calendar = f"the AKS release calendar this version knows (as of {aks_releases.AS_OF})"
    if known is None:
        out.warning(
            path,
            f"Kubernetes {version} is newer than {calendar}; if AKS offers it in your region "
            "(az aks get-versions -l <region>), nothing is wrong",
        )
    elif known.end_of_life < today():
        out.warning(
            path,
            f"by {calendar}, AKS support for Kubernetes {known.version} ended in "
            f"{aks_releases.month_text(known.end_of_life)}: a new cluster may be refused and an "
            "old one is out of support; move to a newer minor (az aks get-versions -l <region>)",
        )
    elif known.ga > aks_releases.AS_OF and known.ga > today():
        out.warning(
            path,
            f"Kubernetes {known.version} is in preview on AKS until "
            f"{aks_releases.month_text(known.ga)} by {calendar}; preview versions are not "
            "for production",
        )
