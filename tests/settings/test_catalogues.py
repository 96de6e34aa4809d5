"""The Kubernetes version and the region against the tables of what Azure offers: what they
prove wrong is an error at its config path, what they cannot know yet a warning."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aksray.plan.checks import catalogues
from aksray.plan.checks.catalogues import check_catalogue_staleness
from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import plan
from catalog import aks_releases, regions
from settings.catalogues import close_regions
from tests.support.harness import P, assert_rejected, mutated, planned
from tests.support.minimal_stack import config, minimal, run

Config = dict[str, Any]


def _set(key: str, value: Any, *inner: str) -> Callable[[Config], None]:
    def mutate(node: Config) -> None:
        if inner:
            node = node.setdefault(P + key, {})
            node[inner[0]] = value
        else:
            node[P + key] = value

    return mutate


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("1.33", "AKS ended support for Kubernetes 1.33 in Jul 2026"),
        ("1.29", "AKS ended support for Kubernetes 1.29 in Mar 2025"),
        ("1.20", "'1.20' is older than any AKS offers"),
    ],
)
def test_a_retired_kubernetes_minor_is_refused(tmp_path: Path, version: str, words: str) -> None:
    document = mutated("dev", _set("cluster", version, "kubernetesVersion"))
    run_ = assert_rejected(tmp_path, document, "cluster.kubernetesVersion")
    line = next(x for x in run_.error_lines if x.startswith("error: cluster.kubernetesVersion: "))
    assert words in line
    assert line.endswith('use one AKS offers, e.g. "1.34", "1.35", "1.36"')


def test_a_trailing_newline_in_the_version_is_refused(tmp_path: Path) -> None:
    document = mutated("dev", _set("cluster", "1.35\n", "kubernetesVersion"))
    assert_rejected(tmp_path, document, "cluster.kubernetesVersion")


@pytest.mark.parametrize(
    ("location", "guess"),
    [("useast2", "'eastus2'"), ("westeurop", "'westeurope'"), ("norwayest", "'norwaywest' or")],
)
def test_a_region_typo_is_refused_with_the_likely_region(
    tmp_path: Path, location: str, guess: str
) -> None:
    run_ = assert_rejected(tmp_path, mutated("dev", _set("location", location)), "location")
    line = next(x for x in run_.error_lines if x.startswith("error: location: "))
    assert f"{location!r} is not an Azure region; did you mean {guess}" in line


def test_region_names_with_another_number_may_be_new_regions() -> None:
    assert close_regions("eastus3") == [] and close_regions("westus4") == []
    assert close_regions("mars") == []
    assert close_regions("useast2") == ["eastus2"]


def _findings(tmp_path: Path, document: Config) -> Findings:
    out = Findings()
    check_catalogue_staleness(plan(run(tmp_path, document)), out)
    return out


def test_the_project_stacks_name_what_the_tables_know() -> None:
    out = Findings()
    check_catalogue_staleness(plan(planned("prod")), out)
    assert (out.errors, out.warnings) == ([], [])


def test_a_newer_minor_or_region_than_the_tables_is_a_warning(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["kubernetesVersion"] = "1.38"
    config(document)[P + "location"] = "eastus3"
    out = _findings(tmp_path, document)
    assert out.errors == []
    assert [w.path for w in out.warnings] == ["cluster.kubernetesVersion", "location"]
    assert "Kubernetes 1.38 is newer than the AKS release calendar this version knows" in str(
        out.warnings[0]
    )
    assert f"(as of {regions.AS_OF})" in str(out.warnings[1])


def test_end_of_life_after_the_calendar_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = minimal()
    config(document)[P + "cluster"]["kubernetesVersion"] = "1.34"  # supported when read
    monkeypatch.setattr(catalogues, "today", lambda: datetime.date(2026, 11, 30))
    assert _findings(tmp_path, document).warnings == []
    monkeypatch.setattr(catalogues, "today", lambda: datetime.date(2026, 12, 1))
    (warning,) = _findings(tmp_path, document).warnings
    assert warning.path == "cluster.kubernetesVersion"
    assert "AKS support for Kubernetes 1.34 ended in Nov 2026" in warning.message


def test_a_preview_minor_is_a_warning_until_its_ga(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = minimal()
    config(document)[P + "cluster"]["kubernetesVersion"] = "1.37"  # GA Oct 2026, read in Aug
    monkeypatch.setattr(catalogues, "today", lambda: datetime.date(2026, 9, 15))
    (warning,) = _findings(tmp_path, document).warnings
    assert "in preview on AKS until Oct 2026" in warning.message
    monkeypatch.setattr(catalogues, "today", lambda: datetime.date(2026, 10, 2))
    assert _findings(tmp_path, document).warnings == []


def test_the_calendar_is_ordered_and_dated() -> None:
    minors = [aks_releases.minor_number(m.version) for m in aks_releases.AKS_MINORS]
    assert minors == sorted(minors) and len(set(minors)) == len(minors)
    assert all(m.ga < m.end_of_life for m in aks_releases.AKS_MINORS)
    assert datetime.date.today() >= aks_releases.AS_OF
    assert aks_releases.SOURCE.startswith("https://learn.microsoft.com/")
    assert len(set(regions.AZURE_REGIONS)) == len(regions.AZURE_REGIONS)


def test_an_existing_cluster_is_not_held_to_the_aks_calendar(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"].update(
        {"mode": "existing", "kubeconfigContext": "kind-x", "kubernetesVersion": "1.29"}
    )
    config(document)[P + "storage"] = {"enabled": False}
    assert _findings(tmp_path, document).warnings == []
