"""The invariant `pods-on-flavor-nodes`: every bound pod of an admitted workload runs on a node
of the pool behind the flavor Kueue assigned to its pod set."""

from __future__ import annotations

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, Verdict


def watch() -> SampleCheck:
    def check(sample: Sample, verdict: Verdict) -> None:
        for pod, ref, node_name, wl in sample.bound_ray_pods():
            ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            if wl is None or not (o.is_admitted(wl) or o.condition_true(wl, "Finished")):
                continue  # pods-only-when-admitted's concern
            adm = o.admission(wl)
            flavor = adm.flavors.get(o.pod_set_of(pod)) if adm else None
            pool = o.node_pool(sample.nodes.get(node_name, {"metadata": {}}))
            if flavor is not None and sample.flavor_pool.get(flavor, flavor) != pool:
                verdict.breach(
                    f"t=+{sample.t:.1f}s {sample.workload_name(ns, ref)}: pod {ns}/{pod_name} of "
                    f"pod set {o.pod_set_of(pod)} (flavor {flavor}) bound on {node_name} of pool "
                    f"{pool}"
                )

    return check
