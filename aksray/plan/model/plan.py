"""What the planner derives from a run, once, for the summary and the checks alike.

- `Registered`: the scheduling objects the program registered (ClusterQueues, ResourceFlavors,
  KAI queues, Kueue WorkloadPriorityClasses) and what the Kueue and KAI releases enable, read
  from the recorded resources: the checks judge the objects `pulumi up` would create, not a
  second computation of them.
- `WorkloadPlan`: per enabled workload its pod sets (manifests/ray.py), the flavor Kueue gives
  each on an empty cluster, every flavor it may get, and how many such pods one node of each
  flavor's pool holds (scheduling/nodes.py node allocatable). The Kueue model is
  scheduling/admission.py, over the ClusterQueues as recorded (scheduling/queues.py
  `read_cluster_queue`).

Operators the stack does not install (`operators.install: false`) are the cluster's own: the
planner then assumes what docs/cluster-software.md requires of them — Kueue with the integrations
`manifests.helm_values.KUEUE_FRAMEWORKS` and KAI with its default priority classes — and the
summary says so. KAI's scheduler actions are not assumed: they are what `operators.kaiActions`
declares, or unknown.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import yaml

from catalog.kai import BINPACK, KAI_ACTIONS, SPREAD
from catalog.priorities import PRIORITY_CLASSES
from catalog.versions import KAI_API_VERSION, KAI_SCHEDULER, KUEUE, KUEUE_API_VERSION
from manifests import ray_pods
from manifests.helm_values import KUEUE_FRAMEWORKS
from scheduling.admission import (
    FlavorLabels,
    FlavorResource,
    Inadmissible,
    assign_pod_sets,
    cohort_borrowable,
    headroom,
    usable_flavors,
)
from scheduling.amounts import Amounts
from scheduling.nodes import pods_per_node as node_pods
from scheduling.podsets import PodSet
from scheduling.queues import TeamQueue, read_cluster_queue
from workloads.catalog import WORKLOADS
from workloads.spec import WorkloadSpec

if TYPE_CHECKING:
    from aksray.offline.runner import RecordedResource, RunResult
    from settings.model import Settings, TeamSettings, WorkloadSettings

HELM_RELEASE: Final = "kubernetes:helm.sh/v3:Release"
CLUSTER_QUEUE: Final = f"kubernetes:{KUEUE_API_VERSION}:ClusterQueue"
RESOURCE_FLAVOR: Final = f"kubernetes:{KUEUE_API_VERSION}:ResourceFlavor"
WORKLOAD_PRIORITY_CLASS: Final = f"kubernetes:{KUEUE_API_VERSION}:WorkloadPriorityClass"
KAI_QUEUE: Final = f"kubernetes:{KAI_API_VERSION}:Queue"


@dataclass(frozen=True)
class Registered:
    cluster_queues: Mapping[str, Mapping[str, Any]]  # by name (= team)
    resource_flavors: Mapping[str, Mapping[str, Any]]  # by name (= flavor)
    kai_queues: Mapping[str, Mapping[str, Any]]  # by name (department or team)
    kueue_priority_classes: frozenset[str]
    # What the stack's Kueue release enables, or the assumed frameworks (installed_kueue False).
    kueue_frameworks: tuple[str, ...]
    installed_kueue: bool
    # The PriorityClasses the stack's KAI release creates, or the assumed chart defaults.
    kai_priority_classes: frozenset[str]
    installed_kai: bool
    # The actions KAI's scheduler runs, in its order: from the KAI release's values, or as
    # `operators.kaiActions` declares them for a cluster's own KAI; None: unknown (the cluster's
    # own, undeclared, or a release that renders no default SchedulingShard).
    kai_actions: tuple[str, ...] | None = None
    # Keys of the release's `scheduler.actions` that name no KAI action (typos).
    kai_unknown_actions: tuple[str, ...] = ()
    cohorts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # cohort -> queues

    @functools.cached_property
    def queues(self) -> dict[str, TeamQueue]:
        """The recorded ClusterQueues, read once into the core's typed queues (by name)."""
        return {name: read_cluster_queue(obj) for name, obj in self.cluster_queues.items()}

    @functools.cached_property
    def flavor_labels(self) -> FlavorLabels:
        """Each recorded ResourceFlavor's node labels, by flavor name."""
        return {
            name: dict((obj.get("spec") or {}).get("nodeLabels") or {})
            for name, obj in self.resource_flavors.items()
        }


def _release_values(resource: RecordedResource) -> Mapping[str, Any]:
    values = resource.inputs.get("values")
    return values if isinstance(values, Mapping) else {}


