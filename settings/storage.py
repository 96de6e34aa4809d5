"""`storage`: whether the stack has Blob storage, its containers, and whether it is protected."""

from __future__ import annotations

from typing import Final

from catalog.azure import BLOB_CONTAINER_NAME_PATTERN, STORAGE_ACCOUNT_NAME_PATTERN
from settings.defaults import DEFAULT_CONTAINERS, DEFAULT_STORAGE_ENABLED, DEFAULT_STORAGE_PROTECT
from settings.errors import Problem
from settings.model import StorageSettings
from settings.reader import Section, describe, string_problem

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
