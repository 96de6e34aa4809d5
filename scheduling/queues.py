"""Each team's Kueue ClusterQueue as typed data: its effective quota per flavor, computed once.

The effective quota fills what the stack file leaves out: on a GPU flavor, omitted cpu and memory
are "the GPU share of that pool's node allocatable" (scheduling/nodes.py `gpu_share`, times the
team's GPUs), so a team's GPU quota always comes with the CPU and memory its GPU pods can use on
those nodes. The same share fills cpu/memory of a GPU flavor's borrowing and lending limits when
only their gpu is given. `unlimited` (UNLIMITED) stands for the whole pool at its maximum size.

`team_queue` computes a queue from the settings; `read_cluster_queue` is the one reader of a
ClusterQueue object back into the same type, so what the program records can be compared with
what was computed (tests/scheduling/test_core.py) and the planner judges the recorded objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from catalog.pools import CPU_POOL_NAME
from catalog.quantities import GPU_RESOURCE, RESOURCE_KINDS, RESOURCES, UNLIMITED
from scheduling.amounts import Amounts
from scheduling.nodes import gpu_share, pool_capacity
from settings.model import Resources, Settings, TeamSettings

LimitKind = Literal["borrowingLimit", "lendingLimit"]


@dataclass(frozen=True)
class ResourceQuota:
    """One resource of one flavor, as Kueue's ResourceQuota: a limit of None is no limit."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None

    @property
    def lendable(self) -> int:
        """What the queue lends its cohort at most when idle (Kueue: lendingLimit, else all)."""
        return self.nominal if self.lending_limit is None else min(self.lending_limit, self.nominal)


@dataclass(frozen=True)
class FlavorQuota:
    """One flavor of a ClusterQueue's resource group, every covered resource in table order."""

    name: str
    resources: tuple[tuple[str, ResourceQuota], ...]

    def quota(self, resource: str) -> ResourceQuota | None:
        return next((q for r, q in self.resources if r == resource), None)

    @property
    def nominal(self) -> Amounts:
        return Amounts({r: q.nominal for r, q in self.resources})

    @property
    def lendable(self) -> Amounts:
        return Amounts({r: q.lendable for r, q in self.resources})

    def limit(self, kind: LimitKind) -> dict[str, int | None]:
        return {
            r: q.borrowing_limit if kind == "borrowingLimit" else q.lending_limit
            for r, q in self.resources
        }


@dataclass(frozen=True)
class Preemption:
    """A ClusterQueue's preemption policy (Kueue's names and values)."""

    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class ResourceGroup:
    """Resources Kueue gives a pod set from one flavor, and the flavors it tries, in order."""

    covered: tuple[str, ...]
    flavors: tuple[FlavorQuota, ...]


@dataclass(frozen=True)
class TeamQueue:
    """A team's ClusterQueue. The stack writes one resource group covering every resource."""

    name: str
    cohort: str | None
    namespace: str
    queueing_strategy: str
    groups: tuple[ResourceGroup, ...]
    preemption: Preemption
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    # AdmissionChecks every admission waits for (a MultiKueue manager's dispatch); none: admitted
    # once quota is reserved.
    admission_checks: tuple[str, ...] = ()

    @property
    def covered(self) -> tuple[str, ...]:
        return tuple(r for group in self.groups for r in group.covered)

    @property
    def flavors(self) -> tuple[FlavorQuota, ...]:
        """Every flavor of every group, in the queue's order."""
        return tuple(f for group in self.groups for f in group.flavors)

    def flavor(self, name: str) -> FlavorQuota | None:
        return next((f for f in self.flavors if f.name == name), None)

    def nominal(self, flavor: str) -> Amounts:
        """The nominal quota of a flavor; nothing where the queue has none."""
        found = self.flavor(flavor)
        return found.nominal if found is not None else Amounts()


# The policy every team's ClusterQueue gets (manifests/kueue.py writes it, with the reasons).
TEAM_PREEMPTION: Final = Preemption(
    within_cluster_queue="LowerPriority",
    reclaim_within_cohort="Any",
    borrow_within_cohort="Never",
)
WHEN_CAN_BORROW: Final = "MayStopSearch"
WHEN_CAN_PREEMPT: Final = "TryNextFlavor"


def multikueue_check(team: str) -> str:
    """The AdmissionCheck a MultiKueue manager's queue of `team` waits for: dispatch to a
    worker (manifests/multikueue.py creates it, with the team's MultiKueueConfig)."""
    return f"multikueue-{team}"


def _given(resources: Resources | None, resource: str) -> int | None:
    return None if resources is None else resources.amount(resource)


def effective_quota(team: TeamSettings, flavor: str, settings: Settings) -> Amounts:
    """The team's nominal quota in a flavor, every resource filled in."""
    cluster = settings.cluster
    quota = team.quota.get(flavor)
    capacity = pool_capacity(cluster, flavor)
    gpus = _given(quota, GPU_RESOURCE) or 0
    gpus = capacity[GPU_RESOURCE] if gpus == UNLIMITED else gpus
    if flavor == CPU_POOL_NAME:
        derived = Amounts()
    else:
        derived = gpu_share(cluster.pool(flavor).vm_size).times(gpus)
    values = {}
    for resource in RESOURCES:
        given = _given(quota, resource)
        if given == UNLIMITED:
            values[resource] = capacity[resource]
        else:
            values[resource] = derived[resource] if given is None else given
    return Amounts(values)


