"""`scheduling`: departments, their teams (namespaces, queues, quotas) and the queueing rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from catalog.versions import CHARTS, KAI_RESOURCE_RESERVATION_NAMESPACE, KAI_SCALE_ADJUST_NAMESPACE
from settings.access.teams import ACCESS_KEYS, parse_groups, parse_priorities
from settings.defaults import (
    DEFAULT_ALLOW_OVERCOMMIT,
    DEFAULT_OVER_QUOTA_WEIGHT,
    DEFAULT_PODS_READY_TIMEOUT_MINUTES,
    DEFAULT_QUEUEING_STRATEGY,
    DEFAULT_REQUEUE_LIMIT,
)
from settings.errors import Problem
from settings.model import (
    QUEUEING_STRATEGIES,
    DepartmentSettings,
    PodsReady,
    QueueingStrategy,
    SchedulingSettings,
    TeamSettings,
)
from settings.quotas import check_limits_within_quota, parse_resources
from settings.reader import Section, join

SCHEDULING_KEYS: Final = (
    "departments",
    "allowOvercommit",
    "queueingStrategy",
    "podsReadyTimeoutMinutes",
    "requeueLimit",
)
_DEPARTMENT_KEYS: Final = ("name", "teams")
_TEAM_KEYS: Final = (
    "name",
    "namespace",
    "localQueue",
    "quota",
    "borrowingLimit",
    "lendingLimit",
    "overQuotaWeight",
    "queueingStrategy",
    *ACCESS_KEYS,
)
MAX_OVER_QUOTA_WEIGHT: Final = 1000
# Below 15 minutes a healthy job on a GPU node scaled up from 0 (boot, driver, the Ray image)
# would be evicted before its pods can be ready; above a day the timeout stops protecting quota.
MIN_PODS_READY_TIMEOUT_MINUTES: Final = 15
MAX_PODS_READY_TIMEOUT_MINUTES: Final = 24 * 60
MAX_REQUEUE_LIMIT: Final = 100

# Names that must not be team namespaces: the cluster's own and the operators'.
RESERVED_NAMESPACES: Final = frozenset(
    {
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        *(chart.namespace for chart in CHARTS),
        KAI_RESOURCE_RESERVATION_NAMESPACE,
        KAI_SCALE_ADJUST_NAMESPACE,
    }
)
# Every name below becomes a Kubernetes object name (Namespace, LocalQueue, ClusterQueue, Cohort,
# KAI Queue) and a label value (`aksray.io/team`, `aksray.io/department`): a DNS-1123 label,
# which also fits the 63 characters of a label value.
_DNS_LABEL = re.compile(r"(?=.{1,63}\Z)[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_HINT: Final = (
    "use a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
)


@dataclass
class _Seen:
    """The config path of every name taken so far: names must be unique across the tree."""

    teams: dict[str, str] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)
    departments: dict[str, str] = field(default_factory=dict)
    # Team names as written that were refused (already reported).
    refused_teams: set[str] = field(default_factory=set)


def parse_scheduling(
    raw: Section | None,
    problems: list[Problem],
    flavors: tuple[str, ...],
    *,
    quota_here: bool = True,
) -> SchedulingSettings:
    """`quota_here`: False on a MultiKueue manager, whose teams' quota is computed from the
    workers': a quota or limit typed on a team there is refused at its key."""
    section = raw or Section({}, "scheduling", problems, SCHEDULING_KEYS)
    strategy = section.literal("queueingStrategy", QUEUEING_STRATEGIES, DEFAULT_QUEUEING_STRATEGY)
    seen = _Seen()
    departments: list[DepartmentSettings] = []
    for path, value in section.items("departments"):
        department = section.child(path, value, _DEPARTMENT_KEYS)
        if department is not None:
            departments.append(_department(department, flavors, strategy, seen, quota_here))
    _check_team_names_free_of_departments(section, seen)
    return SchedulingSettings(
        departments=tuple(departments),
        allow_overcommit=section.boolean("allowOvercommit", DEFAULT_ALLOW_OVERCOMMIT),
        queueing_strategy=strategy,
        pods_ready=_pods_ready(section),
        refused_team_names=frozenset(seen.refused_teams),
    )


def _pods_ready(section: Section) -> PodsReady:
    return PodsReady(
        timeout_minutes=section.integer(
            "podsReadyTimeoutMinutes",
            DEFAULT_PODS_READY_TIMEOUT_MINUTES,
            minimum=MIN_PODS_READY_TIMEOUT_MINUTES,
            maximum=MAX_PODS_READY_TIMEOUT_MINUTES,
            what="minutes from admission until a job's pods are ready; a GPU node scaled up "
            "from 0 needs 15 or more",
        ),
        requeue_limit=section.integer(
            "requeueLimit",
            DEFAULT_REQUEUE_LIMIT,
            maximum=MAX_REQUEUE_LIMIT,
            what="requeues after a pod-readiness timeout before Kueue deactivates the job",
        ),
    )


