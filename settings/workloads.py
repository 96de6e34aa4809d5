"""`workloads`: per payload of the catalog, whether it runs, for which team, at which priority,
where its base model comes from and between how many GPU workers it may scale."""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from catalog.priorities import PRIORITY_CLASSES
from catalog.quantities import GPU_RESOURCE, RESOURCE_KINDS, QuantityError
from settings.defaults import (
    DEFAULT_LORA_ADAPTER,
    DEFAULT_MIN_WORKERS,
    DEFAULT_MODEL_REVISION,
    DEFAULT_MODEL_SOURCE_WITH_STORAGE,
    DEFAULT_MODEL_SOURCE_WITHOUT_STORAGE,
    DEFAULT_RUN,
    DEFAULT_WORKLOAD_ENABLED,
)
from settings.errors import Problem
from settings.model import (
    MODEL_SOURCES,
    ModelSource,
    SchedulingSettings,
    StorageSettings,
    WorkloadSettings,
)
from settings.reader import Section, choices_text, describe, join
from workloads.catalog import WORKLOADS
from workloads.spec import WorkloadSpec

WORKLOAD_KEYS: Final = tuple(WORKLOADS)
# No worker count may ask for more GPUs than any quota can hold (a typo, not a plan).
MAX_GPUS: Final = RESOURCE_KINDS[GPU_RESOURCE].maximum
_RUN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}\Z")
# A model repository's branch, tag or commit: one Blob path segment.
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
# The (minimum, maximum) keys of an elastic payload: Serve replicas or batch GPU workers.
SCALE_KEYS: Final = (("minReplicas", "maxReplicas"), ("minWorkers", "maxWorkers"))
STAGING_WORKLOAD: Final = "model-stage"
# What each GPU worker asks per GPU, above its payload's minimum (workloads with GPU workers).
PER_GPU_KEYS: Final = ("cpuPerGpu", "memoryPerGpu")


def parse_workloads(
    raw: Section | None,
    problems: list[Problem],
    scheduling: SchedulingSettings,
    storage: StorageSettings,
) -> tuple[WorkloadSettings, ...]:
    section = raw or Section({}, "workloads", problems, WORKLOAD_KEYS)
    teams = {team.name for team in scheduling.teams if team.name}
    parsed = tuple(
        _workload(section, spec, teams, scheduling.refused_team_names, storage)
        for spec in WORKLOADS.values()
    )
    # One revision for the copy model-stage writes and every workload that streams it.
    revision = next(w.model_revision for w in parsed if w.name == STAGING_WORKLOAD)
    return tuple(dataclasses.replace(w, model_revision=revision) for w in parsed)


def _workload(
    section: Section,
    spec: WorkloadSpec,
    teams: set[str],
    refused: frozenset[str],
    storage: StorageSettings,
) -> WorkloadSettings:
    runs = ("run",) if spec.kind == "RayJob" else ()
    per_gpu = PER_GPU_KEYS if spec.gpu_group is not None else ()
    entry = section.mapping(
        spec.name, ("enabled", "team", "priority", *runs, *sorted(spec.options), *per_gpu)
    )
    takes_adapter = "loraAdapter" in spec.options
    default_source = _default_model_source(spec, storage)
    scale = _scale_keys(spec)
    fixed = (DEFAULT_MIN_WORKERS, DEFAULT_MIN_WORKERS) if scale else (None, None)
    if entry is None:
        return WorkloadSettings(
            name=spec.name,
            enabled=DEFAULT_WORKLOAD_ENABLED,
            team="",
            priority=spec.default_priority,
            workers=None,
            lora_adapter=takes_adapter and DEFAULT_LORA_ADAPTER,
            run=DEFAULT_RUN,
            model_source=default_source,
            min_workers=fixed[0],
            max_workers=fixed[1],
        )
    enabled = entry.boolean("enabled", DEFAULT_WORKLOAD_ENABLED)
    team = _team(entry, teams, refused, required=enabled)
    priority = _priority(entry, spec)
    workers = _workers(entry, spec)
    lora_adapter = takes_adapter and entry.boolean("loraAdapter", DEFAULT_LORA_ADAPTER)
    model_source = (
        entry.literal("modelSource", MODEL_SOURCES, default_source)
        if "modelSource" in spec.options
        else default_source
    )
    if enabled:
        _check_blob_containers(entry, spec, lora_adapter, model_source == "blob", storage)
    run = _run_label(entry) if runs else DEFAULT_RUN
    low, high = _scale(entry, scale) if scale else fixed
    cpu, memory = _per_gpu(entry, spec) if per_gpu else (None, None)
    return WorkloadSettings(
        spec.name, enabled, team, priority, workers, lora_adapter, run,
        model_source=model_source,
        model_revision=_revision(entry) if "revision" in spec.options else DEFAULT_MODEL_REVISION,
        min_workers=low,
        max_workers=high,
        cpu_per_gpu=cpu,
        memory_per_gpu=memory,
    )  # fmt: skip


