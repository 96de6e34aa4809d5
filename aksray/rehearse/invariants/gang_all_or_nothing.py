"""The invariant `gang-all-or-nothing`: no Ray cluster has part of its pods bound while the rest
wait for capacity.

A Ray cluster is one gang: its head and workers start together or not at all (a partly bound
gang holds GPUs it cannot use, and the rest may never come). Pods that wait behind a scheduling
gate (Kueue's elastic-job gate on a worker past the admitted slice) do not wait for capacity and
are left out. Binding is one pod at a time even for a gang, so a split shorter than the grace
is tolerated; KAI binds a gang's pods within seconds, kube-scheduler leaves a split standing for
as long as the capacity is short.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any, Final

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict

GANG_GRACE_S: Final = 20.0


def is_gated(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("schedulingGates"))


def is_bound(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def split_gangs(
    pods: list[dict[str, Any]],
    owner_of: Callable[[dict[str, Any]], tuple[str, str] | None],
) -> dict[tuple[str, str], tuple[int, int]]:
    """(namespace, Ray cluster) -> (bound, waiting) of every cluster with both: a split gang."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for pod in pods:
        if o.is_terminating(pod) or is_gated(pod) or owner_of(pod) is None:
            continue
        labels = pod["metadata"].get("labels") or {}
        key = (pod["metadata"]["namespace"], str(labels.get("ray.io/cluster", "")))
        counts[key][0 if is_bound(pod) else 1] += 1
    return {key: (b, w) for key, (b, w) in counts.items() if b and w}


def watch() -> SampleCheck:
    """Breaches the invariant when a split lasts longer than the grace."""
    since: dict[tuple[str, str], float] = {}

    def check(sample: Sample, verdict: Verdict) -> None:
        split = split_gangs(sample.pods, sample.pod_owner)
        for key in list(since):
            if key not in split:
                del since[key]
        for key, (bound, waiting) in sorted(split.items()):
            start = since.setdefault(key, sample.t)
            if sample.t - start > GANG_GRACE_S:
                ns, cluster = key
                owner = next(
                    (sample.pod_owner(p) for p in sample.pods
                     if (p["metadata"].get("labels") or {}).get("ray.io/cluster") == cluster),
                    None,
                )  # fmt: skip
                verdict.breach(
                    f"t=+{sample.t:.1f}s {sample.workload_name(ns, owner)}: {bound} pod(s) of Ray "
                    f"cluster {ns}/{cluster} bound while {waiting} wait for capacity, for "
                    f"{sample.t - start:.0f}s"
                )

    return check
