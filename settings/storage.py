"""`storage`: whether the stack has Blob storage, its shared containers, and whether it is
protected; and the teams' own containers, which follow from the team names."""

from __future__ import annotations

from typing import Final

from catalog.azure import BLOB_CONTAINER_NAME_PATTERN, STORAGE_ACCOUNT_NAME_PATTERN
from settings.access.blob import blob_access
from settings.access.blob_condition import MAX_CONDITION_LENGTH, blob_condition
from settings.defaults import DEFAULT_CONTAINERS, DEFAULT_STORAGE_ENABLED, DEFAULT_STORAGE_PROTECT
from settings.errors import Problem
from settings.model import SchedulingSettings, StorageSettings, WorkloadSettings
from settings.reader import Section, describe, join, string_problem
from workloads.common.layout import TEAM_CONTAINER_SUFFIX, team_container

STORAGE_KEYS: Final = ("enabled", "containers", "protect", "existingAccount")


def parse_storage(raw: Section | None, problems: list[Problem]) -> StorageSettings:
    section = raw or Section({}, "storage", problems, STORAGE_KEYS)
    containers = _containers(section)
    return StorageSettings(
        enabled=section.boolean("enabled", DEFAULT_STORAGE_ENABLED),
        containers=containers,
        protect=section.boolean("protect", DEFAULT_STORAGE_PROTECT),
        existing_account=section.string(
            "existingAccount",
            pattern=STORAGE_ACCOUNT_NAME_PATTERN,
            hint="an existing storage account's name: 3-24 lowercase letters and digits",
        ),
    )


def _containers(section: Section) -> tuple[str, ...]:
    if not (section.has("containers") and isinstance(section.value["containers"], list)):
        # Not given, or not a list (reported by `items`): the defaults, so the workloads that
        # need them are not reported a second time.
        list(section.items("containers"))
        return DEFAULT_CONTAINERS
    containers: list[str] = []
    for path, name in section.items("containers"):
        wrong = string_problem(name) if isinstance(name, str) else None
        if wrong is not None:
            section.problem(path, wrong)
        elif not isinstance(name, str) or not BLOB_CONTAINER_NAME_PATTERN.fullmatch(name):
            section.problem(
                path,
                f"{describe(name)} is not a Blob container name: 3-63 "
                "lowercase letters, digits and single hyphens",
            )
        elif name in containers:
            section.problem(path, f"duplicate container {name!r}")
        else:
            containers.append(name)
    return tuple(containers)


def check_team_containers(
    storage: StorageSettings,
    scheduling: SchedulingSettings,
    workloads: tuple[WorkloadSettings, ...],
    *,
    grants_created: bool,
    problems: list[Problem],
) -> None:
    """Each team's own container (`<team>-data`) must be a valid Blob container name that no
    shared container takes, and the condition of each team's Blob role assignment (which names
    its containers) must fit Azure's limit on a condition's length.

    `grants_created`: the stack writes the teams' role assignments itself."""
    if not storage.enabled:
        return
    shared = set(storage.containers)
    for team in scheduling.teams:
        if not team.name:
            continue  # a missing or refused name is reported at the name itself
        container = team_container(team.name)
        path = join(scheduling.team_path(team.name), "name")
        if not BLOB_CONTAINER_NAME_PATTERN.fullmatch(container):
            problems.append(
                Problem(
                    path,
                    f"team {team.name!r} would get the Blob container {container!r}, which Azure "
                    f"refuses (3-63 lowercase letters, digits and single hyphens): name the team "
                    f"with at most {63 - len(TEAM_CONTAINER_SUFFIX)} characters and no '--'",
                )
            )
        elif container in shared:
            index = storage.containers.index(container)
            problems.append(
                Problem(
                    f"storage.containers[{index}]",
                    f"{container!r} is team {team.name}'s own container (every team gets "
                    f"<team>{TEAM_CONTAINER_SUFFIX}); name the shared container differently",
                )
            )
    if not grants_created:
        return
    teams = [team.name for team in scheduling.teams]
    for access in blob_access(teams, storage.containers, workloads):
        length = len(blob_condition(access))
        if length > MAX_CONDITION_LENGTH:
            problems.append(
                Problem(
                    "storage.containers",
                    f"team {access.team}'s Blob role assignment would need a condition of "
                    f"{length:,} characters naming its containers, above Azure's "
                    f"{MAX_CONDITION_LENGTH:,}: use fewer or shorter shared containers",
                )
            )
            return
