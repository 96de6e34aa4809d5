"""The `admitted-within-quota` invariant: what Kueue counts as admitted, per ClusterQueue and per
cohort, never exceeds the quota (plus what the queue may borrow, plus what its cohort holds).

Usage is counted the way Kueue counts it (`objects.admission`): a slice scaled down in place
counts its lower spec count, and a slice whose admitted replacement names it counts nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict
from scheduling.queues import ResourceQuota, read_cluster_queue

Usage = dict[str, dict[tuple[str, str], int]]  # ClusterQueue -> (flavor, resource) -> amount


def admitted_usage(workloads: Iterable[Mapping[str, Any]]) -> Usage:
    """Per ClusterQueue, what its admitted (QuotaReserved, unfinished) workloads hold."""
    workloads = list(workloads)
    usage: Usage = defaultdict(lambda: defaultdict(int))
    replaced = o.slices_being_replaced(workloads)
    for wl in workloads:
        adm = o.admission(wl)
        if (
            adm is None
            or not o.condition_true(wl, "QuotaReserved")
            or o.condition_true(wl, "Finished")
            or o.workload_key(wl) in replaced
        ):
            continue
        for key, value in adm.usage.items():
            usage[adm.cluster_queue][key] += value
    return usage


def _queue_cap(quota: ResourceQuota, *, borrows: bool) -> int | None:
    """No cohort: no borrowing; in one, at most the borrowing limit (None: the cohort's)."""
    if not borrows:
        return quota.nominal
    return None if quota.borrowing_limit is None else quota.nominal + quota.borrowing_limit


def quota_breaches(
    t: float, workloads: Iterable[Mapping[str, Any]], queues: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Every ClusterQueue and cohort over what it may hold at time `t`, one line each."""
    usage = admitted_usage(workloads)
    breaches: list[str] = []
    cohort_nominal: dict[tuple[str, tuple[str, str]], int] = defaultdict(int)
    cohort_usage: dict[tuple[str, tuple[str, str]], int] = defaultdict(int)
    for name, obj in queues.items():
        queue = read_cluster_queue(obj)
        for flavor in queue.flavors:
            for resource, quota in flavor.resources:
                key = (flavor.name, resource)
                used = usage.get(name, {}).get(key, 0)
                cap = _queue_cap(quota, borrows=bool(queue.cohort))
                if cap is not None and used > cap:
                    breaches.append(
                        f"t=+{t:.1f}s ClusterQueue {name} has {used} of {resource} admitted on "
                        f"{flavor.name}, over its quota plus borrowing limit {cap}"
                    )
                if queue.cohort:
                    cohort_nominal[(queue.cohort, key)] += quota.nominal
                    cohort_usage[(queue.cohort, key)] += used
    for (cohort, (flavor_name, resource)), used in cohort_usage.items():
        if used > cohort_nominal[(cohort, (flavor_name, resource))]:
            breaches.append(
                f"t=+{t:.1f}s cohort {cohort} has {used} of {resource} admitted on "
                f"{flavor_name}, over the {cohort_nominal[(cohort, (flavor_name, resource))]} "
                "its members hold"
            )
    return breaches


def watch() -> SampleCheck:
    def check(sample: Sample, verdict: Verdict) -> None:
        for breach in quota_breaches(sample.t, sample.workloads, sample.queues):
            verdict.breach(breach)

    return check