def _department(
    section: Section,
    flavors: tuple[str, ...],
    strategy: QueueingStrategy,
    seen: _Seen,
    quota_here: bool,
) -> DepartmentSettings:
    name_path = join(section.path, "name")
    name = section.string(
        "name",
        required=True,
        pattern=_DNS_LABEL,
        hint=_LABEL_HINT,
    )
    if name in seen.departments:
        section.problem(name_path, f"duplicate department {name!r} (also {seen.departments[name]})")
    elif name:
        seen.departments[name] = name_path
    if not section.has("teams") or section.value["teams"] == []:
        section.problem(
            join(section.path, "teams"), "is required: a department needs one team or more"
        )
    teams: list[TeamSettings] = []
    for path, value in section.items("teams"):
        team_section = section.child(path, value, _TEAM_KEYS)
        if team_section is None:
            continue
        team = parse_team(team_section, name, flavors, strategy, quota_here=quota_here)
        written = team_section.value.get("name")
        if not team.name and isinstance(written, str) and written:
            seen.refused_teams.add(written)
        _check_team_unique(team_section, team, seen)
        teams.append(team)
    return DepartmentSettings(name=name, teams=tuple(teams))


def _check_team_unique(section: Section, team: TeamSettings, seen: _Seen) -> None:
    """Every team has its own name and its own namespace."""
    name_path = join(section.path, "name")
    namespace_path = join(section.path, "namespace") if section.has("namespace") else name_path
    for value, taken, what, path in (
        (team.name, seen.teams, "team", name_path),
        (team.namespace, seen.namespaces, "namespace", namespace_path),
    ):
        if not value:
            continue
        if value in taken:
            section.problem(
                path,
                f"duplicate {what} {value!r} (also {taken[value]}); "
                f"every team needs its own {what}",
            )
            break  # a namespace defaulted from a duplicate name is the same mistake
        taken[value] = path


def _check_team_names_free_of_departments(section: Section, seen: _Seen) -> None:
    """KAI queues are cluster-scoped and share one name space: a department's parent queue and
    a team's leaf queue must not collide."""
    for team_name, path in seen.teams.items():
        if team_name in seen.departments:
            section.problem(
                path,
                f"{team_name!r} is also a department name; KAI queues of both "
                "share one name space, rename one",
            )


def parse_team(
    team: Section,
    department: str,
    flavors: tuple[str, ...],
    strategy: QueueingStrategy,
    *,
    quota_here: bool = True,
) -> TeamSettings:
    name = team.string("name", required=True, pattern=_DNS_LABEL, hint=_LABEL_HINT)
    namespace = team.string("namespace", name, pattern=_DNS_LABEL, hint=_LABEL_HINT)
    local_queue = team.string("localQueue", name, pattern=_DNS_LABEL, hint=_LABEL_HINT)
    _check_no_default_queue(team, name, local_queue)
    _check_namespace_not_reserved(team, namespace)
    settings = TeamSettings(
        name=name,
        department=department,
        namespace=namespace,
        local_queue=local_queue,
        quota=MappingProxyType(
            parse_resources(team, "quota", flavors, allow_unlimited=True) if quota_here else {}
        ),
        borrowing_limit=MappingProxyType(
            parse_resources(team, "borrowingLimit", flavors) if quota_here else {}
        ),
        lending_limit=MappingProxyType(
            parse_resources(team, "lendingLimit", flavors) if quota_here else {}
        ),
        over_quota_weight=team.integer(
            "overQuotaWeight", DEFAULT_OVER_QUOTA_WEIGHT, maximum=MAX_OVER_QUOTA_WEIGHT
        ),
        queueing_strategy=team.literal("queueingStrategy", QUEUEING_STRATEGIES, strategy),
        members=parse_groups(team, "members"),
        viewers=parse_groups(team, "viewers"),
        priorities=parse_priorities(team),
    )
    if quota_here:
        check_limits_within_quota(team, settings)
    else:
        _refuse_manager_quota(team, name)
    return settings


def _refuse_manager_quota(team: Section, name: str) -> None:
    """A MultiKueue manager holds no quota of its own: each quota key typed on a team, once."""
    if team.has("quota"):
        team.problem(
            join(team.path, "quota"),
            "with multikueue a team's quota on the manager is the sum of its quota in the "
            f"workers, computed; set it per worker in multikueue.workers[*].quota.{name} and "
            "remove it here",
        )
    for key in ("borrowingLimit", "lendingLimit"):
        if team.has(key):
            team.problem(
                join(team.path, key),
                "with multikueue the manager holds no quota of its own (a team's quota there is "
                "the sum of its quota in the workers) and a worker's quota takes no borrowing or "
                f"lending limit; remove {key} here",
            )


def _check_no_default_queue(team: Section, name: str, local_queue: str) -> None:
    """A LocalQueue named `default` would capture every unlabelled job in its namespace."""
    if name == "default":
        team.problem(
            join(team.path, "name"),
            "a team must not be named `default`: its LocalQueue would capture every "
            "unlabelled job in its namespace; pick another name",
        )
    elif local_queue == "default":
        team.problem(
            join(team.path, "localQueue"),
            "a LocalQueue named `default` captures every unlabelled job in its "
            "namespace; pick another name",
        )


def _check_namespace_not_reserved(team: Section, namespace: str) -> None:
    if namespace in RESERVED_NAMESPACES:
        team.problem(
            join(team.path, "namespace" if team.has("namespace") else "name"),
            f"namespace {namespace!r} belongs to the cluster or an operator; give the "
            "team its own namespace",
        )
