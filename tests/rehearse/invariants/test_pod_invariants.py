"""pods-only-when-admitted and pods-on-flavor-nodes on recorded objects: a bound pod of a workload
Kueue does not admit breaks the first once it outlasts the grace, a pod on a node of another
pool than its flavor's breaks the second."""

from __future__ import annotations

from typing import Any

from aksray.rehearse.invariants import pods_on_flavor_nodes, pods_only_when_admitted
from aksray.rehearse.invariants.pods_only_when_admitted import EVICTION_GRACE_S
from aksray.rehearse.record import Sample, Verdict
from catalog.pools import POOL_LABEL_KEY

NS = "team-a"
OWNER = ("RayJob", "qwen-lora")


def _pod(name: str, node: str | None, group: str = "gpu") -> dict[str, Any]:
    labels = {"ray.io/cluster": "qwen-lora-x", "ray.io/node-type": "worker", "ray.io/group": group}
    spec: dict[str, Any] = {"nodeName": node} if node else {}
    return {"metadata": {"name": name, "namespace": NS, "labels": labels}, "spec": spec}


def _workload(admitted: bool, flavor: str = "a100") -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [{"type": "Admitted", "status": "True" if admitted else "False"}]
    }
    if admitted:
        status["admission"] = {
            "clusterQueue": NS,
            "podSetAssignments": [{"name": "gpu", "flavors": {"nvidia.com/gpu": flavor}}],
        }
    owner = {"kind": OWNER[0], "name": OWNER[1]}
    return {
        "metadata": {"name": "wl", "namespace": NS, "uid": "u1", "ownerReferences": [owner]},
        "spec": {"podSets": [{"name": "gpu", "count": 1}]},
        "status": status,
    }


def _node(name: str, pool: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {POOL_LABEL_KEY: pool}}}


def _sample(t: float, pods: list[dict[str, Any]], workloads: list[dict[str, Any]]) -> Sample:
    nodes = {n: _node(n, p) for n, p in (("n-a100", "a100"), ("n-h100", "h100"))}
    clusters: dict[tuple[str, str], tuple[str, str] | None] = {(NS, "qwen-lora-x"): OWNER}
    flavor_pool = {"a100": "a100", "h100": "h100"}
    return Sample(t, workloads, pods, {}, clusters, nodes, flavor_pool, {})


def test_a_bound_pod_of_an_unadmitted_workload_breaks_the_invariant_after_the_grace() -> None:
    check, verdict = pods_only_when_admitted.watch(), Verdict("pods-only-when-admitted")
    pods, pending = [_pod("w0", "n-a100")], [_workload(admitted=False)]
    check(_sample(0.0, pods, pending), verdict)
    check(_sample(EVICTION_GRACE_S, pods, pending), verdict)
    assert verdict.held
    check(_sample(EVICTION_GRACE_S + 1, pods, pending), verdict)
    assert not verdict.held
    assert f"pod {NS}/w0 bound on n-a100 for 21s while its workload is not admitted" in (
        verdict.detail
    )


def test_an_admitted_or_unbound_pod_never_breaks_it() -> None:
    check, verdict = pods_only_when_admitted.watch(), Verdict("pods-only-when-admitted")
    for t in (0.0, 100.0):
        check(_sample(t, [_pod("w0", "n-a100")], [_workload(admitted=True)]), verdict)
        check(_sample(t, [_pod("w1", None)], [_workload(admitted=False)]), verdict)
    assert verdict.held


def test_a_pod_on_a_node_of_another_pool_than_its_flavor_breaks_the_flavor_invariant() -> None:
    check, verdict = pods_on_flavor_nodes.watch(), Verdict("pods-on-flavor-nodes")
    check(_sample(0.0, [_pod("w0", "n-a100")], [_workload(admitted=True)]), verdict)
    assert verdict.held
    check(_sample(1.0, [_pod("w0", "n-h100")], [_workload(admitted=True)]), verdict)
    assert not verdict.held
    assert "pod set gpu (flavor a100) bound on n-h100 of pool h100" in verdict.detail