def _kueue_frameworks(values: Mapping[str, Any]) -> tuple[str, ...]:
    text = (values.get("managerConfig") or {}).get("controllerManagerConfigYaml")
    config = yaml.safe_load(text) if isinstance(text, str) else None
    if not isinstance(config, Mapping):
        return ()
    frameworks = (config.get("integrations") or {}).get("frameworks") or []
    return tuple(str(f) for f in frameworks)


def _kai_priority_classes(values: Mapping[str, Any]) -> frozenset[str]:
    # The chart creates its default PriorityClasses (catalog/priorities.py) only when asked.
    enabled = (values.get("defaultPriorityClasses") or {}).get("enabled")
    return frozenset(PRIORITY_CLASSES) if enabled is True else frozenset()


def _by_priority(actions: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(sorted(actions, key=lambda name: (-actions[name], name)))


def _kai_actions(values: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The action list KAI's operator writes for the chart's default SchedulingShard.

    KAI v0.17.0: the five built-in actions, enabled (consolidation off when a placement strategy
    is `spread`), merged key by key with `scheduler.actions` (an unknown name is a new action,
    enabled, priority 0), the enabled ones by priority, highest first; an empty list makes the
    scheduler run all five (pkg/apis/kai/v1/schedulingshard_types.go setDefaultActions,
    pkg/operator/operands/scheduler/plugin_action_merge.go resolveActions,
    pkg/scheduler/conf_util/scheduler_conf_util.go).
    """
    if (values.get("defaultShard") or {}).get("enabled", True) is not True:
        return None  # no default shard: the actions are whoever manages the shards'
    scheduler = values.get("scheduler") or {}
    strategy = scheduler.get("placementStrategy") or BINPACK
    enabled = {name: not (name == "consolidation" and strategy == SPREAD) for name in KAI_ACTIONS}
    priority = dict(KAI_ACTIONS)
    for name, given in (scheduler.get("actions") or {}).items():
        override = given if isinstance(given, Mapping) else {}
        enabled.setdefault(name, True)
        priority.setdefault(name, 0)
        if override.get("enabled") is not None:
            enabled[name] = bool(override["enabled"])
        if override.get("priority") is not None:
            priority[name] = int(override["priority"])
    running = _by_priority({name: priority[name] for name, on in enabled.items() if on})
    return running or _by_priority(KAI_ACTIONS)


def _kai_unknown_actions(values: Mapping[str, Any]) -> tuple[str, ...]:
    actions = (values.get("scheduler") or {}).get("actions") or {}
    return tuple(sorted(str(name) for name in actions if name not in KAI_ACTIONS))


def registered(result: RunResult) -> Registered:
    by_type: dict[str, list[RecordedResource]] = defaultdict(list)
    for resource in result.resources:
        by_type[resource.type].append(resource)

    def named(type_token: str) -> dict[str, Mapping[str, Any]]:
        return {str(r.inputs["metadata"]["name"]): r.inputs for r in by_type[type_token]}

    releases = {str(r.inputs.get("name") or r.name): r for r in by_type[HELM_RELEASE]}
    kueue = releases.get(KUEUE.release)
    kai = releases.get(KAI_SCHEDULER.release)
    cluster_queues = named(CLUSTER_QUEUE)
    cohorts: dict[str, list[str]] = defaultdict(list)
    for name, queue in cluster_queues.items():
        cohort = queue["spec"].get("cohortName")
        if cohort:
            cohorts[str(cohort)].append(name)
    return Registered(
        cluster_queues=cluster_queues,
        resource_flavors=named(RESOURCE_FLAVOR),
        kai_queues=named(KAI_QUEUE),
        kueue_priority_classes=frozenset(named(WORKLOAD_PRIORITY_CLASS)),
        kueue_frameworks=(
            _kueue_frameworks(_release_values(kueue)) if kueue is not None else KUEUE_FRAMEWORKS
        ),
        installed_kueue=kueue is not None,
        kai_priority_classes=(
            _kai_priority_classes(_release_values(kai))
            if kai is not None
            else frozenset(PRIORITY_CLASSES)
        ),
        installed_kai=kai is not None,
        kai_actions=(
            _kai_actions(_release_values(kai))
            if kai is not None
            else result.settings.operators.kai_actions
        ),
        kai_unknown_actions=_kai_unknown_actions(_release_values(kai)) if kai is not None else (),
        cohorts={cohort: tuple(names) for cohort, names in cohorts.items()},
    )


def pods_per_node(pod_set: PodSet, vm_size: str) -> int:
    """How many pods of this shape one node of the size holds (by node allocatable)."""
    return node_pods(Amounts(pod_set.requests), vm_size)


@dataclass(frozen=True)
class PodSetPlan:
    pod_set: PodSet
    flavor: str | None  # what Kueue gives it on an empty cluster; None: the gang is inadmissible
    may_use: tuple[str, ...]  # every flavor Kueue may give it, in the queue's order
    pods_per_node: Mapping[str, int]  # flavor -> pods of this shape per node of its pool

    def fits_node(self, flavor: str) -> bool:
        return self.pods_per_node.get(flavor, 0) >= 1


@dataclass(frozen=True)
class WorkloadPlan:
    workload: WorkloadSettings
    spec: WorkloadSpec
    team: TeamSettings
    pod_sets: tuple[PodSetPlan, ...]
    inadmissible: Inadmissible | None
    headroom: Mapping[FlavorResource, int]  # nominal + borrowable per (flavor, resource)
    # Elastic workloads: the GPUs of the biggest slice the Ray autoscaler can ask for, and the
    # most GPU workers Kueue can ever admit at once (quota + borrowable; None: the maximum fits).
    max_gpus: int = 0
    max_admissible_workers: int | None = None

    @property
    def pods(self) -> int:
        return sum(p.pod_set.count for p in self.pod_sets)

    @property
    def gpus(self) -> int:
        """GPUs of the gang Kueue admits first: the minimum of an elastic workload."""
        return sum(p.pod_set.total_gpus for p in self.pod_sets)

    @property
    def worst_case_gpus(self) -> int:
        return max(self.gpus, self.max_gpus)

    def total(self, resource: str) -> int:
        return sum(p.pod_set.total.get(resource, 0) for p in self.pod_sets)


def borrowable(reg: Registered, team: str) -> dict[FlavorResource, int]:
    """What the team's cohort can lend it when idle, per (flavor, resource)."""
    queue = reg.queues[team]
    members = reg.cohorts.get(queue.cohort, ()) if queue.cohort else ()
    return cohort_borrowable([reg.queues[name] for name in members] or [queue], team)


def workload_plan(settings: Settings, reg: Registered, workload: WorkloadSettings) -> WorkloadPlan:
    spec = WORKLOADS[workload.name]
    team = settings.scheduling.team(workload.team)
    queue = reg.queues[team.name]
    lendable = borrowable(reg, team.name)
    sets = ray_pods.pod_sets(spec, workload)
    options: dict[str, Any] = {"flavor_labels": reg.flavor_labels, "borrowable": lendable}
    inadmissible: Inadmissible | None = None
    try:
        assignment: list[dict[str, str] | None] = list(assign_pod_sets(sets, queue, **options))
    except Inadmissible as exc:
        inadmissible = exc
        assignment = [None] * len(sets)
    plans = []
    for pod_set, assigned in zip(sets, assignment, strict=True):
        may_use = usable_flavors(pod_set, queue, **options)
        flavors = set(assigned.values()) if assigned else set()
        plans.append(
            PodSetPlan(
                pod_set=pod_set,
                flavor=flavors.pop() if len(flavors) == 1 else None,
                may_use=tuple(may_use),
                pods_per_node={
                    flavor: pods_per_node(pod_set, settings.cluster.pool(flavor).vm_size)
                    for flavor in may_use
                },
            )
        )
    biggest = ray_pods.pod_sets(spec, workload, at_max=True)
    return WorkloadPlan(
        workload=workload,
        spec=spec,
        team=team,
        pod_sets=tuple(plans),
        inadmissible=inadmissible,
        headroom=headroom(queue, lendable),
        max_gpus=sum(p.total_gpus for p in biggest),
        max_admissible_workers=(
            most_admissible_workers(workload, spec, queue, options)
            if workload.elastic and inadmissible is None
            else None
        ),
    )


def most_admissible_workers(
    workload: WorkloadSettings, spec: WorkloadSpec, queue: TeamQueue, options: Any
) -> int | None:
    """None when Kueue can admit the workload at its maximum; else the most GPU workers it can
    ever admit at once (its minimum is admissible: the caller checked)."""

    smallest = ray_pods.pod_sets(spec, workload)
    biggest = ray_pods.pod_sets(spec, workload, at_max=True)
    growing = {a.name for a, b in zip(smallest, biggest, strict=True) if a.count != b.count}

    def fits(workers: int) -> bool:
        sized = [
            dataclasses.replace(p, count=workers) if p.name in growing else p for p in smallest
        ]
        try:
            assign_pod_sets(sized, queue, **options)
        except Inadmissible:
            return False
        return True

    low, high = workload.min_workers or 1, workload.max_workers or 1
    if fits(high):
        return None
    while low + 1 < high:  # fits(low) and not fits(high)
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


@dataclass(frozen=True)
class Plan:
    """Everything the summary and the checks read."""

    result: RunResult
    settings: Settings
    registered: Registered
    workloads: tuple[WorkloadPlan, ...]


def plan(result: RunResult) -> Plan:
    settings: Settings = result.settings
    reg = registered(result)
    return Plan(
        result=result,
        settings=settings,
        registered=reg,
        workloads=tuple(workload_plan(settings, reg, w) for w in settings.enabled_workloads),
    )