def _per_gpu(entry: Section, spec: WorkloadSpec) -> tuple[int | None, int | None]:
    """`cpuPerGpu` and `memoryPerGpu`: never below what the payload needs per GPU."""
    group = spec.gpu_group
    assert group is not None
    found: list[int | None] = []
    for key, resource, minimum in (
        ("cpuPerGpu", "cpu", group.pod.cpu),
        ("memoryPerGpu", "memory", group.pod.memory),
    ):
        if not entry.has(key):
            found.append(None)
            continue
        kind = RESOURCE_KINDS[resource]
        path = join(entry.path, key)
        try:
            asked = kind.parse(entry.value[key])
        except QuantityError as exc:
            entry.problem(path, f"{exc}")
            found.append(None)
            continue
        least = kind.parse(minimum)
        if asked < least:
            entry.problem(
                path,
                f"is {kind.format(asked)}, below what {spec.name} needs per GPU ({minimum}: "
                f"{group.minimum_why}); leave it out for {minimum}, or ask for more",
            )
            found.append(None)
            continue
        found.append(asked)
    return found[0], found[1]


def _default_model_source(spec: WorkloadSpec, storage: StorageSettings) -> ModelSource:
    if "modelSource" in spec.options and storage.enabled:
        return DEFAULT_MODEL_SOURCE_WITH_STORAGE
    return DEFAULT_MODEL_SOURCE_WITHOUT_STORAGE


def _scale_keys(spec: WorkloadSpec) -> tuple[str, str] | None:
    return next((keys for keys in SCALE_KEYS if keys[0] in spec.options), None)


def _scale(entry: Section, keys: tuple[str, str]) -> tuple[int, int]:
    """(minimum, maximum) GPU workers: the maximum defaults to the minimum, never below it."""
    low_key, high_key = keys
    low = entry.integer(low_key, DEFAULT_MIN_WORKERS, minimum=1, maximum=MAX_GPUS)
    high = entry.integer(high_key, low, minimum=1, maximum=MAX_GPUS)
    if high < low:
        entry.problem(
            join(entry.path, high_key),
            f"is {high}, below {low_key} ({low}): set it to {low} or more "
            f"(equal to {low_key} for a fixed size)",
        )
        return low, low
    return low, high


def _revision(entry: Section) -> str:
    return entry.string(
        "revision",
        DEFAULT_MODEL_REVISION,
        pattern=_REVISION,
        hint="a branch, tag or commit of the model repository (letters, digits, '.', '_', '-'), "
        "e.g. main or a 40-character commit hash",
    )


def _team(entry: Section, teams: set[str], refused: frozenset[str], *, required: bool) -> str:
    """The workload's team; a name the scheduling tree refused is reported there only."""
    written = entry.value.get("team")
    if isinstance(written, str) and written in refused:
        return written
    names = sorted(teams)
    team = entry.string(
        "team", required=required, hint=f"name the team that runs it: {choices_text('', names)}"
    )
    if team and team not in teams and team not in refused:
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
    entry: Section,
    spec: WorkloadSpec,
    lora_adapter: bool,
    blob_model: bool,
    storage: StorageSettings,
) -> None:
    """An enabled workload that reads or writes Blob needs storage and its shared containers
    (its team's own container always exists with storage)."""
    if not spec.uses_blob(lora_adapter=lora_adapter, blob_model=blob_model):
        return
    containers = spec.containers_for(blob_model=blob_model)
    hints = []
    # Without these two options it would need no Blob at all: say how to turn them off.
    always = bool(spec.containers or spec.writes_shared or spec.team_container_option)
    if lora_adapter and not always:
        hints.append("set loraAdapter: false to serve the base model only")
    if blob_model and not always:
        hints.append("set modelSource: huggingface")
    adapter_hint = f", or {' and '.join(hints)}" if hints else ""
    path = join(entry.path, "enabled")
    if not storage.enabled:
        entry.problem(
            path,
            f"{spec.name} uses Blob ({_blob_uses(spec, lora_adapter, containers)}) but "
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


def _blob_uses(spec: WorkloadSpec, lora_adapter: bool, shared: tuple[str, ...]) -> str:
    uses = list(shared)
    if spec.team_container_option:
        uses.append("its team's container")
    if spec.reads_adapter and lora_adapter:
        uses.append("the LoRA adapter")
    return ", ".join(uses)


_RUN_HINT: Final = (
    "a run label of 1-20 letters, digits, '.', '_' or '-' starting with a letter or digit, "
    'e.g. 1 or retry-2 (quote a date: "2026-12-01")'
)


def _run_label(entry: Section) -> str:
    """`run`: a label, as a string or a number (`pulumi config set --path ... 1` stores the
    number 1; `run: 2.5` is the number 2.5), which is the label as Python writes it."""
    value = entry.value.get("run")
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = str(value)
        if _RUN.match(text):
            return text
        entry.problem(join(entry.path, "run"), f"{describe(value)} is not valid: {_RUN_HINT}")
        return DEFAULT_RUN
    return entry.string("run", DEFAULT_RUN, pattern=_RUN, hint=_RUN_HINT)
