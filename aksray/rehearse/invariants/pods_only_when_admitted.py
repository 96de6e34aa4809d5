"""The invariant `pods-only-when-admitted`: no pod of a workload is bound to a node while Kueue
does not admit that workload (or has finished it).

A bound pod of a workload Kueue no longer admits is tolerated for `EVICTION_GRACE_S`: KubeRay
deletes the Ray cluster on suspension and the garbage collector then deletes its pods, which
takes a few seconds on the rig (and longer on a busy machine).
"""

from __future__ import annotations

from typing import Final

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict

EVICTION_GRACE_S: Final = 20.0


def watch() -> SampleCheck:
    since: dict[str, float] = {}

    def check(sample: Sample, verdict: Verdict) -> None:
        seen_now: set[str] = set()
        for pod, ref, node_name, wl in sample.bound_ray_pods():
            ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            finished = wl is not None and o.condition_true(wl, "Finished")
            if wl is not None and (o.is_admitted(wl) or finished):
                continue
            seen_now.add(pod_name)
            start = since.setdefault(pod_name, sample.t)
            if sample.t - start > EVICTION_GRACE_S:
                verdict.breach(
                    f"t=+{sample.t:.1f}s {sample.workload_name(ns, ref)}: pod {ns}/{pod_name} "
                    f"bound on {node_name} for {sample.t - start:.0f}s while its workload is not "
                    "admitted"
                )
        for name in list(since):
            if name not in seen_now:
                del since[name]

    return check
