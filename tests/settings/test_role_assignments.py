"""Every Azure role assignment the stack makes, counted against the subscription's 4,000
(settings/access/role_assignments.py): the count the settings make before anything is created is the
number of assignments the program registers, and an organisation of 1,000 teams fits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import RunResult
from settings.access.role_assignments import role_assignments
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import P, mutated, planned
from tests.support.minimal_stack import run
from tests.support.scripts import load_script

ROLE = "azure-native:authorization:RoleAssignment"


def _counted(result: RunResult) -> int:
    s = result.settings
    return sum(
        role_assignments(s.cluster, s.storage, s.scheduling, s.observability, s.multikueue).values()
    )


def _with_groups(config: dict[str, Any]) -> None:
    """prod's teams with member and viewer groups, one group shared by two teams."""
    shared, own = "6f1c2a9e-0b7d-4c6a-9a5e-2f3d4b5c6d7e", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    research = config[P + "scheduling"]["departments"][0]["teams"]
    research[0]["members"] = [shared]
    research[1]["members"] = [shared]
    research[1]["viewers"] = [own]


@pytest.mark.parametrize("stack", ["dev", "prod", "multiregion", "local"])
def test_the_count_is_what_the_program_registers(stack: str) -> None:
    result = planned(stack)
    assert _counted(result) == len(result.by_type(ROLE))


def test_groups_count_once_each_however_many_teams_name_them(tmp_path: Path) -> None:
    result = run(tmp_path, mutated("prod", _with_groups))
    assert result.ok, result.problems
    s = result.settings
    assert role_assignments(s.cluster, s.storage, s.scheduling, s.observability, s.multikueue) == {
        "deployer's cluster admin": 1,
        "Blob data, one per team": 4,
        "kubeconfig, one per group": 2,
        "Grafana": 2,
        "image cache": 3,
    }
    assert len(result.by_type(ROLE)) == 12
    kubeconfig = [r for r in result.by_type(ROLE) if "-access-kubeconfig-" in r.name]
    assert sorted(r.inputs["principalId"] for r in kubeconfig) == sorted(
        ["6f1c2a9e-0b7d-4c6a-9a5e-2f3d4b5c6d7e", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"]
    )
    assert {r.inputs["principalType"] for r in kubeconfig} == {"Group"}


def _bench_raw(teams: int) -> dict[str, Any]:
    config = load_script("bench_stack").generate_stack(teams)["config"]
    return {key.removeprefix(P): value for key, value in config.items()}


def test_an_organisation_of_a_thousand_teams_fits_one_subscription() -> None:
    """make bench's 1,000-team stack: one Blob assignment and one member group per team."""
    settings = parse_settings(_bench_raw(1000), stack="bench1000")
    counts = role_assignments(
        settings.cluster, settings.storage, settings.scheduling, settings.observability, None
    )
    assert counts == {
        "deployer's cluster admin": 1,
        "Blob data, one per team": 1000,
        "kubeconfig, one per group": 1000,
    }


def test_more_role_assignments_than_azure_allows_are_refused() -> None:
    # 2,000 teams, each with its own member group: 4,001 assignments.
    with pytest.raises(SettingsError) as raised:
        parse_settings(_bench_raw(2000), stack="bench2000")
    problems = [p for p in raised.value.problems if p.path == "scheduling.departments"]
    assert [p.message for p in problems] == [
        "the stack makes 4,001 Azure role assignments (1 deployer's cluster admin, 2,000 Blob "
        "data, one per team, 2,000 kubeconfig, one per group), above Azure's limit of 4,000 per "
        "subscription: use fewer teams or fewer distinct member groups, or set "
        "cluster.createRoleAssignments: false and grant access some other way"
    ]


def test_the_limit_counts_only_what_the_stack_grants() -> None:
    raw = _bench_raw(2000)
    raw["cluster"]["createRoleAssignments"] = False
    problems: list[Any] = []
    try:
        parse_settings(raw, stack="bench2000")
    except SettingsError as exc:
        problems = [p for p in exc.problems if p.path == "scheduling.departments"]
    assert problems == []
