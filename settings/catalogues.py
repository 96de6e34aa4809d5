"""The Kubernetes version and the region against what Azure offers (catalog/aks_releases.py,
catalog/regions.py): what those tables prove wrong is refused here; what they cannot know yet
is a warning of the planner (aksray/plan/checks/catalogues.py)."""

from __future__ import annotations

import difflib
import re

from catalog import aks_releases, regions
from settings.errors import Problem
from settings.model import ClusterSettings


def check_kubernetes_version(cluster: ClusterSettings, problems: list[Problem]) -> None:
    """A minor AKS had retired (or never offered) by the calendar's date is refused."""
    if cluster.mode != "aks":
        return
    version = cluster.kubernetes_version
    offered = aks_releases.supported_on(aks_releases.AS_OF)
    quoted = ", ".join(f'"{v}"' for v in offered)
    choices = f"use one AKS offers, e.g. {quoted}"
    known = aks_releases.aks_minor(version)
    oldest = aks_releases.AKS_MINORS[0]
    path = "cluster.kubernetesVersion"
    if known is None and aks_releases.minor_number(version) < aks_releases.minor_number(
        oldest.version
    ):
        problems.append(Problem(path, f"{version!r} is older than any AKS offers; {choices}"))
    elif known is not None and known.end_of_life < aks_releases.AS_OF:
        problems.append(
            Problem(
                path,
                f"AKS ended support for Kubernetes {known.version} in "
                f"{aks_releases.month_text(known.end_of_life)} and creates no cluster on it "
                f"(AKS release calendar, {aks_releases.AS_OF}); {choices}",
            )
        )


_NUMBERED = re.compile(r"[0-9]+\Z")


def close_regions(location: str) -> list[str]:
    """The catalogued region `location` is most likely a typo of, if any. A catalogued name with
    another number (eastus3) may be a region newer than the table: not a typo."""
    families = {_NUMBERED.sub("", region) for region in regions.AZURE_REGIONS}
    if _NUMBERED.sub("", location) in families:
        return []
    return difflib.get_close_matches(location, regions.AZURE_REGIONS, n=2, cutoff=0.7)


def check_region(location: str, cluster: ClusterSettings, problems: list[Problem]) -> None:
    """A region name that is not Azure's but close to one is a typo, refused with the fix."""
    if cluster.mode != "aks" or location in regions.AZURE_REGIONS:
        return
    guesses = close_regions(location)
    if guesses:
        problems.append(
            Problem(
                "location",
                f"{location!r} is not an Azure region; did you mean "
                f"{' or '.join(repr(g) for g in guesses)}? (Azure's region "
                "names: az account list-locations -o table)",
            )
        )
