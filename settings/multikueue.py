"""`multikueue`: worker clusters in named regions that a manager cluster dispatches jobs to.

The stack's own `cluster` and `location` become the manager: it holds every team's queues, with
Kueue's MultiKueue admission check, and runs no job. Each worker is an AKS cluster of its own
(pools, operators, team namespaces and queues) with each team's quota in it; the manager's
quota per team is their sum, computed, never typed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from catalog.azure import MAX_STACK_NAME_LENGTH
from settings.catalogues import close_regions
from settings.cluster import CLUSTER_KEYS, parse_cluster
from settings.errors import Problem
from settings.model import (
    ClusterMode,
    ClusterSettings,
    MultiKueueSettings,
    OperatorSettings,
    Resources,
    SchedulingSettings,
    WorkerCluster,
    WorkloadSettings,
)
from settings.multikueue_fleet import (
    check_chart_source,
    check_elastic_regional,
    check_flavors_agree,
    check_manager,
    check_workers_deployable,
)
from settings.quotas import parse_resources
from settings.reader import Section, choices_text, describe, join
from workloads.catalog import WORKLOADS

MULTIKUEUE_KEYS: Final = ("workers", "regional", "tokenRotation")
_WORKER_KEYS: Final = ("name", "location", "cluster", "quota", "apiServer")
# A worker's name joins the stack's in its Azure names (`<stack>-<worker>`, manifests/aks.py)
# and names its MultiKueueCluster: a short DNS label.
_WORKER_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,10}[a-z0-9])?\Z")
_LOCATION = re.compile(r"^[a-z][a-z0-9]*\Z")
_API_SERVER = re.compile(r"^https://[A-Za-z0-9.\-]+(:[0-9]{1,5})?(/[^\s]*)?\Z")
# Joins the token Secret's name (a DNS subdomain): lowercase, at most 20 characters.
_TOKEN_ROTATION = re.compile(r"[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?")
_ROTATION_HINT: Final = (
    "a label of 1-20 lowercase letters, digits or '-', starting and ending with a letter or "
    'digit, e.g. "2026-12"; a new label mints new worker tokens at the next pulumi up'
)


def parse_multikueue(
    section: Section | None,
    problems: list[Problem],
    *,
    stack: str,
    manager: ClusterSettings,
    scheduling: SchedulingSettings,
    workloads: tuple[WorkloadSettings, ...],
    operators: OperatorSettings,
) -> MultiKueueSettings | None:
    """The workers and regional workloads, or None when the stack has no `multikueue`."""
    if section is None:
        return None
    workers = _workers(section, stack, scheduling, manager.mode)
    check_workers_deployable(workers, operators, problems)
    names = tuple(worker.name for worker in workers)
    regional = _regional(section, names, workloads, workers_given=_workers_read(section))
    _check_regional_quota(section, workers, workloads, regional)
    check_manager(section, manager)
    check_chart_source(section, operators)
    check_flavors_agree(section, workers)
    check_elastic_regional(section, workloads, _regional_names(section))
    return MultiKueueSettings(
        workers=workers,
        regional=MappingProxyType(regional),
        token_rotation=_token_rotation(section),
    )


def _token_rotation(section: Section) -> str:
    """`tokenRotation`: a string, or a number as `pulumi config set --path` stores one."""
    value = section.value.get("tokenRotation")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    return section.string("tokenRotation", pattern=_TOKEN_ROTATION, hint=_ROTATION_HINT)


def _workers(
    section: Section, stack: str, scheduling: SchedulingSettings, mode: ClusterMode
) -> tuple[WorkerCluster, ...]:
    """`mode`: the manager's; every worker has it (a fleet is created, or all exist)."""
    entries = list(section.items("workers"))
    if not entries and _unwritten(section, "workers"):
        section.problem(
            join(section.path, "workers"),
            "is required: list at least one worker cluster (name, location, cluster, quota)",
        )
    workers: list[WorkerCluster] = []
    seen: dict[str, str] = {}
    for path, raw in entries:
        entry = section.child(path, raw, _WORKER_KEYS)
        if entry is None:
            continue
        worker = _worker(entry, stack, scheduling, mode)
        if worker.name in seen:
            entry.problem(
                join(path, "name"),
                f"duplicate worker name {worker.name!r} (also {seen[worker.name]})",
            )
        elif worker.name:
            seen[worker.name] = path
        workers.append(worker)
    return tuple(workers)


