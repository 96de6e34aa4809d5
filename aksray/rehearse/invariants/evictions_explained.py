"""The invariant `evictions-explained`: every eviction Kueue makes has a reason the stack
accounts for: a preemption by priority, a reclaim or fair sharing within the cohort, the
pod-readiness timeout, a deactivation, or (on a MultiKueue worker) the manager's eviction."""

from __future__ import annotations

from typing import Final

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict

EXPLAINED_PREEMPTIONS: Final = {
    "InClusterQueue": "priority within the team's ClusterQueue",
    "InCohortReclamation": "reclaim of lent quota within the cohort",
    "InCohortReclaimWhileBorrowing": "reclaim from a borrowing ClusterQueue",
    "InCohortFairSharing": "fair sharing within the cohort",
}
# Evictions that explain themselves; the last: a MultiKueue worker's copy of a job the manager
# evicted (aksray/rehearse/multikueue/watch.py).
EXPLAINED_EVICTIONS: Final = ("PodsReadyTimeout", "Deactivated", "InactiveWorkload",
                              "DeactivatedDueToEvictedOnManagerCluster")  # fmt: skip


def watch() -> SampleCheck:
    def check(sample: Sample, verdict: Verdict) -> None:
        for wl in sample.workloads:
            conds = o.conditions(wl)
            evicted = conds.get("Evicted", {})
            if evicted.get("status") != "True":
                continue
            reason = evicted.get("reason", "")
            preempted = conds.get("Preempted", {})
            if reason == "Preempted" and preempted.get("reason") in EXPLAINED_PREEMPTIONS:
                continue
            if reason in EXPLAINED_EVICTIONS:
                continue
            label = sample.workload_name(wl["metadata"]["namespace"], o.owner(wl))
            verdict.breach(
                f"t=+{sample.t:.1f}s {label} evicted for {reason!r} "
                f"({preempted.get('reason', 'no preemption reason')}): {evicted.get('message')}"
            )

    return check
