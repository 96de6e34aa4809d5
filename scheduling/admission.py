"""Kueue's admission, modelled over the typed queues: flavor assignment, borrowing, preemption.

The one Kueue release it models is KUEUE_VERSION (catalog/versions.py pins the same). It reads
TeamQueues (scheduling/queues.py: computed from the settings, or read back from a recorded
ClusterQueue) and pod sets (scheduling/podsets.py), and models Kueue's flavor assigner on an
empty cluster:

- a pod set's requests are its per-pod requests times its pod count; resources it requests 0 of
  do not count;
- per resource group that covers some of them, flavors are tried in order; every requested
  resource of that group must come from one flavor;
- a requested resource no group covers makes the workload inadmissible;
- a flavor is skipped when its node labels contradict the pod set's node selector (needs the
  flavors' node labels; without them labels are not checked);
- a flavor fits when the requests fit its nominal quota, or its nominal quota plus what it may
  borrow (min(borrowingLimit, what the cohort can lend), 0 unless `borrowable` says otherwise);
  with `whenCanBorrow: MayStopSearch` the first flavor that fits by borrowing is taken, with
  `TryNextFlavor` a later flavor that fits without borrowing is preferred;
- pod sets of one workload are assigned in order and their usage adds up.

Preemption: `preemption_reason` says whether Kueue's classic preemption may evict a running
workload for an arriving one, and with which reason, from the preemptor's ClusterQueue policy;
not which set of victims it picks. Kueue is the only scheduler here that evicts (KAI runs only
its allocate action, manifests/helm_values.py).

Not modelled: the choice of victims, admission checks, topology, fair sharing, partial
admission.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from scheduling.podsets import PodSet
from scheduling.queues import FlavorQuota, ResourceQuota, TeamQueue

# The Kueue release this model follows; tests/scheduling/test_core.py holds it equal to the pin.
KUEUE_VERSION: Final = "v0.19.2"

# Amounts are integers in canonical units: cpu in millicores, memory in bytes, others in units.
Requests = Mapping[str, int]
FlavorResource = tuple[str, str]  # (flavor, resource)


class Inadmissible(Exception):  # noqa: N818 - a verdict, not a program error
    """The pod sets cannot be admitted by this ClusterQueue on an empty cluster.

    `pod_set` names the first pod set that found no flavor."""

    def __init__(self, pod_set: str, reason: str) -> None:
        super().__init__(f"{pod_set}: {reason}")
        self.pod_set = pod_set
        self.reason = reason


FlavorLabels = Mapping[str, Mapping[str, str]]  # flavor -> its ResourceFlavor's nodeLabels


def labels_allow(
    flavor: str, node_selector: Mapping[str, str], flavor_labels: FlavorLabels | None
) -> bool:
    if flavor_labels is None or not node_selector:
        return True
    labels = flavor_labels.get(flavor) or {}
    return all(node_selector.get(key, value) == value for key, value in labels.items())


_FIT: Final = 2
_BORROW: Final = 1
_NO_FIT: Final = 0


def _fit(
    flavor: str,
    quotas: FlavorQuota,
    wanted: Mapping[str, int],
    usage: Mapping[FlavorResource, int],
    borrowable: Mapping[FlavorResource, int],
) -> int:
    mode = _FIT
    for resource, amount in wanted.items():
        quota = quotas.quota(resource)
        if quota is None:
            return _NO_FIT
        needed = usage.get((flavor, resource), 0) + amount
        if needed <= quota.nominal:
            continue
        lendable = borrowable.get((flavor, resource), 0)
        if quota.borrowing_limit is not None:
            lendable = min(lendable, quota.borrowing_limit)
        if needed > quota.nominal + lendable:
            return _NO_FIT
        mode = _BORROW
    return mode


def assign_pod_sets(
    pod_sets: Sequence[PodSet],
    queue: TeamQueue,
    *,
    flavor_labels: FlavorLabels | None = None,
    borrowable: Mapping[FlavorResource, int] | None = None,
) -> list[dict[str, str]]:
    """Per pod set, the flavor each requested resource gets; raises Inadmissible otherwise."""
    covered = set(queue.covered)
    usage: dict[FlavorResource, int] = {}
    result: list[dict[str, str]] = []
    for pod_set in pod_sets:
        total = pod_set.total
        uncovered = sorted(set(total) - covered)
        if uncovered:
            raise Inadmissible(pod_set.name, f"no resource group covers {', '.join(uncovered)}")
        assignment: dict[str, str] = {}
        for group in queue.groups:
            wanted = {r: v for r, v in total.items() if r in group.covered}
            if not wanted:
                continue
            chosen = _choose_flavor(
                group.flavors,
                pod_set,
                wanted,
                usage=usage,
                borrowable=borrowable or {},
                flavor_labels=flavor_labels,
                stop_at_borrowing=queue.when_can_borrow == "MayStopSearch",
            )
            for resource, amount in wanted.items():
                assignment[resource] = chosen
                usage[(chosen, resource)] = usage.get((chosen, resource), 0) + amount
        result.append(assignment)
    return result


def _choose_flavor(
    flavors: Sequence[FlavorQuota],
    pod_set: PodSet,
    wanted: Mapping[str, int],
    *,
    usage: Mapping[FlavorResource, int],
    borrowable: Mapping[FlavorResource, int],
    flavor_labels: FlavorLabels | None,
    stop_at_borrowing: bool,
) -> str:
    """The flavor of one resource group a pod set gets: the first that fits, or (unless the
    queue stops at the first that fits by borrowing) the first that fits by borrowing."""
    fallback: str | None = None
    for flavor in flavors:
        name = flavor.name
        if not labels_allow(name, pod_set.node_selector, flavor_labels):
            continue
        mode = _fit(name, flavor, wanted, usage, borrowable)
        if mode == _FIT or (mode == _BORROW and stop_at_borrowing):
            return name
        if mode == _BORROW:
            fallback = fallback or name
    if fallback is None:
        names = ", ".join(f.name for f in flavors)
        raise Inadmissible(pod_set.name, f"no flavor of [{names}] has room for {wanted}")
    return fallback


def usable_flavors(
    pod_set: PodSet,
    queue: TeamQueue,
    *,
    flavor_labels: FlavorLabels | None = None,
    borrowable: Mapping[FlavorResource, int] | None = None,
) -> list[str]:
    """Every flavor Kueue may give this pod set on an empty cluster, in the queue's order: its
    node labels allow the pod set's node selector and its nominal quota, plus what it may
    borrow, holds the whole pod set. (Which one it gets depends on what is in use.)"""
    total = pod_set.total
    found: list[str] = []
    for group in queue.groups:
        wanted = {r: v for r, v in total.items() if r in group.covered}
        if not wanted:
            continue
        for flavor in group.flavors:
            if not labels_allow(flavor.name, pod_set.node_selector, flavor_labels):
                continue
            if _fit(flavor.name, flavor, wanted, {}, borrowable or {}) != _NO_FIT:
                found.append(flavor.name)
    return found


def may_borrow(quota: ResourceQuota, lendable: int) -> int:
    """What a queue may borrow of one resource: min(borrowingLimit, what its cohort lends)."""
    return lendable if quota.borrowing_limit is None else min(lendable, quota.borrowing_limit)


def headroom(
    queue: TeamQueue, borrowable: Mapping[FlavorResource, int] | None = None
) -> dict[FlavorResource, int]:
    """The most a queue can admit per (flavor, resource) on an empty cluster: nominal quota plus
    min(borrowingLimit, what the cohort can lend)."""
    result: dict[FlavorResource, int] = {}
    for flavor in queue.flavors:
        for resource, quota in flavor.resources:
            lendable = (borrowable or {}).get((flavor.name, resource), 0)
            result[(flavor.name, resource)] = quota.nominal + may_borrow(quota, lendable)
    return result


def flavor_assignment(
    pod_requests: Requests,
    queue: TeamQueue,
    **options: Any,
) -> dict[str, str] | None:
    """resource -> flavor for one pod set's total requests; None if it cannot be admitted."""
    try:
        return assign_pod_sets([PodSet("pods", 1, pod_requests)], queue, **options)[0]
    except Inadmissible:
        return None