def _worker(
    entry: Section, stack: str, scheduling: SchedulingSettings, mode: ClusterMode
) -> WorkerCluster:
    longest = MAX_STACK_NAME_LENGTH - len(stack) - 1
    name = entry.string(
        "name",
        required=True,
        pattern=_WORKER_NAME,
        hint="1-12 lowercase letters, digits and '-', starting with a letter, e.g. weu",
    )
    if name and len(name) > longest:
        entry.problem(
            join(entry.path, "name"),
            f"{name!r} is too long for this stack: '<stack>-<worker>' names the worker's Azure "
            f"resources and may have at most {MAX_STACK_NAME_LENGTH} characters; use at most "
            f"{max(longest, 0)} characters",
        )
    location = entry.string(
        "location",
        required=True,
        pattern=_LOCATION,
        hint="the worker's Azure region, such as westeurope or swedencentral",
    )
    guesses = close_regions(location) if location else []
    if guesses:
        entry.problem(
            join(entry.path, "location"),
            f"{location!r} is not an Azure region; did you mean "
            f"{' or '.join(repr(g) for g in guesses)}?",
        )
    raw_cluster = entry.mapping("cluster", CLUSTER_KEYS)
    if raw_cluster is None and _unwritten(entry, "cluster"):
        entry.problem(join(entry.path, "cluster"), "is required: the worker's node pools")
    cluster = parse_cluster(
        raw_cluster or Section({}, join(entry.path, "cluster"), [], ()), entry.problems
    )
    _check_worker_mode(entry, cluster, mode)
    if cluster.render_yaml_to:
        entry.problem(
            join(entry.path, "cluster.renderYamlTo"),
            "a worker cannot be rendered to YAML: the manager reads a token back from each "
            "worker's API server (its kubeconfig for MultiKueue), which a rendered worker "
            "never has; remove renderYamlTo here",
        )
    if cluster.image_cache.enabled:
        entry.problem(
            join(entry.path, "cluster.imageCache.enabled"),
            "is not available in a MultiKueue worker yet: its Ray pods pull the image from "
            "Docker Hub; remove it",
        )
    # Without its pools (reported above) a worker's quota cannot be read against them.
    quota = _worker_quota(entry, cluster, scheduling) if raw_cluster is not None else {}
    return WorkerCluster(
        name=name,
        location=location,
        cluster=cluster,
        quota=MappingProxyType(quota),
        api_server=_api_server(entry, cluster),
    )


def _check_worker_mode(entry: Section, cluster: ClusterSettings, mode: ClusterMode) -> None:
    """A worker has the manager's mode: the stack creates every cluster, or none."""
    if cluster.mode == mode:
        return
    if mode == "aks":
        entry.problem(
            join(entry.path, "cluster.mode"),
            "the manager is an AKS cluster the stack creates, so every worker is one too; "
            "remove mode or set it to aks (a fleet of clusters that already exist sets "
            "mode: existing on the manager's cluster and on every worker's)",
        )
    else:
        entry.problem(
            join(entry.path, "cluster.mode"),
            "the manager is an existing cluster (cluster.mode: existing), so every worker is "
            "one too: set mode: existing, kubeconfigContext and apiServer for this worker",
        )


def _api_server(entry: Section, cluster: ClusterSettings) -> str:
    """`apiServer`: where the manager's Kueue reaches an existing worker (AKS says it for an
    aks worker)."""
    if cluster.mode != "existing":
        if entry.has("apiServer"):
            entry.problem(
                join(entry.path, "apiServer"),
                "is only for a worker with mode: existing; the stack reads an AKS worker's API "
                "server from AKS: remove it",
            )
        return ""
    return entry.string(
        "apiServer",
        required=True,
        pattern=_API_SERVER,
        hint="the https:// address the manager's Kueue reaches this worker's API server at "
        "(the server: of its kubeconfig context), e.g. https://gpu-west.example.com:443",
    )