def effective_limit(
    team: TeamSettings, flavor: str, kind: LimitKind, settings: Settings
) -> dict[str, int | None]:
    """The team's borrowing or lending limit per resource of a flavor; None = no limit.

    The CPU flavor never borrows GPUs (limit 0: no flavor `cpu` anywhere has GPU quota).
    """
    limits = (team.borrowing_limit if kind == "borrowingLimit" else team.lending_limit).get(flavor)
    result: dict[str, int | None] = {r: _given(limits, r) for r in RESOURCES}
    if flavor == CPU_POOL_NAME:
        result[GPU_RESOURCE] = 0 if kind == "borrowingLimit" else None
        return result
    gpus = result[GPU_RESOURCE]
    if gpus is not None:
        share = gpu_share(settings.cluster.pool(flavor).vm_size).times(gpus)
        nominal = effective_quota(team, flavor, settings)
        for resource in RESOURCES:
            if result[resource] is None:
                derived = share[resource]
                # A team never lends more than it has (Kueue rejects lendingLimit > nominal).
                if kind == "lendingLimit":
                    derived = min(derived, nominal[resource])
                result[resource] = derived
    return result


def flavor_quota(team: TeamSettings, flavor: str, settings: Settings) -> FlavorQuota:
    nominal = effective_quota(team, flavor, settings)
    borrowing = effective_limit(team, flavor, "borrowingLimit", settings)
    lending = effective_limit(team, flavor, "lendingLimit", settings)
    return FlavorQuota(
        flavor,
        tuple((r, ResourceQuota(nominal[r], borrowing[r], lending[r])) for r in RESOURCES),
    )


def team_flavors(team: TeamSettings, settings: Settings) -> list[str]:
    """The flavors of a team's ClusterQueue: those it has quota for, `cpu` first."""
    return [flavor for flavor in settings.cluster.flavors if flavor in team.quota]


def team_queue(team: TeamSettings, settings: Settings) -> TeamQueue:
    return TeamQueue(
        name=team.name,
        cohort=team.department,
        namespace=team.namespace,
        queueing_strategy=team.queueing_strategy,
        groups=(
            ResourceGroup(
                RESOURCES,
                tuple(flavor_quota(team, f, settings) for f in team_flavors(team, settings)),
            ),
        ),
        preemption=TEAM_PREEMPTION,
        when_can_borrow=WHEN_CAN_BORROW,
        when_can_preempt=WHEN_CAN_PREEMPT,
        # A manager's queue admits only once MultiKueue has found a worker (docs/multikueue.md).
        admission_checks=(multikueue_check(team.name),) if settings.multikueue is not None else (),
    )


def team_queues(settings: Settings) -> dict[str, TeamQueue]:
    """Every team's queue by team name: computed once, then read by whoever needs it."""
    return {team.name: team_queue(team, settings) for team in settings.scheduling.teams}


def _optional(resource: str, value: object) -> int | None:
    return None if value is None else RESOURCE_KINDS[resource].parse(value)


def read_cluster_queue(obj: Mapping[str, Any]) -> TeamQueue:
    """THE reader of a ClusterQueue object (as recorded or as on a cluster) into a TeamQueue.

    Every resource group's flavors are read in order (the stack writes one group); quantities
    come back in canonical units; omitted policies take Kueue's defaults; admission checks are
    read from either of Kueue's two fields (`admissionChecks`, `admissionChecksStrategy`).
    """
    spec = obj["spec"]
    groups = spec.get("resourceGroups") or []
    read = tuple(
        ResourceGroup(
            tuple(str(r) for r in group["coveredResources"]),
            tuple(_flavor(flavor) for flavor in group["flavors"]),
        )
        for group in groups
    )
    policy = spec.get("preemption") or {}
    borrow = policy.get("borrowWithinCohort") or {}
    fungibility = spec.get("flavorFungibility") or {}
    selector = (spec.get("namespaceSelector") or {}).get("matchLabels") or {}
    return TeamQueue(
        name=str((obj.get("metadata") or {}).get("name", "")),
        cohort=str(spec["cohortName"]) if spec.get("cohortName") else None,
        namespace=str(next(iter(selector.values()), "")),
        queueing_strategy=str(spec.get("queueingStrategy", "BestEffortFIFO")),
        groups=read,
        preemption=Preemption(
            within_cluster_queue=str(policy.get("withinClusterQueue", "Never")),
            reclaim_within_cohort=str(policy.get("reclaimWithinCohort", "Never")),
            borrow_within_cohort=str(borrow.get("policy", "Never")),
            max_priority_threshold=borrow.get("maxPriorityThreshold"),
        ),
        when_can_borrow=str(fungibility.get("whenCanBorrow", "MayStopSearch")),
        when_can_preempt=str(fungibility.get("whenCanPreempt", "TryNextFlavor")),
        admission_checks=_admission_checks(spec),
    )


def _admission_checks(spec: Mapping[str, Any]) -> tuple[str, ...]:
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    names = [str(rule["name"]) for rule in strategy]
    return tuple(names or (str(name) for name in spec.get("admissionChecks") or []))


def _flavor(flavor: Mapping[str, Any]) -> FlavorQuota:
    return FlavorQuota(
        str(flavor["name"]),
        tuple(
            (
                str(entry["name"]),
                ResourceQuota(
                    RESOURCE_KINDS[str(entry["name"])].parse(entry["nominalQuota"]),
                    _optional(str(entry["name"]), entry.get("borrowingLimit")),
                    _optional(str(entry["name"]), entry.get("lendingLimit")),
                ),
            )
            for entry in flavor["resources"]
        ),
    )