def assign_flavor(pod_requests: Requests, queue: TeamQueue, **options: Any) -> str | None:
    """The one flavor a pod set gets (total requests), or None if it cannot be admitted.

    Raises ValueError when its resources get different flavors — a pod that would carry the
    node selectors of two pools.
    """
    assignment = flavor_assignment(pod_requests, queue, **options)
    if assignment is None:
        return None
    flavors = set(assignment.values())
    if len(flavors) != 1:
        raise ValueError(f"the pod set's resources get different flavors: {assignment}")
    return flavors.pop()


def cohort_borrowable(
    queues: Sequence[TeamQueue],
    borrower: str,
    usage: Mapping[str, Mapping[FlavorResource, int]] | None = None,
) -> dict[FlavorResource, int]:
    """What the other queues of the borrower's cohort can lend it, per (flavor, resource).

    A queue lends its unused nominal quota, at most its lendingLimit. `usage`: queue name ->
    (flavor, resource) -> amount in use (empty: an idle cohort).
    """
    by_name = {queue.name: queue for queue in queues}
    cohort = by_name[borrower].cohort
    lendable: dict[FlavorResource, int] = {}
    if not cohort:
        return lendable
    for name, queue in by_name.items():
        if name == borrower or queue.cohort != cohort:
            continue
        used = (usage or {}).get(name, {})
        for flavor in queue.flavors:
            for resource, quota in flavor.resources:
                key = (flavor.name, resource)
                can_lend = quota.nominal if quota.lending_limit is None else quota.lending_limit
                # Usage counts against the part a queue keeps before the part it lends.
                kept = quota.nominal - can_lend
                free = max(0, can_lend - max(0, used.get(key, 0) - kept))
                lendable[key] = lendable.get(key, 0) + free
    return lendable


