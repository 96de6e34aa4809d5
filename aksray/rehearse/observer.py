"""Sample the controllers' objects, turn changes into a timeline, check invariants each sample.

Every sample lists the Kueue Workloads, Ray objects and pods of the stack's namespaces, the
nodes, flavors and ClusterQueues. A change becomes one timeline event (`t=+12.3s qwen-lora
admitted on a100 (team-a)`); every sample is checked against the invariants
(aksray/rehearse/invariants/), and the first breach of each is kept with its time and detail.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aksray.live.kube import Kube
from aksray.rehearse import invariants
from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample, SampleCheck, TimelineEvent, Verdict, poll_until


def _checks() -> dict[str, SampleCheck]:
    return {name: invariants.watch(name) for name in invariants.SAMPLED}


@dataclass
class Observer:
    kube: Kube
    namespaces: tuple[str, ...]
    started: float = field(default_factory=time.monotonic)
    events: list[TimelineEvent] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(
        default_factory=lambda: {n: Verdict(n) for n in invariants.SAMPLED}
    )
    checks: dict[str, SampleCheck] = field(default_factory=_checks)
    last: Sample | None = None
    _state: dict[Any, Any] = field(default_factory=dict)
    _cluster_owner: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)
    # Called before every sample (the rig keeps the operator's hosts file current there).
    before_sample: list[Callable[[], None]] = field(default_factory=list)
    # Called with every sample once checked (a scenario's own invariants).
    after_sample: list[Callable[[Sample], None]] = field(default_factory=list)
    # Called with every timeline event as it is recorded (the progress a terminal shows).
    on_event: list[Callable[[TimelineEvent], None]] = field(default_factory=list)
    # What Kueue had admitted when the latest change to the stack began (Sample.admitted_before).
    admitted_before: frozenset[str] = frozenset()

    def now(self) -> float:
        return time.monotonic() - self.started

    def note(self, workload: str, what: str, detail: str = "") -> None:
        event = TimelineEvent(self.now(), workload, what, detail)
        self.events.append(event)
        for hook in self.on_event:
            hook(event)

    # -- sampling ----------------------------------------------------------------------------
    def sample(self) -> Sample:
        for hook in self.before_sample:
            hook()
        workloads: list[dict[str, Any]] = []
        pods: list[dict[str, Any]] = []
        owners: dict[tuple[str, str, str], dict[str, Any]] = {}
        for ns in self.namespaces:
            workloads += self.kube.items(f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads")
            pods += self.kube.items(f"/api/v1/namespaces/{ns}/pods", "ray.io/node-type")
            for kind, plural in (("RayJob", "rayjobs"), ("RayService", "rayservices")):
                for obj in self.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/{plural}"):
                    owners[(ns, kind, obj["metadata"]["name"])] = obj
            for cluster in self.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/rayclusters"):
                self._cluster_owner[(ns, cluster["metadata"]["name"])] = o.owner(cluster)
        nodes = {n["metadata"]["name"]: n for n in self.kube.items("/api/v1/nodes")}
        flavors = self.kube.items("/apis/kueue.x-k8s.io/v1beta2/resourceflavors")
        queues = {
            q["metadata"]["name"]: q
            for q in self.kube.items("/apis/kueue.x-k8s.io/v1beta2/clusterqueues")
        }
        sample = Sample(
            self.now(), workloads, pods, owners, dict(self._cluster_owner), nodes,
            o.flavor_pools(flavors), queues, self.admitted_before,
        )  # fmt: skip
        self._timeline(sample)
        self._check(sample)
        for check in self.after_sample:
            check(sample)
        self.last = sample
        return sample

    def wait_until(
        self, what: str, predicate: Callable[[Sample], bool], timeout: float, interval: float = 0.5
    ) -> bool:
        """Sample until `predicate` holds; False (and a timeline note) when it never does."""
        if poll_until(lambda: predicate(self.sample()), timeout, interval):
            return True
        self.note("rehearsal", "timed out", f"waiting {timeout:.0f}s for {what}")
        return False

    def hold(self, seconds: float, interval: float = 0.5) -> None:
        """Keep sampling (and checking) for a while."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.sample()
            time.sleep(interval)

    # -- timeline ----------------------------------------------------------------------------
    def _timeline(self, sample: Sample) -> None:
        for wl in sample.workloads:
            self._workload_events(sample, wl)
        self._job_events(sample)
        self._pod_events(sample)

    def _workload_events(self, sample: Sample, wl: dict[str, Any]) -> None:
        ns = wl["metadata"]["namespace"]
        uid = wl["metadata"]["uid"]
        name = sample.workload_name(ns, o.owner(wl))
        conds = o.conditions(wl)
        seen = self._state.setdefault(uid, {"conds": {}, "new": True})
        if seen["new"]:
            seen["new"] = False
            queue = wl.get("spec", {}).get("queueName", "")
            spec = wl.get("spec", {})
            priority = (spec.get("priorityClassRef") or {}).get("name", "none")
            value = spec.get("priority")
            self.note(name, "queued", f"in {queue} ({ns}) at priority {priority} ({value})")
        for kind, cond in conds.items():
            key = (cond.get("status"), cond.get("reason"))
            if seen["conds"].get(kind) == key:
                continue
            seen["conds"][kind] = key
            self._condition_event(name, ns, wl, kind, cond)

    def _condition_event(
        self, name: str, ns: str, wl: dict[str, Any], kind: str, cond: dict[str, Any]
    ) -> None:
        status, reason, message = (
            cond.get("status"),
            cond.get("reason", ""),
            cond.get("message", ""),
        )
        if kind == "Admitted" and status == "True":
            self.note(name, "admitted", admitted_detail(o.admission(wl)))
        elif kind == "QuotaReserved" and status == "False" and reason == "Pending":
            self.note(name, "pending", message)
        elif kind == "Evicted" and status == "True":
            self.note(name, "evicted", f"by Kueue: {reason}: {message}")
        elif kind == "Preempted" and status == "True":
            self.note(name, "preempted", f"by Kueue ({reason}): {message}")
        elif kind == "Requeued" and status == "True":
            self.note(name, "requeued", message)
        elif kind == "Finished" and status == "True":
            self.note(name, "finished", f"{reason}: {message}".strip(": "))

    def _job_events(self, sample: Sample) -> None:
        for (ns, kind, name), obj in sample.owners.items():
            status = obj.get("status") or {}
            if kind == "RayJob":
                state = (status.get("jobDeploymentStatus", ""), status.get("jobStatus", ""))
            else:
                state = (status.get("serviceStatus", ""), "")
            key = ("owner", ns, kind, name)
            if state[0] and self._state.get(key) != state:
                self._state[key] = state
                detail = f"(job {state[1]})" if state[1] else ""
                self.note(o.workload_label(obj), f"{kind} {state[0]}", detail)

    def _pod_events(self, sample: Sample) -> None:
        per_owner: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for pod in sample.pods:
            ref = sample.pod_owner(pod)
            if ref is not None and not o.is_terminating(pod):
                per_owner[(pod["metadata"]["namespace"], *ref)].append(pod)
        known = {k for k in self._state if isinstance(k, tuple) and k and k[0] == "pods"}
        for (ns, kind, name), pods in per_owner.items():
            bound = [p for p in pods if p.get("spec", {}).get("nodeName")]
            pools: dict[str, int] = defaultdict(int)
            for pod in bound:
                pools[o.node_pool(sample.nodes.get(pod["spec"]["nodeName"], {"metadata": {}}))] += 1
            summary = (len(pods), len(bound), tuple(sorted(pools.items())))
            key = ("pods", ns, kind, name)
            known.discard(key)
            if self._state.get(key) != summary:
                self._state[key] = summary
                where = ", ".join(f"{pool} x{n}" for pool, n in sorted(pools.items()))
                label = sample.workload_name(ns, (kind, name))
                self.note(label, "pods bound", f"{len(bound)}/{len(pods)} on {where or 'no node'}")
        for key in known:
            if self._state.get(key) != (0, 0, ()):
                self._state[key] = (0, 0, ())
                self.note(sample.workload_name(key[1], (key[2], key[3])), "pods deleted", "")

    # -- invariants --------------------------------------------------------------------------
    def _check(self, sample: Sample) -> None:
        for name, check in self.checks.items():
            check(sample, self.verdicts[name])
        for verdict in self.verdicts.values():
            verdict.checked += 1

    def verdict_list(self) -> list[Verdict]:
        return list(self.verdicts.values())


def admitted_detail(adm: o.Admission | None) -> str:
    """`on a100 (team-a; head on cpu)`: the workers' flavors first, then where the head went."""
    if adm is None:
        return "(no admission recorded)"
    workers = sorted({f for ps, f in adm.flavors.items() if ps != "head"})
    head = adm.flavors.get("head")
    where = ", ".join(workers) or (head or "?")
    extra = f"; head on {head}" if head and workers else ""
    return f"on {where} ({adm.cluster_queue}{extra})"


def namespaces_of(teams: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(teams)))