def _unwritten(section: Section, key: str) -> bool:
    """The key is absent (or empty): a value of the wrong type is reported as that alone."""
    return not section.has(key) or section.value[key] in ([], {})


def _worker_quota(
    entry: Section, cluster: ClusterSettings, scheduling: SchedulingSettings
) -> dict[str, Mapping[str, Resources]]:
    """`quota: {<team>: {<flavor>: {gpu, cpu, memory}}}` against the worker's own pools."""
    per_team = entry.mapping("quota", None)
    if per_team is None:
        return {}
    teams = tuple(team.name for team in scheduling.teams)
    quota: dict[str, Mapping[str, Resources]] = {}
    for team, amounts in per_team.value.items():
        path = join(per_team.path, str(team))
        if team not in teams and team not in scheduling.refused_team_names:
            entry.problem(
                path,
                f"no team {team!r} in scheduling.departments; teams are "
                f"{choices_text(str(team), teams)}",
            )
            continue
        holder = Section({str(team): amounts}, per_team.path, entry.problems, (str(team),))
        # `unlimited`: the worker's whole pool at its maximum size (scheduling/queues.py).
        quota[str(team)] = MappingProxyType(
            parse_resources(holder, str(team), cluster.flavors, allow_unlimited=True)
        )
    return quota


def _workers_read(section: Section) -> bool:
    """`workers` is a list of maps (its entries may still be wrong): worker names can be
    checked against it. Otherwise only the list is reported, not every name that refers to it."""
    value = section.value.get("workers")
    return isinstance(value, list) and all(isinstance(entry, Mapping) for entry in value)


def _workers_without_pools(section: Section) -> set[str]:
    """Workers whose `cluster` is given but is no map (reported at it)."""
    value = section.value.get("workers")
    entries = value if isinstance(value, list) else []
    return {
        str(entry.get("name"))
        for entry in entries
        if isinstance(entry, Mapping)
        and entry.get("cluster") is not None
        and not isinstance(entry["cluster"], Mapping)
    }


def _regional_names(section: Section) -> frozenset[str]:
    """The workloads `regional` names, whatever it names them to (a wrong worker is reported
    at that entry, not again as a missing one); every workload when `regional` is no map."""
    value = section.value.get("regional")
    if value is None:
        return frozenset()
    if not isinstance(value, Mapping):
        return frozenset(WORKLOADS)
    return frozenset(str(name) for name in value)


def _regional(
    section: Section,
    workers: tuple[str, ...],
    workloads: tuple[WorkloadSettings, ...],
    *,
    workers_given: bool,
) -> dict[str, str]:
    regional = section.mapping("regional", None)
    if regional is None:
        return {}
    known = tuple(w.name for w in workloads)
    result: dict[str, str] = {}
    for workload, worker in regional.value.items():
        path = join(regional.path, str(workload))
        if workload not in known:
            section.problem(
                path,
                f"no workload {workload!r}; workloads are {choices_text(str(workload), known)}",
            )
        elif not workers_given:
            continue  # `workers` itself is reported
        elif not isinstance(worker, str) or worker not in workers:
            section.problem(
                path,
                f"must name a worker of multikueue.workers, got {describe(worker)}; workers are "
                f"{choices_text(str(worker), workers)}",
            )
        else:
            result[str(workload)] = worker
    return result


def _check_regional_quota(
    section: Section,
    workers: tuple[WorkerCluster, ...],
    workloads: tuple[WorkloadSettings, ...],
    regional: Mapping[str, str],
) -> None:
    """A workload pinned to a worker runs in its team's queue there: the team needs quota."""
    quota = {worker.name: worker.quota for worker in workers}
    unread = _workers_without_pools(section)
    for workload in workloads:
        worker = regional.get(workload.name)
        if worker in unread:
            continue  # its `cluster` is reported; its quota could not be read against it
        if worker is not None and not quota.get(worker, {}).get(workload.team):
            section.problem(
                join(section.path, f"regional.{workload.name}"),
                f"team {workload.team} has no quota in worker {worker}, so {workload.name} "
                f"could never run there; give it quota in that worker's quota.{workload.team} "
                "or name a worker it has quota in",
            )
