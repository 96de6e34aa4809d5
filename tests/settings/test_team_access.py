"""A team's people and priorities: `members`, `viewers`, `priorities` (settings/access/teams.py)."""

from __future__ import annotations

from typing import Any

import pytest

from settings.access.teams import allowed_priorities
from settings.errors import SettingsError
from settings.parse import parse_settings

GROUP_A = "6f1c2a9e-0b7d-4c6a-9a5e-2f3d4b5c6d7e"
GROUP_B = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
T = "scheduling.departments[0].teams[0]"


def _raw(team: dict[str, Any], mode: str = "aks", **workloads: Any) -> dict[str, Any]:
    cluster: dict[str, Any] = {"mode": mode}
    if mode == "existing":
        cluster["kubeconfigContext"] = "kind-dev"
    return {
        "cluster": cluster,
        "storage": {"enabled": False} if mode == "existing" else {},
        "operators": {"install": False} if mode == "existing" else {},
        "scheduling": {
            "departments": [
                {
                    "name": "research",
                    "teams": [
                        {"name": "team-a", "quota": {"cpu": {"cpu": 1, "memory": "1Gi"}}, **team},
                        {"name": "team-b", "quota": {"cpu": {"cpu": 1, "memory": "1Gi"}}},
                    ],
                }
            ]
        },
        "workloads": workloads,
    }


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        parse_settings(raw, stack="dev")
    except SettingsError as error:
        return [str(p) for p in error.problems]
    return []


def test_groups_and_priorities_are_read() -> None:
    settings = parse_settings(
        _raw({"members": [GROUP_A], "viewers": [GROUP_B], "priorities": ["train", "build"]}),
        stack="dev",
    )
    team = settings.scheduling.team("team-a")
    assert (team.members, team.viewers, team.priorities) == (
        (GROUP_A,),
        (GROUP_B,),
        ("train", "build"),
    )
    other = settings.scheduling.team("team-b")
    assert (other.members, other.viewers, other.priorities) == ((), (), None)


@pytest.mark.parametrize(
    ("team", "expected"),
    [
        (
            {"members": ["team-a-devs"]},
            f"{T}.members[0]: 'team-a-devs' is not an Entra ID object id",
        ),
        ({"viewers": [42]}, f"{T}.viewers[0]: must be a group's object id (a string), got 42"),
        (
            {"members": ["system:authenticated"]},
            f"{T}.members[0]: 'system:authenticated' is a Kubernetes group of its own",
        ),
        ({"members": [GROUP_A, GROUP_A]}, f"{T}.members[1]: duplicate group '{GROUP_A}'"),
        (
            {"members": [GROUP_A], "viewers": [GROUP_A]},
            f"{T}.viewers: {GROUP_A} also in members: a member may do all a viewer may",
        ),
        ({"priorities": []}, f"{T}.priorities: is empty: the team could submit nothing"),
        (
            {"priorities": ["urgent"]},
            f"{T}.priorities[0]: unknown priority 'urgent'; priorities are: train, "
            "build-preemptible, build, inference",
        ),
        ({"priorities": ["train", "train"]}, f"{T}.priorities[1]: duplicate priority 'train'"),
        ({"members": "x"}, f"{T}.members: must be a list, got 'x'"),
    ],
)
def test_a_wrong_value_is_one_line_at_its_path(team: dict[str, Any], expected: str) -> None:
    problems = _problems(_raw(team))
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected), problems


def test_too_many_groups_for_one_team() -> None:
    groups = [f"{i:08x}-0000-4000-8000-000000000000" for i in range(21)]
    assert _problems(_raw({"members": groups})) == [
        f"{T}: names 21 groups; at most 20 per team (members and viewers): nest users in fewer "
        "groups"
    ]


def test_an_existing_cluster_names_its_authenticators_groups() -> None:
    settings = parse_settings(_raw({"members": ["team-a-devs"]}, mode="existing"), stack="local")
    assert settings.scheduling.team("team-a").members == ("team-a-devs",)


def test_a_workload_at_a_priority_its_team_may_not_use_is_refused() -> None:
    raw = _raw(
        {"priorities": ["train"]},
        mode="existing",
        **{"llm-serve": {"enabled": True, "team": "team-a", "loraAdapter": False}},
    )
    problems = _problems(raw)
    assert (
        "workloads.llm-serve.priority: 'inference' is not among the priorities team team-a may "
        f"use (train): the admission policies would refuse it; add it to {T}.priorities or pick "
        "one of those"
    ) in problems


def test_priorities_default_to_the_teams_workloads_enabled_or_not() -> None:
    raw = _raw(
        {},
        mode="existing",
        **{
            "llm-serve": {"enabled": False, "team": "team-a"},
            "qwen-lora": {"enabled": False, "team": "team-a"},
        },
    )
    settings = parse_settings(raw, stack="local")
    team_a, team_b = settings.scheduling.teams
    # Lowest first; a team the stack runs nothing for may use the lowest, train.
    assert allowed_priorities(team_a, settings.workloads) == ("train", "inference")
    assert allowed_priorities(team_b, settings.workloads) == ("train",)
