"""The invariant `endpoint-never-evicted`: Kueue never evicts a RayService (an endpoint serves
traffic; evicting it is an outage, whatever the reason)."""

from __future__ import annotations

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict


def watch() -> SampleCheck:
    def check(sample: Sample, verdict: Verdict) -> None:
        for wl in sample.workloads:
            evicted = o.conditions(wl).get("Evicted", {})
            ref = o.owner(wl)
            if evicted.get("status") != "True" or ref is None or ref[0] != "RayService":
                continue
            label = sample.workload_name(wl["metadata"]["namespace"], ref)
            verdict.breach(
                f"t=+{sample.t:.1f}s {label} (RayService) evicted: {evicted.get('reason')}: "
                f"{evicted.get('message')}"
            )

    return check
