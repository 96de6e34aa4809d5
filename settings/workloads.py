"""`workloads`: per payload of the catalog, whether it runs, for which team, at which priority."""

from __future__ import annotations

import re
from typing import Final

from catalog.priorities import PRIORITY_CLASSES
from settings.defaults import DEFAULT_LORA_ADAPTER, DEFAULT_RUN, DEFAULT_WORKLOAD_ENABLED
from settings.errors import Problem
from settings.model import SchedulingSettings, StorageSettings, WorkloadSettings
from settings.quotas import MAX_GPUS
from settings.reader import Section, choices_text, join
from workloads.catalog import WORKLOADS
from workloads.spec import WorkloadSpec

WORKLOAD_KEYS: Final = tuple(WORKLOADS)
_RUN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}\Z")


def parse_workloads(
    raw: Section | None,
    problems: list[Problem],
    scheduling: SchedulingSettings,
    storage: StorageSettings,
) -> tuple[WorkloadSettings, ...]:
    section = raw or Section({}, "workloads", problems, WORKLOAD_KEYS)
    teams = {team.name for team in scheduling.teams}
    return tuple(_workload(section, spec, teams, storage) for spec in WORKLOADS.values())


def _workload(
    section: Section, spec: WorkloadSpec, teams: set[str], storage: StorageSettings
) -> WorkloadSettings:
    runs = ("run",) if spec.kind == "RayJob" else ()
    entry = section.mapping(
        spec.name, ("enabled", "team", "priority", *runs, *sorted(spec.options))
    )
    takes_adapter = "loraAdapter" in spec.options
    if entry is None:
        return WorkloadSettings(
            name=spec.name,
            enabled=DEFAULT_WORKLOAD_ENABLED,
            team="",
            priority=spec.default_priority,
            workers=None,
            lora_adapter=takes_adapter and DEFAULT_LORA_ADAPTER,
            run=DEFAULT_RUN,
        )
    enabled = entry.boolean("enabled", DEFAULT_WORKLOAD_ENABLED)
    team = _team(entry, teams, required=enabled)
    priority = _priority(entry, spec)
    workers = _workers(entry, spec)
    lora_adapter = takes_adapter and entry.boolean("loraAdapter", DEFAULT_LORA_ADAPTER)
    if enabled:
        _check_blob_containers(entry, spec, lora_adapter, storage)
    run = _run_label(entry) if runs else DEFAULT_RUN
    return WorkloadSettings(spec.name, enabled, team, priority, workers, lora_adapter, run)


def _team(entry: Section, teams: set[str], *, required: bool) -> str:
    names = sorted(teams)
    team = entry.string(
        "team", required=required, hint=f"name the team that runs it: {choices_text('', names)}"
    )
    if team and team not in teams:
        entry.problem(
            join(entry.path, "team"),
            f"unknown team {team!r}; teams are: {choices_text(team, names)}",
        )
    return team


def _priority(entry: Section, spec: WorkloadSpec) -> str:
    priority = entry.string("priority", spec.default_priority)
    if priority in PRIORITY_CLASSES:
        return priority
    entry.problem(
        join(entry.path, "priority"),
        f"unknown priority {priority!r}; priorities are: {', '.join(PRIORITY_CLASSES)}",
    )
    return spec.default_priority


def _workers(entry: Section, spec: WorkloadSpec) -> int | None:
    if "workers" not in spec.options:
        return None
    default = sum(group.replicas for group in spec.workers)
    return entry.integer("workers", default, minimum=1, maximum=MAX_GPUS)


def _check_blob_containers(
    entry: Section, spec: WorkloadSpec, lora_adapter: bool, storage: StorageSettings
) -> None:
    """An enabled workload that reads or writes Blob needs storage and its containers."""
    containers = spec.containers_for(lora_adapter=lora_adapter)
    if not containers:
        return
    adapter_hint = (
        ", or set loraAdapter: false to serve the base model only"
        if lora_adapter and not spec.containers
        else ""
    )
    path = join(entry.path, "enabled")
    if not storage.enabled:
        entry.problem(
            path,
            f"{spec.name} uses Blob ({', '.join(containers)}) but "
            f"storage.enabled is false; enable storage or disable this workload{adapter_hint}",
        )
        return
    missing = [c for c in containers if c not in storage.containers]
    if missing:
        entry.problem(
            path,
            f"{spec.name} needs the Blob containers {', '.join(missing)}; add "
            f"them to storage.containers{adapter_hint}",
        )


def _run_label(entry: Section) -> str:
    """`run`: a label, as a string or a whole number (`pulumi config set --path ... 1` stores
    the number 1)."""
    value = entry.value.get("run")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        text = str(value)
        if _RUN.match(text):
            return text
    return entry.string(
        "run",
        DEFAULT_RUN,
        pattern=_RUN,
        hint="a run label of 1-20 letters, digits, '.', '_' or '-' starting with a letter or "
        'digit, e.g. 1 or retry-2 (quote a date: "2026-12-01")',
    )