# The reasons Kueue v0.19.2 records on a preempted Workload's `Preempted` condition
# (pkg/scheduler/preemption/classical/hierarchical_preemption.go PreemptionReason).
IN_CLUSTER_QUEUE: Final = "InClusterQueue"
IN_COHORT_RECLAMATION: Final = "InCohortReclamation"
IN_COHORT_RECLAIM_WHILE_BORROWING: Final = "InCohortReclaimWhileBorrowing"


@dataclass(frozen=True)
class Running:
    """An admitted workload as Kueue's preemption sees it."""

    cluster_queue: str
    cohort: str | None
    priority: int
    borrowing: bool = False  # its ClusterQueue uses more than its nominal quota


def preemption_reason(
    queue: TeamQueue, priority: int, victim: Running, *, fits_nominal: bool
) -> str | None:
    """Why Kueue may preempt `victim` for a pending workload of `priority` whose ClusterQueue is
    `cluster_queue`, or None when it never may (Kueue v0.19.2 classic preemption,
    pkg/scheduler/preemption/classical/hierarchical_preemption.go classifyPreemptionVariant):

    - in the same ClusterQueue, by `withinClusterQueue` (LowerPriority: a lower priority);
    - in another ClusterQueue of the cohort only while that queue borrows (in-quota use is never
      preempted), by `reclaimWithinCohort` (Any: whatever its priority); when the pending
      workload fits its own nominal quota (`fits_nominal`) that is reclamation, otherwise only
      `borrowWithinCohort: LowerPriority` allows it, for a lower priority (at most
      `maxPriorityThreshold`).

    An arriving workload is newer than a running one, so `LowerOrNewerEqualPriority` acts as
    `LowerPriority` here.
    """
    policy = queue.preemption
    if victim.cluster_queue == queue.name:
        allowed = _satisfies(policy.within_cluster_queue, priority, victim.priority)
        return IN_CLUSTER_QUEUE if allowed else None
    cohort = queue.cohort
    if not cohort or victim.cohort != cohort or not victim.borrowing:
        return None
    if not _satisfies(policy.reclaim_within_cohort, priority, victim.priority):
        return None
    if fits_nominal:
        return IN_COHORT_RECLAMATION
    threshold = policy.max_priority_threshold
    if (
        policy.borrow_within_cohort == "LowerPriority"
        and victim.priority < priority
        and (threshold is None or victim.priority <= threshold)
    ):
        return IN_COHORT_RECLAIM_WHILE_BORROWING
    return None


def _satisfies(policy: str, preemptor: int, victim: int) -> bool:
    if policy in ("LowerPriority", "LowerOrNewerEqualPriority"):
        return victim < preemptor
    return policy == "Any"


def admissible(queues: Mapping[str, TeamQueue], team: str, flavor: str) -> dict[str, int]:
    """The most of each resource a team's queue admits in one flavor on an idle cluster: its
    nominal quota plus what it may borrow from the rest of its cohort (none without the flavor)."""
    queue = queues[team]
    lendable = cohort_borrowable(list(queues.values()), team)
    room = headroom(queue, lendable)
    return {resource: amount for (name, resource), amount in room.items() if name == flavor}
