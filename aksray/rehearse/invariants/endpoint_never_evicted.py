"""The invariant `endpoint-never-evicted`: Kueue never evicts a RayService (an endpoint serves
traffic; evicting it is an outage, whatever the reason)."""

from __future__ import annotations

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict

NO_ENDPOINT = "no RayService had a Kueue workload in this run: there was no endpoint to evict"


def watch() -> SampleCheck:
    def check(sample: Sample, verdict: Verdict) -> None:
        verdict.inapplicable_why = NO_ENDPOINT
        endpoints = [wl for wl in sample.workloads if (o.owner(wl) or ("",))[0] == "RayService"]
        verdict.subject(bool(endpoints))
        for wl in endpoints:
            evicted = o.conditions(wl).get("Evicted", {})
            ref = o.owner(wl)
            if evicted.get("status") != "True" or ref is None:
                continue
            label = sample.workload_name(wl["metadata"]["namespace"], ref)
            verdict.breach(
                f"t=+{sample.t:.1f}s {label} (RayService) evicted: {evicted.get('reason')}: "
                f"{evicted.get('message')}"
            )

    return check
