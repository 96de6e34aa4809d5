"""Who may use a team's namespace, and at which priorities: `members`, `viewers` and
`priorities` of a team.

- `members`: the groups whose users submit the team's work (create, watch and delete RayJobs
  and RayServices, read their Kueue Workloads, pods, logs and events) in the team's namespace
  only. On an `aks` cluster each is an Entra ID group's object id; on an `existing` cluster a
  group name its authenticator gives users.
- `viewers`: groups that only read the same objects.
- `priorities`: the priority classes the team's Ray objects may name (the admission policies
  refuse any other, manifests/access/admission.py). Left out: the priorities of the stack's
  workloads aimed at the team, enabled or not (so enabling one changes nothing), or `train`,
  the lowest, for a team the stack runs nothing for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from catalog.priorities import PRIORITY_CLASSES
from settings.errors import Problem, shown
from settings.model import ClusterMode, SchedulingSettings, TeamSettings, WorkloadSettings
from settings.reader import Section, describe, join, string_problem

ACCESS_KEYS: Final = ("members", "viewers", "priorities")
# The priority a team without workloads of the stack may use: the lowest, which outranks no
# other team's work.
LOWEST_PRIORITY: Final = min(PRIORITY_CLASSES, key=PRIORITY_CLASSES.__getitem__)
# An Entra ID object id (a GUID), what a Kubernetes RoleBinding and an Azure role assignment name
# a group by on an AKS cluster with Entra ID.
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z")
# Kubernetes' own groups (system:authenticated holds every signed-in user).
_SYSTEM_PREFIX: Final = "system:"
# Groups a team names, each (members and viewers together).
MAX_GROUPS_PER_TEAM: Final = 20


def parse_groups(team: Section, key: str) -> tuple[str, ...]:
    """A team's `members` or `viewers`: distinct group names, none of Kubernetes' own."""
    groups: list[str] = []
    for path, value in team.items(key):
        if not isinstance(value, str):
            team.problem(path, f"must be a group's object id (a string), got {describe(value)}")
            continue
        wrong = string_problem(value)
        if wrong is None and value.startswith(_SYSTEM_PREFIX):
            wrong = (
                f"{describe(value)} is a Kubernetes group of its own (system:authenticated "
                "holds every signed-in user); name the team's own group"
            )
        if wrong is None and value in groups:
            wrong = f"duplicate group {describe(value)}"
        if wrong is not None:
            team.problem(path, wrong)
        else:
            groups.append(value)
    return tuple(groups)


def parse_priorities(team: Section) -> tuple[str, ...] | None:
    """A team's `priorities`, or None when left out (the default follows its workloads)."""
    if not team.has("priorities"):
        return None
    if team.value["priorities"] == []:
        team.problem(
            join(team.path, "priorities"),
            "is empty: the team could submit nothing; name one or more priorities, or remove "
            "the key for those of its workloads",
        )
        return None
    chosen: list[str] = []
    for path, value in team.items("priorities"):
        if value not in PRIORITY_CLASSES:
            team.problem(
                path,
                f"unknown priority {describe(value)}; priorities are: "
                f"{', '.join(PRIORITY_CLASSES)}",
            )
        elif value in chosen:
            team.problem(path, f"duplicate priority {value!r}")
        else:
            chosen.append(str(value))
    return tuple(chosen) or None


def allowed_priorities(
    team: TeamSettings, workloads: Iterable[WorkloadSettings]
) -> tuple[str, ...]:
    """The priority classes a team's Ray objects may name, lowest first."""
    wanted = set(team.priorities or ())
    if team.priorities is None:
        wanted = {w.priority for w in workloads if w.team == team.name} or {LOWEST_PRIORITY}
    return tuple(sorted(wanted, key=PRIORITY_CLASSES.__getitem__))


def check_team_access(
    mode: ClusterMode,
    scheduling: SchedulingSettings,
    workloads: tuple[WorkloadSettings, ...],
    problems: list[Problem],
) -> None:
    """Groups an `aks` cluster can bind (Entra ID object ids), not too many per team; and every
    enabled workload at a priority its team may use (or the admission policies would refuse
    the stack's own workload)."""
    for team in scheduling.teams:
        path = scheduling.team_path(team.name)
        for key, groups in (("members", team.members), ("viewers", team.viewers)):
            for group in groups if mode == "aks" else ():
                if not _OBJECT_ID.fullmatch(group):
                    index = groups.index(group)
                    problems.append(
                        Problem(
                            f"{path}.{key}[{index}]",
                            f"{shown(group)!r} is not an Entra ID object id: on an aks "
                            "cluster name each group by its object id (az ad group show "
                            "--group <name> --query id)",
                        )
                    )
        both = set(team.members) & set(team.viewers)
        if both:
            problems.append(
                Problem(
                    f"{path}.viewers",
                    f"{', '.join(sorted(both))} also in members: a member may do all a viewer "
                    "may; name each group once",
                )
            )
        if len(team.members) + len(team.viewers) > MAX_GROUPS_PER_TEAM:
            problems.append(
                Problem(
                    path,
                    f"names {len(team.members) + len(team.viewers)} groups; at most "
                    f"{MAX_GROUPS_PER_TEAM} per team (members and viewers): nest users in "
                    "fewer groups",
                )
            )
        _check_workload_priorities(scheduling, team, workloads, problems)


def _check_workload_priorities(
    scheduling: SchedulingSettings,
    team: TeamSettings,
    workloads: tuple[WorkloadSettings, ...],
    problems: list[Problem],
) -> None:
    if team.priorities is None:
        return
    for workload in workloads:
        if (
            workload.enabled
            and workload.team == team.name
            and workload.priority not in team.priorities
        ):
            problems.append(
                Problem(
                    f"workloads.{workload.name}.priority",
                    f"{workload.priority!r} is not among the priorities team {team.name} "
                    f"may use ({', '.join(team.priorities)}): the admission policies "
                    f"would refuse it; add it to {scheduling.team_path(team.name)}"
                    ".priorities or pick one of those",
                )
            )
