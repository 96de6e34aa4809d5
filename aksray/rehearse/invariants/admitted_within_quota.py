"""The `admitted-within-quota` invariant: what Kueue counts as admitted, per ClusterQueue and per
cohort, never exceeds the quota (plus what the queue may borrow, plus what its cohort holds).

Usage is counted the way Kueue counts it (`objects.admission`): a slice scaled down in place
counts its lower spec count, and a slice whose admitted replacement names it counts nothing.

After a change that cuts a quota (`aksray rehearse --since`), what Kueue admitted before it may
hold more than the new quota: Kueue never evicts admitted work when a quota shrinks. So a queue
or cohort over its quota breaches only when something admitted after the change is in it
(`Sample.admitted_before`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict
from scheduling.queues import ResourceQuota, read_cluster_queue

Usage = dict[str, dict[tuple[str, str], int]]  # ClusterQueue -> (flavor, resource) -> amount


def counted(workloads: Iterable[Mapping[str, Any]]) -> list[tuple[str, o.Admission]]:
    """(workload key, admission) of every workload Kueue counts: QuotaReserved, unfinished, not
    a slice its admitted replacement names."""
    workloads = list(workloads)
    replaced = o.slices_being_replaced(workloads)
    found = []
    for wl in workloads:
        adm = o.admission(wl)
        if (
            adm is None
            or not o.condition_true(wl, "QuotaReserved")
            or o.condition_true(wl, "Finished")
            or o.workload_key(wl) in replaced
        ):
            continue
        found.append((o.workload_key(wl), adm))
    return found


def admitted_usage(workloads: Iterable[Mapping[str, Any]]) -> Usage:
    """Per ClusterQueue, what its admitted (QuotaReserved, unfinished) workloads hold."""
    usage: Usage = defaultdict(lambda: defaultdict(int))
    for _, adm in counted(workloads):
        for key, value in adm.usage.items():
            usage[adm.cluster_queue][key] += value
    return usage


def _queue_cap(quota: ResourceQuota, *, borrows: bool) -> int | None:
    """No cohort: no borrowing; in one, at most the borrowing limit (None: the cohort's)."""
    if not borrows:
        return quota.nominal
    return None if quota.borrowing_limit is None else quota.nominal + quota.borrowing_limit


def quota_breaches(
    t: float,
    workloads: Iterable[Mapping[str, Any]],
    queues: Mapping[str, Mapping[str, Any]],
    admitted_before: AbstractSet[str] = frozenset(),
) -> list[str]:
    """Every ClusterQueue and cohort over what it may hold at time `t`, one line each; one
    holding only work admitted before a change (`admitted_before`, workload keys) is not."""
    workloads = list(workloads)
    usage = admitted_usage(workloads)
    newer = {adm.cluster_queue for key, adm in counted(workloads) if key not in admitted_before}
    breaches: list[str] = []
    cohort_newer: set[str] = set()
    cohort_nominal: dict[tuple[str, tuple[str, str]], int] = defaultdict(int)
    cohort_usage: dict[tuple[str, tuple[str, str]], int] = defaultdict(int)
    for name, obj in queues.items():
        queue = read_cluster_queue(obj)
        for flavor in queue.flavors:
            for resource, quota in flavor.resources:
                key = (flavor.name, resource)
                used = usage.get(name, {}).get(key, 0)
                cap = _queue_cap(quota, borrows=bool(queue.cohort))
                if cap is not None and used > cap and name in newer:
                    breaches.append(
                        f"t=+{t:.1f}s ClusterQueue {name} has {used} of {resource} admitted on "
                        f"{flavor.name}, over its quota plus borrowing limit {cap}"
                    )
                if queue.cohort:
                    cohort_nominal[(queue.cohort, key)] += quota.nominal
                    cohort_usage[(queue.cohort, key)] += used
                    if name in newer:
                        cohort_newer.add(queue.cohort)
    for (cohort, (flavor_name, resource)), used in cohort_usage.items():
        if used > cohort_nominal[(cohort, (flavor_name, resource))] and cohort in cohort_newer:
            breaches.append(
                f"t=+{t:.1f}s cohort {cohort} has {used} of {resource} admitted on "
                f"{flavor_name}, over the {cohort_nominal[(cohort, (flavor_name, resource))]} "
                "its members hold"
            )
    return breaches


def watch() -> SampleCheck:
    def check(sample: Sample, verdict: Verdict) -> None:
        for breach in quota_breaches(
            sample.t, sample.workloads, sample.queues, sample.admitted_before
        ):
            verdict.breach(breach)

    return check
